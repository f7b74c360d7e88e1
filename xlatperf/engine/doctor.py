# SPDX-License-Identifier: BSD-3-Clause
"""`xlatperf doctor`: is this host ready to measure with the config's ports? (docs/hardware.md)

Each check says ok, warn or fail, what it found, and the exact command that fixes it. The host
checks read /sys and /proc below `root` (tests point it at a fake tree); the engine checks
(engine/port_checks.py) judge the ports as the engine's hello shows them.

    checks = host_checks(config)                 # the NIC, its driver, IOMMU, hugepages, CPUs
    checks += engine_checks(config, hello)       # with the engine started: links, MTU, ...

What /sys and /proc do not show is read as a copy kept in the same tree below SNAPSHOT_DIR:
`ip -j addr show dev IF` of an interface (/proc lists no IPv4 addresses), and a network
namespace's own /sys/class/net and /proc/net (seen only from inside it). On the host itself
(root "/") they are read when a check needs them; a fake tree (tests) holds them as files, and
so does the copy of the tester host's files that SNAPSHOT_SCRIPT makes (tester.ssh).
"""

import io
import ipaddress
import json
import os
import re
import shlex
import subprocess
import sys
import tarfile
import tempfile
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

from ..config.schema import SCHEMA
from ..config.checkers import lcore_cpus
from ..config.ports import parse_port
from ..util.errors import EngineError
from . import remote
from .client import has_pci_port

STATUSES = ("ok", "warn", "fail")
# Where a tree keeps what is not a file of /sys or /proc: addresses/IF (`ip -j addr show dev
# IF`), netns/NS/ (the namespace's /sys/class/net and /proc/net), netns-errors/NS (why NS could
# not be read).
SNAPSHOT_DIR = "xlatperf-doctor"


@dataclass(frozen=True)
class Check:
    name: str      # what was checked, e.g. "left 0000:3b:00.0: driver"
    status: str    # ok | warn | fail
    found: str     # what the check found
    fix: str = ""  # the command (or config line) that fixes it; "" when ok

    def to_dict(self) -> dict:
        return asdict(self)


# NIC families by PCI vendor and device ID: the driver DPDK takes each with.
INTEL, MELLANOX, REDHAT, VMWARE = "0x8086", "0x15b3", "0x1af4", "0x15ad"
MLX5 = "net_mlx5"
_FAMILIES = [
    (INTEL, {"0x1572", "0x1574", "0x1580", "0x1581", "0x1583", "0x1584", "0x1585", "0x1586", "0x1587", "0x1588",
             "0x1589", "0x158a", "0x158b", "0x15ff", "0x104e", "0x104f", "0x0cf8", "0x0d58", "0x37ce", "0x37cf",
             "0x37d0", "0x37d1", "0x37d2", "0x37d3"}, "Intel 700 series (X710/XL710/XXV710/X722)", "net_i40e"),
    (INTEL, {"0x1591", "0x1592", "0x1593", "0x1599", "0x159a", "0x159b", "0x188a", "0x12d1", "0x12d2", "0x12d3"},
     "Intel E810", "net_ice"),
    (INTEL, {"0x10f7", "0x10f8", "0x10f9", "0x10fb", "0x10fc", "0x1507", "0x1514", "0x1517", "0x151c", "0x1529",
             "0x152a", "0x154d", "0x1557", "0x1528", "0x1560", "0x1563", "0x15d1", "0x15ab", "0x15ac", "0x15ad",
             "0x15ae", "0x15c2", "0x15c3", "0x15c4", "0x15c6", "0x15c7", "0x15c8", "0x15ce", "0x15e4", "0x15e5"},
     "Intel 82599/X540/X550", "net_ixgbe"),
    (INTEL, {"0x105e", "0x105f", "0x107d", "0x107e", "0x107f", "0x10b9", "0x108b", "0x108c", "0x109a", "0x10d3",
             "0x10f6", "0x150c", "0x1502", "0x1503", "0x153a", "0x153b", "0x1559", "0x155a", "0x15a0", "0x15a1",
             "0x15a2", "0x15a3", "0x156f", "0x1570", "0x15b7", "0x15b8", "0x15b9", "0x15d6", "0x15d7", "0x15d8",
             "0x15e3"}, "Intel 82571-82574/82583/I217-I219 (e1000e)", "net_e1000_em"),
    (INTEL, {"0x100e", "0x100f", "0x1010", "0x1011", "0x1026", "0x1076", "0x1079"}, "Intel 8254x (e1000)",
     "net_e1000_em"),
    (INTEL, {"0x10c9", "0x10e6", "0x10e7", "0x10e8", "0x1526", "0x1521", "0x1522", "0x1523", "0x1524", "0x1533",
             "0x1536", "0x1537", "0x1538", "0x1539", "0x157b", "0x157c"}, "Intel 82576/I350/I210 (igb)",
     "net_e1000_igb"),
    (MELLANOX, {"0x1013", "0x1015", "0x1017", "0x1019", "0x101b", "0x101d", "0x101f", "0x1021", "0x1023"},
     "NVIDIA ConnectX-4/5/6/7", MLX5),
    (MELLANOX, {"0x1014", "0x1016", "0x1018", "0x101a", "0x101c", "0x101e"}, "NVIDIA ConnectX virtual function",
     MLX5),
    (MELLANOX, {"0xa2d2", "0xa2d6", "0xa2dc"}, "NVIDIA BlueField", MLX5),
    (REDHAT, {"0x1000", "0x1041"}, "virtio-net", "net_virtio"),
    (VMWARE, {"0x07b0"}, "VMware vmxnet3", "net_vmxnet3"),
]
# The kernel drivers DPDK works beside (bifurcated): the device stays on them.
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
    """The host's /sys and /proc below `root`. `addresses(iface)` lists an interface's
    addresses: from `addresses` where given (tests), else `ip -j addr show` on the host itself
    or its copy in the tree, and /proc/net/if_inet6's IPv6 ones. `netns(name)` is the view
    from inside a network namespace. A context manager: the namespaces' copies are removed at
    its end."""

    def __init__(self, root: str | os.PathLike = "/", addresses: Callable[[str], list[str]] | None = None):
        self.root = Path(root)
        self.live = self.root.resolve() == Path("/")
        self._addresses = addresses
        self._views: dict[str, tuple["Host | None", str]] = {}
        self._copies = ExitStack()

    def __enter__(self) -> "Host":
        return self

    def __exit__(self, *exc) -> None:
        self._copies.close()

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

    def addresses(self, interface: str) -> list[str]:
        """Every address on the interface (IPv4 and IPv6, link-local included)."""
        if self._addresses is not None:
            listed = list(self._addresses(interface))
        elif self.live:
            listed = _ip_addresses(interface)
        else:
            listed = _addresses_of(self.read(f"{SNAPSHOT_DIR}/addresses/{interface}"))
        known = {_normal(a) for a in listed}
        for line in self.read("/proc/net/if_inet6").splitlines():
            fields = line.split()
            if len(fields) == 6 and fields[5] == interface and len(fields[0]) == 32:
                address = str(ipaddress.IPv6Address(int(fields[0], 16)))
                if address not in known:
                    listed.append(address)
                    known.add(address)
        return listed

    def routes(self, interface: str) -> list[str]:
        """The routes through the interface in /proc/net/route and /proc/net/ipv6_route, as
        prefixes; IPv6's link-local and multicast routes, which the kernel gives every
        interface that is up, left out (as the engine's own check does)."""
        found = []
        for line in self.read("/proc/net/route").splitlines()[1:]:
            fields = line.split()
            if len(fields) >= 8 and fields[0] == interface:
                destination = ipaddress.IPv4Address(int(fields[1], 16).to_bytes(4, sys.byteorder))
                found.append(f"{destination}/{bin(int(fields[7], 16)).count('1')}")
        for line in self.read("/proc/net/ipv6_route").splitlines():
            fields = line.split()
            if len(fields) == 10 and fields[9] == interface and not fields[0].startswith(("fe80", "ff")):
                found.append(f"{ipaddress.IPv6Address(int(fields[0], 16))}/{int(fields[1], 16)}")
        return found

    def netns(self, name: str) -> tuple["Host | None", str]:
        """The view from inside network namespace `name` (its /sys/class/net and /proc/net), or
        None and why it cannot be had: a copy in the tree, else, on the host itself, one made
        now (entering a namespace takes root)."""
        if name not in self._views:
            self._views[name] = self._netns(name)
        return self._views[name]

    def _netns(self, name: str) -> tuple["Host | None", str]:
        copy = f"{SNAPSHOT_DIR}/netns/{name}"
        if self.path(copy).is_dir():
            return Host(self.path(copy)), ""
        why = self.read(f"{SNAPSHOT_DIR}/netns-errors/{name}").splitlines()[-1:]
        if not self.live:
            return None, (f"not checked: {why[0]}" if why else
                          "not checked here (the tree holds no copy of the namespace)")
        tree, why = snapshot(["sh", "-c", SNAPSHOT_SCRIPT, "xlatperf-doctor", f"netns={name}"], LOCAL_SECONDS)
        if tree is None:
            return None, f"not checked: {why}"
        self._copies.callback(tree.cleanup)
        return Host(Path(tree.name)).netns(name)


def _ip_addresses(interface: str) -> list[str]:
    """Every address `ip` shows on the interface (IPv4 and IPv6, link-local included)."""
    try:
        out = subprocess.run(["ip", "-j", "addr", "show", "dev", interface], capture_output=True, text=True,
                             timeout=10).stdout
        return _addresses_of(out)
    except (OSError, subprocess.TimeoutExpired):
        return []


def _addresses_of(listing: str) -> list[str]:
    """The addresses in `ip -j addr show`'s output."""
    try:
        return [a["local"] for entry in json.loads(listing or "[]") for a in entry.get("addr_info", []) if "local" in a]
    except (ValueError, TypeError, AttributeError):
        return []


def _normal(address: str) -> str:
    try:
        return str(ipaddress.ip_address(address.split("%")[0]))
    except ValueError:
        return address


def is_global(address: str) -> bool:
    """An address that puts an interface in use: neither link-local (169.254/16, fe80::/10)
    nor multicast (the engine's rule, engine/src/ports/safety.cpp)."""
    try:
        parsed = ipaddress.ip_address(address.split("/")[0].split("%")[0])
    except ValueError:
        return True
    return not (parsed.is_link_local or parsed.is_multicast)


def in_use(host: Host, interface: str) -> list[str]:
    """What the interface carries that the kernel answers or routes by: its global addresses
    and its routes ("" when none)."""
    return ([a for a in host.addresses(interface) if is_global(a)] +
            [f"route {route}" for route in host.routes(interface)])


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


def _family(host: Host, address: str) -> tuple[str, str] | None:
    return nic_family(host.read(f"{_device(address)}/vendor"), host.read(f"{_device(address)}/device"))


def device_check(host: Host, label: str, address: str) -> Check:
    """The PCI device exists, is a network controller, and its NIC family."""
    name = f"{label}: PCI device"
    side = label.split()[0]
    nics = [d for d in host.listdir("/sys/bus/pci/devices") if host.read(f"{_device(d)}/class").startswith("0x02")]
    pick = ("lspci -D | grep -i ethernet   # the host's NICs" + (f": {', '.join(nics)}" if nics else "") +
            f"; set {side}.port = \"pci:ADDRESS\" to one")
    if not host.exists(_device(address)):
        return Check(name, "fail", f"no PCI device {address}", pick)
    vendor, device = host.read(f"{_device(address)}/vendor"), host.read(f"{_device(address)}/device")
    kind = host.read(f"{_device(address)}/class")
    if kind and not kind.startswith("0x02"):
        return Check(name, "fail", f"{address} {vendor}:{device} is no network controller (PCI class {kind}; "
                     "a NIC's is 0x02....)", pick)
    family = nic_family(vendor, device)
    found = f"{address} {vendor}:{device} " + (f"{family[0]} ({family[1]})" if family else
                                               "(a NIC family xlatperf does not know: DPDK may)")
    return Check(name, "ok", found, "")


def _interfaces(host: Host, address: str) -> list[str]:
    """The device's kernel interfaces: in its net/ folder, or a child device's (virtio-net's
    virtioN/net/)."""
    device = _device(address)
    children = [f"{device}/{child}/net" for child in host.listdir(device) if child.startswith("virtio")]
    return sorted({name for folder in (f"{device}/net", *children) for name in host.listdir(folder)})


def _admin_up(host: Host, interface: str) -> bool:
    """The interface is set up (IFF_UP), whether or not its link is."""
    try:
        return bool(int(host.read(f"/sys/class/net/{interface}/flags", "0x0"), 16) & 1)
    except ValueError:
        return False


def driver_check(host: Host, label: str, address: str) -> Check:
    """vfio-pci; or, for a ConnectX, mlx5_core with its netdev up (DPDK's mlx5 driver works
    beside the kernel's and never through vfio-pci); anything else is to be rebound, never while
    its interface carries addresses or routes."""
    name = f"{label}: driver"
    if not host.exists(_device(address)):
        return Check(name, "fail", "no such device", "")
    driver = host.link_name(f"{_device(address)}/driver")
    family = _family(host, address)
    interfaces = _interfaces(host, address)
    busy = [f"{i}: {', '.join(use)}" for i in interfaces if (use := in_use(host, i))]
    if family and family[1] == MLX5 or driver in BIFURCATED:
        return _bifurcated_check(host, name, address, driver, interfaces, busy)
    modprobe = "" if host.exists("/sys/bus/pci/drivers/vfio-pci") else "modprobe vfio-pci && "
    bind = f"{modprobe}dpdk-devbind.py -b vfio-pci {address}"
    if driver == VFIO:
        return Check(name, "ok", "vfio-pci", "")
    if not driver:
        return Check(name, "fail", "no driver", bind)
    if busy:
        return Check(name, "fail", f"kernel driver {driver}, and its interface is in use ({'; '.join(busy)})",
                     " && ".join(f"ip addr flush dev {i} && ip link set {i} down" for i in interfaces) +
                     f"   # first make sure this host does not depend on it; then: {bind}")
    return Check(name, "fail", f"kernel driver {driver}" + (f" (interface {', '.join(interfaces)})" if interfaces else ""),
                 (" && ".join(f"ip link set {i} down" for i in interfaces) + " && " if interfaces else "") + bind)


def _bifurcated_check(host: Host, name: str, address: str, driver: str, interfaces: list[str],
                      busy: list[str]) -> Check:
    if driver not in BIFURCATED:
        modprobe = "" if host.exists("/sys/bus/pci/drivers/mlx5_core") else "modprobe mlx5_core && "
        return Check(name, "fail", f"{driver or 'no driver'}: DPDK's mlx5 driver takes a ConnectX beside the kernel's "
                     "mlx5_core, never through vfio-pci", f"{modprobe}dpdk-devbind.py -b mlx5_core {address}")
    down = [i for i in interfaces if not _admin_up(host, i)]
    if down or not interfaces:
        return Check(name, "fail", f"{driver} (bifurcated) with its interface down: {', '.join(down) or 'none'}",
                     " && ".join(f"ip link set {i} up" for i in (down or ["IFACE"])) +
                     "   # mlx5's DPDK driver works beside the kernel's, which must have the port up")
    if busy:
        return Check(name, "warn", f"{driver} (bifurcated), its interface carries addresses or routes: "
                     f"{'; '.join(busy)}", " && ".join(f"ip addr flush dev {i}" for i in interfaces) +
                     "   # the kernel would answer ARP/ND and take test traffic")
    return Check(name, "ok", f"{driver} (bifurcated: DPDK works beside it), interface {', '.join(interfaces)} up", "")


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
# The host checks, per af_packet / af_xdp port
# --------------------------------------------------------------------------------------------

def interface_check(host: Host, config, side: str, kind: str, interface: str) -> Check:
    """The kernel interface exists in tester.netns (or the host's own namespace), is up, and
    carries no global address or route, which the engine refuses unless tester.force."""
    name = f"{side} {kind}:{interface}: interface"
    netns = config.tester.netns
    ip = f"ip -n {netns}" if netns else "ip"
    where = f"in network namespace {netns}" if netns else "in the host's own namespace"
    view = host
    if netns:
        if not host.exists(f"/run/netns/{netns}"):
            if netns == SCHEMA["tester"]["netns"].default:
                create = "xlatperf lab up router4 --config-out lab.toml   # the lab's namespace (any lab kind); or "
            else:
                create = f"ip netns add {netns} && ip link set {interface} netns {netns}   # or "
            return Check(name, "fail", f'tester.netns = "{netns}": no such network namespace',
                         f"{create}tester.netns = \"\" for an interface of the host's own namespace")
        view, why = host.netns(netns)
        if view is None:
            return Check(name, "ok", f"{interface} {where}: {why}", "")
    if not view.exists(f"/sys/class/net/{interface}"):
        others = [i for i in view.listdir("/sys/class/net") if i != "lo"]
        if netns and host.exists(f"/sys/class/net/{interface}"):
            fix = f"ip link set {interface} netns {netns}   # it is in the host's own namespace"
        elif others:
            fix = f'{side}.port = "{kind}:{others[0]}"   # the interfaces {where}: {", ".join(others)}'
        else:
            fix = f"ip link set IFACE netns {netns}   # the namespace has no interface but lo" if netns else ""
        return Check(name, "fail", f"no interface {interface} {where}", fix)
    state = view.read(f"/sys/class/net/{interface}/operstate", "unknown")
    addresses = [a for a in view.addresses(interface) if is_global(a)]
    routes = view.routes(interface)
    if addresses or routes:
        flush = ([f"{ip} addr flush dev {interface} scope global"] if addresses else []) + \
                ([f"{ip} route flush dev {interface}"] if any(":" not in r for r in routes) else []) + \
                ([f"{ip} -6 route flush dev {interface}"] if any(":" in r for r in routes) else [])
        use = addresses + [f"route {r}" for r in routes]
        found = f"{interface} {where} carries {', '.join(use)}"
        if config.tester.force:
            return Check(name, "warn", f"{found}: tester.force = true, the engine takes it all the same",
                         " && ".join(flush) + "   # the kernel answers and routes by them")
        return Check(name, "fail", f"{found}: the engine refuses an interface in use", " && ".join(flush) +
                     "   # or tester.force = true, if the kernel may answer and route beside the tester")
    if not _admin_up(view, interface):
        return Check(name, "warn", f"{interface} {where} is down", f"{ip} link set {interface} up")
    if state not in ("up", "unknown"):
        return Check(name, "warn", f"{interface} {where} is up, its link {state}",
                     "bring up its other end: a veth's peer, the cable, the DUT's port")
    return Check(name, "ok", f"{interface} {where}: {state}, no global address or route", "")


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
    """The host's checks, in a stable order: per port, left then right, a PCI port's (device,
    driver, IOMMU, hugepages, lcores, PCIe link) or an af_packet/af_xdp port's interface; then
    the CPUs'. null and ring ports have nothing on the host to check. `addresses` replaces the
    reading of an interface's addresses (tests)."""
    with Host(root, addresses) as host:
        checks: list[Check] = []
        seen: set[tuple[str, str]] = set()
        for side in ("left", "right"):
            port = parse_port(config.side(side).port)
            if (port.kind, port.name) in seen:
                continue
            seen.add((port.kind, port.name))
            label = f"{side} {port.name}"
            if port.port_kind.dma:
                checks += [device_check(host, label, port.name), driver_check(host, label, port.name),
                           iommu_check(host, label, port.name), hugepages_check(host, label, port.name),
                           lcores_check(host, label, port.name, config), pcie_check(host, label, port.name)]
            elif port.port_kind.kernel_interface:
                checks.append(interface_check(host, config, side, port.kind, port.name))
        return checks + [isolation_check(host, config), governor_check(host, config), tsc_check(host)]


# --------------------------------------------------------------------------------------------
# Copies of what the checks read: the tester host's (tester.ssh), a namespace's
# --------------------------------------------------------------------------------------------

# Arguments: pci=ADDRESS (a PCI port), if=NAME (an interface of the host's own namespace),
# netns=NAME (a network namespace, seen from inside). Writes to stdout a tar archive of the
# files the host checks read (a PCI device's attributes, its driver, IOMMU group and interfaces,
# every PCI device's class, the NUMA nodes' CPUs and hugepages, the CPUs' isolation and
# governors, /proc's cpuinfo, mounts and routes; each interface's state and its addresses as
# `ip -j` prints them), symlinks as symlinks, so that the same checks run over the copy as
# over /. A namespace goes to SNAPSHOT_DIR/netns/NAME; why one could not be entered, to
# SNAPSHOT_DIR/netns-errors/NAME.
SNAPSHOT_SCRIPT = r"""
set -u
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
copy() { for f in "$@"; do [ -r "$f" ] && [ -f "$f" ] && mkdir -p "$tmp${f%/*}" && cat "$f" > "$tmp$f" 2>/dev/null; done; true; }
link() { for f in "$@"; do [ -L "$f" ] && mkdir -p "$tmp${f%/*}" && ln -s "$(readlink "$f")" "$tmp$f"; done; true; }
folder() { for f in "$@"; do [ -d "$f" ] && mkdir -p "$tmp$f"; done; true; }
# A namespace's interfaces, run in it: $1 the folder of the copy, then the interfaces ("*": all).
interfaces='
t=$1; shift
[ "${1:-}" = "*" ] && set -- $(ls /sys/class/net)
for f in /proc/net/route /proc/net/ipv6_route /proc/net/if_inet6; do
    [ -r "$f" ] && mkdir -p "$t${f%/*}" && cat "$f" > "$t$f"
done
for n in /sys/class/net/*; do [ -e "$n" ] && mkdir -p "$t$n"; done
mkdir -p "$t/xlatperf-doctor/addresses"
for i in "$@"; do
    [ -e "/sys/class/net/$i" ] || continue
    for f in operstate flags; do cat "/sys/class/net/$i/$f" > "$t/sys/class/net/$i/$f" 2>/dev/null; done
    ip -j addr show dev "$i" > "$t/xlatperf-doctor/addresses/$i" 2>/dev/null
done
true
'
copy /proc/cpuinfo /proc/mounts
copy /sys/devices/system/cpu/isolated /sys/devices/system/cpu/nohz_full /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor
copy /sys/devices/system/node/node*/cpulist /sys/devices/system/node/node*/hugepages/*/free_hugepages
copy /sys/kernel/mm/hugepages/*/free_hugepages /sys/module/vfio/parameters/enable_unsafe_noiommu_mode
copy /sys/bus/pci/devices/*/class
folder /sys/bus/pci/drivers/vfio-pci /sys/bus/pci/drivers/mlx5_core /sys/kernel/iommu_groups
names=
for item in "$@"; do
    case $item in
    pci=*)
        d=/sys/bus/pci/devices/${item#pci=}
        for key in vendor device numa_node current_link_width max_link_width current_link_speed max_link_speed; do copy "$d/$key"; done
        link "$d/driver" "$d/iommu_group"
        for i in "$d"/net/* "$d"/virtio*/net/*; do
            [ -e "$i" ] || continue
            folder "$i"
            names="$names ${i##*/}"
        done
        if [ -L "$d/iommu_group" ]; then
            g=$(readlink "$d/iommu_group"); g=${g##*/}
            folder "/sys/kernel/iommu_groups/$g"
            link /sys/kernel/iommu_groups/$g/devices/*
            for m in /sys/kernel/iommu_groups/$g/devices/*; do link "/sys/bus/pci/devices/${m##*/}/driver"; done
            [ -e "/dev/vfio/$g" ] && mkdir -p "$tmp/dev/vfio" && : > "$tmp/dev/vfio/$g"
        fi ;;
    if=*) names="$names ${item#if=}" ;;
    netns=*)
        ns=${item#netns=}
        [ -e "/run/netns/$ns" ] || continue
        mkdir -p "$tmp/run/netns" "$tmp/xlatperf-doctor/netns-errors" && : > "$tmp/run/netns/$ns"
        ip netns exec "$ns" sh -c "$interfaces" interfaces "$tmp/xlatperf-doctor/netns/$ns" "*" \
            2> "$tmp/xlatperf-doctor/netns-errors/$ns" || rm -rf "$tmp/xlatperf-doctor/netns/$ns"
        [ -s "$tmp/xlatperf-doctor/netns-errors/$ns" ] || rm -f "$tmp/xlatperf-doctor/netns-errors/$ns" ;;
    esac
done
sh -c "$interfaces" interfaces "$tmp" $names
tar -C "$tmp" -cf - .
"""
LOCAL_SECONDS = 30.0


def snapshot(command: list[str], timeout: float) -> tuple[tempfile.TemporaryDirectory | None, str]:
    """Runs SNAPSHOT_SCRIPT's `command` and unpacks its archive: (the folder, "") or (None,
    why not)."""
    try:
        run = subprocess.run(command, capture_output=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, str(exc)
    if run.returncode != 0 or not run.stdout:
        why = run.stderr.decode(errors="replace").strip().splitlines()[-1:] or [f"status {run.returncode}"]
        return None, why[0]
    folder = tempfile.TemporaryDirectory(prefix="xlatperf-doctor-")
    try:
        with tarfile.open(fileobj=io.BytesIO(run.stdout)) as archive:
            _extract(archive, folder.name)
    except (tarfile.TarError, OSError) as exc:
        folder.cleanup()
        return None, f"its copy could not be read: {exc}"
    return folder, ""


def _extract(archive: tarfile.TarFile, folder: str) -> None:
    """Nothing written outside `folder`; symlinks kept as they are (only their last part is
    read: a driver's, an IOMMU group's name). Python 3.11.2 (Debian 12's) has no extraction
    filters: the same rule checked member by member there."""
    if hasattr(tarfile, "tar_filter"):
        archive.extractall(folder, filter="tar")
        return
    base = os.path.realpath(folder)
    for member in archive.getmembers():
        parent = os.path.realpath(os.path.join(base, os.path.dirname(member.name)))
        if member.name.startswith("/") or ".." in Path(member.name).parts or \
                os.path.commonpath([base, parent]) != base:
            raise tarfile.TarError(f"{member.name}: outside the copy")
        if member.isfile() or member.isdir() or member.issym():
            archive.extract(member, folder, set_attrs=False)


def remote_host_checks(config) -> list[Check]:
    """host_checks on tester.ssh: its files copied here (SNAPSHOT_SCRIPT) and read as a tree."""
    items = []
    for spec in (config.left.port, config.right.port):
        port = parse_port(spec)
        if port.port_kind.dma:
            items.append(f"pci={port.name}")
        elif port.port_kind.kernel_interface:
            items.append(f"netns={config.tester.netns}" if config.tester.netns else f"if={port.name}")
    command = remote.ssh_command(config, shlex.join(["sh", "-c", SNAPSHOT_SCRIPT, "xlatperf-doctor",
                                                     *dict.fromkeys(items)]))
    tree, why = snapshot(command, remote.PROBE_SECONDS)
    if tree is None:
        return [Check("host", "fail", f"cannot read {remote.where(config)}: {why}", "check tester.ssh")]
    with tree:
        return host_checks(config, tree.name)


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
    if has_pci_port(config):
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
