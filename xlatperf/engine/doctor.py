# SPDX-License-Identifier: BSD-3-Clause
"""`xlatperf doctor`: is this host ready to measure with the config's ports? (docs/hardware.md)

Each check says ok, warn or fail, what it found, and the exact command that fixes it. The host
checks read /sys and /proc below `root` (tests point it at a fake tree); the engine checks
(engine/port_checks.py) judge the ports as the engine's hello shows them.

    checks = host_checks(config)                 # the NIC, its driver, IOMMU, hugepages, CPUs
    checks += engine_checks(config, hello)       # with the engine started: links, MTU, ...
"""

import io
import json
import os
import re
import shlex
import subprocess
import tarfile
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

from ..config.schema import lcore_cpus, parse_port
from ..util.errors import EngineError
from . import remote

STATUSES = ("ok", "warn", "fail")


@dataclass(frozen=True)
class Check:
    name: str      # what was checked, e.g. "left 0000:3b:00.0: driver"
    status: str    # ok | warn | fail
    found: str     # what the check found
    fix: str = ""  # the command (or config line) that fixes it; "" when ok

    def to_dict(self) -> dict:
        return asdict(self)


# NIC families by PCI vendor and device ID: the driver DPDK takes each with, and how.
INTEL, MELLANOX, REDHAT, VMWARE = "0x8086", "0x15b3", "0x1af4", "0x15ad"
_FAMILIES = [
    (INTEL, {"0x1572", "0x1583", "0x1584", "0x1585", "0x1586", "0x1587", "0x1588", "0x1589", "0x158a", "0x158b",
             "0x37d0", "0x37d1", "0x37d2", "0x37d3"}, "Intel 700 series (X710/XL710/XXV710)", "net_i40e"),
    (INTEL, {"0x1591", "0x1592", "0x1593", "0x159b", "0x1599", "0x188a", "0x12d1", "0x12d2", "0x12d3"},
     "Intel E810", "net_ice"),
    (INTEL, {"0x10fb", "0x10fc", "0x1528", "0x1560", "0x15ad", "0x15ab", "0x1563", "0x15d1", "0x10f8", "0x154d"},
     "Intel 82599/X540/X550", "net_ixgbe"),
    (INTEL, {"0x10d3", "0x10f6", "0x150c", "0x1502", "0x1503", "0x153a", "0x153b", "0x15a0", "0x15b7", "0x15b8"},
     "Intel 82574/e1000e", "net_e1000_em"),
    (MELLANOX, {"0x1013", "0x1015", "0x1017", "0x1019", "0x101b", "0x101d", "0x101f", "0x1021", "0xa2d6", "0x1016",
                "0x1018"}, "NVIDIA ConnectX-4/5/6/7 or BlueField", "net_mlx5"),
    (REDHAT, {"0x1000", "0x1041"}, "virtio-net", "net_virtio"),
    (VMWARE, {"0x07b0"}, "VMware vmxnet3", "net_vmxnet3"),
]
# Drivers that keep the device on its kernel driver (bifurcated): DPDK works beside it.
BIFURCATED = {"mlx5_core", "mlx4_core"}
VFIO = "vfio-pci"


def nic_family(vendor: str, device: str) -> tuple[str, str] | None:
    """(family, DPDK driver) of a PCI vendor/device ID pair, None when not known here."""
    for family_vendor, devices, family, driver in _FAMILIES:
        if vendor == family_vendor and device in devices:
            return family, driver
    return None


# --------------------------------------------------------------------------------------------
# Reading the host
# --------------------------------------------------------------------------------------------

class Host:
    """The host's /sys and /proc below `root`, and the interface addresses (`ip`), which /proc
    lists only for IPv6: `addresses(iface)` may be replaced (tests)."""

    def __init__(self, root: str | os.PathLike = "/", addresses: Callable[[str], list[str]] | None = None):
        self.root = Path(root)
        self.addresses = addresses or _ip_addresses

    def path(self, text: str) -> Path:
        return self.root / text.lstrip("/")

    def read(self, text: str, default: str = "") -> str:
        try:
            return self.path(text).read_text().strip()
        except OSError:
            return default

    def exists(self, text: str) -> bool:
        return self.path(text).exists()

    def listdir(self, text: str) -> list[str]:
        try:
            return sorted(os.listdir(self.path(text)))
        except OSError:
            return []

    def link_name(self, text: str) -> str:
        """The last part of a symlink's target ("" when there is none): a device's driver."""
        try:
            return os.path.basename(os.readlink(self.path(text)))
        except OSError:
            return ""


def _ip_addresses(interface: str) -> list[str]:
    """Every address `ip` shows on the interface (IPv4 and IPv6, link-local included)."""
    try:
        out = subprocess.run(["ip", "-j", "addr", "show", "dev", interface], capture_output=True, text=True,
                             timeout=10).stdout
        return [a["local"] for entry in json.loads(out or "[]") for a in entry.get("addr_info", [])]
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return []


def cpu_list(text: str) -> set[int]:
    """"0-3,8,10-11" -> {0, 1, 2, 3, 8, 10, 11} (sysfs cpulist); "" and "(null)" (what
    Debian 12's kernel writes in nohz_full when it is off) -> {}."""
    if not re.fullmatch(r"[\d,\-\s]*", text):
        return set()
    cpus: set[int] = set()
    for part in filter(None, text.strip().split(",")):
        first, _, last = part.partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    return cpus


def _routes(host: Host, interface: str) -> int:
    """Routes through `interface` in the main tables (/proc/net/route, /proc/net/ipv6_route)."""
    ipv4 = [line.split()[0] for line in host.read("/proc/net/route").splitlines()[1:] if line.split()]
    ipv6 = [line.split()[-1] for line in host.read("/proc/net/ipv6_route").splitlines() if line.split()]
    return sum(1 for name in ipv4 + ipv6 if name == interface)


# --------------------------------------------------------------------------------------------
# The host checks, per PCI port
# --------------------------------------------------------------------------------------------

def _device(address: str) -> str:
    return f"/sys/bus/pci/devices/{address}"


def _node(host: Host, address: str) -> int:
    """The device's NUMA node (0 where sysfs says -1: a host of one node)."""
    try:
        return max(int(host.read(f"{_device(address)}/numa_node", "-1")), 0)
    except ValueError:
        return 0


def device_check(host: Host, label: str, address: str) -> Check:
    name = f"{label}: PCI device"
    if not host.exists(_device(address)):
        present = [d for d in host.listdir("/sys/bus/pci/devices")
                   if host.read(f"{_device(d)}/class").startswith("0x0200")]
        return Check(name, "fail", f"no PCI device {address}",
                     "lspci -D | grep -i ethernet   # the host's NICs" +
                     (f": {', '.join(present)}" if present else "") + f"; set {label.split()[0]}.port to one")
    vendor, device = host.read(f"{_device(address)}/vendor"), host.read(f"{_device(address)}/device")
    family = nic_family(vendor, device)
    found = f"{address} {vendor}:{device} " + (f"{family[0]} ({family[1]})" if family else "(a NIC family xlatperf "
                                                                                           "does not know: DPDK may)")
    return Check(name, "ok", found, "")


def _interfaces(host: Host, address: str) -> list[str]:
    """The device's kernel interfaces: in its net/ folder, or a child device's (virtio-net's
    virtioN/net/)."""
    device = _device(address)
    children = [f"{device}/{child}/net" for child in host.listdir(device) if child.startswith("virtio")]
    return sorted({name for folder in (f"{device}/net", *children) for name in host.listdir(folder)})


def driver_check(host: Host, label: str, address: str) -> Check:
    """vfio-pci; or a bifurcated driver (mlx5_core) with its netdev up; anything else is to be
    rebound to vfio-pci, never while its interface carries addresses or routes."""
    name = f"{label}: driver"
    if not host.exists(_device(address)):
        return Check(name, "fail", "no such device", "")
    driver = host.link_name(f"{_device(address)}/driver")
    modprobe = "" if host.exists("/sys/bus/pci/drivers/vfio-pci") else "modprobe vfio-pci && "
    bind = f"{modprobe}dpdk-devbind.py -b vfio-pci {address}"
    if driver == VFIO:
        return Check(name, "ok", "vfio-pci", "")
    interfaces = _interfaces(host, address)
    if driver in BIFURCATED:
        down = [i for i in interfaces if host.read(f"/sys/class/net/{i}/operstate") not in ("up", "unknown")
                and not int(host.read(f"/sys/class/net/{i}/flags", "0x0"), 16) & 1]
        busy = [f"{i} ({', '.join(host.addresses(i))})" for i in interfaces
                if [a for a in host.addresses(i) if not a.startswith("fe80:")]]
        if busy:
            return Check(name, "warn", f"{driver} (bifurcated), its interface carries addresses: {', '.join(busy)}",
                         " && ".join(f"ip addr flush dev {i}" for i in interfaces) +
                         "   # the kernel would answer ARP/ND and take test traffic")
        if down or not interfaces:
            return Check(name, "fail", f"{driver} (bifurcated) with its interface down: {', '.join(down) or 'none'}",
                         " && ".join(f"ip link set {i} up" for i in (down or ["IFACE"])) +
                         "   # mlx5's DPDK driver works beside the kernel's, which must have the port up")
        return Check(name, "ok", f"{driver} (bifurcated: DPDK works beside it), interface {', '.join(interfaces)} up", "")
    if not driver:
        return Check(name, "fail", "no driver", bind)
    in_use = [f"{i}: " + ", ".join([a for a in host.addresses(i) if not a.startswith("fe80:")] +
                                   ([f"{_routes(host, i)} routes"] if _routes(host, i) else []))
              for i in interfaces
              if [a for a in host.addresses(i) if not a.startswith("fe80:")] or _routes(host, i)]
    if in_use:
        return Check(name, "fail", f"kernel driver {driver}, and its interface is in use ({'; '.join(in_use)})",
                     " && ".join(f"ip addr flush dev {i} && ip link set {i} down" for i in interfaces) +
                     f"   # first make sure this host does not depend on it; then: {bind}")
    return Check(name, "fail", f"kernel driver {driver}" + (f" (interface {', '.join(interfaces)})" if interfaces else ""),
                 (" && ".join(f"ip link set {i} down" for i in interfaces) + " && " if interfaces else "") + bind)


def iommu_check(host: Host, label: str, address: str) -> Check:
    """An IOMMU (or vfio's no-IOMMU mode), the device's group viable, /dev/vfio/N there."""
    name = f"{label}: IOMMU"
    driver = host.link_name(f"{_device(address)}/driver")
    if driver in BIFURCATED:
        return Check(name, "ok", f"not needed: {driver} does the DMA mapping", "")
    if not host.exists(_device(address)):
        return Check(name, "fail", "no such device", "")
    group = host.link_name(f"{_device(address)}/iommu_group")
    if not host.listdir("/sys/kernel/iommu_groups") or not group:
        if host.read("/sys/module/vfio/parameters/enable_unsafe_noiommu_mode") == "Y":
            return Check(name, "warn", "no IOMMU; vfio's unsafe no-IOMMU mode is on", "")
        cpu = host.read("/proc/cpuinfo")
        vendor = "amd_iommu=on" if "AuthenticAMD" in cpu else "intel_iommu=on"
        return Check(name, "fail", "no IOMMU groups: the IOMMU is off (BIOS: VT-d / AMD-Vi) or not enabled",
                     f"add '{vendor} iommu=pt' to GRUB_CMDLINE_LINUX in /etc/default/grub, update-grub, reboot")
    members = host.listdir(f"/sys/kernel/iommu_groups/{group}/devices")
    others = [(d, host.link_name(f"{_device(d)}/driver")) for d in members if d != address]
    blocking = [f"{d} ({drv})" for d, drv in others if drv not in ("", VFIO, "pcieport")]
    if blocking:
        return Check(name, "fail", f"IOMMU group {group} is not viable: {', '.join(blocking)} on other drivers",
                     "dpdk-devbind.py -b vfio-pci " + " ".join(d for d, drv in others if drv not in ("", VFIO, "pcieport")) +
                     "   # every device of the group on vfio-pci (or none)")
    if driver == VFIO and not host.exists(f"/dev/vfio/{group}"):
        return Check(name, "fail", f"IOMMU group {group}, but no /dev/vfio/{group}",
                     f"dpdk-devbind.py -u {address} && dpdk-devbind.py -b vfio-pci {address}")
    return Check(name, "ok", f"IOMMU group {group}" + (f" with {len(others)} other device(s), all on vfio-pci or none"
                                                      if others else ", the device alone"), "")


def hugepages_check(host: Host, label: str, address: str) -> Check:
    """Free hugepages on the NIC's NUMA node, and hugetlbfs mounted (tester.hugepages = "no"
    with a PCI port is refused by the config's validation)."""
    name = f"{label}: hugepages"
    node = _node(host, address)
    base = f"/sys/devices/system/node/node{node}/hugepages"
    free = {size: int(host.read(f"{base}/{size}/free_hugepages", "0") or 0) for size in host.listdir(base)}
    if not free:  # a host without per-node sysfs: the global counts
        base = "/sys/kernel/mm/hugepages"
        free = {size: int(host.read(f"{base}/{size}/free_hugepages", "0") or 0) for size in host.listdir(base)}
    free_bytes = sum(count * int(re.sub(r"\D", "", size) or 0) * 1024 for size, count in free.items())
    mounted = any(line.split()[2:3] == ["hugetlbfs"] for line in host.read("/proc/mounts").splitlines())
    found = f"node {node}: {free_bytes // 2**20:,} MiB free" + "".join(
        f", {count} x {size.removeprefix('hugepages-')}" for size, count in free.items() if count)
    reserve = f"echo 1024 > /sys/devices/system/node/node{node}/hugepages/hugepages-2048kB/nr_hugepages"
    if free_bytes < 512 * 2**20:
        return Check(name, "fail", found + " (512 MiB needed at least)", reserve)
    if not mounted:
        return Check(name, "fail", found + ", but no hugetlbfs mounted",
                     "mkdir -p /dev/hugepages && mount -t hugetlbfs nodev /dev/hugepages")
    return Check(name, "ok", found + ", hugetlbfs mounted", "")


def lcores_check(host: Host, label: str, address: str, config) -> Check:
    """The worker lcores' CPUs on the NIC's NUMA node (a worker on the other node reaches the
    NIC's queues and mbufs across the interconnect)."""
    name = f"{label}: lcores on its NUMA node"
    node = _node(host, address)
    node_cpus = cpu_list(host.read(f"/sys/devices/system/node/node{node}/cpulist"))
    workers = [cpu for _, cpu in lcore_cpus(config.tester.lcores)[1:]]
    if not node_cpus:
        return Check(name, "ok", f"node {node}: no NUMA information (one node)", "")
    away = [cpu for cpu in workers if cpu not in node_cpus]
    found = f"node {node} has CPUs {host.read(f'/sys/devices/system/node/node{node}/cpulist')}; workers on {workers}"
    if away:
        suggestion = sorted(node_cpus)[:len(workers) + 1]
        return Check(name, "warn", found, f'tester.lcores = "{",".join(map(str, suggestion))}"   # main and workers '
                     f"on node {node}")
    return Check(name, "ok", found, "")


# --------------------------------------------------------------------------------------------
# The host checks, once
# --------------------------------------------------------------------------------------------

def isolation_check(host: Host, config) -> Check:
    workers = sorted({cpu for _, cpu in lcore_cpus(config.tester.lcores)[1:]})
    isolated = cpu_list(host.read("/sys/devices/system/cpu/isolated")) | cpu_list(
        host.read("/sys/devices/system/cpu/nohz_full"))
    shared = [cpu for cpu in workers if cpu not in isolated]
    found = f"worker CPUs {workers}; isolated: {sorted(isolated) or 'none'}"
    if shared:
        cpus = ",".join(map(str, workers))
        return Check("CPUs: isolated workers", "warn", found,
                     f"add 'isolcpus={cpus} nohz_full={cpus} rcu_nocbs={cpus}' to GRUB_CMDLINE_LINUX, update-grub, "
                     "reboot   # the scheduler's and the timer's interruptions show as the sender's lag")
    return Check("CPUs: isolated workers", "ok", found, "")


def governor_check(host: Host, config) -> Check:
    workers = sorted({cpu for _, cpu in lcore_cpus(config.tester.lcores)})
    governors = {cpu: host.read(f"/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor") for cpu in workers}
    if not any(governors.values()):
        return Check("CPUs: frequency governor", "ok", "no cpufreq: a fixed frequency or a VM", "")
    slow = {cpu: g for cpu, g in governors.items() if g and g != "performance"}
    found = ", ".join(f"CPU {cpu} {g or '?'}" for cpu, g in governors.items())
    if slow:
        return Check("CPUs: frequency governor", "warn", found, "cpupower frequency-set -g performance")
    return Check("CPUs: frequency governor", "ok", found, "")


def tsc_check(host: Host) -> Check:
    flags = next((line.split(":", 1)[1].split() for line in host.read("/proc/cpuinfo").splitlines()
                  if line.startswith("flags")), [])
    missing = [flag for flag in ("constant_tsc", "nonstop_tsc") if flag not in flags]
    if missing:
        return Check("CPUs: invariant TSC", "warn", f"missing {', '.join(missing)}",
                     "the engine paces and timestamps by the TSC: use a host whose TSC is invariant "
                     "(BIOS: no TSC-changing power states; a VM: expose invariant TSC, e.g. QEMU -cpu host,+invtsc)")
    return Check("CPUs: invariant TSC", "ok", "constant_tsc and nonstop_tsc", "")


def pcie_check(host: Host, label: str, address: str) -> Check:
    name = f"{label}: PCIe link"
    device = _device(address)
    width, most_width = host.read(f"{device}/current_link_width"), host.read(f"{device}/max_link_width")
    speed, most_speed = host.read(f"{device}/current_link_speed"), host.read(f"{device}/max_link_speed")
    # Emulated devices report widths of 0 and 255 and speeds "Unknown": nothing to compare.
    if (not (width and most_width and speed and most_speed) or width in ("0", "255") or most_width in ("0", "255")
            or "Unknown" in speed or "Unknown" in most_speed):
        return Check(name, "ok", "not reported (a virtual or integrated device)", "")
    found = f"x{width} at {speed} (the device: x{most_width} at {most_speed})"

    def number(text: str) -> float:
        match = re.match(r"[\d.]+", text)
        return float(match.group()) if match else 0.0
    if number(width) < number(most_width) or number(speed) < number(most_speed):
        return Check(name, "warn", found, "move the card to a slot of its full width and generation (the "
                     "motherboard's manual names them); a narrower link caps what the card carries")
    return Check(name, "ok", found, "")


def host_checks(config, root: str | os.PathLike = "/", addresses: Callable[[str], list[str]] | None = None
                ) -> list[Check]:
    """The host's checks for the config's PCI ports, then the CPU checks, in a stable order. A
    config without a PCI port gets the CPU checks only (its ports are checked by the engine)."""
    host = Host(root, addresses)
    checks: list[Check] = []
    seen: set[str] = set()
    for side in ("left", "right"):
        port = parse_port(config.side(side).port)
        if port.kind != "pci" or port.name in seen:
            continue
        seen.add(port.name)
        label = f"{side} {port.name}"
        checks += [device_check(host, label, port.name), driver_check(host, label, port.name),
                   iommu_check(host, label, port.name), hugepages_check(host, label, port.name),
                   lcores_check(host, label, port.name, config), pcie_check(host, label, port.name)]
    return checks + [isolation_check(host, config), governor_check(host, config), tsc_check(host)]


# --------------------------------------------------------------------------------------------
# The tester host over ssh (tester.ssh): the files the checks read, copied into a tree
# --------------------------------------------------------------------------------------------

# Arguments: the PCI addresses. Writes a tar archive of the files the host checks read (the
# device attributes, its driver, IOMMU group and interfaces, every PCI device's class, the NUMA
# nodes' CPUs and hugepages, the CPUs' isolation and governors, /proc's cpuinfo, mounts and
# routes, each interface's addresses as `ip -j` prints them) to stdout, symlinks as symlinks, so
# that the same checks run over the copy as over /.
SNAPSHOT_SCRIPT = r"""
set -u
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
copy() { for f in "$@"; do [ -r "$f" ] && [ -f "$f" ] && mkdir -p "$tmp${f%/*}" && cat "$f" > "$tmp$f" 2>/dev/null; done; true; }
link() { for f in "$@"; do [ -L "$f" ] && mkdir -p "$tmp${f%/*}" && ln -s "$(readlink "$f")" "$tmp$f"; done; true; }
folder() { for f in "$@"; do [ -d "$f" ] && mkdir -p "$tmp$f"; done; true; }
copy /proc/cpuinfo /proc/mounts /proc/net/route /proc/net/ipv6_route
copy /sys/devices/system/cpu/isolated /sys/devices/system/cpu/nohz_full /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor
copy /sys/devices/system/node/node*/cpulist /sys/devices/system/node/node*/hugepages/*/free_hugepages
copy /sys/kernel/mm/hugepages/*/free_hugepages /sys/module/vfio/parameters/enable_unsafe_noiommu_mode
copy /sys/bus/pci/devices/*/class
folder /sys/bus/pci/drivers/vfio-pci /sys/kernel/iommu_groups
for a in "$@"; do
    d=/sys/bus/pci/devices/$a
    for key in vendor device numa_node current_link_width max_link_width current_link_speed max_link_speed; do copy "$d/$key"; done
    link "$d/driver" "$d/iommu_group"
    for i in "$d"/net/* "$d"/virtio*/net/*; do
        [ -e "$i" ] || continue
        n=${i##*/}
        folder "$i"
        copy "/sys/class/net/$n/operstate" "/sys/class/net/$n/flags"
        mkdir -p "$tmp/addresses"
        ip -j addr show dev "$n" > "$tmp/addresses/$n" 2>/dev/null
    done
    if [ -L "$d/iommu_group" ]; then
        g=$(readlink "$d/iommu_group"); g=${g##*/}
        folder "/sys/kernel/iommu_groups/$g"
        link /sys/kernel/iommu_groups/$g/devices/*
        for m in /sys/kernel/iommu_groups/$g/devices/*; do link "/sys/bus/pci/devices/${m##*/}/driver"; done
        [ -e "/dev/vfio/$g" ] && mkdir -p "$tmp/dev/vfio" && : > "$tmp/dev/vfio/$g"
    fi
done
tar -C "$tmp" -cf - .
"""


def remote_host_checks(config) -> list[Check]:
    """host_checks on tester.ssh: its files copied here (SNAPSHOT_SCRIPT) and read as a tree."""
    addresses = sorted({parse_port(spec).name for spec in (config.left.port, config.right.port)
                        if parse_port(spec).kind == "pci"})
    command = remote.ssh_command(config, shlex.join(["sh", "-c", SNAPSHOT_SCRIPT, "xlatperf-doctor", *addresses]))
    try:
        run = subprocess.run(command, capture_output=True, timeout=remote.PROBE_SECONDS)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return [Check("host", "fail", f"cannot reach {remote.where(config)}: {exc}", "check tester.ssh")]
    if run.returncode != 0 or not run.stdout:
        why = run.stderr.decode(errors="replace").strip().splitlines()[-1:] or [f"status {run.returncode}"]
        return [Check("host", "fail", f"cannot read {remote.where(config)}: {why[0]}", "check tester.ssh")]
    with tempfile.TemporaryDirectory(prefix="xlatperf-doctor-") as root:
        with tarfile.open(fileobj=io.BytesIO(run.stdout)) as archive:
            archive.extractall(root, filter="fully_trusted")

        def addresses_there(interface: str) -> list[str]:
            try:
                listing = json.loads((Path(root) / "addresses" / interface).read_text() or "[]")
            except (OSError, ValueError):
                return []
            return [a["local"] for entry in listing for a in entry.get("addr_info", [])]
        return host_checks(config, root, addresses_there)


def failed(checks: list[Check]) -> list[Check]:
    return [check for check in checks if check.status == "fail"]


def refuse(checks: list[Check]) -> None:
    """Raises EngineError naming every failing check with its fix (none failed: nothing)."""
    if failed(checks):
        raise EngineError("the tester is not ready (xlatperf doctor -c FILE shows every check): " +
                          "; ".join(f"{c.name}: {c.found}" + (f" (fix: {c.fix})" if c.fix else "")
                                    for c in failed(checks)))


def require_ready_host(config, root: str | os.PathLike = "/") -> None:
    """Before the engine starts on PCI ports: the device, driver, IOMMU and hugepage checks of
    the engine's host (this one, or tester.ssh's), whose failure DPDK would only report as "no
    DPDK ports"."""
    if any(parse_port(spec).kind == "pci" for spec in (config.left.port, config.right.port)):
        refuse(remote_host_checks(config) if config.tester.ssh else host_checks(config, root))


def render(checks: list[Check]) -> str:
    """One line per check, the fix indented under a check that is not ok."""
    width = max((len(check.name) for check in checks), default=0)
    lines = []
    for check in checks:
        lines.append(f"{check.status.upper():4}  {check.name:<{width}}  {check.found}")
        if check.fix:
            lines.append(f"      fix: {check.fix}")
    bad = failed(checks)
    warned = [check for check in checks if check.status == "warn"]
    lines.append(f"{len(checks) - len(bad) - len(warned)} ok, {len(warned)} warn, {len(bad)} fail")
    return "\n".join(lines)
