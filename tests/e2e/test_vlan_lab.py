# SPDX-License-Identifier: BSD-3-Clause
"""VLAN tags end to end: the lab's reference DUT `vlan` (the kernel router with tc-BPF VLAN
termination, xlatperf/lab/kinds/vlan.py) checked first against known frames (scapy sends them,
tshark decodes what comes out), then VLAN-tagged trials (802.1Q and 802.1ad QinQ) through it
with the real engine."""

import subprocess

import pytest

from e2e_util import trials, xlatperf
from xlatperf import lab

TESTER_NS, DUT_NS = lab.TESTER_NS, lab.DUT_NS
FAST = ["--set", "trial.pause=0", "--set", "trial.timeout=0.5"]


def send_frames(layers: str, count: int = 3) -> None:
    """Sends `count` frames built by the scapy expression `layers` (between the tester's left
    MAC and the DUT's left MAC) from the tester's left port."""
    script = ("from scapy.all import *\n"
              f"f = Ether(src='{lab.MACS['xlp-tl']}', dst='{lab.MACS['xlp-dl']}')/{layers}\n"
              f"sendp(f, iface='xlp-tl', count={count}, verbose=False)\n")
    subprocess.run(["ip", "netns", "exec", TESTER_NS, "python3", "-c", script], check=True, timeout=60)


def capture_right(during, seconds: float = 1.5) -> list[dict]:
    """Frames leaving the DUT on the right while `during()` runs, decoded by tshark: per frame
    its VLAN IDs (outermost first: the 802.1ad S-tag, then 802.1Q C-tags), the protocols, and
    IPv4 source, destination and TTL."""
    pcap = f"/run/xlp-vlan-{id(during)}.pcap"
    dump = subprocess.Popen(["ip", "netns", "exec", TESTER_NS, "tcpdump", "-U", "-n", "-i", "xlp-tr",
                             "-w", pcap], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        dump.stderr.readline()  # "listening on xlp-tr ...": the capture runs
        during()
        subprocess.run(["sleep", str(seconds)])
    finally:
        dump.terminate()
        dump.wait(timeout=10)
    fields = ["ieee8021ad.id", "vlan.id", "frame.protocols", "ip.src", "ip.dst", "ip.ttl", "arp.dst.proto_ipv4"]
    out = subprocess.run(["tshark", "-r", pcap, "-T", "fields", "-E", "separator=|", "-E", "occurrence=a",
                          *[x for f in fields for x in ("-e", f)]],
                         capture_output=True, text=True, check=True).stdout
    subprocess.run(["rm", "-f", pcap])
    frames = []
    for line in out.splitlines():
        values = dict(zip(fields, line.split("|")))
        values["vlan.id"] = [int(v) for key in ("ieee8021ad.id", "vlan.id")
                             for v in values.pop(key).split(",") if v]
        frames.append(values)
    return frames


@pytest.mark.parametrize("params, left, right", [
    ({}, "Dot1Q(vlan=100)", [200]),
    ({"left_outer": 300, "right_outer": 400}, "Dot1AD(vlan=300)/Dot1Q(vlan=100)", [400, 200]),
])
def test_the_reference_dut_terminates_vlans_on_known_frames(make_lab, params, left, right):
    make_lab("vlan", **params)
    udp = "IP(src='198.18.0.2', dst='198.19.0.2', ttl=10)/UDP(sport=49184, dport=7)/Raw(b'x' * 18)"
    # The DUT does not know the right tester yet: it asks for it with ARP, on the right VLAN.
    frames = capture_right(lambda: send_frames(f"{left}/{udp}"))
    arp = [f for f in frames if "arp" in f["frame.protocols"]]
    assert arp and all(f["vlan.id"] == right for f in arp), frames
    assert arp[0]["arp.dst.proto_ipv4"] == "198.19.0.2"
    # Known to the DUT, a frame in the left VLAN leaves routed (TTL 9) in the right VLAN...
    subprocess.run(["ip", "-n", DUT_NS, "neigh", "replace", "198.19.0.2", "lladdr", lab.MACS["xlp-tr"],
                    "dev", "xlp-dr", "nud", "permanent"], check=True)
    frames = capture_right(lambda: send_frames(f"{left}/{udp}"))
    routed = [f for f in frames if "udp" in f["frame.protocols"]]
    assert len(routed) == 3, frames
    for f in routed:
        assert f["vlan.id"] == right
        assert (f["ip.src"], f["ip.dst"], f["ip.ttl"]) == ("198.18.0.2", "198.19.0.2", "9")
    # ... and nothing comes out of a frame in another VLAN, untagged, or with an extra tag.
    for wrong in ("Dot1Q(vlan=101)", "Dot1AD(vlan=300)/Dot1Q(vlan=101)", "Dot1Q(vlan=5)/Dot1Q(vlan=100)"):
        if wrong.endswith("Dot1Q(vlan=100)") and wrong.startswith("Dot1Q(vlan=5)") and params:
            continue  # with QinQ on the left, 5/100 is the wrong outer tag: covered by the others
        frames = capture_right(lambda: send_frames(f"{wrong}/{udp}"), seconds=0.5)
        assert not [f for f in frames if "udp" in f["frame.protocols"]], (wrong, frames)
    frames = capture_right(lambda: send_frames(udp), seconds=0.5)
    assert not [f for f in frames if "udp" in f["frame.protocols"]], frames


@pytest.mark.parametrize("params", [{}, {"left_outer": 300, "right_outer": 400}, {"family": 6, "right_outer": 400}])
def test_tagged_trials_through_the_vlan_router(make_lab, tmp_path, params):
    """The tester resolves the DUT's MACs on its VLANs (tagged ARP/ND both ways), sends every
    frame with its side's tags and receives each with the other side's: nothing lost."""
    config = make_lab("vlan", **params)
    out = tmp_path / "out"
    xlatperf("trial", "-c", str(config), "--rate", "20000", "--duration", "1", *FAST,
             "--set", "traffic.frame_size=1518", "--out", str(out), "-q")
    [record] = trials(out)
    assert record["valid"], record
    for name, d in record["directions"].items():
        assert d["sent"] == 20000, (name, d)
        assert d["received"] == d["sent"], (name, d)
        assert "bad_vlan" not in d and d["bad_length"] == 0


def test_frames_on_the_wrong_vlan_are_lost_or_counted_as_bad_vlan(make_lab, tmp_path):
    """The left tester port on VLAN 101 while the DUT terminates 100: the DUT drops the forward
    frames, and the reverse frames reach the left port on VLAN 100, where the tester expects
    101: each is a bad_vlan frame, none is received."""
    config = make_lab("vlan")
    out = tmp_path / "out"
    xlatperf("trial", "-c", str(config), "--rate", "5000", "--duration", "1", *FAST,
             "--set", "left.vlan=101", "--set", f"left.dut_mac={lab.MACS['xlp-dl']}",
             "--out", str(out), "-q")
    [record] = trials(out)
    forward, reverse = record["directions"]["forward"], record["directions"]["reverse"]
    assert forward["sent"] == 5000 and forward["received"] == 0
    assert reverse["sent"] == 5000 and reverse["received"] == 0
    assert reverse["bad_vlan"] == 5000
