# SPDX-License-Identifier: BSD-3-Clause
"""IPv4-as-a-Service in the front end: the [ipv4aas] section's rules (errors naming key, value
and what is allowed), the traffic kinds of the BR roles (the left port emulating CEs) and the
flows of their trial requests, the overhead in the maximum frame rate (RFC 8219 §5.1, App. A),
and a trial through the fake engine."""

import ipaddress
from fractions import Fraction

import pytest

from xlatperf.config.loading import load_config
from xlatperf.frames.addressing import MapRule, embed_ipv4
from xlatperf.frames.kinds import kind_of, trial_frames
from xlatperf.traffic.plan import TrafficPlan
from xlatperf.util.errors import ConfigError
from xlatperf.util.rates import max_frame_rate

PORTS = [
    {"index": 0, "name": "net_af_packet0", "mac": "02:00:00:00:00:01", "link_speed_mbps": 10000},
    {"index": 1, "name": "net_af_packet1", "mac": "02:00:00:00:00:02", "link_speed_mbps": 10000},
]
# RFC 7597 App. A Example 1's rule (= RFC 7599's), its BR at 2001:db8:ffff::1.
MAP_E = ["ipv4aas.technology=map-e", "ipv4aas.role=br", "ipv4aas.endpoint_ipv6=2001:db8:ffff::1",
         "ipv4aas.rule_ipv6_prefix=2001:db8::/40", "ipv4aas.rule_ipv4_prefix=192.0.2.0/24",
         "ipv4aas.ea_bits=16"]
MAP_T = ["ipv4aas.technology=map-t", "ipv4aas.role=br", "left.ip_version=6",
         "ipv4aas.rule_ipv6_prefix=2001:db8::/40", "ipv4aas.rule_ipv4_prefix=192.0.2.0/24",
         "ipv4aas.ea_bits=16", "ipv4aas.dmr=2001:db8:ffff::/64",
         "right.virtual_ipv6=2001:db8:ffff:0:c6:1300:200:0", "traffic.frame_size=84"]
DS_LITE = ["ipv4aas.technology=ds-lite", "ipv4aas.role=aftr", "ipv4aas.endpoint_ipv6=2001:db8:af::1",
           "left.ipv4=192.0.0.2", "left.ipv6=2001:db8:b4::1", "ipv4aas.ces=1000", "traffic.direction=forward"]


def flows(assignments, rate=1000):
    return TrafficPlan(load_config(None, assignments), PORTS).flows(rate)


def error(assignments) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(None, assignments)
    return str(info.value)


def test_map_e_br_frames_come_from_the_rules_ces_in_rfc_2473_tunnels():
    config = load_config(None, MAP_E)
    assert kind_of(config).name == "encapsulation"
    forward, reverse = flows(MAP_E)
    fg = forward["foreground"]
    # 64-byte IPv4 frames in a 40-byte IPv6 tunnel (RFC 8219 App. A: X + O).
    assert (fg["ip_version"], fg["frame_size"], fg["rx_frame_size"]) == (4, 104, 64)
    assert fg["tunnel"] == {"src_ip": "2001:2::2", "dst_ip": "2001:db8:ffff::1"}
    assert fg["ce"] == {"map": {"ipv6_prefix": "2001:db8::/40", "ipv4_prefix": "192.0.2.0/24", "ea_bits": 16,
                                "psid_offset": 6},
                        "count": 65536, "side": "src", "mode": "random",
                        "fields": ["tunnel", "ipv4", "port"], "rx_fields": ["ipv4", "port"]}
    rv = reverse["foreground"]
    assert (rv["frame_size"], rv["rx_frame_size"]) == (64, 104)
    assert "tunnel" not in rv
    assert rv["ce"]["side"] == "dst" and rv["ce"]["fields"] == ["ipv4", "port"]
    assert rv["ce"]["rx_fields"] == ["tunnel", "ipv4", "port"]


def test_the_tunnel_overhead_counts_in_the_maximum_frame_rate():
    """RFC 8219 §5.1 / App. A: the encapsulated frame is what the medium carries. 10 Gbit/s,
    104-byte frames: 10^10 / ((104 + 20) x 8) = 10,080,645 frames/s."""
    config = load_config(None, MAP_E)
    plan = TrafficPlan(config, PORTS)
    assert plan.max_rate == 10_080_645
    assert trial_frames(config).largest_frame == 104
    assert "104 bytes" in plan.directions[0].describe_limit()
    assert TrafficPlan(load_config(None, MAP_E + ["traffic.frame_size=1460"]), PORTS).max_rate == \
        10**10 // ((1500 + 20) * 8)


# A dual DUT: a CE and a BR in line, IPv4 on both tester ports (RFC 8219 §4.2 Figure 2).
DUAL = {"ds-lite": ["ipv4aas.technology=ds-lite", "ipv4aas.role=dual", "left.ipv4=192.0.0.2"],
        "map-e": ["ipv4aas.technology=map-e", "ipv4aas.role=dual", "ipv4aas.rule_ipv6_prefix=2001:db8::/40",
                  "ipv4aas.rule_ipv4_prefix=192.0.2.0/24", "ipv4aas.ea_bits=16"],
        "464xlat": ["ipv4aas.technology=464xlat", "ipv4aas.role=dual"]}


def test_a_dual_duts_middle_link_carries_the_tunnel_overhead():
    """RFC 8219 §5.1 / App. A: 64-byte IPv4 frames cross the link between the B4 and the AFTR
    as 104-byte frames: at equal link speeds (10 Gbit/s) 10^10 / ((104 + 20) x 8) = 10,080,645
    frames/s instead of the tester's links' 14,880,952."""
    for technology in ("ds-lite", "map-e"):
        plan = TrafficPlan(load_config(None, DUAL[technology]), PORTS)
        assert plan.max_rate == 10_080_645
        for direction in plan.directions:
            assert direction.middle.stack == "IPv4 in IPv6" and direction.middle.mean_frame == 104
            assert direction.middle_limits and direction.largest_frame == 64
            assert direction.describe_limit() == (
                f"the medium's maximum for {direction.name} frames of 104 bytes on the dual DUT's middle "
                "link (IPv4 in IPv6 between its CE and BR, RFC 8219 §5.1) at 10 Gbit/s")
        with pytest.raises(ConfigError, match="rate = 10080646: must be at most 10080645 frames/s, the "
                                              "medium's maximum for forward frames of 104 bytes on the dual"):
            plan.flows(10_080_646)
    # 464XLAT and MAP-T translate in the middle: 84-byte IPv6 frames.
    assert TrafficPlan(load_config(None, DUAL["464xlat"]), PORTS).max_rate == 12_019_230


def test_the_middle_links_speed_is_a_key():
    faster = TrafficPlan(load_config(None, DUAL["ds-lite"] + ["dut.middle_link_speed=100G"]), PORTS)
    assert faster.max_rate == 14_880_952                  # the tester's links limit again
    assert not faster.directions[0].middle_limits
    assert faster.directions[0].middle.max_rate == 10**11 // (8 * 124)
    assert faster.directions[0].describe_limit() == "the medium's maximum for forward frames of 64 bytes at 10 Gbit/s"
    slower = TrafficPlan(load_config(None, DUAL["ds-lite"] + ["dut.middle_link_speed=1G"]), PORTS)
    assert slower.max_rate == 1_008_064 and "at 1 Gbit/s" in slower.directions[1].describe_limit()
    # Unset, the middle link is as fast as the slower tester port.
    ports = [dict(PORTS[0], link_speed_mbps=1000), PORTS[1]]
    assert TrafficPlan(load_config(None, DUAL["ds-lite"]), ports).max_rate == 1_008_064
    # No DUT on a cable between the tester's ports (selftest), no middle link.
    cable = TrafficPlan(load_config(None, DUAL["ds-lite"]), PORTS, through_dut=False)
    assert cable.max_rate == 14_880_952 and cable.directions[0].middle is None
    assert error(["dut.middle_link_speed=10G"]) == (
        'dut.middle_link_speed = "10G": takes effect only with ipv4aas.role = "dual" (a CE and a BR in line, '
        "RFC 8219 §4.2 Figure 2: the link between them); remove it")
    assert error(DUAL["ds-lite"] + ["dut.middle_link_speed=fast"]) == (
        'dut.middle_link_speed = "fast": must be a link speed like "10G", "2.5G", "100M" or "" (the '
        "tester ports' speed)")
    assert TrafficPlan(load_config(None, MAP_E), PORTS).directions[0].middle is None   # one box


def test_the_middle_link_carries_a_mix_as_the_tester_sends_it():
    # IMIX (RFC 6985): the mean frame on the middle link, each size 40 bytes more.
    plan = TrafficPlan(load_config(None, DUAL["ds-lite"] + ["traffic.imix=simple"]), PORTS)
    middle = plan.directions[0].middle
    assert middle.mean_frame == plan.directions[0].mean_frame + 40
    assert plan.max_rate == max_frame_rate(10**10, middle.mean_frame)
    assert "frames of 401.8 bytes on average (the mix's weighted mean) on the dual DUT's middle link" in \
        plan.directions[0].describe_limit()
    # Native IPv6 background frames (RFC 8219 §5.3) cross it as they are: per 10 frames 9
    # tunnelled 104-byte ones (64-byte IPv4 frames: frame_size 84 names the IPv6 frame) and one
    # 84-byte IPv6 frame.
    plan = TrafficPlan(load_config(None, DUAL["ds-lite"] + ["traffic.mix_n=10", "traffic.mix_m=9",
                                                            "traffic.frame_size=84"]), PORTS)
    assert plan.directions[0].middle.mean_frame == Fraction(9 * 104 + 84, 10) == 102


def test_a_throughput_at_the_middle_links_maximum_is_flagged_as_that_links(fake_config, tmp_path):
    """A dual DUT that forwards every frame passes at the medium's maximum, which its middle link
    sets: the summary, the console and the report say that the result is that link's bound."""
    from rich.console import Console

    from xlatperf.report import write_report
    from xlatperf.run import run_procedure
    from xlatperf.ui.console import render_summary
    summary = run_procedure("throughput", load_config(str(fake_config), DUAL["ds-lite"]), tmp_path / "tp")
    assert summary["median"] == summary["directions"]["forward"]["max_rate"] == 10_080_645
    note = summary["middle_link_limited"]
    assert note.startswith("a lower bound set by the link between the dual DUT's CE and BR, not by the DUT: "
                           "it passed at 10,080,645 frames/s, the medium's maximum for forward frames of 104 "
                           "bytes on the dual DUT's middle link (IPv4 in IPv6 between its CE and BR")
    console = Console(record=True, width=400)
    console.print(render_summary(summary))
    assert "warning: the throughput is a lower bound set by the link between the dual DUT's CE and BR" in \
        console.export_text()
    write_report(tmp_path / "tp", tmp_path / "report")
    report = (tmp_path / "report" / "report.md").read_text()
    assert "the throughput is a lower bound set by the link between the dual DUT's CE and BR" in report
    assert "the middle link (IPv4 in IPv6, 104-byte frames) at 10 Gbit/s allows 10,080,645" in report
    # A faster middle link leaves the medium's maximum to the tester's links: no such warning.
    faster = load_config(str(fake_config), DUAL["ds-lite"] + ["dut.middle_link_speed=40G"])
    summary = run_procedure("throughput", faster, tmp_path / "faster")
    assert summary["median"] == 14_880_952 and "middle_link_limited" not in summary


def test_map_t_br_frames_are_the_ces_translated_ipv6():
    config = load_config(None, MAP_T)
    assert kind_of(config).name == "map-t"
    forward, reverse = flows(MAP_T)
    fg = forward["foreground"]
    # The frame size names the IPv6 frame (84 bytes at least); the IPv4 one is 20 bytes shorter.
    assert (fg["ip_version"], fg["frame_size"], fg["rx_frame_size"]) == (6, 84, 64)
    assert fg["dst_ip"] == str(embed_ipv4(ipaddress.IPv6Network("2001:db8:ffff::/64"),
                                          ipaddress.IPv4Address("198.19.0.2")))
    assert "tunnel" not in fg
    assert (fg["ce"]["fields"], fg["ce"]["rx_fields"]) == (["ipv6", "port"], ["ipv4", "port"])
    assert (reverse["foreground"]["ce"]["fields"], reverse["foreground"]["ce"]["rx_fields"]) == \
        (["ipv4", "port"], ["ipv6", "port"])


def test_map_t_needs_the_dmr_embedded_address_of_the_ipv4_host():
    wrong = [a for a in MAP_T if not a.startswith("right.virtual_ipv6")] + ["right.virtual_ipv6=2001:db8::1"]
    assert error(wrong) == ("right.virtual_ipv6 = \"2001:db8::1\": must be 2001:db8:ffff:0:c6:1300:200:0, "
                            "right.ipv4 = 198.19.0.2 in ipv4aas.dmr = 2001:db8:ffff::/64: the CEs reach "
                            "the IPv4 host right.ipv4 at its address in the Default Mapping Rule's prefix "
                            "(RFC 7599 §5.1)")
    assert error([a for a in MAP_T if not a.startswith("ipv4aas.dmr")]).startswith(
        'ipv4aas.dmr = "": must be set with MAP-T')
    assert error(MAP_T + ["ipv4aas.dmr=2001:db8:ffff::/60"]).startswith(
        'ipv4aas.dmr = "2001:db8:ffff::/60": must have an RFC 6052 prefix length')


def test_ds_lite_aftr_b4s_are_numbered_and_share_their_private_address():
    forward, = flows(DS_LITE)
    fg = forward["foreground"]
    assert fg["src_ip"] == "192.0.0.2" and fg["tunnel"]["src_ip"] == "2001:db8:b4::1"
    assert fg["ce"]["b4"] == {"ipv6": "2001:db8:b4::1", "ipv4": "192.0.0.2"}
    assert fg["ce"]["count"] == 1000
    # The AFTR's NAT44 rewrites what the B4s send: nothing of theirs to check on the right.
    assert fg["ce"]["fields"] == ["tunnel", "ipv4"] and fg["ce"]["rx_fields"] == []


def test_ds_lite_aftr_returns_traffic_only_after_phase_1():
    assert error([a for a in DS_LITE if not a.startswith("traffic.direction")]).startswith(
        'traffic.direction = "both": must be "forward" unless stateful.enabled = true')


def test_lw4o6_softwires_come_from_the_binding_table(tmp_path):
    table = tmp_path / "bt.csv"
    table.write_text("b4_ipv6,ipv4,psid,psid_length,psid_offset\n" +
                     "".join(f"2001:db8:1::{i + 1:x},198.51.100.{1 + i // 16},{i % 16},4,6\n" for i in range(64)))
    lw4o6 = ["ipv4aas.technology=lw4o6", "ipv4aas.role=lwaftr", "ipv4aas.endpoint_ipv6=2001:db8:ffff::1",
             f"ipv4aas.binding_table={table}"]
    forward, reverse = flows(lw4o6)
    assert forward["foreground"]["ce"]["softwires"] == str(table) and forward["foreground"]["ce"]["count"] == 64
    assert error(lw4o6 + ["ipv4aas.ces=65"]) == \
        "ipv4aas.ces = 65: must be in 0..64 (the CEs the binding table has; 0: all)"
    table.write_text(table.read_text() + "2001:db8:2::1,198.51.100.9,1,2,6\n")
    assert error(lw4o6).endswith(f'{table}:66: psid_length 2, psid_offset 6; line 2 has 4, 6: a table has '
                                 "one sharing ratio (the tester emulates lwB4s of one)")
    table.write_text("b4_ipv6,ipv4,psid,psid_length,psid_offset\n2001:db8:1::1,198.51.100.1,16,4,6\n")
    assert error(lw4o6).startswith(f'ipv4aas.binding_table = "{table}": {table}:2')


@pytest.mark.parametrize("assignments, message", [
    (["ipv4aas.technology=map-e", "ipv4aas.role=aftr"],
     'ipv4aas.role = "aftr": must be one of dual, br, ce with ipv4aas.technology = "map-e"'),
    (["ipv4aas.technology=map-e", "ipv4aas.role=ce", "ipv4aas.rule_ipv6_prefix=2001:db8::/40",
      "ipv4aas.rule_ipv4_prefix=192.0.2.0/24"],
     'ipv4aas.ce_ipv6 = "": must be the IPv6 address of the CE the DUT is'),
    (["ipv4aas.technology=sixrd"], 'ipv4aas.technology = "sixrd": must be one of'),
    (["ipv4aas.role=br"], 'ipv4aas.role = "br": takes effect only with ipv4aas.technology set'),
    (MAP_E + ["ipv4aas.ea_bits=48"], "ipv4aas.ea_bits = 48: Rule IPv6 prefix /40 + 48 EA bits: must be at most 80"),
    (MAP_E + ["ipv4aas.ces=65537"], "ipv4aas.ces = 65537: must be in 0..65536 (the CEs the rule has; 0: all)"),
    (MAP_E + ['ipv4aas.endpoint_ipv6=""'], 'ipv4aas.endpoint_ipv6 = "": must be the BR\'s IPv6 address'),
    (MAP_E + ["ipv4aas.rule_ipv4_prefix=192.0.2.1/24"], 'ipv4aas.rule_ipv4_prefix = "192.0.2.1/24": must be an '
                                                        "IPv4 prefix"),
    (MAP_E + ["left.ip_version=6"], "left.ip_version = 6: must be 4 with ipv4aas.role = \"br\" (map-e: the left "
                                    "port sends and receives IPv4 inside the tunnel)"),
    ([a for a in DS_LITE if not a.startswith("left.ipv6")] + ['left.ipv6=""'],
     'left.ipv6 = "": must be the first B4\'s IPv6 address'),
    (["ipv4aas.technology=464xlat", "ipv4aas.role=clat", "right.ip_version=6", "right.virtual_ipv4=198.19.0.2"],
     'right.ipv6 = "2001:2:0:8000::2": must be 64:ff9b::c613:2, right.virtual_ipv4 = 198.19.0.2 in '
     "ipv4aas.pref64 = 64:ff9b::/96"),
])
def test_bad_ipv4aas_settings_name_key_value_and_allowed(assignments, message):
    assert error(assignments).startswith(message), error(assignments)


# RFC 7597 App. A Example 2's CE: IPv4 192.0.2.18, PSID 0x34, MAP address
# 2001:db8:12:3400:0:c000:212:34 (the rule of Example 1); the BR's address is the right port's.
MAP_E_CE = ["ipv4aas.technology=map-e", "ipv4aas.role=ce", "ipv4aas.endpoint_ipv6=2001:db8:ffff::1",
            "ipv4aas.rule_ipv6_prefix=2001:db8::/40", "ipv4aas.rule_ipv4_prefix=192.0.2.0/24",
            "ipv4aas.ea_bits=16", "ipv4aas.ce_ipv6=2001:db8:12:3400:0:c000:212:34", "left.ipv4=192.0.2.18"]


def test_a_map_e_ce_alone_is_the_rules_ce_its_address_names():
    """The CE role: the left port is the CE's LAN, sending from the CE's address and ports of its
    set; the right port plays the BR and checks the CE's tunnel, address and port."""
    config = load_config(None, MAP_E_CE)
    assert kind_of(config).name == "encapsulating-ce"
    forward, reverse = flows(MAP_E_CE)
    fg = forward["foreground"]
    assert (fg["ip_version"], fg["frame_size"], fg["rx_frame_size"]) == (4, 64, 104)
    assert "tunnel" not in fg
    assert (fg["ce"]["first"], fg["ce"]["count"]) == (0x1234, 1)
    assert (fg["ce"]["fields"], fg["ce"]["rx_fields"]) == (["ipv4", "port"], ["tunnel", "ipv4", "port"])
    rv = reverse["foreground"]
    assert (rv["frame_size"], rv["rx_frame_size"]) == (104, 64)
    assert rv["tunnel"] == {"src_ip": "2001:db8:ffff::1", "dst_ip": "2001:db8:12:3400:0:c000:212:34"}
    assert (rv["ce"]["side"], rv["ce"]["fields"], rv["ce"]["rx_fields"]) == ("dst", ["ipv4", "port"], ["ipv4", "port"])


def test_a_ce_that_translates_its_lan_is_reached_at_what_phase_1_learnt():
    """With NAPT44 (stateful.enabled) the LAN's addresses and ports are the tester's own; the
    right port checks the CE's fields on arrival and answers at the learnt ones."""
    forward, reverse = flows([a for a in MAP_E_CE if not a.startswith("left.ipv4")] +
                             ["stateful.enabled=true", "ports.forward_src=random", "stateful.connections=1000"])
    assert forward["foreground"]["ce"]["fields"] == []
    assert forward["foreground"]["ce"]["rx_fields"] == ["tunnel", "ipv4", "port"]


@pytest.mark.parametrize("assignments, message", [
    (MAP_E_CE[:-2] + ["ipv4aas.ce_ipv6=2001:db8:12:3400::1"],
     'ipv4aas.ce_ipv6 = "2001:db8:12:3400::1": is the MAP IPv6 address of no CE of the rule (RFC 7597 §6'),
    (MAP_E_CE[:-1] + ["left.ipv4=192.168.1.2"],
     'left.ipv4 = "192.168.1.2": must be 192.0.2.18, the CE\'s IPv4 address, when stateful.enabled = false: '
     "the LAN port sends from it and from the CE's ports (1232-1235, 2256-2259, 3280-3283, ... (63 ranges))"),
    (MAP_E_CE + ['ipv4aas.endpoint_ipv6=""'], 'ipv4aas.endpoint_ipv6 = "": must be the BR\'s IPv6 address, the '
                                              "tunnel's end the right port plays"),
    (MAP_E_CE + ["right.ip_version=6"], 'right.ip_version = 6: must be 4 with ipv4aas.role = "ce" (map-e: the '
                                        "right port sends and receives IPv4 inside the tunnel)"),
])
def test_bad_ce_role_settings_name_key_value_and_allowed(assignments, message):
    assert error(assignments).startswith(message), error(assignments)


def test_map_t_ce_alone_translates_to_its_map_address():
    ce = ["ipv4aas.technology=map-t", "ipv4aas.role=ce", "right.ip_version=6",
          "ipv4aas.rule_ipv6_prefix=2001:db8::/40", "ipv4aas.rule_ipv4_prefix=192.0.2.0/24",
          "ipv4aas.ea_bits=16", "ipv4aas.dmr=2001:db8:ffff::/64", "ipv4aas.ce_ipv6=2001:db8:12:3400:0:c000:212:34",
          "left.ipv4=192.0.2.18", "right.virtual_ipv6=2001:db8:ffff:0:c6:1300:200:0", "traffic.frame_size=84"]
    assert kind_of(load_config(None, ce)).name == "map-t-ce"
    forward, reverse = flows(ce)
    assert (forward["foreground"]["frame_size"], forward["foreground"]["rx_frame_size"]) == (64, 84)
    assert forward["foreground"]["ce"]["rx_fields"] == ["ipv6", "port"]
    rv = reverse["foreground"]
    assert (rv["ip_version"], rv["src_ip"], rv["dst_ip"]) == \
        (6, "2001:db8:ffff:0:c6:1300:200:0", "2001:db8:12:3400:0:c000:212:34")
    assert (rv["ce"]["fields"], rv["ce"]["rx_fields"]) == (["ipv6", "port"], ["ipv4", "port"])


def test_a_b4_alone_keeps_its_lans_addresses_inside_its_softwire():
    b4 = ["ipv4aas.technology=ds-lite", "ipv4aas.role=b4", "ipv4aas.endpoint_ipv6=2001:db8:af::1",
          "ipv4aas.ce_ipv6=2001:db8:b4::1", "left.ipv4=192.168.1.2"]
    forward, reverse = flows(b4)
    ce = forward["foreground"]["ce"]
    assert ce["b4"] == {"ipv6": "2001:db8:b4::1", "ipv4": "192.168.1.2"} and ce["count"] == 1
    assert (ce["fields"], ce["rx_fields"]) == ([], ["tunnel"])
    assert reverse["foreground"]["tunnel"] == {"src_ip": "2001:db8:af::1", "dst_ip": "2001:db8:b4::1"}
    assert "ce" not in reverse["foreground"]


def test_an_lwb4_alone_is_its_binding_table_row(tmp_path):
    table = tmp_path / "bt.csv"
    table.write_text("b4_ipv6,ipv4,psid,psid_length,psid_offset\n" +
                     "".join(f"2001:db8:1::{i + 1:x},198.51.100.{1 + i // 16},{i % 16},4,6\n" for i in range(64)))
    lwb4 = ["ipv4aas.technology=lw4o6", "ipv4aas.role=lwb4", "ipv4aas.endpoint_ipv6=2001:db8:ffff::1",
            f"ipv4aas.binding_table={table}", "ipv4aas.ce_ipv6=2001:db8:1::13", "left.ipv4=198.51.100.2"]
    forward, _ = flows(lwb4)
    assert (forward["foreground"]["ce"]["first"], forward["foreground"]["ce"]["count"]) == (18, 1)
    assert error(lwb4 + ["ipv4aas.ce_ipv6=2001:db8:1::99"]).startswith(
        'ipv4aas.ce_ipv6 = "2001:db8:1::99": is no lwB4 of the binding table')


def test_selftest_checks_only_the_ce_fields_a_cable_leaves_in_place():
    """Wired to each other the tester's ports see frames as sent: a tunnel that only a DUT
    would add is not checked for."""
    config = load_config(None, MAP_E)
    forward, reverse = TrafficPlan(config, PORTS, through_dut=False).flows(1000)
    assert forward["foreground"]["ce"]["rx_fields"] == ["ipv4", "port"]
    assert reverse["foreground"]["ce"]["rx_fields"] == ["ipv4", "port"]
    assert reverse["foreground"]["rx_frame_size"] == 64


def test_a_trial_of_emulated_ces_records_the_wrong_ce_count(fake_config, tmp_path):
    """Through the fake engine (which mirrors the protocol): the trial's record keeps each
    direction's wrong_ce, the frames whose CE fields failed the receiver's check."""
    from xlatperf.measure.store import read_trials
    from xlatperf.ui import cli
    out = tmp_path / "out"
    status = cli.main(["trial", "-c", str(fake_config), "--out", str(out), "--rate", "1000", "-q",
                       *[arg for a in MAP_E for arg in ("--set", a)]])
    assert status == 0
    record, = read_trials(out)
    assert record["directions"]["forward"]["wrong_ce"] == 0
    assert record["directions"]["reverse"]["wrong_ce"] == 0


@pytest.mark.parametrize("assignments, says", [
    (MAP_E, "(MAP-E BR: 65,536 CEs emulated on the left from a MAP rule, one per frame, pseudorandomly"),
    (MAP_E_CE, "(MAP-E: the DUT is one CE, 2001:db8:12:3400:0:c000:212:34; the right port plays its BR"),
])
def test_the_report_says_what_the_dut_is_and_what_the_tester_plays(fake_config, tmp_path, assignments, says):
    """RFC 8219 §12's frame format names the set-up; the CEs' ports are said to come from their
    port sets, not the configured ones."""
    from xlatperf.ui import cli
    out = tmp_path / "out"
    assert cli.main(["trial", "-c", str(fake_config), "--out", str(out), "--rate", "1000", "-q",
                     *[arg for a in assignments for arg in ("--set", a)]]) == 0
    assert cli.main(["report", str(out)]) == 0
    report = (out / "report" / "report.md").read_text()
    assert says in report
    assert "| Address and port variation | per frame, a CE's address and a port of its set on the CEs' side" in report


def test_emulated_ces_with_an_ipv4_prefix_use_every_address_of_it():
    """RFC 7597 §5.2: 4 EA bits of a /24 give each of 16 CEs a /28; the request says so (the
    engine spreads the CEs' frames over their prefixes); shared addresses have no such prefix."""
    prefixed = flows(MAP_E[:-1] + ["ipv4aas.ea_bits=4"])
    assert all(flow["foreground"]["ce"]["prefix_hosts"] is True for flow in prefixed)
    assert all("prefix_hosts" not in flow["foreground"]["ce"] for flow in flows(MAP_E))
    assert MapRule(ipaddress.IPv6Network("2001:db8::/40"), ipaddress.IPv4Network("192.0.2.0/24"), 4).host_bits == 4
