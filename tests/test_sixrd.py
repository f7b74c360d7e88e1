# SPDX-License-Identifier: BSD-3-Clause
"""6rd (RFC 5969) in the front end: IPv6 carried over an IPv4 network, declared as a technology
like the IPv4aaS ones (frames/technology.py). The BR role with emulated CEs (their IPv4 address
embedded in their delegated prefix), the CE role, the dual DUT; the trial requests' tunnels of
IPv4 (the protocol's tunnel.version), the 20 bytes of 6in4 in the maximum frame rate (RFC 8219
App. A's table), and the [ipv4aas] rules."""

import ipaddress
import math
from fractions import Fraction

import pytest

from test_ipv4aas import PORTS, error, flows   # a trial's flows at 1,000 fps, a configuration's error
from xlatperf.config.loading import load_config
from xlatperf.frames.addressing import MapRule
from xlatperf.frames.kinds import kind_of
from xlatperf.traffic.plan import TrafficPlan

# A domain of the 6rd prefix 2001:db8::/32 whose CEs share 100.64/16 (IPv4MaskLen 16): CE
# 100.64.18.52 has the delegated prefix 2001:db8:1234::/48 (RFC 5969 §4); the BR is 203.0.113.1.
DOMAIN = ["ipv4aas.technology=6rd", "ipv4aas.rule_ipv6_prefix=2001:db8::/32",
          "ipv4aas.rule_ipv4_prefix=100.64.0.0/16", "ipv4aas.ea_bits=16"]
BR = DOMAIN + ["ipv4aas.role=br", "ipv4aas.endpoint_ipv4=203.0.113.1", "left.ip_version=6",
               "right.ip_version=6", "traffic.frame_size=84"]
CE = DOMAIN + ["ipv4aas.role=ce", "ipv4aas.endpoint_ipv4=203.0.113.1", "ipv4aas.ce_ipv4=100.64.18.52",
               "left.ip_version=6", "right.ip_version=6", "left.ipv6=2001:db8:1234::2", "traffic.frame_size=84"]
DUAL = DOMAIN + ["ipv4aas.role=dual", "left.ip_version=6", "right.ip_version=6", "traffic.frame_size=84"]


def test_br_frames_come_from_the_domains_ces_in_ipv4_tunnels():
    """The left port emulates the CEs: each frame from a CE's IPv4 address to the BR's (the
    engine writes the tunnel source per CE), carrying IPv6 from the CE's MAP address in its
    delegated prefix; towards the CEs the right port sends IPv6 to that address and the left
    one checks the tunnel it comes back in (CE k's IPv4, from the BR)."""
    config = load_config(None, BR)
    assert kind_of(config).name == "encapsulation"
    forward, reverse = flows(BR)
    fg = forward["foreground"]
    # 84-byte IPv6 frames in a 20-byte IPv4 tunnel (RFC 8219 App. A: X + O).
    assert (fg["ip_version"], fg["frame_size"], fg["rx_frame_size"]) == (6, 104, 84)
    assert (fg["src_ip"], fg["dst_ip"]) == ("2001:2::2", "2001:2:0:8000::2")
    assert fg["tunnel"] == {"src_ip": "198.18.0.2", "dst_ip": "203.0.113.1", "version": 4}
    assert fg["ce"] == {"map": {"ipv6_prefix": "2001:db8::/32", "ipv4_prefix": "100.64.0.0/16", "ea_bits": 16,
                                "psid_offset": 6},
                        "count": 65536, "side": "src", "mode": "random",
                        "fields": ["tunnel", "ipv6"], "rx_fields": ["ipv6"]}
    # Out of the tunnel at the right port: the DUT is its exit (RFC 2473 §3.3 leaves the hop
    # limit's decrement there open), the address the CE's (the CE check), no tunnel.
    assert fg["rx"]["ip_version"] == 6 and "tunnel" not in fg["rx"] and fg["rx"]["ttl"] == [9, 10]
    rv = reverse["foreground"]
    assert (rv["ip_version"], rv["frame_size"], rv["rx_frame_size"]) == (6, 84, 104)
    assert "tunnel" not in rv
    assert (rv["ce"]["side"], rv["ce"]["fields"], rv["ce"]["rx_fields"]) == ("dst", ["ipv6"], ["tunnel", "ipv6"])
    assert rv["rx"]["tunnel"] == {"src_ip": "203.0.113.1", "version": 4}
    assert rv["rx"]["ttl"] == 9


def test_the_emulated_ces_addresses_are_their_delegated_prefixes():
    """The engine draws the CEs from the same rule the front end reads (frames/addressing.py):
    CE 100.64.18.52 is CE 0x1234, its MAP address in 2001:db8:1234::/48."""
    rule = MapRule(ipaddress.IPv6Network("2001:db8::/32"), ipaddress.IPv4Network("100.64.0.0/16"), 16)
    ce = rule.ce_of(ipaddress.IPv4Address("100.64.18.52"), 0)
    assert (ce.index, rule.k, rule.end_user_prefix_length) == (0x1234, 0, 48)
    assert ce.ipv6 in ipaddress.IPv6Network("2001:db8:1234::/48")


def test_a_ce_alone_tunnels_its_lans_ipv6_to_the_br_the_right_port_plays():
    """The CE role: the LAN (left) sends IPv6 from an address of the CE's delegated prefix; the
    right port checks the tunnel (from the CE's IPv4, to the BR's) and sends back in one."""
    config = load_config(None, CE)
    assert kind_of(config).name == "encapsulating-ce"
    forward, reverse = flows(CE)
    fg = forward["foreground"]
    assert (fg["ip_version"], fg["frame_size"], fg["rx_frame_size"]) == (6, 84, 104)
    assert (fg["src_ip"], fg["dst_ip"]) == ("2001:db8:1234::2", "2001:2:0:8000::2")
    assert "tunnel" not in fg
    assert (fg["ce"]["first"], fg["ce"]["count"], fg["ce"]["fields"], fg["ce"]["rx_fields"]) == \
        (0x1234, 1, [], ["tunnel"])
    assert fg["rx"]["tunnel"] == {"src_ip": "100.64.18.52", "dst_ip": "203.0.113.1", "version": 4}
    rv = reverse["foreground"]
    assert rv["tunnel"] == {"src_ip": "203.0.113.1", "dst_ip": "100.64.18.52", "version": 4}
    assert (rv["src_ip"], rv["dst_ip"], rv["frame_size"], rv["rx_frame_size"]) == \
        ("2001:2:0:8000::2", "2001:db8:1234::2", 104, 84)
    assert "ce" not in rv and "tunnel" not in rv["rx"] and rv["rx"]["ttl"] == [9, 10]


def test_the_neighbours_are_resolved_in_the_wires_ip_version():
    """A BR's CE side and a CE's WAN side are IPv4 links: ARP, from the side's IPv4 address."""
    from xlatperf.frames.kinds import wire_version
    assert [wire_version(load_config(None, BR), side) for side in ("left", "right")] == [4, 6]
    assert [wire_version(load_config(None, CE), side) for side in ("left", "right")] == [6, 4]
    assert [wire_version(load_config(None, DUAL), side) for side in ("left", "right")] == [6, 6]


# RFC 8219 App. A's table for 6in4 (O = 20 bytes), the rows a test frame fits (an IPv6 frame
# holds the test tag from 84 bytes on), at 10 Gbit/s; the RFC rounds to the nearest frame, the
# tester down (a rate above the medium's maximum is no rate at all).
RFC_8219_6IN4_10G = {128: 7_440_476, 256: 4_222_973, 512: 2_264_493, 1024: 1_174_812, 1280: 946_970,
                     1518: 802_311}


@pytest.mark.parametrize("size", sorted(RFC_8219_6IN4_10G))
def test_6in4s_twenty_bytes_count_in_the_maximum_frame_rate(size):
    exact = Fraction(10**10, 8 * (size + 20 + 20))
    assert round(exact) == RFC_8219_6IN4_10G[size]
    assert TrafficPlan(load_config(None, BR[:-1] + [f"traffic.frame_size={size}"]), PORTS).max_rate == \
        math.floor(exact)


def test_a_dual_duts_middle_link_carries_6in4():
    """RFC 8219 §5.1, App. A: IPv6 on both tester ports, IPv6 in IPv4 between the CE and the BR:
    84-byte frames are 104 bytes there, 10^10 / ((104 + 20) x 8) = 10,080,645 frames/s."""
    config = load_config(None, DUAL)
    assert kind_of(config).name == "native"
    plan = TrafficPlan(config, PORTS)
    assert plan.max_rate == 10_080_645
    for direction in plan.directions:
        assert direction.middle.stack == "IPv6 in IPv4" and direction.middle.mean_frame == 104
        assert direction.largest_frame == 84
    forward = plan.flows(1000)[0]["foreground"]
    assert forward["ip_version"] == 6 and "tunnel" not in forward and forward["rx"]["ttl"] == [8, 9]


@pytest.mark.parametrize("assignments, message", [
    (BR + ["ipv4aas.ea_bits=17"],
     "ipv4aas.ea_bits = 17: must be 16 with 6rd: 32 - IPv4MaskLen, the length of ipv4aas.rule_ipv4_prefix = "
     "100.64.0.0/16"),
    (BR + ['ipv4aas.endpoint_ipv4=""'], 'ipv4aas.endpoint_ipv4 = "": must be the BR\'s IPv4 address: the '
                                        "emulated CEs' tunnels end there"),
    (BR + ["left.ip_version=4"], 'left.ip_version = 4: must be 6 with ipv4aas.role = "br" (6rd: the left port '
                                 "sends and receives IPv6 inside the tunnel)"),
    (BR + ["traffic.mix_m=1", "traffic.mix_n=2"], "traffic.mix_m = 1: must be traffic.mix_n = 2 with 6rd"),
    (CE + ['ipv4aas.ce_ipv4=""'], 'ipv4aas.ce_ipv4 = "": must be the IPv4 address of the CE the DUT is'),
    (CE + ["ipv4aas.ce_ipv4=192.0.2.1"], 'ipv4aas.ce_ipv4 = "192.0.2.1": is outside the CEs\' common prefix '
                                         "ipv4aas.rule_ipv4_prefix = 100.64.0.0/16"),
    (CE + ["left.ipv6=2001:db8:1235::2"], 'left.ipv6 = "2001:db8:1235::2": must be in 2001:db8:1234::/48, the '
                                          "delegated prefix of the CE ipv4aas.ce_ipv4 = 100.64.18.52"),
    (CE + ['right.ipv4=""'], 'right.ipv4 = "": must be the right port\'s IPv4 address'),
    (["ipv4aas.endpoint_ipv4=203.0.113.1"], 'ipv4aas.endpoint_ipv4 = "203.0.113.1": takes effect only with '
                                            "ipv4aas.technology set"),
])
def test_bad_6rd_settings_name_key_value_and_allowed(assignments, message):
    assert error(assignments).startswith(message), error(assignments)


def test_a_selftest_leaves_out_the_ce_check_a_cable_cannot_serve():
    """On a cable between the tester's ports the frames arrive as sent: a CE's LAN frames get no
    tunnel, and a CE object with nothing left to write or check is left out (the engine refuses
    one); the BR role's emulated CEs are still written and their MAP addresses checked."""
    ce = TrafficPlan(load_config(None, CE), PORTS, through_dut=False).flows(1000)[0]["foreground"]
    assert "ce" not in ce and "tunnel" not in ce["rx"]
    br = TrafficPlan(load_config(None, BR), PORTS, through_dut=False).flows(1000)[0]["foreground"]
    assert (br["ce"]["fields"], br["ce"]["rx_fields"]) == (["tunnel", "ipv6"], ["ipv6"])


@pytest.mark.parametrize("assignments, says", [
    (BR, "(6rd BR: 65,536 CEs emulated on the left from a MAP rule, one per frame, pseudorandomly"),
    (CE, "(6rd: the DUT is one CE, 100.64.18.52; the right port plays its BR"),
])
def test_a_6rd_trial_through_the_fake_engine_is_reported(fake_config, tmp_path, assignments, says):
    from xlatperf.ui import cli
    out = tmp_path / "out"
    assert cli.main(["trial", "-c", str(fake_config), "--out", str(out), "--rate", "1000", "-q",
                     *[arg for a in assignments for arg in ("--set", a)]]) == 0
    assert cli.main(["report", str(out)]) == 0
    report = (out / "report" / "report.md").read_text()
    assert says in report, report
    # The emulated CEs' addresses vary per frame (a CE alone's do not).
    assert ("| Address and port variation | per frame, one CE's addresses on the CEs' side" in report) == \
        (assignments is BR)
