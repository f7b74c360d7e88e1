# SPDX-License-Identifier: BSD-3-Clause
"""xlatperf doctor's host checks (xlatperf/engine/doctor.py) over fake /sys and /proc trees:
for each check a tree that passes and one that fails (or warns), with the fix line; then the
command itself on a fake tree, with the fake engine for the engine half."""

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
    assert checks[0].found == f"{LEFT} 0x8086:0x1572 Intel 700 series (X710/XL710/XXV710) (net_i40e)"


def test_device(tree):
    assert check(tree, f"left {LEFT}: PCI device").status == "ok"
    result = check(tree, "left 0000:5e:00.0: PCI device", "left.port=pci:0000:5e:00.0")
    assert result.status == "fail" and result.found == "no PCI device 0000:5e:00.0"
    assert result.fix == (f"lspci -D | grep -i ethernet   # the host's NICs: {LEFT}, {RIGHT}; set left.port to one")


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
    tree.write("proc/net/route", "Iface\tDestination\tGateway\nens1f0\t00000000\t0102000A\n")
    result = check(tree, f"left {LEFT}: driver")
    assert result.status == "fail" and "ens1f0: 1 routes" in result.found


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
    monkeypatch.setenv("FAKE_SSH_FAIL", "Connection refused")
    (check,) = d.remote_host_checks(cfg)
    assert check.status == "fail" and "Connection refused" in check.found
