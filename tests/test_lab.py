# SPDX-License-Identifier: BSD-3-Clause
"""Tests of xlatperf.lab: parameter checks (anyone), and the namespace testbeds (root only).

The root tests build every kind for real, check what exists, and send frames through each DUT
with tests/lab_probe.py running in the tester namespace; scapy builds and checks the frames.
They use the lab's fixed names, so they replace a lab that is up while they run.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from xlatperf import lab
from xlatperf.config.loading import load_config
from xlatperf.procedures.ceiling import ceiling_conditions
from xlatperf.lab import placement as placement_module
from xlatperf.lab import daemons

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("ip") is None, reason="needs root and iproute2")

PROBE = Path(__file__).with_name("lab_probe.py")
MARKER = b"xlatperf-lab-probe"

# What each kind must write, spelled out here rather than taken from lab.py.
TL, TR, DL, DR = "02:78:6c:00:00:01", "02:78:6c:00:00:02", "02:78:6c:00:01:01", "02:78:6c:00:01:02"
CL, CR = "02:78:6c:00:00:03", "02:78:6c:00:00:04"  # the calibration wire's tester ports
# The tester's links: its ports and the ends of the tc wires (loopback's own, the calibration
# wire of the other kinds).
LOOPBACK_LINKS = {"xlp-tl": TL, "xlp-tr": TR, "xlp-wl": "02:78:6c:00:02:01",
                  "xlp-wr": "02:78:6c:00:02:02"}
TESTER_LINKS = {"xlp-tl": TL, "xlp-tr": TR, "xlp-cl": CL, "xlp-cr": CR,
                "xlp-cwl": "02:78:6c:00:02:03", "xlp-cwr": "02:78:6c:00:02:04"}


def af_xdp_sockets() -> bool:
    try:
        socket.socket(44, socket.SOCK_RAW, 0).close()  # AF_XDP
    except OSError:
        return False
    return True
# The DUT's MACs are resolved by the tester (ARP/ND) from the DUT's addresses.
V4 = ({"ip_version": 4, "ipv4": "198.18.0.2", "dut_mac": "", "dut_ipv4": "198.18.0.1"},
      {"ip_version": 4, "ipv4": "198.19.0.2", "dut_mac": "", "dut_ipv4": "198.19.0.1"})
V6 = ({"ip_version": 6, "ipv6": "2001:2::2", "dut_mac": "", "dut_ipv6": "2001:2::1"},
      {"ip_version": 6, "ipv6": "2001:2:0:8000::2", "dut_mac": "", "dut_ipv6": "2001:2:0:8000::1"})
BR_RIGHT = {"ip_version": 4, "ipv4": "198.19.0.2", "ipv6": "2001:2:0:8000::2", "dut_ipv4": "198.19.0.1",
            "dut_mac": ""}
CE_WAN = {"ip_version": 4, "ipv4": "198.19.0.2", "ipv6": "2001:2:0:8000::2", "dut_ipv6": "2001:2:0:8000::1",
          "dut_mac": ""}
EXPECTED_SIDES = {
    "router4": V4,
    "router6": V6,
    "siit": ({"ip_version": 6, "ipv6": "2001:2::2", "virtual_ipv4": "198.18.0.2", "dut_mac": "",
              "dut_ipv6": "2001:2::1"},
             {"ip_version": 4, "ipv4": "198.19.0.2", "ipv6": "2001:2:0:8000::2",
              "virtual_ipv6": "2001:2:0:1::2", "dut_mac": "", "dut_ipv4": "198.19.0.1"}),
    "loopback": ({"ip_version": 4, "ipv4": "198.18.0.2", "dut_mac": TR},
                 {"ip_version": 4, "ipv4": "198.19.0.2", "dut_mac": TL}),
    "limit": V4,
    "lossy": V4,
    # The masquerade's public address: the left as the right sees it (the header checks).
    "nat44": ({**V4[0], "virtual_ipv4": "198.19.0.1"}, V4[1]),
    "nat66": ({**V6[0], "virtual_ipv6": "2001:2:0:8000::1"}, V6[1]),
    # A bridge: each side's frames addressed to the other tester port, which the bridge learns.
    "bridge": ({"ip_version": 4, "ipv4": "198.18.0.2", "dut_mac": TR},
               {"ip_version": 4, "ipv4": "198.19.0.2", "dut_mac": TL}),
    "nat64": ({"ip_version": 6, "ipv6": "2001:2::2", "virtual_ipv4": "198.19.0.1", "dut_mac": "",
               "dut_ipv6": "2001:2::1"},
              {"ip_version": 4, "ipv4": "198.19.0.2", "virtual_ipv6": "2001:2:0:6464::c613:2",
               "dut_mac": "", "dut_ipv4": "198.19.0.1"}),
    "vlan": ({**V4[0], "vlan": 100}, {**V4[1], "vlan": 200}),
    "464xlat": ({"ip_version": 4, "ipv4": "198.18.0.2", "dut_mac": "", "dut_ipv4": "198.18.0.1",
                 "virtual_ipv4": "198.19.0.1"},
                {"ip_version": 4, "ipv4": "198.19.0.2", "dut_mac": "", "dut_ipv4": "198.19.0.1"}),
    "dslite-aftr": ({"ip_version": 4, "ipv4": "192.0.0.2", "ipv6": "2001:db8:b4::1",
                     "next_hop_ipv6": "2001:2::2", "dut_ipv6": "2001:2::1", "dut_mac": "",
                     "virtual_ipv4": "198.19.0.1"},
                    BR_RIGHT),
    # The CEs' side carries IPv4 in IPv6: the DUT is resolved by ND there.
    # (native IPv6 routed on both sides too: RFC 8219 §5.3's background traffic)
    "mape-br": ({"ip_version": 4, "ipv6": "2001:2::2", "dut_ipv6": "2001:2::1", "dut_mac": ""}, BR_RIGHT),
    "lwaftr": ({"ip_version": 4, "ipv6": "2001:2::2", "dut_ipv6": "2001:2::1", "dut_mac": ""}, BR_RIGHT),
    # MAP-T: the CEs send IPv6, to the IPv4 host's address in the DMR (RFC 6052 /64).
    "mapt-br": ({"ip_version": 6, "ipv6": "2001:2::2", "dut_ipv6": "2001:2::1", "dut_mac": ""},
                {**BR_RIGHT, "virtual_ipv6": "2001:db8:ffff:0:c6:1300:200:0"}),
    # A CE alone: its LAN on the left (a MAP CE's or lwB4's own IPv4 address, a B4's LAN any),
    # the AFTR's or BR's side on the right, where the DUT is resolved by ND.
    "b4": ({"ip_version": 4, "ipv4": "198.18.0.2", "dut_ipv4": "198.18.0.1", "dut_mac": ""}, CE_WAN),
    "lwb4": ({"ip_version": 4, "ipv4": "100.64.0.2", "dut_ipv4": "198.18.0.1", "dut_mac": ""}, CE_WAN),
    "mape-ce": ({"ip_version": 4, "ipv4": "192.0.2.18", "dut_ipv4": "198.18.0.1", "dut_mac": ""}, CE_WAN),
    "mapt-ce": ({"ip_version": 4, "ipv4": "192.0.2.18", "dut_ipv4": "198.18.0.1", "dut_mac": ""},
                {**CE_WAN, "ip_version": 6, "virtual_ipv6": "2001:db8:ffff:0:c6:1300:200:0"}),
    # 464XLAT's CLAT alone: the client's IPv4, the server at its address in the PLAT's prefix.
    "clat": ({"ip_version": 4, "ipv4": "198.18.0.2", "virtual_ipv6": "2001:2:0:c1a7::2", "dut_mac": "",
              "dut_ipv4": "198.18.0.1"},
             {"ip_version": 6, "ipv6": "2001:2:0:6464::c613:2", "virtual_ipv4": "198.19.0.2",
              "next_hop_ipv6": "2001:2:0:8000::2", "dut_mac": "", "dut_ipv6": "2001:2:0:8000::1"}),
    # Dual DUTs: IPv4 on both tester ports (a MAP CE's LAN at the CE's own address).
    "mape-dual": ({"ip_version": 4, "ipv4": "192.0.2.18", "dut_ipv4": "198.18.0.1", "dut_mac": ""}, V4[1]),
    "mapt-dual": ({"ip_version": 4, "ipv4": "192.0.2.18", "dut_ipv4": "198.18.0.1", "dut_mac": ""}, V4[1]),
    "dslite-dual": ({**V4[0], "virtual_ipv4": "198.19.0.1"}, V4[1]),
    # 6rd (RFC 5969): IPv6 inside every role. The BR's CE side is IPv4 (the tester emulates the
    # CEs, CE 0's MAP address as the template); a CE alone's LAN in its delegated prefix
    # 2001:db8:1234::/48, its WAN IPv4 towards the BR the right port plays.
    "6rd-br": ({"ip_version": 6, "ipv4": "198.18.0.2", "dut_ipv4": "198.18.0.1", "ipv6": "2001:db8::6440:0:0",
                "dut_mac": ""}, V6[1]),
    "6rd-ce": ({"ip_version": 6, "ipv6": "2001:db8:1234::2", "dut_ipv6": "2001:db8:1234::1", "dut_mac": ""},
               {"ip_version": 6, "ipv4": "198.19.0.2", "dut_ipv4": "198.19.0.1", "ipv6": "2001:2:0:8000::2",
                "dut_mac": ""}),
    "6rd-dual": ({"ip_version": 6, "ipv6": "2001:db8:1234::2", "dut_ipv6": "2001:db8:1234::1", "dut_mac": ""},
                 V6[1]),
    # DNS64 resolvers: the client IPv6 on the left, the test zone's server IPv4 on the right.
    **{kind: ({"ip_version": 6, "ipv6": "2001:2::2", "dut_ipv6": "2001:2::1", "dut_mac": ""},
              {"ip_version": 4, "ipv4": "198.19.0.2", "dut_ipv4": "198.19.0.1",
               "virtual_ipv6": "2001:2:0:6464::c613:2", "dut_mac": ""})
       for kind in ("dns64-bind", "dns64-unbound", "dns64-pdns")},
}
RESOLVERS = {"dns64-bind": "named", "dns64-unbound": "unbound", "dns64-pdns": "pdns_recursor"}
DUAL = ("mape-dual", "mapt-dual", "dslite-dual", "6rd-dual")
# The [traffic] a kind's config has beyond the frame size: a MAP CE's LAN uses two of its ports.
EXPECTED_TRAFFIC = {"mape-dual": {"src_port": 1232, "dst_port": 1233},
                    "mapt-dual": {"src_port": 1232, "dst_port": 1233},
                    **{kind: {"direction": "forward"} for kind in RESOLVERS}}
EXPECTED_DUT_ADDRS = {
    "router4": {"xlp-dl": {"198.18.0.1/16"}, "xlp-dr": {"198.19.0.1/16"}},
    "router6": {"xlp-dl": {"2001:2::1/64"}, "xlp-dr": {"2001:2:0:8000::1/64"}},
    "siit": {"xlp-dl": {"2001:2::1/64"}, "xlp-dr": {"198.19.0.1/16", "2001:2:0:8000::1/64"}},
    "limit": {"xlp-dl": {"198.18.0.1/16"}, "xlp-dr": {"198.19.0.1/16"}},
    "lossy": {"xlp-dl": {"198.18.0.1/16"}, "xlp-dr": {"198.19.0.1/16"}},
    "nat44": {"xlp-dl": {"198.18.0.1/16"}, "xlp-dr": {"198.19.0.1/16"}},
    "bridge": {"xlp-dl": set(), "xlp-dr": set()},
    "nat66": {"xlp-dl": {"2001:2::1/64"}, "xlp-dr": {"2001:2:0:8000::1/64"}},
    "nat64": {"xlp-dl": {"2001:2::1/64"}, "xlp-dr": {"198.19.0.1/16"}},
    "vlan": {"xlp-dl": {"198.18.0.1/16"}, "xlp-dr": {"198.19.0.1/16"}},
    "464xlat": {"xlp-dl": {"198.18.0.1/16"}, "xlp-dr": {"198.19.0.1/16"}},
    "dslite-aftr": {"xlp-dl": {"2001:2::1/64", "192.0.0.1/29"}, "xlp-dr": {"198.19.0.1/16", "2001:2:0:8000::1/64"}},
    "mape-br": {"xlp-dl": {"2001:2::1/64"}, "xlp-dr": {"198.19.0.1/16", "2001:2:0:8000::1/64"}},
    "lwaftr": {"xlp-dl": {"2001:2::1/64"}, "xlp-dr": {"198.19.0.1/16", "2001:2:0:8000::1/64"}},
    "mapt-br": {"xlp-dl": {"2001:2::1/64"}, "xlp-dr": {"198.19.0.1/16", "2001:2:0:8000::1/64"}},
    **{kind: {"xlp-dl": {"198.18.0.1/16"}, "xlp-dr": {"2001:2:0:8000::1/64"}}
       for kind in ("b4", "lwb4", "mape-ce", "mapt-ce", "clat")},
    # Dual DUTs: the BR's (AFTR's) namespace, its CE side cabled to the CE's namespace.
    "mape-dual": {"xlp-dl": {"2001:2::1/64"}, "xlp-dr": {"198.19.0.1/16", "2001:2:0:8000::1/64"}},
    "mapt-dual": {"xlp-dl": {"2001:2::1/64"}, "xlp-dr": {"198.19.0.1/16", "2001:2:0:8000::1/64"}},
    "dslite-dual": {"xlp-dl": {"2001:2::1/64", "192.0.0.1/29"}, "xlp-dr": {"198.19.0.1/16", "2001:2:0:8000::1/64"}},
    **{kind: {"xlp-dl": {"2001:2::1/64"}, "xlp-dr": {"198.19.0.1/16"}} for kind in RESOLVERS},
    # 6rd: the BR's CE side and a CE's WAN are IPv4, the CE's LAN in its delegated prefix.
    "6rd-br": {"xlp-dl": {"198.18.0.1/16"}, "xlp-dr": {"2001:2:0:8000::1/64"}},
    "6rd-ce": {"xlp-dl": {"2001:db8:1234::1/64"}, "xlp-dr": {"198.19.0.1/16"}},
    "6rd-dual": {"xlp-dl": {"198.18.0.1/16"}, "xlp-dr": {"2001:2:0:8000::1/64"}},
}
# A dual DUT's CE namespace: its LAN (the tester's left port's peer, moved) and its WAN (6rd's
# IPv4, the others' IPv6).
EXPECTED_CE_ADDRS = {"xlp-el": {"198.18.0.1/16"}, "xlp-ew": {"2001:2::2/64"}}
EXPECTED_6RD_CE_ADDRS = {"xlp-el": {"2001:db8:1234::1/64"}, "xlp-ew": {"198.18.0.2/16"}}


def sh(*cmd: str) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def namespaces() -> set[str]:
    return {line.split()[0] for line in sh("ip", "netns", "list").splitlines() if line.strip()}


def links(ns: str) -> dict[str, dict]:
    return {link["ifname"]: link for link in json.loads(sh("ip", "-n", ns, "-j", "addr", "show"))}


def alive(pid: int) -> bool:
    """True for a running process (a zombie waiting for init to reap it is not running)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def lab_taygas() -> list[int]:
    """Live processes that run TAYGA with the lab's configuration."""
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        confs = [a for a in cmdline.split(b"\0") if a.startswith(lab.LAB_DIR.encode() + b"/tayga")]
        if proc.name.isdigit() and confs and alive(int(proc.name)):
            pids.append(int(proc.name))
    return pids


def probe(send: str, recv: str, frames: list, count: int | None = None) -> dict:
    """Sends `frames` on tester port `send`, returns what arrived on tester port `recv`."""
    request = {"frames": [bytes(f).hex() for f in frames], "marker": MARKER.hex()}
    if count is not None:
        request["count"] = count
    out = subprocess.run(["ip", "netns", "exec", lab.TESTER_NS, sys.executable, str(PROBE),
                          send, recv], input=json.dumps(request), capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out)


@pytest.fixture(autouse=True)
def _no_lab_left(exclusive_lab):
    yield
    if os.geteuid() == 0:
        lab.lab_down()


# --- parameters (no root needed) ----------------------------------------------------------------

def test_kinds_describe_themselves_and_their_defaults_are_valid():
    assert set(lab.KINDS) == set(EXPECTED_SIDES)
    text = lab.format_kinds()
    for kind, spec in lab.KINDS.items():
        assert spec.description and kind in text
        for name, param in spec.params.items():
            assert {"default", "allowed", "help"} <= set(param)
            assert f"{name}={param['default']}" in text
        lab.resolve_params(kind, {})  # the defaults pass their own validation


@pytest.mark.parametrize(("kind", "params", "named"), [
    ("router5", {}, ["'router5'", "router4", "siit", "loopback"]),
    ("loopback", {"rate": "1000"}, ["'loopback'", "'rate'", "calibrate, lcores, ports"]),
    ("router4", {"ports": "pcap"}, ["ports='pcap'", "auto, af_xdp or af_packet"]),
    ("router4", {"calibrate": "maybe"}, ["calibrate='maybe'", "yes or no"]),
    ("siit", {"lcores": "0"}, ["lcores='0'", "at least two lcores", "tester.lcores"]),
    ("siit", {"lcores": "0,4095"}, ["lcores='0,4095'", "CPU 4095 is not online"]),
    ("router4", {"addresses": "70000"}, ["addresses='70000'", "1..65533"]),
    ("router6", {"gateway": "maybe"}, ["gateway='maybe'", "yes or no"]),
    ("limit", {"rat": "1000"},
     ["'limit'", "'rat'", "addresses, burst, calibrate, family, gateway, lcores, mtu, ports, rate"]),
    ("limit", {"rate": "fast"}, ["rate='fast'", "1..100000000"]),
    ("limit", {"rate": "0"}, ["rate='0'", "1..100000000"]),
    ("limit", {"burst": "-5"}, ["burst='-5'", "auto or an integer"]),
    ("limit", {"family": "5"}, ["family='5'", "4 or 6"]),
    ("lossy", {"loss": "1.5"}, ["loss='1.5'", "0..1"]),
    ("lossy", {"loss": "nan"}, ["loss='nan'", "0..1"]),
    ("router4", {"mtu": "70000"}, ["mtu='70000'", "1280..65535"]),
    ("vlan", {"left_vlan": "4095"}, ["left_vlan='4095'", "1..4094"]),
    ("vlan", {"right_outer": "-1"}, ["right_outer='-1'", "0 (one tag) or a VLAN ID 1..4094"]),
    ("bridge", {"flood": "maybe"}, ["flood='maybe'", "yes or no"]),
])
def test_bad_kind_or_param_is_named_in_the_error(kind, params, named, tmp_path):
    with pytest.raises(lab.LabError) as err:
        lab.lab_up(kind, params, str(tmp_path / "lab.toml"))
    for text in named:
        assert text in str(err.value)
    assert not (tmp_path / "lab.toml").exists()


def test_limit_burst_holds_50ms_of_frames_but_at_least_100():
    assert lab.auto_burst(10_000) == 500
    assert lab.auto_burst(1_000_000) == 50_000
    assert lab.auto_burst(1_000) == 100
    assert lab.resolve_params("limit", {"rate": "30000"})["burst"] == 1500
    assert lab.resolve_params("limit", {"burst": "7"})["burst"] == 7


def test_loss_is_quantised_to_65536ths():
    assert lab.loss_threshold(0.01) == 655
    assert "numgen random mod 65536 < 0 " in lab.lossy_ruleset(0.0)
    assert "numgen random mod 65536 < 32768 " in lab.lossy_ruleset(0.5)
    assert "numgen" not in lab.lossy_ruleset(1.0)  # nft cannot compare a 16-bit value with 65536


# --- testbeds (root) ----------------------------------------------------------------------------

@needs_root
@pytest.mark.parametrize("kind", list(EXPECTED_SIDES))
def test_up_twice_builds_the_kind_and_down_twice_removes_it(kind, tmp_path):
    config = tmp_path / "lab.toml"
    lab.lab_up(kind, {}, str(config))
    first_tayga = daemons.read_pid(lab.TAYGA_PIDFILE)
    lab.lab_up(kind, {}, str(config))  # replaces the first lab

    expect_ns = {"xlp-tester"} if kind == "loopback" else {"xlp-tester", "xlp-dut"}
    if kind in DUAL:
        expect_ns.add("xlp-ce")
    assert {ns for ns in namespaces() if ns.startswith("xlp-")} == expect_ns

    tester = links("xlp-tester")
    expected_links = LOOPBACK_LINKS if kind == "loopback" else TESTER_LINKS
    assert set(tester) == {"lo", *expected_links}
    for port, mac in expected_links.items():
        assert tester[port]["address"] == mac
        assert {"UP", "PROMISC"} <= set(tester[port]["flags"])
        assert tester[port]["addr_info"] == []  # no IPv4, and IPv6 disabled: no link-local
        assert sh("ip", "netns", "exec", "xlp-tester", "sysctl", "-n",
                  f"net.ipv6.conf.{port}.disable_ipv6").strip() == "1"
        offloads = sh("ip", "netns", "exec", "xlp-tester", "ethtool", "-k", port)
        for feature in ("generic-receive-offload", "generic-segmentation-offload",
                        "tcp-segmentation-offload"):
            assert f"{feature}: off" in offloads

    def global_addrs(link: dict) -> set[str]:
        return {f"{a['local']}/{a['prefixlen']}" for a in link["addr_info"] if a["scope"] == "global"}

    if kind != "loopback":
        dut = links("xlp-dut")
        for dev, mac in (("xlp-dl", lab.names.CE_WAN_MACS[1] if kind in DUAL else DL), ("xlp-dr", DR)):
            assert dut[dev]["address"] == mac
            assert global_addrs(dut[dev]) == EXPECTED_DUT_ADDRS[kind][dev]
    if kind in DUAL:  # the tester's left port reaches the CE, whose WAN reaches the BR
        ce = links("xlp-ce")
        assert set(ce) == {"lo", "xlp-el", "xlp-ew"}
        assert (ce["xlp-el"]["address"], ce["xlp-ew"]["address"]) == (DL, lab.names.CE_WAN_MACS[0])
        for dev, addrs in (EXPECTED_6RD_CE_ADDRS if kind == "6rd-dual" else EXPECTED_CE_ADDRS).items():
            assert global_addrs(ce[dev]) - {"192.0.0.2/29"} == addrs
        # No static neighbour entries: the DUT resolves the tester dynamically.
        assert sh("ip", "-n", "xlp-dut", "neigh", "show", "nud", "permanent").strip() == ""

    ruleset = (sh("ip", "netns", "exec", "xlp-dut", "nft", "list", "ruleset")
               if kind in ("limit", "lossy") else "")
    if kind == "limit":
        assert ruleset.count("limit rate 10000/second burst 500 packets") == 2
    if kind == "lossy":
        assert ruleset.count("numgen random mod 65536 < 655 ") == 2

    if kind == "vlan":  # tc-BPF pops the tags on ingress and pushes them on egress
        for dev in ("xlp-dl", "xlp-dr"):
            assert "tag_pop" in sh("tc", "-n", "xlp-dut", "filter", "show", "dev", dev, "ingress")
            assert "tag_push" in sh("tc", "-n", "xlp-dut", "filter", "show", "dev", dev, "egress")

    if kind in ("mape-br", "lwaftr", "mapt-br", "6rd-br"):  # tc-BPF: from the CEs and to them
        assert "from_ce" in sh("tc", "-n", "xlp-dut", "filter", "show", "dev", "xlp-dl", "ingress")
        assert "to_ce" in sh("tc", "-n", "xlp-dut", "filter", "show", "dev", "xlp-dr", "ingress")

    if kind in ("b4", "lwb4", "mape-ce", "mapt-ce", "6rd-ce"):  # tc-BPF: from the LAN and from the WAN
        assert "from_lan" in sh("tc", "-n", "xlp-dut", "filter", "show", "dev", "xlp-dl", "ingress")
        assert "from_wan" in sh("tc", "-n", "xlp-dut", "filter", "show", "dev", "xlp-dr", "ingress")
    if kind in DUAL:
        assert "from_lan" in sh("tc", "-n", "xlp-ce", "filter", "show", "dev", "xlp-el", "ingress")
        assert "from_wan" in sh("tc", "-n", "xlp-ce", "filter", "show", "dev", "xlp-ew", "ingress")

    if kind == "siit":
        pid = daemons.read_pid(lab.TAYGA_PIDFILE)
        assert pid and alive(pid) and Path(f"/proc/{pid}/comm").read_text().strip() == "tayga"
        assert str(pid) in sh("ip", "netns", "pids", "xlp-dut").split()
        assert not alive(first_tayga)  # the second lab_up stopped the first TAYGA
        assert "xlp-nat64" in links("xlp-dut")
    if kind in RESOLVERS:  # the resolver runs in the DUT namespace, listening on the client's side
        resolver = daemons.read_pid(f"{lab.LAB_DIR}/{RESOLVERS[kind]}.pid")
        assert resolver and daemons.is_ours(resolver, RESOLVERS[kind])
        assert str(resolver) in sh("ip", "netns", "pids", "xlp-dut").split()
        assert "[2001:2::1]:53" in sh("ip", "netns", "exec", "xlp-dut", "ss", "-lun")

    cfg = tomllib.loads(config.read_text())
    assert cfg["tester"] == {"netns": "xlp-tester", "lcores": "0,1"}  # not calibrated here
    assert cfg["trial"] == {"pause": 2.0 if kind in RESOLVERS else 0.5, "max_lag": lab.LAB_MAX_LAG}
    if kind in RESOLVERS:
        assert cfg["throughput"] == {"max_rate": 20000}
        assert cfg["dns"] == {"enabled": True, "server": "2001:2::1", "zone": "dns64perf.test",
                              "synthesis": "2001:db8:64::/96"}
    ipv6_frames = 6 in (side["ip_version"] for side in EXPECTED_SIDES[kind])
    assert cfg.get("traffic") == (({"frame_size": 84} if ipv6_frames else {}) | EXPECTED_TRAFFIC.get(kind, {})
                                  or None)
    ports = "af_xdp" if af_xdp_sockets() else "af_packet"
    for side, port, mac, expected in (("left", "xlp-tl", TL, EXPECTED_SIDES[kind][0]),
                                      ("right", "xlp-tr", TR, EXPECTED_SIDES[kind][1])):
        assert cfg[side] == {"port": f"{ports}:{port}", "mac": mac, **expected}
    if kind in ("mape-br", "lwaftr"):
        assert cfg["ipv4aas"]["endpoint_ipv6"] == "2001:db8:ffff::1"
    # The calibration config: the same set-up (port type, frame size, directions, lcores) on
    # the calibration wire, whose ports send to each other.
    # (a DNS lab's: its queries, RFC 8219 §9.2.1's self-test, tests/test_dns_selftest.py)
    calibration = load_config(lab.CALIBRATION_CONFIG)
    assert ceiling_conditions(calibration) == ceiling_conditions(load_config(str(config)))
    wire = ("xlp-tl", "xlp-tr") if kind == "loopback" else ("xlp-cl", "xlp-cr")
    assert (calibration.left.port, calibration.right.port) == tuple(f"{ports}:{p}" for p in wire)
    assert calibration.left.dut_mac == expected_links[wire[1]]
    assert calibration.right.dut_mac == expected_links[wire[0]]

    state = lab.lab_state()
    assert state["kind"] == kind and state["config"] == str(config)

    lab.lab_down()
    lab.lab_down()
    assert not [ns for ns in namespaces() if ns.startswith("xlp-")]
    assert lab.lab_state() is None and not Path(lab.LAB_DIR).exists()
    if kind == "siit":
        assert not alive(pid) and not lab_taygas()
    if kind in RESOLVERS:
        assert not alive(resolver)


@needs_root
def test_a_failure_midway_removes_what_was_built():
    with pytest.raises(lab.LabError) as err:
        lab.lab_up("siit", {}, "/proc/xlatperf-lab.toml")  # fails last, after TAYGA started
    assert "siit" in str(err.value) and "cleaned up" in str(err.value)
    assert not [ns for ns in namespaces() if ns.startswith("xlp-")]
    assert lab.lab_state() is None
    assert not lab_taygas()


def udp(payload: bytes = MARKER) -> UDP:
    return UDP(sport=49184, dport=7) / Raw(payload)


L4, R4 = "198.18.0.2", "198.19.0.2"  # tester IPv4 addresses, left and right
L6, R6 = "2001:2::2", "2001:2:0:8000::2"  # tester IPv6 addresses
R4_AS_6 = "2001:2:0:1::2"  # the right tester's IPv4 address as the SIIT maps it

# case: (kind, sending tester port, frame sent, receiving tester port, frame expected there)
FORWARDING = {
    "router4 forward": ("router4", "xlp-tl", Ether(src=TL, dst=DL) / IP(src=L4, dst=R4),
                        "xlp-tr", Ether(src=DR, dst=TR) / IP(src=L4, dst=R4, ttl=63)),
    "router4 reverse": ("router4", "xlp-tr", Ether(src=TR, dst=DR) / IP(src=R4, dst=L4),
                        "xlp-tl", Ether(src=DL, dst=TL) / IP(src=R4, dst=L4, ttl=63)),
    "router6 forward": ("router6", "xlp-tl", Ether(src=TL, dst=DL) / IPv6(src=L6, dst=R6),
                        "xlp-tr", Ether(src=DR, dst=TR) / IPv6(src=L6, dst=R6, hlim=63)),
    "siit forward": ("siit", "xlp-tl", Ether(src=TL, dst=DL) / IPv6(src=L6, dst=R4_AS_6),
                     "xlp-tr", Ether(src=DR, dst=TR) / IP(src=L4, dst=R4)),
    "siit reverse": ("siit", "xlp-tr", Ether(src=TR, dst=DR) / IP(src=R4, dst=L4),
                     "xlp-tl", Ether(src=DL, dst=TL) / IPv6(src=R4_AS_6, dst=L6)),
    "siit background": ("siit", "xlp-tl", Ether(src=TL, dst=DL) / IPv6(src=L6, dst=R6),
                        "xlp-tr", Ether(src=DR, dst=TR) / IPv6(src=L6, dst=R6, hlim=63)),
    "loopback": ("loopback", "xlp-tl", Ether(src=TL, dst=TR) / IP(src=L4, dst=R4),
                 "xlp-tr", Ether(src=TL, dst=TR) / IP(src=L4, dst=R4)),
    "loopback reverse": ("loopback", "xlp-tr", Ether(src=TR, dst=TL) / IPv6(src=R6, dst=L6),
                         "xlp-tl", Ether(src=TR, dst=TL) / IPv6(src=R6, dst=L6)),
    "calibration wire": ("siit", "xlp-cl", Ether(src=CL, dst=CR) / IP(src=L4, dst=R4),
                         "xlp-cr", Ether(src=CL, dst=CR) / IP(src=L4, dst=R4)),
}


def pin_tester_neighbours() -> None:
    """The probe answers no ARP/ND (the engine does that in a real run): give the DUT static
    entries for every tester address the frames below are delivered to."""
    for dev, mac, addresses in (("xlp-dl", TL, (L4, L6)), ("xlp-dr", TR, (R4, R6))):
        for address in addresses:
            subprocess.run(["ip", "-n", "xlp-dut", "neigh", "replace", address, "lladdr", mac,
                            "dev", dev, "nud", "permanent"], capture_output=True)


@needs_root
@pytest.mark.parametrize("case", list(FORWARDING))
def test_a_frame_crosses_the_dut(case, tmp_path):
    kind, send, sent, recv, expected = FORWARDING[case]
    lab.lab_up(kind, {}, str(tmp_path / "lab.toml"))
    if kind != "loopback" and send != "xlp-cl":
        pin_tester_neighbours()
    result = probe(send, recv, [sent / udp()])
    assert result["received"] == 1, f"{case}: nothing arrived on {recv}"
    got = Ether(bytes.fromhex(result["frames"][0]))
    want = Ether(bytes(expected / udp()))  # built and checksummed by scapy, the oracle
    assert (got.src, got.dst, got.type) == (want.src, want.dst, want.type)
    got_ip, want_ip = got.payload, want.payload
    assert (got_ip.src, got_ip.dst) == (want_ip.src, want_ip.dst)
    if case not in ("siit forward", "siit reverse"):  # TAYGA sets its own TTL, DF, id
        assert bytes(got_ip) == bytes(want_ip)  # the whole packet, checksums included
    assert bytes(got[UDP]) == bytes(want[UDP])  # translation kept the UDP datagram intact


@needs_root
def test_limit_passes_the_burst_then_the_rate(tmp_path):
    lab.lab_up("limit", {"rate": "1000", "burst": "100"}, str(tmp_path / "lab.toml"))
    pin_tester_neighbours()
    frame = Ether(src=TL, dst=DL) / IP(src=L4, dst=R4) / udp()
    result = probe("xlp-tl", "xlp-tr", [frame], count=600)  # back to back: far above 1000/s
    # The bucket starts full (100 frames) and refills at 1000/s while the probe sends.
    assert 100 <= result["received"] < 400


def test_a_flooding_bridges_tester_sends_to_a_mac_nobody_has():
    nobody = "02:78:6c:00:ff:ff"
    sides = lab.tester_config("bridge", lab.resolve_params("bridge", {"flood": "yes"}))
    assert (sides["left"]["dut_mac"], sides["right"]["dut_mac"]) == (nobody, nobody)
    assert nobody not in {TL, TR, DL, DR, CL, CR, *TESTER_LINKS.values(), *LOOPBACK_LINKS.values()}
    sides = lab.tester_config("bridge", lab.resolve_params("bridge", {}))
    assert (sides["left"]["dut_mac"], sides["right"]["dut_mac"]) == (TR, TL)


@needs_root
def test_a_flooding_bridge_hands_frames_to_a_mac_nobody_has_to_the_other_tester_port(tmp_path):
    """flood=yes: the bridge never learns the destination, so each frame leaves by every other
    port, as sent (the tester's receiving port takes it in promiscuously)."""
    lab.lab_up("bridge", {"flood": "yes"}, str(tmp_path / "lab.toml"))
    nobody = "02:78:6c:00:ff:ff"
    for send, recv, src, addresses in (("xlp-tl", "xlp-tr", TL, (L4, R4)), ("xlp-tr", "xlp-tl", TR, (R4, L4))):
        result = probe(send, recv, [Ether(src=src, dst=nobody) / IP(src=addresses[0], dst=addresses[1]) / udp()],
                       count=20)
        assert result["received"] == 20, (send, result)
        got = Ether(bytes.fromhex(result["frames"][0]))
        assert (got.src, got.dst) == (src, nobody)
        assert got[IP].ttl == 64  # as sent: no router on the way


@needs_root
def test_lossy_drops_its_share(tmp_path):
    lab.lab_up("lossy", {"loss": "0.5", "family": "6"}, str(tmp_path / "lab.toml"))
    pin_tester_neighbours()
    frame = Ether(src=TR, dst=DR) / IPv6(src=R6, dst=L6) / udp()
    result = probe("xlp-tr", "xlp-tl", [frame], count=2000)
    assert 890 <= result["received"] <= 1110  # 1000 +- 5 standard deviations


@needs_root
@pytest.mark.parametrize(("kind", "routes"), [
    ("router4", {"198.18.0.0/16 via 10.0.0.2", "198.19.0.0/16 via 10.0.1.2"}),
    ("router6", {"2001:2::/64 via 2001:2:0:1000::2", "2001:2:0:8000::/64 via 2001:2:0:9000::2"}),
])
def test_gateway_variant_routes_each_test_range_to_a_next_hop(kind, routes, tmp_path):
    config_path = tmp_path / "lab.toml"
    lab.lab_up(kind, {"gateway": "yes", "addresses": "1000"}, str(config_path))
    family = "-6" if kind == "router6" else "-4"
    table = sh("ip", family, "-n", "xlp-dut", "route")
    for route in routes:
        assert route in table
    config = tomllib.loads(config_path.read_text())
    version = 6 if kind == "router6" else 4
    hops = {config[side][f"next_hop_ipv{version}"] for side in ("left", "right")}
    assert hops == {r.split(" via ")[1] for r in routes}
    assert config["addresses"]["left"] == "random" and config["addresses"]["left_max"] == 1001


@needs_root
def test_many_addresses_raise_the_neighbour_limits_and_down_restores_them(tmp_path):
    key = "net.ipv4.neigh.default.gc_thresh3"
    before = sh("sysctl", "-n", key).strip()
    lab.lab_up("router4", {"addresses": "3000"}, str(tmp_path / "lab.toml"))
    assert int(sh("sysctl", "-n", key)) >= 6000  # both sides' addresses fit
    lab.lab_down()
    assert sh("sysctl", "-n", key).strip() == before


CONNTRACK_GLOBAL = ("net.netfilter.nf_conntrack_max", "net.netfilter.nf_conntrack_buckets")
BACKLOG = "net.core.netdev_max_backlog"


@needs_root
@pytest.mark.parametrize("kind", ["nat44", "nat66", "nat64", "464xlat"])
def test_nat_kinds_size_conntrack_write_stateful_configs_and_down_restores(kind, tmp_path):
    # The conntrack sizes, and the receive backlog every lab with a DUT raises (LAB_BACKLOG).
    changed = (*CONNTRACK_GLOBAL, BACKLOG)
    before = {key: sh("sysctl", "-n", key).strip() for key in changed}
    config_path = tmp_path / "lab.toml"
    params = {"table_size": "5000", "buckets": "4096", "timeout": "600"}
    lab.lab_up(kind, params, str(config_path))
    lab.lab_up(kind, params, str(config_path))  # twice: the original values stay recorded
    assert lab.lab_state()["restore_sysctl"] == {key: int(v) for key, v in before.items()}
    assert [sh("sysctl", "-n", key).strip() for key in CONNTRACK_GLOBAL] == ["5000", "4096"]
    assert int(sh("sysctl", "-n", BACKLOG)) >= lab.LAB_BACKLOG
    for key in ("net.netfilter.nf_conntrack_udp_timeout",
                "net.netfilter.nf_conntrack_udp_timeout_stream"):
        assert sh("ip", "netns", "exec", "xlp-dut", "sysctl", "-n", key).strip() == "600"
    ruleset = sh("ip", "netns", "exec", "xlp-dut", "nft", "list", "ruleset")
    assert f"table {'ip6' if kind == 'nat66' else 'ip'} xlp_nat" in ruleset
    assert 'oifname "xlp-dr" masquerade' in ruleset
    assert 'iifname "xlp-dr" ct state established,related accept' in ruleset
    if kind == "nat64":
        conf = Path(lab.TAYGA_CONF).read_text()
        assert "dynamic-pool 198.18.0.0/16" in conf and "prefix 2001:2:0:6464::/96" in conf
        assert lab_taygas()
    if kind == "464xlat":  # the CLAT and the PLAT: two TAYGAs
        clat = Path(lab.LAB_DIR, "tayga-clat.conf").read_text()
        plat = Path(lab.LAB_DIR, "tayga-plat.conf").read_text()
        assert "map 198.18.0.2 2001:2:0:c1a7::2" in clat and "prefix 2001:2:0:6464::/96" in clat
        assert "dynamic-pool 10.64.0.0/16" in plat
        assert len(lab_taygas()) == 2

    config = tomllib.loads(config_path.read_text())
    assert config["stateful"]["enabled"] and config["stateful"]["initiator"] == "left"
    assert config["ports"]["forward_src"] == "random"
    flush = "ip netns exec xlp-dut conntrack -F"
    assert config["dut"]["before_trial"] == config["dut"]["teardown"] == flush
    assert "nf_conntrack_max 5000" in config["dut"]["description"]
    from xlatperf.config.loading import load_config
    load_config(str(config_path))  # the stateful rules accept what the lab wrote
    subprocess.run(flush, shell=True, check=True, capture_output=True)  # the hook works

    lab.lab_down()
    lab.lab_down()
    assert {key: sh("sysctl", "-n", key).strip() for key in changed} == before
    assert not [ns for ns in namespaces() if ns.startswith("xlp-")] and not lab_taygas()


@needs_root
def test_nat44_translates_and_keeps_unsolicited_frames_out(tmp_path):
    lab.lab_up("nat44", {}, str(tmp_path / "lab.toml"))
    pin_tester_neighbours()
    out = Ether(src=TL, dst=DL) / IP(src=L4, dst=R4) / UDP(sport=1030, dport=7) / Raw(MARKER)
    got = probe("xlp-tl", "xlp-tr", [out])
    assert got["received"] == 1
    translated = Ether(bytes.fromhex(got["frames"][0]))
    assert (translated[IP].src, translated[IP].dst) == ("198.19.0.1", R4)
    # A frame from the right to the private side that no connection expects is dropped.
    stray = Ether(src=TR, dst=DR) / IP(src=R4, dst=L4) / UDP(sport=7, dport=1030) / Raw(MARKER)
    assert probe("xlp-tr", "xlp-tl", [stray])["received"] == 0


# --- CPU placement (placement.py) ----------------------------------------------------------------

@pytest.mark.parametrize(("lcores", "online", "workers", "dut"), [
    ("0,1", [0, 1], (1,), (0,)),            # this machine: the DUT shares the sleeping main's CPU
    ("1,0", [0, 1], (0,), (1,)),
    ("0,1", [0, 1, 2, 3], (1,), (2, 3)),    # the main lcore's CPU is left out when others remain
    ("0,2-3", [0, 1, 2, 3], (2, 3), (1,)),
    ("3,0", [0, 1, 2, 3], (0,), (1, 2)),
])
def test_the_dut_gets_the_cpus_no_worker_lcore_uses(lcores, online, workers, dut):
    placement = placement_module.plan_placement(lcores, online)
    assert placement.worker_cpus == workers and placement.dut_cpus == dut
    assert placement.main_cpu == int(lcores.split(",")[0].split("-")[0])
    assert f"CPU {','.join(map(str, dut))}" in placement.describe()


def test_cpu_masks_are_the_kernels_bitmap_format():
    assert placement_module.cpu_mask({0}) == "00000001"
    assert placement_module.cpu_mask({1, 3}) == "0000000a"
    assert placement_module.cpu_mask(range(36)) == "0000000f,ffffffff"
    for cpus in ({0}, {5, 40}, set(range(70))):
        assert placement_module.parse_cpu_mask(placement_module.cpu_mask(cpus)) == cpus
    assert placement_module.parse_cpu_mask("00000000") == set()
    assert placement_module.parse_cpu_list("0-2,5") == [0, 1, 2, 5]


def test_auto_ports_are_af_xdp_exactly_when_the_kernel_opens_an_af_xdp_socket():
    try:
        socket.socket(44, socket.SOCK_RAW, 0).close()
        expected = "af_xdp"
    except OSError:
        expected = "af_packet"
    assert lab.port_type("auto") == expected
    assert lab.port_type("af_packet") == "af_packet"
    # af_xdp receives no frame larger than one umem chunk: jumbo labs get af_packet.
    assert lab.port_type("auto", 9216) == "af_packet"
    assert lab.port_type("af_xdp", 9216) == "af_xdp"
    config = lab.tester_config("router4", lab.resolve_params("router4", {"ports": "af_packet"}))
    assert config["left"]["port"] == "af_packet:xlp-tl"


def sys_read(ns: str, path: str) -> str:
    return sh("ip", "netns", "exec", ns, "cat", path).strip()


def mask_cpus(mask: str) -> set[int]:
    value = int(mask.replace(",", ""), 16)
    return {bit for bit in range(value.bit_length()) if value >> bit & 1}


def task_cpus(pid: int) -> set[int]:
    cpus: set[int] = set()
    for task in os.listdir(f"/proc/{pid}/task"):
        cpus |= os.sched_getaffinity(int(task))
    return cpus


@needs_root
@pytest.mark.parametrize("kind", ["siit", "loopback"])
def test_the_duts_work_is_steered_off_the_tester_workers_cpus(kind, tmp_path):
    """What the kernel reports back (RPS masks in sysfs, TAYGA's affinity), against the worker
    CPUs of the tester.lcores the lab wrote: never the same CPU."""
    config = tmp_path / "lab.toml"
    lab.lab_up(kind, {}, str(config))
    lcores = tomllib.loads(config.read_text())["tester"]["lcores"]
    workers = {int(c) for c in lcores.split(",")[1:]}  # "0,1": main lcore 0, worker 1
    steered = ([("xlp-tester", "xlp-wl"), ("xlp-tester", "xlp-wr")] if kind == "loopback" else
               [("xlp-dut", "xlp-dl"), ("xlp-dut", "xlp-dr"),
                ("xlp-tester", "xlp-cwl"), ("xlp-tester", "xlp-cwr")])
    for ns, dev in steered:
        cpus = mask_cpus(sys_read(ns, f"/sys/class/net/{dev}/queues/rx-0/rps_cpus"))
        assert cpus and not cpus & workers, (dev, cpus, workers)
    if kind == "siit":
        (pid,) = lab_taygas()
        cpus = task_cpus(pid)
        assert cpus and not cpus & workers, ("tayga", cpus, workers)
    # The tester's ports are not steered: what the DUT (or the wire) sends them is delivered
    # on the CPU that sent it, the DUT's.
    for port in ("xlp-tl", "xlp-tr"):
        mask = sys_read("xlp-tester", f"/sys/class/net/{port}/queues/rx-0/rps_cpus")
        assert mask_cpus(mask) == set(), (port, mask)
