# SPDX-License-Identifier: BSD-3-Clause
"""Maximum frame rates, link speeds, and the flows of a trial request (frame sizes, addresses,
the medium's maximum per direction)."""

import pytest

from xlatperf.config.loading import load_config
from xlatperf.frames.kinds import trial_frames
from xlatperf.frames.stack import IPV4, IPV6
from xlatperf.traffic.plan import TrafficPlan, build_flows, owned_addresses
from xlatperf.util.errors import ConfigError
from xlatperf.util.rates import format_speed, max_frame_rate, parse_speed

PORTS = [
    {"index": 0, "name": "net_af_packet0", "mac": "02:00:00:00:00:01", "link_speed_mbps": 10000},
    {"index": 1, "name": "net_af_packet1", "mac": "02:00:00:00:00:02", "link_speed_mbps": 10000},
]
V6_LEFT = ["left.ip_version=6", "left.virtual_ipv4=198.18.0.2", "right.virtual_ipv6=2001:2:0:1::2"]
V6_RIGHT = ["right.ip_version=6", "right.virtual_ipv4=198.19.0.9", "left.virtual_ipv6=2001:2::99"]


# -- rates -----------------------------------------------------------------------------------

@pytest.mark.parametrize("line_rate, size, overhead, expected", [
    (10e9, 64, 0, 14_880_952),
    (10e9, 84, 0, 12_019_230),
    (10e9, 1518, 0, 812_743),
    (1e9, 64, 0, 1_488_095),
    (1e7, 64, 20, 12_019),            # RFC 8219 App. A, 6in4
    (10**7, 64, 0, 14_880),           # RFC 2544 App. B
    (10**7, 1518, 0, 812),
    (1e9, 4096, 0, 30_369),           # the formula, not RFC 5180's misprinted 30,396
    (100e9, 64, 0, 148_809_523),
    (25e9, 9216, 0, 338_349),
])
def test_max_frame_rate(line_rate, size, overhead, expected):
    assert max_frame_rate(line_rate, size, overhead) == expected


@pytest.mark.parametrize("text, bits", [
    ("10G", 10**10), ("100M", 10**8), ("2.5G", 25 * 10**8), ("1000k", 10**6),
    ("100g", 10**11), ("10Gbps", 10**10), ("25 G", 25 * 10**9), ("1000000", 10**6),
    ("1T", 10**12),
])
def test_parse_speed(text, bits):
    assert parse_speed(text) == bits


@pytest.mark.parametrize("text", ["", "fast", "10X", "0", "-1G", "1.5", "G"])
def test_parse_speed_rejects(text):
    with pytest.raises(ValueError):
        parse_speed(text)


def test_format_speed():
    assert format_speed(10**10) == "10 Gbit/s"
    assert format_speed(25 * 10**8) == "2.5 Gbit/s"
    assert format_speed(999) == "999 bit/s"


# -- frame sizes per direction ---------------------------------------------------------------

def sizes(overrides, frame_size):
    config = load_config(None, overrides + [f"traffic.frame_size={frame_size}"])
    flows = {f["name"]: f for f in build_flows(config, 1000, PORTS)}
    return {name: (f["foreground"]["frame_size"], f["foreground"]["rx_frame_size"])
            for name, f in flows.items()}


def test_frame_sizes_4_4():
    assert sizes([], 64) == {"forward": (64, 64), "reverse": (64, 64)}
    assert sizes([], 1518) == {"forward": (1518, 1518), "reverse": (1518, 1518)}


def test_frame_sizes_6_6():
    assert sizes(["left.ip_version=6", "right.ip_version=6"], 84) == {
        "forward": (84, 84), "reverse": (84, 84)}


def test_frame_sizes_6_4():
    # frame_size names the IPv6 frame; the IPv4 frame is 20 bytes shorter
    assert sizes(V6_LEFT, 84) == {"forward": (84, 64), "reverse": (64, 84)}
    assert sizes(V6_LEFT, 1518) == {"forward": (1518, 1498), "reverse": (1498, 1518)}


def test_frame_sizes_4_6():
    assert sizes(V6_RIGHT, 84) == {"forward": (64, 84), "reverse": (84, 64)}


def test_background_frames_are_ipv6_on_both_sides():
    config = load_config(None, ["traffic.frame_size=84", "traffic.mix_n=10", "traffic.mix_m=9"])
    frames = trial_frames(config)
    assert frames.frame_size_of(IPV4) == 64 and frames.frame_size_of(IPV6) == 84
    for flow in build_flows(config, 1000, PORTS):
        assert flow["mix"] == {"n": 10, "m": 9}
        assert (flow["foreground"]["frame_size"], flow["foreground"]["rx_frame_size"]) == (64, 64)
        background = flow["background"]
        assert background["ip_version"] == 6
        assert (background["frame_size"], background["rx_frame_size"]) == (84, 84)
    forward = build_flows(config, 1000, PORTS)[0]
    assert (forward["background"]["src_ip"], forward["background"]["dst_ip"]) == (
        "2001:2::2", "2001:2:0:8000::2")
    assert "background" not in build_flows(load_config(None), 1000, PORTS)[0]


# -- addresses, ports, MACs ------------------------------------------------------------------

def test_siit_addresses_and_ports():
    config = load_config(None, V6_LEFT + ["traffic.frame_size=84", "right.mac=02:00:00:00:00:99"])
    forward, reverse = build_flows(config, 5000, PORTS)
    assert (forward["name"], forward["tx_port"], forward["rx_port"]) == ("forward", 0, 1)
    assert (reverse["name"], reverse["tx_port"], reverse["rx_port"]) == ("reverse", 1, 0)
    assert forward["rate"] == reverse["rate"] == 5000
    fg = forward["foreground"]
    assert (fg["ip_version"], fg["src_ip"], fg["dst_ip"]) == (6, "2001:2::2", "2001:2:0:1::2")
    assert (fg["src_mac"], fg["dst_mac"]) == ("02:00:00:00:00:01", "02:00:00:00:01:01")
    assert (fg["src_port"], fg["dst_port"]) == (49184, 7)
    fg = reverse["foreground"]
    assert (fg["ip_version"], fg["src_ip"], fg["dst_ip"]) == (4, "198.19.0.2", "198.18.0.2")
    assert (fg["src_mac"], fg["dst_mac"]) == ("02:00:00:00:00:99", "02:00:00:00:01:02")


def test_direction_selects_flows():
    config = load_config(None, ["traffic.direction=reverse"])
    flows = build_flows(config, 1000, PORTS)
    assert [(f["name"], f["tx_port"], f["rx_port"]) for f in flows] == [("reverse", 1, 0)]


def test_selftest_plan_has_no_translation():
    config = load_config(None, V6_LEFT + ["traffic.frame_size=84"])
    forward, reverse = TrafficPlan(config, PORTS, through_dut=False).flows(1000)
    assert (forward["foreground"]["frame_size"], forward["foreground"]["rx_frame_size"]) == (84, 84)
    assert (reverse["foreground"]["frame_size"], reverse["foreground"]["rx_frame_size"]) == (64, 64)
    assert forward["foreground"]["dst_mac"] == PORTS[1]["mac"]
    assert reverse["foreground"]["dst_mac"] == PORTS[0]["mac"]


# -- the medium's maximum --------------------------------------------------------------------

def test_max_rate_uses_largest_frame_of_the_direction():
    assert TrafficPlan(load_config(None), PORTS).max_rate == 14_880_952
    plan = TrafficPlan(load_config(None, V6_LEFT + ["traffic.frame_size=84"]), PORTS)
    assert [d.max_rate for d in plan.directions] == [12_019_230, 12_019_230]
    assert plan.max_rate == 12_019_230


def test_max_rate_uses_slower_port_and_speed_override():
    ports = [dict(PORTS[0], link_speed_mbps=1000), PORTS[1]]
    assert TrafficPlan(load_config(None), ports).max_rate == 1_488_095
    config = load_config(None, ["left.speed=100G", "right.speed=100G"])
    assert TrafficPlan(config, ports).max_rate == 148_809_523
    config = load_config(None, ["right.speed=1G"])
    assert TrafficPlan(config, PORTS).max_rate == 1_488_095


def test_unknown_link_speed_needs_override():
    ports = [dict(PORTS[0], link_speed_mbps=0), PORTS[1]]
    with pytest.raises(ConfigError, match=r'left.speed = "": the port net_af_packet0 reports no'):
        TrafficPlan(load_config(None), ports)
    TrafficPlan(load_config(None, ["left.speed=10G"]), ports)


def test_rate_above_maximum_is_rejected():
    plan = TrafficPlan(load_config(None, V6_LEFT + ["traffic.frame_size=84"]), PORTS)
    plan.flows(12_019_230)
    with pytest.raises(ConfigError) as info:
        plan.flows(12_019_231)
    message = str(info.value)
    assert "rate = 12019231: must be at most 12019230 frames/s" in message
    assert "84 bytes at 10 Gbit/s" in message
    for bad in (0, -5):
        with pytest.raises(ConfigError, match="must be a positive integer"):
            plan.flows(bad)
    with pytest.raises(ConfigError, match=r"^--rate = 20000000:"):
        plan.check_rate(20_000_000, "--rate")


def test_two_ports_needed():
    with pytest.raises(ConfigError, match="two are needed"):
        TrafficPlan(load_config(None), PORTS[:1])


def test_owned_addresses_are_the_real_ones():
    config = load_config(None, V6_LEFT + ["traffic.frame_size=84", "right.ipv6="])
    assert owned_addresses(config) == [
        {"port": 0, "ranges": [{"ip_version": 4, "address": "198.18.0.2"},
                               {"ip_version": 6, "address": "2001:2::2"}]},
        {"port": 1, "ranges": [{"ip_version": 4, "address": "198.19.0.2"}]}]
