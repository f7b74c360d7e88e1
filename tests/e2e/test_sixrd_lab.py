# SPDX-License-Identifier: BSD-3-Clause
"""6rd (RFC 5969) end to end: the lab's reference BR and CE (xlatperf/lab/kinds/sixrd.py, tc-BPF,
xlatperf/lab/bpf/sixrd.c) checked first on their own against RFC 5969's arithmetic (scapy sends
the frames, tshark decodes what comes out, the expected addresses are worked out here or taken
from ipv6calc's worked example), then the tester through them: trials through the BR, the CE and
the dual DUT with every frame received and no header fault, a capture of the BR's CE side checked
against the domain by this file's arithmetic, and the faulty DUTs caught."""

import ipaddress
import subprocess

import pytest

from e2e_util import trials, xlatperf
from ipv4aas_util import DUT_NS, FAST, TESTER_NS, capture, lab_config, send, throughput_and_latency
from xlatperf import lab
from xlatperf.lab.names import CE_NS, CE_PORTS

BR4 = "203.0.113.1"                 # the lab's 6rdBRIPv4Address
CE4 = "100.64.18.52"                # the default CE: 0x1234 after 2001:db8::/32 (IPv4MaskLen 16)
CE_PREFIX = "2001:db8:1234::/48"    # its delegated prefix
INTERNET6 = "2001:2:0:8000::2"      # the IPv6 Internet's host (the right tester port)
FIELDS = ["ip.src", "ip.dst", "ip.proto", "ip.ttl", "ip.flags.df", "ip.dsfield", "ip.checksum.status",
          "ipv6.src", "ipv6.dst", "ipv6.hlim", "ipv6.tclass", "udp.dstport", "udp.checksum.status"]


def neighbours(*entries: tuple[str, str, str]) -> None:
    """The tester's ports answer no ARP/ND outside the engine: the DUT gets them as neighbours,
    (address, DUT interface, tester port) each."""
    for address, dev, port in entries:
        subprocess.run(["ip", "-n", DUT_NS, "neigh", "replace", address, "lladdr", lab.MACS[port], "dev", dev,
                        "nud", "permanent"], check=True)


def ce_ipv4(address: str, sixrd_prefix: str, ipv4_prefix: str) -> str:
    """RFC 5969 §7.1.1, written out here apart from the lab's code: the common IPv4 prefix and the
    32 - IPv4MaskLen bits after the 6rd prefix."""
    prefix6, prefix4 = ipaddress.IPv6Network(sixrd_prefix), ipaddress.IPv4Network(ipv4_prefix)
    n, bits = prefix6.prefixlen, 32 - prefix4.prefixlen
    embedded = int(ipaddress.IPv6Address(address)) >> (128 - n - bits) & ((1 << bits) - 1)
    return str(ipaddress.IPv4Address(int(prefix4.network_address) | embedded))


def test_rfc_5969_arithmetic_as_written_here():
    """The test's own §7.1.1 against the default CE and ipv6calc's worked example (6rd prefix
    2a01:79c::/30, IPv4MaskLen 0: 81.167.4.214 delegates 2a01:79d:469c:1358::/62)."""
    assert ce_ipv4("2001:db8:1234::1", "2001:db8::/32", "100.64.0.0/16") == CE4
    assert ce_ipv4("2a01:79d:469c:1358::1", "2a01:79c::/30", "0.0.0.0/0") == "81.167.4.214"
    assert ce_ipv4("2001:db8:2:100::1", "2001:db8::/32", "192.0.0.0/8") == "192.0.2.1"


def br_neighbours() -> None:
    neighbours(("198.18.0.2", "xlp-dl", "xlp-tl"), (INTERNET6, "xlp-dr", "xlp-tr"))


def test_the_reference_br_decapsulates_checks_and_encapsulates(make_lab):
    """The BR takes CE 100.64.18.52's tunnel apart (the inner source in its delegated prefix
    2001:db8:1234::/48) and forwards the IPv6 packet, hop limit - 1; a packet whose inner source
    is another CE's prefix is spoofed (RFC 5969 §8, §12: dropped). Back, a packet to
    2001:db8:1234::1 goes into a tunnel to 100.64.18.52 (protocol 41 from the BR's address, TTL
    64, DF clear, the traffic class as TOS, a good checksum), one to another CE of the domain to
    that CE, and one outside the 6rd prefix is left to the kernel (which has no route for it)."""
    lab_config(make_lab, "6rd-br")
    br_neighbours()
    inner = "IPv6(src='{src}', dst='" + INTERNET6 + "', hlim=64)/UDP(sport=1234, dport={port})/Raw(b'x' * 18)"
    out = capture(TESTER_NS, "xlp-tr", lambda: (
        send("xlp-tl", f"IP(src='{CE4}', dst='{BR4}')/" + inner.format(src="2001:db8:1235::5", port=1)),
        send("xlp-tl", f"IP(src='{CE4}', dst='{BR4}')/" + inner.format(src="2001:db8:1234::5", port=2))),
        settle=0.5, fields=FIELDS)
    assert [(f["ip.src"], f["ipv6.src"], f["ipv6.dst"], f["ipv6.hlim"], f["udp.dstport"]) for f in out] == \
        [("", "2001:db8:1234::5", INTERNET6, "63", "2")], out
    assert out[0]["udp.checksum.status"] == "1"
    back = "IPv6(src='" + INTERNET6 + "', dst='{dst}', hlim=64, tc=0x29)/UDP(sport=7, dport={port})/Raw(b'y' * 18)"
    out = capture(TESTER_NS, "xlp-tl", lambda: (
        send("xlp-tr", back.format(dst="2001:db9::1", port=1)),
        send("xlp-tr", back.format(dst="2001:db8:1234::1", port=2)),
        send("xlp-tr", back.format(dst="2001:db8:ab:cd::1", port=3))), settle=0.5, fields=FIELDS)
    assert [(f["ip.src"], f["ip.dst"], f["ip.proto"], f["ip.ttl"], f["ip.flags.df"], f["ipv6.dst"], f["ipv6.hlim"])
            for f in out] == [(BR4, CE4, "41", "64", "0", "2001:db8:1234::1", "63"),
                              (BR4, "100.64.0.171", "41", "64", "0", "2001:db8:ab:cd::1", "63")], out
    assert ce_ipv4("2001:db8:ab:cd::1", "2001:db8::/32", "100.64.0.0/16") == "100.64.0.171"
    for f in out:
        assert int(f["ip.dsfield"], 16) == int(f["ipv6.tclass"], 16) == 0x29, f
        assert f["ip.checksum.status"] == f["udp.checksum.status"] == "1", f


def test_the_reference_br_follows_ipv6calcs_example(make_lab):
    """An independent example of §7.1.1 (ipv6calc's, tests/test_addressing.py): 6rd prefix
    2a01:79c::/30 with IPv4MaskLen 0, the CE 81.167.4.214 owning 2a01:79d:469c:1358::/62; the BR
    sends that prefix into the CE's tunnel and takes the CE's packets from it, not from
    81.167.4.215."""
    lab_config(make_lab, "6rd-br", sixrd_prefix="2a01:79c::/30", ipv4_prefix="0.0.0.0/0")
    br_neighbours()
    out = capture(TESTER_NS, "xlp-tl", lambda: send(
        "xlp-tr", f"IPv6(src='{INTERNET6}', dst='2a01:79d:469c:135b:1::1')/UDP(sport=7, dport=9)/Raw(b'y' * 18)"),
        settle=0.5, fields=FIELDS)
    assert [(f["ip.dst"], f["ipv6.dst"]) for f in out] == [("81.167.4.214", "2a01:79d:469c:135b:1::1")], out
    inner = f"IPv6(src='2a01:79d:469c:1358::2', dst='{INTERNET6}')/UDP(sport=9, dport={{port}})/Raw(b'x' * 18)"
    out = capture(TESTER_NS, "xlp-tr", lambda: (
        send("xlp-tl", f"IP(src='81.167.4.215', dst='{BR4}')/" + inner.format(port=1)),
        send("xlp-tl", f"IP(src='81.167.4.214', dst='{BR4}')/" + inner.format(port=2))), settle=0.5, fields=FIELDS)
    assert [(f["ipv6.src"], f["udp.dstport"]) for f in out] == [("2a01:79d:469c:1358::2", "2")], out


def ce_neighbours() -> None:
    neighbours(("2001:db8:1234::2", "xlp-dl", "xlp-tl"), ("198.19.0.2", "xlp-dr", "xlp-tr"))


def test_the_reference_ce_encapsulates_checks_and_decapsulates(make_lab):
    """CE 100.64.18.52 (2001:db8:1234::/48, its LAN 2001:db8:1234::/64) puts its LAN's packets to
    the IPv6 Internet into a tunnel to the BR (RFC 5969 §7.1.2), to another CE of the domain
    straight to that CE's address, and drops a LAN source outside its prefix (the BR would take
    it for spoofed). From the WAN it takes the BR's packets and a CE's from that CE's own prefix,
    not one whose inner source is not the sending CE's, nor one to outside its own prefix."""
    lab_config(make_lab, "6rd-ce")
    ce_neighbours()
    up = "IPv6(src='{src}', dst='{dst}', hlim=64, tc=0x29)/UDP(sport=7, dport={port})/Raw(b'x' * 18)"
    out = capture(TESTER_NS, "xlp-tr", lambda: (
        send("xlp-tl", up.format(src="2001:db8:1235::2", dst=INTERNET6, port=1)),
        send("xlp-tl", up.format(src="2001:db8:1234::2", dst=INTERNET6, port=2)),
        send("xlp-tl", up.format(src="2001:db8:1234::2", dst="2001:db8:ab::1", port=3))), settle=0.5, fields=FIELDS)
    assert [(f["ip.src"], f["ip.dst"], f["ip.proto"], f["ip.ttl"], f["ip.flags.df"], f["ipv6.hlim"], f["udp.dstport"])
            for f in out] == [(CE4, BR4, "41", "64", "0", "63", "2"), (CE4, "100.64.0.171", "41", "64", "0", "63", "3")], out
    for f in out:
        assert int(f["ip.dsfield"], 16) == int(f["ipv6.tclass"], 16) == 0x29, f
        assert f["ip.checksum.status"] == f["udp.checksum.status"] == "1", f
    down = "IP(src='{outer}', dst='" + CE4 + "')/IPv6(src='{src}', dst='{dst}', hlim=64)/UDP(sport=7, dport={port})/Raw(b'y' * 18)"
    out = capture(TESTER_NS, "xlp-tl", lambda: (
        send("xlp-tr", down.format(outer="100.64.0.9", src=INTERNET6, dst="2001:db8:1234::2", port=1)),
        send("xlp-tr", down.format(outer=BR4, src=INTERNET6, dst="2001:db8:1236::2", port=2)),
        send("xlp-tr", down.format(outer=BR4, src=INTERNET6, dst="2001:db8:1234::2", port=3)),
        send("xlp-tr", down.format(outer="100.64.0.171", src="2001:db8:ab::1", dst="2001:db8:1234::2", port=4))),
        settle=0.5, fields=FIELDS)
    assert [(f["ip.src"], f["ipv6.src"], f["ipv6.dst"], f["ipv6.hlim"], f["udp.dstport"]) for f in out] == \
        [("", INTERNET6, "2001:db8:1234::2", "63", "3"), ("", "2001:db8:ab::1", "2001:db8:1234::2", "63", "4")], out


def misdelivered_share(kind: str, make_lab, port: str, dev: str, packet: str, field: str, right: str,
                       wrong: str) -> int:
    """Sends 2,000 copies of `packet` through a faulty DUT (misdeliver=10) and returns how many
    came out with `field` = `wrong` (the rest must have `right`)."""
    lab_config(make_lab, kind, misdeliver=10)
    br_neighbours() if kind == "6rd-br" else ce_neighbours()
    out = capture(TESTER_NS, dev, lambda: send(port, packet, count=2000), settle=1.0, fields=FIELDS)
    values = [f[field] for f in out]
    assert len(values) == 2000 and set(values) <= {right, wrong}, (len(values), set(values))
    return values.count(wrong)


def test_a_faulty_br_misdelivers_one_in_ten(make_lab):
    """misdeliver=10: about one in ten packets to CE 100.64.18.52 goes into 100.64.18.53's
    tunnel. Binomial(2,000, 0.1): mean 200, standard deviation 13.4."""
    wrong = misdelivered_share("6rd-br", make_lab, "xlp-tr", "xlp-tl",
                               f"IPv6(src='{INTERNET6}', dst='2001:db8:1234::1')/UDP(sport=7, dport=9)/Raw(b'y' * 18)",
                               "ip.dst", CE4, "100.64.18.53")
    assert 140 <= wrong <= 260, wrong


def test_a_faulty_ce_sends_one_in_ten_from_another_address(make_lab):
    """misdeliver=10: about one in ten of the CE's packets to the BR leave from 100.64.18.53."""
    wrong = misdelivered_share("6rd-ce", make_lab, "xlp-tl", "xlp-tr",
                               f"IPv6(src='2001:db8:1234::2', dst='{INTERNET6}')/UDP(sport=7, dport=9)/Raw(b'x' * 18)",
                               "ip.src", CE4, "100.64.18.53")
    assert 140 <= wrong <= 260, wrong


# -- the tester through the reference DUTs -------------------------------------------------------

def trial(config, out, rate: int, duration: float = 1, *extra: str) -> tuple[dict, str]:
    """One trial at a modest rate (the DUTs share two CPUs with the tester and everything else):
    its record and the console's output."""
    done = xlatperf("trial", "-c", str(config), "--out", str(out), "--rate", str(rate), "--duration", str(duration),
                    *FAST, *extra)
    return trials(out)[-1], done.stdout


def faults(direction: dict) -> dict:
    return {name: count for name, count in direction.items() if name.startswith("bad_") or name == "wrong_ce"}


@pytest.mark.parametrize("kind", ["6rd-br", "6rd-ce", "6rd-dual"])
def test_the_tester_through_each_6rd_dut_receives_every_frame_unspoilt(make_lab, tmp_path, kind):
    """The BR with the tester's emulated CEs (the domain's 65,536), the CE with the tester as its
    BR, the two in line: both directions, every frame received, none at a wrong CE, no header
    check failed (the tunnels' addresses and checksum, the hop limits, the traffic class)."""
    config = lab_config(make_lab, kind)
    record, _ = trial(config, tmp_path / "trial", 2000, 1, "--set", "traffic.dscp=10")
    for name, d in record["directions"].items():
        assert d["sent"] == 2000 and d["received"] == d["sent"], (name, d)
        assert faults(d) and not any(faults(d).values()), (name, d)


@pytest.mark.parametrize("kind", ["6rd-br", "6rd-ce", "6rd-dual"])
def test_throughput_and_latency_through_each_6rd_dut(make_lab, tmp_path, kind):
    """A throughput search (up to 60,000 frames/s) that converges above zero with no trial
    sending to a wrong CE, and latency at 10,000 frames/s with every tagged frame back, both
    directions: the properties a busy host leaves intact, no speed."""
    config = lab_config(make_lab, kind)
    throughput_and_latency(config, tmp_path, 60000, 20000, 10000, 100)


def test_a_capture_of_the_brs_ce_side_shows_the_domains_ces(make_lab, tmp_path):
    """During a trial every frame on the BR's CE side is a 6in4 tunnel between the BR and a CE
    whose delegated prefix (this file's §7.1.1) holds the inner address on the CE's side, with a
    good IPv4 header checksum; thousands of CEs in 4,000 frames each way."""
    config = lab_config(make_lab, "6rd-br")
    frames = capture(DUT_NS, "xlp-dl", lambda: trial(config, tmp_path / "trial", 4000), fields=FIELDS)
    upstream = [f for f in frames if f["ip.dst"] == BR4]
    downstream = [f for f in frames if f["ip.src"] == BR4]
    assert len(upstream) == len(downstream) == 4000 and len(frames) == 8000, (len(upstream), len(downstream))
    for f, outer, inner in [(f, "ip.src", "ipv6.src") for f in upstream] + [(f, "ip.dst", "ipv6.dst") for f in downstream]:
        assert f["ip.proto"] == "41" and f["ip.checksum.status"] == f["udp.checksum.status"] == "1", f
        assert ce_ipv4(f[inner], "2001:db8::/32", "100.64.0.0/16") == f[outer], f
    assert len({f["ip.src"] for f in upstream}) > 3500   # 4,000 draws of 65,536 CEs: about 3,880 distinct


def test_a_dual_duts_frames_cross_an_ipv4_link_between_ce_and_br(make_lab, tmp_path):
    """RFC 8219 Fig. 2 for 6rd: IPv6 in, IPv6 out, and on the link between the CE and the BR every
    frame is IPv6 in IPv4 between the CE's address and the BR's."""
    config = lab_config(make_lab, "6rd-dual")
    frames = capture(CE_NS, CE_PORTS[1], lambda: trial(config, tmp_path / "trial", 2000), fields=FIELDS)
    assert len(frames) == 4000 and {(f["ip.proto"], f["ip.checksum.status"]) for f in frames} == {("41", "1")}
    assert {(f["ip.src"], f["ip.dst"]) for f in frames} == {(CE4, BR4), (BR4, CE4)}


def test_the_ce_side_carries_ipv6_mtu_1280_plus_the_tunnel(make_lab, tmp_path):
    """RFC 5969 §9.1: the IPv4 network carries the 6rd tunnel MTU plus the 20-byte header. mtu=1280:
    the largest IPv6 frame (1,298 bytes) crosses the BR both ways, as 1,300-byte IPv4 packets on
    the CE side."""
    config = lab_config(make_lab, "6rd-br", mtu=1280)
    frames = capture(DUT_NS, "xlp-dl", lambda: trial(config, tmp_path / "trial", 1000, 1,
                                                     "--set", "traffic.frame_size=1298")[0], fields=FIELDS + ["ip.len"])
    record = trials(tmp_path / "trial")[-1]
    for name, d in record["directions"].items():
        assert d["received"] == d["sent"] == 1000, (name, d)
    assert len(frames) == 2000 and {f["ip.len"] for f in frames} == {"1300"}


def test_the_tester_catches_a_br_that_misdelivers_one_in_ten(make_lab, tmp_path):
    """misdeliver=10: the frames into another CE's tunnel are wrong_ce, about one in ten of
    10,000 (binomial: mean 1,000, standard deviation 30), the others received."""
    config = lab_config(make_lab, "6rd-br", misdeliver=10)
    record, stdout = trial(config, tmp_path / "trial", 5000, 2)
    forward, reverse = record["directions"]["forward"], record["directions"]["reverse"]
    assert forward["received"] == forward["sent"] and forward["wrong_ce"] == 0, forward
    assert 850 <= reverse["wrong_ce"] <= 1150 and reverse["received"] + reverse["wrong_ce"] == reverse["sent"], reverse
    assert f"{reverse['wrong_ce']:,} to the wrong CE" in stdout


def test_the_tester_catches_a_ce_that_sends_from_another_address(make_lab, tmp_path):
    """misdeliver=10: about one in ten of the CE's tunnels leaves from 100.64.18.53, which the
    right port (the BR) does not take for the CE's: not received, counted."""
    config = lab_config(make_lab, "6rd-ce", misdeliver=10)
    record, _ = trial(config, tmp_path / "trial", 5000, 2)
    forward, reverse = record["directions"]["forward"], record["directions"]["reverse"]
    caught = sum(faults(forward).values())
    assert 850 <= caught <= 1150 and forward["received"] + caught == forward["sent"], forward
    assert reverse["received"] == reverse["sent"] and not any(faults(reverse).values()), reverse


def test_the_tester_counts_a_faulty_brs_spoilt_headers(make_lab, tmp_path):
    """faulty=ttl,tos,checksum, 20 % each: into the tunnels, a hop limit not decremented, the
    traffic class zeroed and the tunnel header's checksum wrong, each in its counter near 20 %
    of 10,000 (binomial: standard deviation 40); out of them (the tunnel's exit may leave the
    hop limit alone, no checksum to spoil) only the traffic class."""
    config = lab_config(make_lab, "6rd-br", faulty="ttl,tos,checksum", faulty_share=20)
    record, _ = trial(config, tmp_path / "trial", 5000, 2, "--set", "traffic.dscp=10")
    forward, reverse = record["directions"]["forward"], record["directions"]["reverse"]
    for counter in ("bad_ttl", "bad_tos", "bad_checksum"):
        assert 1700 <= reverse[counter] <= 2300, (counter, reverse)
    assert 1700 <= forward["bad_tos"] <= 2300 and forward["bad_ttl"] == forward["bad_checksum"] == 0, forward
