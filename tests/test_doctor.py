# SPDX-License-Identifier: BSD-3-Clause
"""xlatperf doctor's host checks (xlatperf/engine/doctor.py) over fake /sys and /proc trees:
for each check a tree that passes and one that fails (or warns), with the fix line; then the
command itself on a fake tree, with the fake engine for the engine half. Nothing here needs root
or touches the host's own devices and namespaces."""

import json
import os
from pathlib import Path

import pytest

from fakes import FAKE_ENGINE
from xlatperf.config import load_config
from xlatperf.engine import doctor as d
from xlatperf.ui import cli
from xlatperf.util.errors import EngineError

LEFT, RIGHT = "0000:3b:00.0", "0000:3b:00.1"
ROUTE_HEADER = "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\tMTU\tWindow\tIRTT\n"


class Tree:
    """A host's /sys and /proc as files under tmp_path: two X710 ports on vfio-pci in IOMMU
    groups of their own on node 0, hugepages free and mounted, isolated workers, performance
    governor, an invariant TSC, a full-width PCIe link: every check passes until a test spoils
    one thing."""

    def __init__(self, root: Path):
        self.root = root
        for cpu in range(4):
            self.write(f"sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor", "performance")
        self.write("sys/devices/system/cpu/isolated", "1-3")
        self.write("sys/devices/system/cpu/nohz_full", "1-3")
        self.write("sys/devices/system/node/node0/cpulist", "0-3")
        self.write("sys/devices/system/node/node0/hugepages/hugepages-2048kB/free_hugepages", "1024")
        self.write("proc/mounts", "sysfs /sys sysfs rw 0 0\nnodev /dev/hugepages hugetlbfs rw,relatime 0 0\n")
        self.write("proc/cpuinfo", "vendor_id\t: GenuineIntel\nflags\t\t: fpu tsc constant_tsc nonstop_tsc avx2\n")
        self.write("proc/net/route", "Iface\tDestination\tGateway\n")
        self.write("proc/net/ipv6_route", "")
        self.write("proc/net/if_inet6", "")
        self.interface("", "lo", "unknown", "0x9")
        self.write("sys/module/vfio/parameters/enable_unsafe_noiommu_mode", "N")
        (root / "sys/bus/pci/drivers/vfio-pci").mkdir(parents=True)
        for group, address in enumerate((LEFT, RIGHT), start=40):
            self.device(address, "0x8086", "0x1572", driver="vfio-pci", group=group)

    def write(self, path: str, text: str) -> None:
        file = self.root / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text)

    def link(self, path: str, target: str) -> None:
        file = self.root / path
        file.parent.mkdir(parents=True, exist_ok=True)
        if file.is_symlink():
            file.unlink()
        file.symlink_to(target)

    def device(self, address: str, vendor: str, device: str, *, driver: str = "", group: int | None = None,
               interface: str = "", operstate: str = "down") -> None:
        base = f"sys/bus/pci/devices/{address}"
        self.write(f"{base}/vendor", vendor)
        self.write(f"{base}/device", device)
        self.write(f"{base}/class", "0x020000")
        self.write(f"{base}/numa_node", "0")
        for key, value in (("current_link_width", "8"), ("max_link_width", "8"),
                           ("current_link_speed", "8.0 GT/s PCIe"), ("max_link_speed", "8.0 GT/s PCIe")):
            self.write(f"{base}/{key}", value)
        self.set_driver(address, driver)
        if group is not None:
            self.link(f"{base}/iommu_group", f"../../../kernel/iommu_groups/{group}")
            self.link(f"sys/kernel/iommu_groups/{group}/devices/{address}", f"../../../../bus/pci/devices/{address}")
            self.write(f"dev/vfio/{group}", "")
        if interface:
            (self.root / base / "net" / interface).mkdir(parents=True, exist_ok=True)
            self.write(f"sys/class/net/{interface}/operstate", operstate)
            self.write(f"sys/class/net/{interface}/flags", "0x1003" if operstate == "up" else "0x1002")

    def interface(self, netns: str, name: str, operstate: str = "up", flags: str = "0x1103",
                  addresses: list[str] = ()) -> None:
        """An interface of the host's own namespace (netns ""), or of a namespace as doctor's
        copy of it holds it (xlatperf-doctor/netns/NAME, /run/netns/NAME)."""
        base = f"xlatperf-doctor/netns/{netns}/" if netns else ""
        if netns:
            self.write(f"run/netns/{netns}", "")
            for proc in ("route", "ipv6_route", "if_inet6"):
                if not (self.root / f"{base}proc/net/{proc}").exists():
                    self.write(f"{base}proc/net/{proc}", "Iface\tDestination\n" if proc == "route" else "")
        self.write(f"{base}sys/class/net/{name}/operstate", operstate)
        self.write(f"{base}sys/class/net/{name}/flags", flags)
        self.write(f"{base}xlatperf-doctor/addresses/{name}",
                   json.dumps([{"ifname": name, "addr_info": [{"local": a} for a in addresses]}]))

    def set_driver(self, address: str, driver: str) -> None:
        path = self.root / f"sys/bus/pci/devices/{address}/driver"
        if path.is_symlink():
            path.unlink()
        if driver:
            self.link(f"sys/bus/pci/devices/{address}/driver", f"../../../bus/pci/drivers/{driver}")


@pytest.fixture
def tree(tmp_path) -> Tree:
    return Tree(tmp_path / "root")


def config(*overrides: str):
    return load_config(None, [f"left.port=pci:{LEFT}", f"right.port=pci:{RIGHT}", "tester.netns=",
                              "tester.hugepages=yes", "tester.lcores=0,1,2", *overrides])


def check(tree: Tree, name: str, *overrides: str, addresses=None) -> d.Check:
    checks = {c.name: c for c in d.host_checks(config(*overrides), tree.root, addresses or (lambda iface: []))}
    return checks[name]


def test_a_ready_host_passes_every_check(tree):
    checks = d.host_checks(config(), tree.root, lambda iface: [])
    assert [(c.name, c.status) for c in checks if c.status != "ok"] == []
    assert len(checks) == 2 * 6 + 3
    assert checks[0].found == f"{LEFT} 0x8086:0x1572 Intel 700 series (X710/XL710/XXV710/X722) (net_i40e)"
    assert [c.name for c in checks[:6]] == [f"left {LEFT}: {what}" for what in (
        "PCI device", "driver", "IOMMU", "hugepages", "lcores on its NUMA node", "PCIe link")]
    assert [c.name for c in checks[12:]] == ["CPUs: isolated workers", "CPUs: frequency governor",
                                             "CPUs: invariant TSC"]


def test_device(tree):
    assert check(tree, f"left {LEFT}: PCI device").status == "ok"
    result = check(tree, "left 0000:5e:00.0: PCI device", "left.port=pci:0000:5e:00.0")
    assert result.status == "fail" and result.found == "no PCI device 0000:5e:00.0"
    assert result.fix == (f"lspci -D | grep -i ethernet   # the host's NICs: {LEFT}, {RIGHT}; "
                          'set left.port = "pci:ADDRESS" to one')


def test_device_that_is_no_nic(tree):
    tree.device("0000:00:1f.2", "0x8086", "0xa102")
    tree.write("sys/bus/pci/devices/0000:00:1f.2/class", "0x010601")   # a SATA controller
    result = check(tree, "left 0000:00:1f.2: PCI device", "left.port=pci:0000:00:1f.2")
    assert result.status == "fail"
    assert result.found == "0000:00:1f.2 0x8086:0xa102 is no network controller (PCI class 0x010601; a NIC's is 0x02....)"
    assert result.fix.startswith(f"lspci -D | grep -i ethernet   # the host's NICs: {LEFT}, {RIGHT}")


@pytest.mark.parametrize("vendor, device, family", [
    ("0x8086", "0x1572", "Intel 700 series (X710/XL710/XXV710/X722) (net_i40e)"),
    ("0x8086", "0x158b", "Intel 700 series (X710/XL710/XXV710/X722) (net_i40e)"),
    ("0x8086", "0x1592", "Intel E810 (net_ice)"),
    ("0x8086", "0x10fb", "Intel 82599/X540/X550 (net_ixgbe)"),
    ("0x8086", "0x1528", "Intel 82599/X540/X550 (net_ixgbe)"),
    ("0x8086", "0x1563", "Intel 82599/X540/X550 (net_ixgbe)"),
    ("0x8086", "0x10d3", "Intel 82571-82574/82583/I217-I219 (e1000e) (net_e1000_em)"),
    ("0x8086", "0x100e", "Intel 8254x (e1000) (net_e1000_em)"),
    ("0x8086", "0x1521", "Intel 82576/I350/I210 (igb) (net_e1000_igb)"),
    ("0x15b3", "0x1017", "NVIDIA ConnectX-4/5/6/7 (net_mlx5)"),
    ("0x15b3", "0x101d", "NVIDIA ConnectX-4/5/6/7 (net_mlx5)"),
    ("0x1af4", "0x1041", "virtio-net (net_virtio)"),
    ("0x15ad", "0x07b0", "VMware vmxnet3 (net_vmxnet3)"),
    ("0x14e4", "0x16d7", "(a NIC family xlatperf does not know: DPDK may)"),
])
def test_device_family(tree, vendor, device, family):
    tree.device(LEFT, vendor, device, driver="vfio-pci", group=40)
    assert check(tree, f"left {LEFT}: PCI device").found == f"{LEFT} {vendor}:{device} {family}"


def test_driver_on_its_kernel_driver_gets_the_bind_line(tree):
    assert check(tree, f"left {LEFT}: driver").found == "vfio-pci"
    tree.device(LEFT, "0x8086", "0x1572", driver="i40e", group=40, interface="ens1f0")
    result = check(tree, f"left {LEFT}: driver")
    assert result.status == "fail" and result.found == "kernel driver i40e (interface ens1f0)"
    assert result.fix == f"ip link set ens1f0 down && dpdk-devbind.py -b vfio-pci {LEFT}"


def test_driver_bind_refused_while_the_interface_carries_addresses_or_routes(tree):
    tree.device(LEFT, "0x8086", "0x1572", driver="i40e", group=40, interface="ens1f0")
    result = check(tree, f"left {LEFT}: driver", addresses=lambda iface: ["192.0.2.7", "fe80::1"])
    assert result.status == "fail" and "its interface is in use (ens1f0: 192.0.2.7)" in result.found
    assert result.fix.startswith("ip addr flush dev ens1f0 && ip link set ens1f0 down   # first make sure")
    tree.write("proc/net/route", ROUTE_HEADER + "ens1f0\t00000000\t0102000A\t0003\t0\t0\t0\t00000000\t0\t0\t0\n")
    result = check(tree, f"left {LEFT}: driver")
    assert result.status == "fail" and "(ens1f0: route 0.0.0.0/0)" in result.found


def test_driver_bind_not_refused_for_the_kernels_own_link_local_and_multicast_routes(tree):
    """An interface that is up has fe80::/64 and ff00::/8 routes and a link-local address
    without anyone having used it: not counted, as the engine does not count them either."""
    tree.device(LEFT, "0x8086", "0x1572", driver="i40e", group=40, interface="ens1f0", operstate="up")
    tree.write("proc/net/ipv6_route", "".join(
        f"{dest} {length} {'0' * 32} 00 {'0' * 32} 00000100 00000001 00000000 00000001 ens1f0\n"
        for dest, length in (("fe800000000000000000000000000000", "40"), ("ff000000000000000000000000000000", "08"))))
    tree.write("proc/net/if_inet6", "fe800000000000000000000000000001 02 40 20 80 ens1f0\n")
    result = check(tree, f"left {LEFT}: driver")
    assert result.found == "kernel driver i40e (interface ens1f0)"
    assert result.fix == f"ip link set ens1f0 down && dpdk-devbind.py -b vfio-pci {LEFT}"
    # A global IPv6 address (in /proc/net/if_inet6) and its route are use.
    tree.write("proc/net/if_inet6", "20010db8000000000000000000000007 02 40 00 80 ens1f0\n")
    tree.write("proc/net/ipv6_route", f"20010db8000000000000000000000000 40 {'0' * 32} 00 {'0' * 32} 00000100 "
               "00000001 00000000 00000001 ens1f0\n")
    result = check(tree, f"left {LEFT}: driver")
    assert result.status == "fail"
    assert result.found == "kernel driver i40e, and its interface is in use (ens1f0: 2001:db8::7, route 2001:db8::/64)"


def test_driver_missing_and_vfio_pci_module_not_loaded(tree):
    tree.set_driver(LEFT, "")
    (tree.root / "sys/bus/pci/drivers/vfio-pci").rmdir()
    result = check(tree, f"left {LEFT}: driver")
    assert (result.status, result.found) == ("fail", "no driver")
    assert result.fix == f"modprobe vfio-pci && dpdk-devbind.py -b vfio-pci {LEFT}"


def test_driver_mlx5_is_bifurcated_and_needs_its_interface_up(tree):
    tree.device(LEFT, "0x15b3", "0x101d", driver="mlx5_core", interface="ens2f0np0", operstate="up")
    assert check(tree, f"left {LEFT}: driver").status == "ok"
    assert check(tree, f"left {LEFT}: IOMMU").found == "not needed: mlx5_core does the DMA mapping"
    tree.device(LEFT, "0x15b3", "0x101d", driver="mlx5_core", interface="ens2f0np0", operstate="down")
    result = check(tree, f"left {LEFT}: driver")
    assert result.status == "fail" and result.fix.startswith("ip link set ens2f0np0 up")


def test_driver_mlx5_with_addresses_warns(tree):
    tree.device(LEFT, "0x15b3", "0x101d", driver="mlx5_core", interface="ens2f0np0", operstate="up")
    result = check(tree, f"left {LEFT}: driver", addresses=lambda iface: ["198.51.100.1"])
    assert result.status == "warn" and result.found.endswith("ens2f0np0: 198.51.100.1")
    assert result.fix.startswith("ip addr flush dev ens2f0np0   #")


def test_driver_a_connectx_on_vfio_pci_goes_back_to_mlx5_core(tree):
    """DPDK's mlx5 driver takes a ConnectX only beside mlx5_core: vfio-pci (or no driver) is
    the wrong way round, and doctor never offers the vfio-pci bind for one."""
    tree.device(LEFT, "0x15b3", "0x1017", driver="vfio-pci", group=40)
    result = check(tree, f"left {LEFT}: driver")
    assert result.status == "fail" and result.found.startswith("vfio-pci: DPDK's mlx5 driver")
    assert result.fix == f"modprobe mlx5_core && dpdk-devbind.py -b mlx5_core {LEFT}"
    (tree.root / "sys/bus/pci/drivers/mlx5_core").mkdir(parents=True)
    tree.set_driver(LEFT, "")
    assert check(tree, f"left {LEFT}: driver").fix == f"dpdk-devbind.py -b mlx5_core {LEFT}"


def test_iommu(tree):
    assert check(tree, f"left {LEFT}: IOMMU").found == "IOMMU group 40, the device alone"
    # Another device of the group on a kernel driver: the group is not viable.
    tree.device("0000:3b:00.2", "0x8086", "0x1572", driver="i40e")
    tree.link("sys/kernel/iommu_groups/40/devices/0000:3b:00.2", "../../../../bus/pci/devices/0000:3b:00.2")
    result = check(tree, f"left {LEFT}: IOMMU")
    assert result.status == "fail" and result.found == "IOMMU group 40 is not viable: 0000:3b:00.2 (i40e) on other drivers"
    assert result.fix.startswith("dpdk-devbind.py -b vfio-pci 0000:3b:00.2")


def test_iommu_off_names_the_kernel_command_line(tree):
    for group in (40, 41):
        for entry in (tree.root / f"sys/kernel/iommu_groups/{group}/devices").iterdir():
            entry.unlink()
        (tree.root / f"sys/kernel/iommu_groups/{group}/devices").rmdir()
        (tree.root / f"sys/kernel/iommu_groups/{group}").rmdir()
    result = check(tree, f"left {LEFT}: IOMMU")
    assert result.status == "fail" and "intel_iommu=on iommu=pt" in result.fix
    tree.write("sys/module/vfio/parameters/enable_unsafe_noiommu_mode", "Y")
    assert check(tree, f"left {LEFT}: IOMMU").status == "warn"


def test_iommu_device_file_missing(tree):
    os.unlink(tree.root / "dev/vfio/40")
    result = check(tree, f"left {LEFT}: IOMMU")
    assert result.status == "fail" and result.found == "IOMMU group 40, but no /dev/vfio/40"


def test_hugepages(tree):
    assert check(tree, f"left {LEFT}: hugepages").found == "node 0: 2,048 MiB free, 1024 x 2048kB, hugetlbfs mounted"
    tree.write("sys/devices/system/node/node0/hugepages/hugepages-2048kB/free_hugepages", "10")
    result = check(tree, f"left {LEFT}: hugepages")
    assert result.status == "fail"
    assert result.fix == "echo 1024 > /sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages"
    tree.write("sys/devices/system/node/node0/hugepages/hugepages-2048kB/free_hugepages", "1024")
    tree.write("proc/mounts", "sysfs /sys sysfs rw 0 0\n")
    assert check(tree, f"left {LEFT}: hugepages").fix == "mkdir -p /dev/hugepages && mount -t hugetlbfs nodev /dev/hugepages"


def test_lcores_on_the_nics_node(tree):
    assert check(tree, f"left {LEFT}: lcores on its NUMA node").status == "ok"
    tree.write(f"sys/bus/pci/devices/{LEFT}/numa_node", "1")
    tree.write("sys/devices/system/node/node1/cpulist", "4-7")
    tree.write("sys/devices/system/node/node1/hugepages/hugepages-2048kB/free_hugepages", "1024")
    result = check(tree, f"left {LEFT}: lcores on its NUMA node")
    assert result.status == "warn" and result.fix == 'tester.lcores = "4,5,6"   # main and workers on node 1'


def test_isolated_workers(tree):
    assert check(tree, "CPUs: isolated workers").status == "ok"
    tree.write("sys/devices/system/cpu/isolated", "")
    tree.write("sys/devices/system/cpu/nohz_full", "(null)\n")   # Debian 12's kernel without nohz_full=
    result = check(tree, "CPUs: isolated workers")
    assert result.status == "warn" and result.fix.startswith("add 'isolcpus=1,2 nohz_full=1,2 rcu_nocbs=1,2'")


def test_governor(tree):
    assert check(tree, "CPUs: frequency governor").status == "ok"
    tree.write("sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "powersave")
    result = check(tree, "CPUs: frequency governor")
    assert result.status == "warn" and result.fix == "cpupower frequency-set -g performance"
    assert "CPU 1 powersave" in result.found


def test_invariant_tsc(tree):
    assert check(tree, "CPUs: invariant TSC").status == "ok"
    tree.write("proc/cpuinfo", "flags\t\t: fpu tsc constant_tsc\n")
    result = check(tree, "CPUs: invariant TSC")
    assert result.status == "warn" and result.found == "missing nonstop_tsc"


def test_pcie_link(tree):
    assert check(tree, f"left {LEFT}: PCIe link").found == "x8 at 8.0 GT/s PCIe (the device: x8 at 8.0 GT/s PCIe)"
    tree.write(f"sys/bus/pci/devices/{LEFT}/current_link_width", "4")
    result = check(tree, f"left {LEFT}: PCIe link")
    assert result.status == "warn" and result.found.startswith("x4 at 8.0 GT/s PCIe")
    # An emulated device (QEMU's e1000e): x0 of x255 at "Unknown" is no link to judge.
    for key, value in (("current_link_width", "0"), ("max_link_width", "255"),
                       ("current_link_speed", "Unknown"), ("max_link_speed", "Unknown")):
        tree.write(f"sys/bus/pci/devices/{LEFT}/{key}", value)
    assert check(tree, f"left {LEFT}: PCIe link").status == "ok"


def test_hugepages_no_with_a_pci_port_is_refused_naming_the_key(tree, tmp_path, capsys):
    path = tmp_path / "nic.toml"
    path.write_text(f'[left]\nport = "pci:{LEFT}"\n[right]\nport = "pci:{RIGHT}"\n')
    assert cli.main(["doctor", "-c", str(path), "--root", str(tree.root), "--set", "tester.hugepages=no"]) == 1
    assert 'tester.hugepages = "no": must be "auto" or "yes" with a PCI port' in capsys.readouterr().err


# --- af_packet / af_xdp ports: their kernel interface ----------------------------------------

LAB = "xlp-tester"   # the lab's namespace, tester.netns's default


def lab_config(*overrides: str):
    return load_config(None, ["left.port=af_xdp:xlp-tl", "right.port=af_xdp:xlp-tr", *overrides])


def interface(tree: Tree, side: str = "left", name: str = "xlp-tl", *overrides: str, kind: str = "af_xdp") -> d.Check:
    checks = {c.name: c for c in d.host_checks(lab_config(*overrides), tree.root)}
    return checks[f"{side} {kind}:{name}: interface"]


@pytest.fixture
def lab(tree) -> Tree:
    """The lab's tester namespace as doctor's copy of it holds it: two veths up, no address."""
    for name in ("lo", "xlp-tl", "xlp-tr", "xlp-cl"):
        tree.interface(LAB, name, "unknown" if name == "lo" else "up")
    return tree


def test_interface_in_the_labs_namespace(lab):
    checks = d.host_checks(lab_config(), lab.root)
    assert [(c.name, c.status) for c in checks] == [
        ("left af_xdp:xlp-tl: interface", "ok"), ("right af_xdp:xlp-tr: interface", "ok"),
        ("CPUs: isolated workers", "ok"), ("CPUs: frequency governor", "ok"), ("CPUs: invariant TSC", "ok")]
    assert checks[0].found == "xlp-tl in network namespace xlp-tester: up, no global address or route"


def test_interface_namespace_missing(tree):
    result = interface(tree)
    assert (result.status, result.found) == ("fail", 'tester.netns = "xlp-tester": no such network namespace')
    assert result.fix.startswith("xlatperf lab up router4 --config-out lab.toml   # the lab's namespace")
    result = interface(tree, "left", "xlp-tl", "tester.netns=tester")
    assert result.fix == ('ip netns add tester && ip link set xlp-tl netns tester   # or tester.netns = "" for an '
                          "interface of the host's own namespace")


def test_interface_missing(lab):
    result = interface(lab, "left", "eth7", "left.port=af_packet:eth7", kind="af_packet")
    assert (result.status, result.found) == ("fail", "no interface eth7 in network namespace xlp-tester")
    assert result.fix == ('left.port = "af_packet:xlp-cl"   # the interfaces in network namespace xlp-tester: '
                          'xlp-cl, xlp-tl, xlp-tr')
    lab.interface("", "eth7")   # in the host's own namespace: to be moved
    result = interface(lab, "left", "eth7", "left.port=af_packet:eth7", kind="af_packet")
    assert result.fix == "ip link set eth7 netns xlp-tester   # it is in the host's own namespace"


def test_interface_in_use_is_refused_unless_forced(lab):
    lab.interface(LAB, "xlp-tl", addresses=["192.0.2.1", "fe80::1", "169.254.1.1"])
    lab.write(f"xlatperf-doctor/netns/{LAB}/proc/net/route",
              ROUTE_HEADER + "xlp-tl\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n")
    result = interface(lab)
    assert result.status == "fail"
    assert result.found == ("xlp-tl in network namespace xlp-tester carries 192.0.2.1, route 192.0.2.0/24: "
                            "the engine refuses an interface in use")
    assert result.fix == ("ip -n xlp-tester addr flush dev xlp-tl scope global && ip -n xlp-tester route flush "
                          "dev xlp-tl   # or tester.force = true, if the kernel may answer and route beside the tester")
    result = interface(lab, "left", "xlp-tl", "tester.force=true")
    assert result.status == "warn" and "tester.force = true" in result.found


def test_interface_down(lab):
    lab.interface(LAB, "xlp-tr", "down", "0x1002")
    result = interface(lab, "right", "xlp-tr")
    assert (result.status, result.found) == ("warn", "xlp-tr in network namespace xlp-tester is down")
    assert result.fix == "ip -n xlp-tester link set xlp-tr up"
    lab.interface(LAB, "xlp-tr", "lowerlayerdown", "0x1003")   # up, its veth peer down
    result = interface(lab, "right", "xlp-tr")
    assert (result.status, result.found) == ("warn", "xlp-tr in network namespace xlp-tester is up, its link "
                                                     "lowerlayerdown")


def test_interface_in_the_hosts_own_namespace(tree):
    tree.interface("", "eth1")
    result = interface(tree, "left", "eth1", "left.port=af_packet:eth1", "tester.netns=", kind="af_packet")
    assert (result.status, result.found) == ("ok", "eth1 in the host's own namespace: up, no global address or route")
    tree.write("proc/net/if_inet6", "20010db8000000000000000000000001 03 40 00 80 eth1\n")
    result = interface(tree, "left", "eth1", "left.port=af_packet:eth1", "tester.netns=", kind="af_packet")
    assert result.status == "fail" and result.fix.startswith("ip addr flush dev eth1 scope global   # or tester.force")


def test_interface_in_a_namespace_the_fake_tree_does_not_copy_is_not_checked(tree):
    tree.write(f"run/netns/{LAB}", "")
    result = interface(tree)
    assert result.status == "ok" and result.found.startswith("xlp-tl in network namespace xlp-tester: not checked here")


def test_a_measurement_on_a_nic_left_on_its_kernel_driver_stops_with_the_fix(tree):
    tree.device(LEFT, "0x8086", "0x1572", driver="i40e", group=40, interface="ens1f0")
    with pytest.raises(EngineError, match=f"driver: kernel driver i40e .*fix: ip link set ens1f0 down && "
                                          f"dpdk-devbind.py -b vfio-pci {LEFT}"):
        d.require_ready_host(config(), tree.root)
    d.require_ready_host(load_config(None, ["left.port=null", "right.port=null"]), tree.root)  # no PCI port


def test_the_command_prints_each_check_and_exits_1_on_a_failure(tree, tmp_path, capsys):
    path = tmp_path / "nic.toml"
    path.write_text(f'[tester]\nnetns = ""\nhugepages = "yes"\nlcores = "0,1,2"\nengine = "{FAKE_ENGINE}"\n'
                    f'[left]\nport = "pci:{LEFT}"\n[right]\nport = "pci:{RIGHT}"\n')
    # Every host check passes: the engine (the fake one) starts and its ports are judged too.
    assert cli.main(["doctor", "-c", str(path), "--root", str(tree.root)]) == 0
    out = capsys.readouterr().out
    assert f"OK    left {LEFT}: driver" in out and "OK    ports: link" in out
    assert out.splitlines()[-1] == "22 ok, 0 warn, 0 fail"   # 15 host checks, 7 of the engine's ports
    tree.set_driver(RIGHT, "ixgbe")
    assert cli.main(["doctor", "-c", str(path), "--root", str(tree.root), "--json"]) == 1
    checks = json.loads(capsys.readouterr().out)
    driver = next(c for c in checks if c["name"] == f"right {RIGHT}: driver")
    assert driver == {"name": f"right {RIGHT}: driver", "status": "fail", "found": "kernel driver ixgbe",
                      "fix": f"dpdk-devbind.py -b vfio-pci {RIGHT}"}
    assert checks[-1] == {"name": "engine: ports", "status": "fail", "found": "not started: the host checks above failed",
                          "fix": "fix those first"}


def test_the_command_on_a_port_of_the_hosts_own_namespace(tree, tmp_path, capsys):
    """An af_packet port: its interface judged in the tree, the engine (the fake one) started."""
    tree.interface("", "lo", "unknown", "0x9")
    path = tmp_path / "lo.toml"
    path.write_text(f'[tester]\nnetns = ""\nengine = "{FAKE_ENGINE}"\n[left]\nport = "af_packet:lo"\n'
                    '[right]\nport = "null"\n')
    assert cli.main(["doctor", "-c", str(path), "--root", str(tree.root)]) == 0
    out = capsys.readouterr().out
    assert "OK    left af_packet:lo: interface" in out and "in the host's own namespace: unknown" in out
    tree.write("proc/net/if_inet6", "00000000000000000000000000000001 01 80 10 80 lo\n")   # ::1
    assert cli.main(["doctor", "-c", str(path), "--root", str(tree.root)]) == 1
    out = capsys.readouterr().out
    assert "FAIL  left af_packet:lo: interface" in out and "carries ::1" in out
    assert "      fix: ip addr flush dev lo scope global   # or tester.force = true" in out


def test_over_ssh_the_host_checks_read_the_tester_hosts_files(tmp_path, monkeypatch):
    """tester.ssh: the files the checks read are copied from the tester host (tests/fake_ssh
    runs the copy here) and the checks over the copy say what they say over / itself."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ssh").symlink_to(Path(__file__).parent / "fake_ssh")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    devices = sorted(os.listdir("/sys/bus/pci/devices"))
    assert devices, "this host has no PCI device to read"
    cfg = load_config(None, [f"left.port=pci:{devices[0]}", "right.port=null", "tester.netns=",
                             "tester.hugepages=yes", "tester.ssh=tester1"])
    remote = d.remote_host_checks(cfg)
    assert remote == d.host_checks(cfg) and len(remote) == 6 + 3
    # An af_packet port in the host's own namespace: its interface copied too.
    cfg = load_config(None, [f"left.port=pci:{devices[0]}", "right.port=af_packet:lo", "tester.netns=",
                             "tester.hugepages=yes", "tester.ssh=tester1"])
    remote = d.remote_host_checks(cfg)
    assert remote == d.host_checks(cfg) and len(remote) == 6 + 1 + 3
    assert remote[6].name == "right af_packet:lo: interface" and remote[6].status == "fail"   # lo has 127.0.0.1
    monkeypatch.setenv("FAKE_SSH_FAIL", "Connection refused")
    (check,) = d.remote_host_checks(cfg)
    assert check.status == "fail" and "Connection refused" in check.found


@pytest.mark.parametrize("filters", [True, False], ids=["extraction filters", "python 3.11.2: none"])
def test_a_copy_writes_nothing_outside_its_folder(tmp_path, monkeypatch, filters):
    import io
    import tarfile
    if not filters:
        monkeypatch.delattr(tarfile, "tar_filter", raising=False)

    def archive(*members: tuple[str, str]) -> Path:
        """A tar of (name, symlink target or file text prefixed with '=')."""
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            for name, what in members:
                info = tarfile.TarInfo(name)
                if what.startswith("="):
                    info.size = len(what) - 1
                    tar.addfile(info, io.BytesIO(what[1:].encode()))
                else:
                    info.type, info.linkname = tarfile.SYMTYPE, what
                    tar.addfile(info)
        path = tmp_path / f"copy{len(list(tmp_path.iterdir()))}.tar"
        path.write_bytes(buffer.getvalue())
        return path
    good = archive(("./sys/bus/pci/devices/x/vendor", "=0x8086"),
                   ("./sys/bus/pci/devices/x/driver", "../../../bus/pci/drivers/vfio-pci"))
    tree, why = d.snapshot(["cat", str(good)], 10)
    assert why == "" and tree is not None
    with tree:
        assert d.Host(tree.name).link_name("/sys/bus/pci/devices/x/driver") == "vfio-pci"
        assert d.Host(tree.name).read("/sys/bus/pci/devices/x/vendor") == "0x8086"
    outside = tmp_path / "outside"
    outside.mkdir()
    for bad in (archive(("../escaped", "=x")), archive(("./a", str(outside)), ("./a/escaped", "=x"))):
        tree, why = d.snapshot(["cat", str(bad)], 10)
        assert tree is None and why.startswith("its copy could not be read")
    assert not (tmp_path / "escaped").exists() and not (outside / "escaped").exists()
