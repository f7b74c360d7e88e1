# SPDX-License-Identifier: BSD-3-Clause
"""Header checks on receipt (docs/config.md "Header checks", docs/protocol.md): the [checks],
traffic.dscp and dut.hops keys, the `tos`, `ttl` and `rx` of every stream per traffic kind, the
engine's counts of refused frames in a TrialResult and its record, and how the console line, the
report's warnings and its reporting items show them."""

import json
import subprocess
import sys

import pytest
from rich.console import Console

from fakes import FAKE_ENGINE
from xlatperf.config.loading import load_config, validate
from xlatperf.engine.protocol import TrialResult, trial_from_record
from xlatperf.frames.stack import SENT_TTL
from xlatperf.measure.stateful import StatefulTest
from xlatperf.report.collect import Entry
from xlatperf.report.families.base import Family
from xlatperf.traffic.plan import TrafficPlan
from xlatperf.ui.console import ConsoleReporter
from xlatperf.util.errors import ConfigError

PORTS = [
    {"index": 0, "name": "net_null0", "mac": "02:00:00:00:00:01", "link_speed_mbps": 10000},
    {"index": 1, "name": "net_null1", "mac": "02:00:00:00:00:02", "link_speed_mbps": 10000},
]
# A SIIT translator between an IPv6 left and an IPv4 right (RFC 7915), the IPv4 right side at
# 64:ff9b::198.19.0.2 (RFC 6052 /96) and the left at 198.18.0.2 as IPv4 sees it.
SIIT = ["left.ip_version=6", "left.virtual_ipv4=198.18.0.2", "right.virtual_ipv6=64:ff9b::c613:2",
        "traffic.frame_size=84"]
# RFC 9693 through a NAT44, the Initiator on the left: 100 x 100 port pairs (the lab's nat44).
NAT44 = ["stateful.enabled=true", "stateful.connections=10000", "ports.forward_src=random",
         "ports.forward_src_max=1123", "ports.forward_dst=random", "ports.forward_dst_max=100"]
MAP_E = ["ipv4aas.technology=map-e", "ipv4aas.role=br", "ipv4aas.endpoint_ipv6=2001:db8:ffff::1",
         "ipv4aas.rule_ipv6_prefix=2001:db8::/40", "ipv4aas.rule_ipv4_prefix=192.0.2.0/24",
         "ipv4aas.ea_bits=16"]
DUAL_MAP_T = ["ipv4aas.technology=map-t", "ipv4aas.role=dual", "ipv4aas.rule_ipv6_prefix=2001:db8::/40",
              "ipv4aas.rule_ipv4_prefix=192.0.2.0/24"]


def plan(assignments, **kwargs) -> TrafficPlan:
    return TrafficPlan(load_config(None, assignments), PORTS, **kwargs)


def rx(assignments, **kwargs) -> dict[str, dict]:
    """Each direction's foreground `rx`, without its `src_mac`, which must be the DUT's MAC on
    the receiving side (the tests below have their own for it)."""
    flows = plan(assignments, **kwargs).flows(1000)
    config = load_config(None, assignments)
    for flow in flows:
        assert flow["foreground"]["rx"]["src_mac"] == config.side(RECEIVER[flow["name"]]).dut_mac
    return {flow["name"]: {k: v for k, v in flow["foreground"]["rx"].items() if k != "src_mac"} for flow in flows}


RECEIVER = {"forward": "right", "reverse": "left"}


def error(raw: dict) -> str:
    with pytest.raises(ConfigError) as info:
        validate(raw)
    return str(info.value)


# -- the keys ----------------------------------------------------------------------------------

def test_the_keys_default_to_every_check_on_dscp_0_and_the_set_ups_hops():
    config = load_config(None, [])
    headers = {key: value for key, value in config.checks.to_dict().items() if not key.startswith("dns_")}
    assert headers == {"checksum": True, "ttl": True, "tos": True, "address": True, "df": True,
                       "df_small": "rfc7915", "ecn": True, "flow_label": True, "zero_udp_checksum_ipv6": True,
                       "src_mac": True}
    assert (config.traffic.dscp, config.dut.hops) == (0, "auto")
    # --set takes a number for dut.hops as a number (the key takes "auto" or an integer).
    assert load_config(None, ["dut.hops=2"]).dut.hops == 2
    assert load_config(None, ['dut.hops="auto"']).dut.hops == "auto"


@pytest.mark.parametrize("raw, message", [
    ({"traffic": {"dscp": 64}}, "traffic.dscp = 64: must be an integer in 0..63"),
    ({"traffic": {"dscp": -1}}, "traffic.dscp = -1: must be an integer in 0..63"),
    ({"traffic": {"flow_label": 1 << 20}}, "traffic.flow_label = 1048576: must be an integer in 0..1048575"),
    ({"dut": {"hops": 255}}, 'dut.hops = 255: must be "auto" (1 for a router, translator or NAT, 2 for a '
                             'dual DUT) or an integer in 0..254'),
    ({"dut": {"hops": "one"}}, 'dut.hops = "one": must be "auto"'),
    ({"dut": {"hops": 10}}, "dut.hops = 10: must be at most 9: the test frames are sent with TTL/hop limit 10"),
    ({"checks": {"ttl": 0}}, "checks.ttl = 0: must be true or false"),
    ({"checks": {"tls": False}}, "checks.tls: unknown key in [checks] (keys: checksum, ttl, tos, ecn, address, src_mac, "
                                 "df, df_small, flow_label, zero_udp_checksum_ipv6"),
    ({"stateful": {"public_ports": "2000-1000"}},
     'stateful.public_ports = "2000-1000": must be "" (not stated) or a port range "LOW-HIGH" with 1 <= LOW <= '
     'HIGH <= 65535'),
    ({"stateful": {"public_ports": 1024}}, 'stateful.public_ports = 1024: must be "" (not stated) or a port range'),
    ({"checks": {"df_small": "rfc791"}}, 'checks.df_small = "rfc791": must be one of "rfc7915" | "rfc6145" | "either"'),
])
def test_bad_values_name_key_value_and_range(raw, message):
    assert error(raw).startswith(message)


# -- what the frames are sent with ---------------------------------------------------------------

def test_every_stream_is_sent_with_the_dscp_and_ttl_10():
    flows = plan(["traffic.dscp=46", "traffic.mix_n=2", "traffic.imix=84:1,128:1"]).flows(1000)
    streams = [stream for flow in flows for stream in flow["streams"]]
    assert len(streams) == 8   # two sizes, foreground and background, two directions
    assert {(s["tos"], s["ttl"]) for s in streams} == {(184, SENT_TTL)}   # EF: 46 << 2
    assert all(s["rx"]["tos"] == 184 for s in streams)


# -- rx per traffic kind -------------------------------------------------------------------------

def test_a_router_forwards_the_frames_as_sent_less_one_ttl():
    assert rx([]) == {
        "forward": {"ip_version": 4, "src_ip": "198.18.0.2", "dst_ip": "198.19.0.2", "src_port": 49184,
                    "dst_port": 7, "ttl": 9, "tos": 0, "ecn": [0], "df": True, "checksums": True},
        "reverse": {"ip_version": 4, "src_ip": "198.19.0.2", "dst_ip": "198.18.0.2", "src_port": 49184,
                    "dst_port": 7, "ttl": 9, "tos": 0, "ecn": [0], "df": True, "checksums": True}}
    assert rx(["left.ip_version=6", "right.ip_version=6", "traffic.frame_size=84"])["forward"] == {
        "ip_version": 6, "src_ip": "2001:2::2", "dst_ip": "2001:2:0:8000::2", "src_port": 49184,
        "dst_port": 7, "ttl": 9, "tos": 0, "ecn": [0], "checksums": True,   # no DF in IPv6
        "flow_label": 0x12345}   # the label sent, unchanged (RFC 6437 §3)


def test_a_siit_translator_writes_the_senders_virtual_and_the_receivers_real_address():
    assert rx(SIIT + ["traffic.dscp=8"]) == {
        # IPv6 -> IPv4: a 64-byte IPv4 frame, far below 1260 bytes: DF counted by its value (RFC
        # 7915 §5.1 clears it, RFC 6145 §5.1, which TAYGA follows, set it: checks.df_small).
        "forward": {"ip_version": 4, "src_ip": "198.18.0.2", "dst_ip": "198.19.0.2", "src_port": 49184,
                    "dst_port": 7, "ttl": 9, "tos": 32, "ecn": [0], "count_df": True, "checksums": True},
        # IPv4 -> IPv6: the IPv4 sender as IPv6 sees it, no DF, flow label 0 (RFC 7915 §5.1).
        "reverse": {"ip_version": 6, "src_ip": "64:ff9b::c613:2", "dst_ip": "2001:2::2", "src_port": 49184,
                    "dst_port": 7, "ttl": 9, "tos": 32, "ecn": [0], "checksums": True, "flow_label": 0}}


def test_an_address_the_configuration_lacks_is_not_checked():
    # A one-way test needs no virtual address of the receiver's sender side.
    forward = rx(["left.ip_version=6", "right.virtual_ipv6=64:ff9b::c613:2", "traffic.frame_size=84",
                  "traffic.direction=forward"])["forward"]
    assert "src_ip" not in forward and forward["dst_ip"] == "198.19.0.2"


@pytest.mark.parametrize("frame_size, df, counted", [(1298, None, True), (1299, True, None)])
def test_a_translation_into_ipv4_sets_df_above_1260_bytes(frame_size, df, counted):
    """RFC 7915 §5.1: the IPv4 packet of a 1278-byte frame is 1260 bytes (DF clear, but set by
    RFC 6145's translators: counted by its value, checks.df_small judges); one more byte sets DF
    (both RFCs). The configured size names the IPv6 frame, 20 bytes longer."""
    forward = plan(SIIT + [f"traffic.frame_size={frame_size}"]).flows(1000)[0]["foreground"]
    assert forward["rx_frame_size"] == frame_size - 20
    assert forward["rx"].get("df") is df and forward["rx"].get("count_df") is counted
    assert "count_df" not in plan(SIIT + [f"traffic.frame_size={frame_size}", "checks.df=false"]).flows(1000)[0][
        "foreground"]["rx"]


def df_reply(df_set: int, df_clear: int) -> dict:
    """A trial reply whose forward frames (translated, at most 1,260 bytes) arrived 1,000 of
    1,000, `df_set` with DF set and `df_clear` with it clear."""
    return {"valid": True, "flows": [{"name": "forward", "rate": 1000, "planned": 1000, "sent": 1000,
                                      "received": 1000, "streams": [{"kind": "foreground", "sent": 1000,
                                                                     "received": 1000, "df_set": df_set,
                                                                     "df_clear": df_clear}]}]}


@pytest.mark.parametrize("rule, df_set, df_clear, wrong", [
    ("rfc7915", 0, 1000, 0), ("rfc7915", 1000, 0, 1000), ("rfc7915", 10, 990, 10),
    ("rfc6145", 1000, 0, 0), ("rfc6145", 0, 1000, 1000), ("rfc6145", 990, 10, 10),
    ("either", 1000, 0, 0), ("either", 0, 1000, 0), ("either", 10, 990, 10), ("either", 600, 400, 400),
])
def test_df_small_judges_the_direction_and_a_mix_fails_whatever_the_rule(rule, df_set, df_clear, wrong):
    result = TrialResult.from_reply(1000, df_reply(df_set, df_clear), df_small=rule)
    forward = result.directions["forward"]
    assert (forward.df_set, forward.df_clear, forward.df_wrong) == (df_set, df_clear, wrong)
    # No loss (every packet arrived whole), but the trial fails on a broken rule.
    assert forward.loss_ratio == 0 and result.passes() is (wrong == 0)
    record = json.loads(json.dumps(result.to_dict()))
    assert trial_from_record(record).directions == result.directions
    if df_set and df_clear:
        assert "neither RFC 7915 §5.1 (clear) nor RFC 6145 §5.1 (set)" in record["directions"]["forward"]["df_small"]


def test_the_df_behaviour_seen_is_named_in_the_record_the_console_line_and_the_report(tmp_path):
    result = TrialResult.from_reply(1000, df_reply(1000, 0))  # the default rule: RFC 7915
    assert result.to_dict()["directions"]["forward"]["df_small"] == \
        "DF set on translated packets ≤ 1,260 bytes: RFC 6145 §5.1 behaviour, RFC 7915 §5.1 clears it"
    line = ConsoleReporter(console=Console(record=True))._trial_line({"repetition": 1, "step": 1}, result)
    assert "1,000 with DF against checks.df_small" in line
    entry = Entry("tp", tmp_path, {"procedure": "throughput"})
    entry.trials = [result.to_dict()]
    assert any(w.startswith("1,000 forward frames were IPv4 packets of at most 1,260 bytes translated")
               and w.endswith("the trial fails on them") for w in Family().warnings(entry))


def test_the_fake_translator_clears_df_and_the_lab_holds_tayga_to_rfc_6145(fake_config, tmp_path, monkeypatch):
    from xlatperf.lab.kinds import KINDS
    from xlatperf.measure.store import read_trials
    from xlatperf.ui import cli
    assert {KINDS[kind].checks().get("df_small") for kind in ("siit", "nat64", "clat", "464xlat")} == {"rfc6145"}
    assert "df_small" not in KINDS["mapt-br"].checks()  # the reference BPF translator: RFC 7915
    for behaviour, rule, wrong in (("clear", "rfc7915", 0), ("set", "rfc6145", 0), ("set", "rfc7915", 1),
                                   ("mixed", "either", 0.5)):
        monkeypatch.setenv("FAKE_DF", behaviour)
        out = tmp_path / f"{behaviour}-{rule}"
        sets = SIIT + [f"checks.df_small={rule}"]
        assert cli.main(["trial", "-c", str(fake_config), "--out", str(out), "--rate", "1000", "-q",
                         *[arg for a in sets for arg in ("--set", a)]]) == 0
        record, = read_trials(out)
        forward = record["directions"]["forward"]
        assert forward["df_wrong"] == int(forward["received"] * wrong) > 0 or not wrong, (behaviour, rule, record)
        assert "df_set" not in record["directions"]["reverse"]  # arrives as IPv6: no DF
    assert cli.main(["report", str(out)]) == 0
    report = (out / "report" / "report.md").read_text()
    assert 'DF of translated IPv4 packets ≤ 1,260 bytes by checks.df_small = "either"' in report
    assert "forward: DF set on" in report and "a mix" in report


def test_a_dual_dut_takes_two_hops_and_a_translating_one_sets_df_by_size():
    assert {r["ttl"] for r in rx(DUAL_MAP_T).values()} == {SENT_TTL - 2}
    assert "df" not in rx(DUAL_MAP_T)["forward"]              # 64-byte frames: either RFC's DF
    assert rx(DUAL_MAP_T + ["traffic.frame_size=1279"])["forward"]["df"] is True
    assert rx(DUAL_MAP_T + ["dut.hops=3"])["forward"]["ttl"] == SENT_TTL - 3
    assert rx(["dut.hops=0"])["forward"]["ttl"] == SENT_TTL   # a DUT that does not route


def test_a_stateful_nat_leaves_the_initiators_source_and_the_responders_destination_unchecked():
    """RFC 9693: the NAT chooses the source address and port of the Initiator's frames and maps
    the Responder's back; what it chooses is not checked."""
    assert rx(NAT44) == {
        "forward": {"ip_version": 4, "dst_ip": "198.19.0.2", "dst_port": 7, "ttl": 9, "tos": 0, "ecn": [0],
                    "df": True, "checksums": True, "vary": [{"field": "dst_port", "min": 1, "max": 100}]},
        "reverse": {"ip_version": 4, "src_ip": "198.19.0.2", "src_port": 49184, "ttl": 9, "tos": 0, "ecn": [0],
                    "df": True, "checksums": True}}
    # The Initiator as the Responder sees it: the NAT's public address, when the config names it.
    assert rx(NAT44 + ["left.virtual_ipv4=198.19.0.1"])["forward"]["src_ip"] == "198.19.0.1"
    # The Initiator on the right: the roles, not the directions, decide.
    right = rx(["stateful.enabled=true", "stateful.initiator=right", "stateful.connections=100",
                "ports.reverse_src=random", "ports.reverse_src_max=1123"])
    assert "src_port" not in right["reverse"] and right["reverse"]["dst_ip"] == "198.18.0.2"
    assert "dst_ip" not in right["forward"] and right["forward"]["src_ip"] == "198.18.0.2"


def test_a_stated_public_port_range_is_where_the_initiators_frames_must_come_from():
    """RFC 9693 §3.2: the NAT replaces the Initiator's source port with one of its own; where
    stateful.public_ports states them, the Responder's side checks the port lies among them."""
    forward, reverse = rx(NAT44 + ['stateful.public_ports="20000-29999"']).values()
    assert {"field": "src_port", "min": 20000, "max": 29999} in forward["vary"] and "src_port" not in forward
    assert "vary" not in reverse
    assert not any(v["field"] == "src_port" for v in rx(NAT44)["forward"]["vary"])  # not stated
    assert "vary" not in rx(NAT44 + ['stateful.public_ports="20000-29999"', "checks.address=false"])["forward"]
    from xlatperf.lab.kinds import KINDS
    from xlatperf.lab.kinds.nat import nat_ruleset
    for kind in ("nat44", "nat66", "nat64", "464xlat", "dslite-aftr"):
        params = KINDS[kind].parse({})
        assert KINDS[kind].tester_sections(params)["stateful"]["public_ports"] == "20000-29999"
        assert "masquerade to :20000-29999" in KINDS[kind].ruleset(params)
        assert "masquerade to :1024-65535" in KINDS[kind].ruleset({**params, "wide_ports": True})
    assert "masquerade to" not in nat_ruleset("ip")


def test_the_responders_frames_from_its_state_table_leave_their_source_port_unchecked():
    test = StatefulTest(plan(NAT44))
    forward, reverse = test.requests.phase2_flows(plan(NAT44).flows(1000))
    assert reverse["from_table"] and reverse["foreground"]["rx"] == {
        "ip_version": 4, "src_ip": "198.19.0.2", "ttl": 9, "tos": 0, "ecn": [0], "df": True, "checksums": True,
        "src_mac": "02:00:00:00:01:01"}  # left.dut_mac
    assert forward["foreground"]["rx"]["dst_ip"] == "198.19.0.2"
    # Phase 1: the Initiator's enumerated ports arrive in the same ranges.
    phase1 = test.requests.phase1_request(1000, 1000, 1000).flows[0]["foreground"]
    assert phase1["rx"]["vary"] == [{"field": "dst_port", "min": 1, "max": 100}]


def test_tcp_segments_are_checked_as_udp_datagrams_are():
    """The Initiator's SYNs through the NAT44: from its public address (unnamed here: not
    checked) and a port of its choice, to the Responder's address and port; phase 2's data
    segments from the tables as UDP's frames from the table."""
    tcp = NAT44 + ["stateful.transport=tcp", "traffic.frame_size=100", "traffic.dscp=10"]
    test = StatefulTest(plan(tcp))
    flow = test.requests.phase1_request(1000, 1000, 1000).flows[0]
    rx = flow["foreground"]["rx"]
    assert flow["tcp"] and rx["dst_ip"] == "198.19.0.2" and "src_port" not in rx and "src_ip" not in rx
    assert (rx["ttl"], rx["tos"], rx["checksums"]) == (9, 40, True)
    phase2 = test.requests.phase2_flows(plan(tcp).flows(1000))
    assert all(f["foreground"]["rx"]["checksums"] and "src_port" not in f["foreground"]["rx"] for f in phase2)


def test_varying_addresses_arrive_at_the_received_versions_offsets():
    """The 16-bit part of a side's addresses, the same value in both versions at their offsets
    (addresses.SIDE_offset_ipvX); ports stay ports; RFC 2544 §12's network byte has no word in
    the other version: that destination is not checked."""
    varying = ["addresses.left=random", "addresses.left_offset_ipv6=14", "addresses.right=increasing",
               "ports.forward_src=random"]
    sent = plan(SIIT + varying).flows(1000)[0]["foreground"]
    assert [(v["field"], v.get("offset")) for v in sent["vary"]] == [
        ("src_port", None), ("src_ip", 14), ("dst_ip", 12)]
    assert sent["rx"]["vary"] == [
        {"field": "src_port", "min": 1024, "max": 65535},
        {"field": "src_ip", "offset": 2, "min": 2, "max": 65534},
        {"field": "dst_ip", "offset": 2, "min": 2, "max": 65534}]
    # Native: the frames' own vary list, without the modes.
    native = plan(varying + ["addresses.right_nets=4", "addresses.right_offset_ipv4=0"]).flows(1000)[0]
    assert native["foreground"]["rx"]["vary"] == [
        {key: value for key, value in v.items() if key != "mode"} for v in native["foreground"]["vary"]]
    assert {"field": "dst_ip", "offset": 2, "bits": 8, "min": 0, "max": 3} in native["foreground"]["rx"]["vary"]
    # Across a translation, destination networks leave the destination unchecked.
    nets = plan(SIIT + ["addresses.right_nets=4"]).flows(1000)[0]["foreground"]["rx"]
    assert "dst_ip" not in nets and "vary" not in nets and nets["src_ip"] == "198.18.0.2"


def test_a_br_alone_is_checked_for_what_it_writes_and_may_leave_a_tunnels_exit_undecremented():
    """MAP-E BR (RFC 7597 §8): out of the tunnel (the BR its exit: a decrement or none, RFC 2473
    §3.3) the CE's address and port are the CE check's, the rest as sent; into the tunnel (the
    BR its entry: one decrement) from the BR's address, the TOS kept (MAP-E does not demand the
    tunnel carry it)."""
    forward, reverse = rx(MAP_E + ["traffic.dscp=10"]).values()
    assert forward == {"ip_version": 4, "src_ip": "198.18.0.2", "dst_ip": "198.19.0.2", "src_port": 49184,
                       "dst_port": 7, "ttl": [9, 10], "tos": 40, "ecn": [0], "df": True, "checksums": True}
    assert reverse == {"ip_version": 4, "src_ip": "198.19.0.2", "dst_ip": "198.18.0.2", "src_port": 49184,
                       "dst_port": 7, "ttl": 9, "tos": 40, "ecn": [0], "df": True, "checksums": True,
                       "tunnel": {"src_ip": "2001:db8:ffff::1"}}


DS_LITE = ["ipv4aas.technology=ds-lite", "ipv4aas.role=aftr", "ipv4aas.endpoint_ipv6=2001:db8:af::1",
           "left.ipv4=192.0.0.2", "left.ipv6=2001:db8:b4::1", "ipv4aas.ces=1000"]


def test_a_ds_lite_aftr_carries_the_tos_into_the_tunnel_and_its_nat_chooses_the_source():
    """RFC 6333 §7.1: the tunnel's traffic class is the inner TOS; §6.6: the AFTR's NAT44 sends
    the B4s' frames on from its own address (checked where left.virtual_ipv4 names it) and a
    port of its choice, and restores their destinations (learnt by the Responder)."""
    forward = rx(DS_LITE + ["traffic.direction=forward"])["forward"]
    assert "src_ip" not in forward and "src_port" not in forward and forward["dst_ip"] == "198.19.0.2"
    named = ["traffic.direction=forward", "left.virtual_ipv4=198.18.255.1"]
    assert rx(DS_LITE + named)["forward"]["src_ip"] == "198.18.255.1"
    reverse = rx(DS_LITE + NAT44 + ["traffic.dscp=10"])["reverse"]
    assert reverse["tunnel"] == {"src_ip": "2001:db8:af::1", "carries_tos": True}
    assert reverse["tos"] == 40 and "dst_ip" not in reverse and "dst_port" not in reverse
    assert "carries_tos" not in rx(DS_LITE + NAT44 + ["checks.tos=false"])["reverse"]["tunnel"]


MAP_T = ["ipv4aas.technology=map-t", "ipv4aas.role=br", "left.ip_version=6",
         "ipv4aas.rule_ipv6_prefix=2001:db8::/40", "ipv4aas.rule_ipv4_prefix=192.0.2.0/24",
         "ipv4aas.ea_bits=16", "ipv4aas.dmr=2001:db8:ffff::/64",
         "right.virtual_ipv6=2001:db8:ffff:0:c6:1300:200:0", "traffic.frame_size=84"]


def test_a_map_t_br_translates_with_one_decrement_and_the_server_in_the_dmr():
    """RFC 7599 §8.3/§8.4, RFC 7915: towards the CEs from the server's address in the DMR."""
    forward, reverse = rx(MAP_T + ["traffic.dscp=10"]).values()
    assert forward["ttl"] == reverse["ttl"] == 9 and forward["tos"] == reverse["tos"] == 40
    assert reverse["src_ip"] == "2001:db8:ffff:0:c6:1300:200:0" and "tunnel" not in reverse
    assert "df" not in forward  # 84 bytes: RFC 7915 and RFC 6145 differ


MAP_E_CE = ["ipv4aas.technology=map-e", "ipv4aas.role=ce", "ipv4aas.endpoint_ipv6=2001:db8:ffff::1",
            "ipv4aas.rule_ipv6_prefix=2001:db8::/40", "ipv4aas.rule_ipv4_prefix=192.0.2.0/24",
            "ipv4aas.ea_bits=16", "ipv4aas.ce_ipv6=2001:db8:12:3400:0:c000:212:34", "left.ipv4=192.0.2.18"]


def test_a_ce_alone_is_the_tunnels_entry_towards_the_br_and_its_exit_back():
    forward, reverse = rx(MAP_E_CE).values()
    assert forward["tunnel"] == {"src_ip": "2001:db8:12:3400:0:c000:212:34", "dst_ip": "2001:db8:ffff::1"}
    assert forward["ttl"] == 9 and reverse["ttl"] == [9, 10] and "tunnel" not in reverse
    assert reverse["dst_ip"] == "192.0.2.18" and reverse["src_ip"] == "198.19.0.2"


def test_a_dual_dut_that_tunnels_has_one_tunnel_exit_among_its_two_hops():
    dual = ["ipv4aas.technology=map-e", "ipv4aas.role=dual", "ipv4aas.rule_ipv6_prefix=2001:db8::/40",
            "ipv4aas.rule_ipv4_prefix=192.0.2.0/24"]
    assert rx(dual)["forward"]["ttl"] == [8, 9]
    assert rx(DUAL_MAP_T)["forward"]["ttl"] == 8


def test_background_frames_are_checked_in_full_and_through_a_nat66_as_the_foreground():
    background = plan(["traffic.mix_n=2", "traffic.frame_size=84"]).flows(1000)[0]["background"]["rx"]
    assert background == {"ip_version": 6, "src_ip": "2001:2::2", "dst_ip": "2001:2:0:8000::2",
                          "src_port": 49184, "dst_port": 7, "ttl": 9, "tos": 0, "ecn": [0], "checksums": True,
                          "flow_label": 0x12345, "src_mac": "02:00:00:00:01:02"}
    nat66 = ["left.ip_version=6", "right.ip_version=6", "traffic.frame_size=84", "traffic.mix_n=2",
             "stateful.connections=20000"]
    assert "src_ip" not in plan(NAT44 + nat66).flows(1000)[0]["background"]["rx"]
    nat44 = NAT44 + ["traffic.mix_n=2", "stateful.connections=20000", "traffic.frame_size=84"]
    assert plan(nat44).flows(1000)[0]["background"]["rx"]["src_ip"] == "2001:2::2"


@pytest.mark.parametrize("check, gone", [
    ("ttl", {"ttl"}), ("tos", {"tos"}), ("df", {"df"}),
    ("address", {"src_ip", "dst_ip", "src_port", "dst_port", "vary"}),
])
def test_a_check_turned_off_leaves_its_keys_out(check, gone):
    on = rx(["ports.forward_dst=random"])["forward"]
    off = rx(["ports.forward_dst=random", f"checks.{check}=false"])["forward"]
    assert set(on) - set(off) == gone


@pytest.mark.parametrize("ecn, tos, arriving", [
    ("not-ect", 40, [0]), ("ect1", 41, [1, 3]), ("ect0", 42, [2, 3]), ("ce", 43, [3])])
def test_the_ecn_field_is_sent_with_the_dscp_and_may_arrive_ce_where_ect(ecn, tos, arriving):
    """RFC 3168 §5: a congested router marks an ECT packet CE, never a Not-ECT one; a translator
    copies the whole class (RFC 7915 §4.1, §5.1) and a tunnel's exit hands it on (RFC 6040
    §4.2): the same rule through every kind. On a cable the frames arrive as sent."""
    for kind in ([], SIIT, MAP_E):
        flows = plan(kind + ["traffic.dscp=10", f"traffic.ecn={ecn}"]).flows(1000)
        for flow in flows:
            assert flow["foreground"]["tos"] == tos
            assert flow["foreground"]["rx"]["tos"] == tos and flow["foreground"]["rx"]["ecn"] == arriving, (kind, flow)
    cable = plan(["traffic.dscp=10", f"traffic.ecn={ecn}"], through_dut=False).flows(1000)
    assert {tuple(f["foreground"]["rx"]["ecn"]) for f in cable} == {(tos & 3,)}
    # checks.ecn off: any codepoint, the DSCP still compared; checks.tos off: the ECN field alone.
    assert rx([f"traffic.ecn={ecn}", "checks.ecn=false"])["forward"]["ecn"] == [0, 1, 2, 3]
    alone = rx([f"traffic.ecn={ecn}", "checks.tos=false"])["forward"]
    assert "tos" not in alone and alone["ecn"] == arriving


def test_a_tunnel_entrys_ecn_mode_is_counted_and_named():
    """RFC 6040 §4.1: the DUT entering a tunnel copies the inner ECN field (normal mode) or writes
    Not-ECT (compatibility mode); both are right, which one shows only with ECT sent."""
    assert rx(MAP_E_CE + ["traffic.ecn=ect0"])["forward"]["count_tunnel_ecn"] is True
    assert "count_tunnel_ecn" not in rx(MAP_E_CE)["forward"]                       # Not-ECT: they agree
    assert "count_tunnel_ecn" not in rx(MAP_E_CE + ["traffic.ecn=ect0"])["reverse"]  # the tester's tunnel
    assert "count_tunnel_ecn" not in rx(MAP_E_CE + ["traffic.ecn=ect0", "checks.ecn=false"])["forward"]
    reply = {"valid": True, "flows": [{"name": "forward", "rate": 1000, "planned": 1000, "sent": 1000,
                                       "received": 1000, "streams": [{"kind": "foreground", "sent": 1000,
                                                                      "received": 1000, "tunnel_ecn_copied": 0,
                                                                      "tunnel_ecn_not_ect": 1000}]}]}
    record = TrialResult.from_reply(1000, reply).to_dict()
    assert record["directions"]["forward"]["tunnel_ecn"] == \
        "tunnel entry's ECN: RFC 6040 §4.1 compatibility mode (Not-ECT: 1,000)"
    assert trial_from_record(record).passes()


IPV6_ROUTER = ["left.ip_version=6", "right.ip_version=6", "traffic.frame_size=84"]


@pytest.mark.parametrize("sets, forward_label, reverse_label", [
    # Through a router: a non-zero label as sent (RFC 6437 §3 MUST NOT change it) ...
    (IPV6_ROUTER + ["traffic.flow_label=0xfffff"], 0xfffff, 0xfffff),
    # ... none where the tester sent none: a forwarding node may set one (RFC 6437 §3).
    (IPV6_ROUTER + ["traffic.flow_label=0"], None, None),
    (IPV6_ROUTER + ["checks.flow_label=false"], None, None),
    # SIIT: IPv6 -> IPv4 has no label; IPv4 -> IPv6 writes 0 (RFC 7915 §5.1), whatever the
    # tester's IPv6 side sends.
    (SIIT + ["traffic.flow_label=7"], None, 0),
    (SIIT + ["checks.flow_label=false"], None, None),
])
def test_the_flow_label_is_judged_as_rfc_6437_and_rfc_7915_say(sets, forward_label, reverse_label):
    received = rx(sets)
    assert received["forward"].get("flow_label") == forward_label
    assert received["reverse"].get("flow_label") == reverse_label
    sent = {flow["foreground"]["ip_version"]: flow["foreground"].get("flow_label")
            for flow in plan(sets).flows(1000)}
    label = load_config(None, sets).traffic.flow_label
    assert sent == ({6: label} if "left.ip_version=6" in sets and "right.ip_version=6" in sets
                    else {6: label, 4: None}), sent   # the key only on IPv6 frames



def test_checksums_turned_off_say_so():
    assert rx(["checks.checksum=false"])["forward"]["checksums"] is False


def test_on_a_cable_the_frames_arrive_as_sent():
    """A selftest over a cable between the tester's ports: no translation, no hop."""
    forward, reverse = plan(SIIT + ["traffic.dscp=1"], through_dut=False).flows(1000)
    assert forward["foreground"]["rx"] == {
        "ip_version": 6, "src_ip": "2001:2::2", "dst_ip": "64:ff9b::c613:2", "src_port": 49184,
        "dst_port": 7, "ttl": SENT_TTL, "tos": 4, "ecn": [0], "checksums": True, "flow_label": 0x12345,
        "src_mac": PORTS[0]["mac"]}  # from the other tester port
    assert reverse["foreground"]["rx"]["df"] is True and reverse["foreground"]["rx"]["ttl"] == SENT_TTL
    # An emulated CE's frames keep their CE check; the TTL and TOS are checked on a cable too.
    assert plan(MAP_E, through_dut=False).flows(1000)[1]["foreground"]["rx"] == {
        "ip_version": 4, "src_ip": "198.19.0.2", "dst_ip": "198.18.0.2", "src_port": 49184, "dst_port": 7,
        "ttl": SENT_TTL, "tos": 0, "ecn": [0], "df": True, "checksums": True, "src_mac": PORTS[1]["mac"]}
    # A side that sends from a MAC of its own: the frames come from it.
    assert plan(["left.mac=02:00:00:00:aa:01"], through_dut=False).flows(1000)[0]["foreground"]["rx"][
        "src_mac"] == "02:00:00:00:aa:01"


def test_a_ring_pair_has_no_source_mac_to_check_and_the_check_turns_off():
    ring = [{**port, "mac": "00:00:00:00:00:00"} for port in PORTS]
    flows = TrafficPlan(load_config(None, []), ring).flows(1000)
    assert not any("src_mac" in flow["foreground"]["rx"] for flow in flows)
    flows = plan(["checks.src_mac=false"]).flows(1000)
    assert not any("src_mac" in flow["foreground"]["rx"] for flow in flows)


def test_the_fake_engine_takes_the_streams_rx_and_reports_the_counts():
    flows = plan(SIIT + ["traffic.mix_n=2"]).flows(1000)
    reply = fake_trial({"id": 1, "op": "trial", "duration": 0.01, "flows": flows})
    assert reply["ok"], reply
    stream = reply["flows"][0]["streams"][0]
    assert {key: stream[key] for key in ("bad_address", "bad_ttl", "bad_tos", "bad_header", "bad_checksum")} \
        == dict.fromkeys(("bad_address", "bad_ttl", "bad_tos", "bad_header", "bad_checksum"), 0)
    flows[0]["foreground"]["rx"]["hops"] = 1
    refused = fake_trial({"id": 2, "op": "trial", "duration": 0.01, "flows": flows})
    assert refused["error"]["key"] == "flows[0].foreground.rx.hops"


def fake_trial(request: dict) -> dict:
    done = subprocess.run([sys.executable, str(FAKE_ENGINE), "--vdev", "net_null0", "--vdev", "net_null1", "--"],
                          input=json.dumps(request) + "\n", capture_output=True, text=True, timeout=30)
    return json.loads(done.stdout.splitlines()[-1])


# -- the counts ----------------------------------------------------------------------------------

CHECKS = ("bad_address", "bad_ttl", "bad_tos", "bad_header", "bad_checksum")


def reply_with(counts: list[dict]) -> dict:
    """A trial reply of two forward flows (RFC 8219 §10.2.2's clients) whose foreground streams
    have `counts`, and a reverse flow without header checks."""
    def flow(name, streams):
        return {"name": name, "rate": 500, "planned": 1000, "sent": 1000,
                "received": 1000 - sum(sum(s.get(k, 0) for k in CHECKS) for s in streams), "streams": streams}
    return {"valid": True, "flows": [flow("forward", [{"kind": "foreground", **c}]) for c in counts]
            + [flow("reverse", [{"kind": "foreground", "sent": 1000, "received": 1000}])]}


def test_the_counts_are_summed_over_a_directions_streams_and_none_when_not_checked():
    reply = reply_with([{"bad_address": 2, "bad_ttl": 1, "bad_tos": 0, "bad_header": 0, "bad_checksum": 4},
                        {"bad_address": 0, "bad_ttl": 5, "bad_tos": 0, "bad_header": 1, "bad_checksum": 0,
                         "tcp_unexpected": 3}])
    result = TrialResult.from_reply(1000, reply)
    forward, reverse = result.directions["forward"], result.directions["reverse"]
    assert (forward.bad_address, forward.bad_ttl, forward.bad_tos, forward.bad_header, forward.bad_checksum,
            forward.tcp_unexpected) == (2, 6, 0, 1, 4, 3)
    assert all(getattr(reverse, key) is None for key in CHECKS + ("tcp_unexpected",))
    record = result.to_dict()
    assert record["directions"]["forward"]["bad_ttl"] == 6 and record["directions"]["forward"]["bad_tos"] == 0
    assert not set(CHECKS) & set(record["directions"]["reverse"])
    # Read back for --resume: the same counts.
    assert trial_from_record(json.loads(json.dumps(record))).directions == result.directions


def test_the_console_line_names_every_refused_kind():
    result = TrialResult.from_reply(1000, reply_with([{"bad_address": 2, "bad_ttl": 1, "bad_tos": 0,
                                                       "bad_header": 0, "bad_checksum": 900}]))
    line = ConsoleReporter(console=Console(record=True))._trial_line({"repetition": 1, "step": 3}, result)
    assert ("forward 97/1,000 (90.3 % loss, 2 with a wrong address or port, 1 with a wrong TTL/hop "
            "limit, 900 with a bad checksum), reverse 1,000/1,000 (0 % loss)") in line


def test_the_reports_warnings_sum_each_kind_per_direction_over_the_trials(tmp_path):
    entry = Entry("tp", tmp_path, {"procedure": "throughput"})
    entry.trials = [{"directions": {"forward": {"bad_checksum": 600, "bad_ttl": 0, "wrong_ce": 1},
                                    "reverse": {"bad_tos": 7}}},
                    {"directions": {"forward": {"bad_checksum": 400}}}]
    warnings = Family().warnings(entry)
    assert ("1,000 forward frames arrived with a bad IPv4 header, UDP or TCP checksum: counted as lost, "
            "not received") in warnings
    assert any(w.startswith("1 forward frames went to the wrong CE") for w in warnings)
    assert any(w.startswith("7 reverse frames arrived with another TOS/traffic class") for w in warnings)
    assert len(warnings) == 3


def test_a_trial_records_the_counts_and_the_report_states_the_checks(fake_config, tmp_path):
    from xlatperf.measure.store import read_trials
    from xlatperf.ui import cli
    out = tmp_path / "out"
    sets = ["traffic.dscp=8", "checks.tos=false", "checks.df=false"]
    assert cli.main(["trial", "-c", str(fake_config), "--out", str(out), "--rate", "1000", "-q",
                     *[arg for a in sets for arg in ("--set", a)]]) == 0
    record, = read_trials(out)
    assert {key: record["directions"]["forward"][key] for key in CHECKS} == dict.fromkeys(CHECKS, 0)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["directions"]["forward"]["rx"]["ttl"] == 9 and summary["directions"]["forward"]["tos"] == 32
    assert cli.main(["report", str(out)]) == 0
    report = (out / "report" / "report.md").read_text()
    assert "TTL/hop limit: sent 10, expected 9 (dut.hops = auto: 1)" in report
    assert "off: checks.tos = false, checks.df = false" in report


def test_a_clients_fixed_address_is_pinned_in_its_rx_too():
    """RFC 8219 §10.2.2's clients started one after another: each client's one address is
    written into the frames (no varying word), and is what arrives."""
    from xlatperf.procedures.scalability import StaggeredClients
    client = plan(["addresses.left=increasing", "addresses.left_min=5", "addresses.left_max=5"])
    forward, reverse = StaggeredClients([client], 0.5).flows(1000)
    assert forward["foreground"]["src_ip"] == forward["foreground"]["rx"]["src_ip"] == "198.18.0.5"
    assert reverse["foreground"]["rx"]["dst_ip"] == "198.18.0.5"
    assert "vary" not in forward["foreground"]["rx"] and forward["foreground"]["vary"] == []


def test_an_in_engine_ring_pair_is_a_cable_and_the_background_has_its_own_hops():
    ring = ['left.port="ring:x"', 'right.port="ring:x"']
    assert {r["ttl"] for r in rx(ring).values()} == {SENT_TTL}            # auto: no DUT between
    assert {r["ttl"] for r in rx(ring + ["dut.hops=2"]).values()} == {SENT_TTL - 2}
    # A translator's box that routes the translated frames three times and the native IPv6
    # background once (the lab's TAYGA: dut.hops = 3).
    flows = plan(SIIT + ["left.ipv6=2001:2::2", "right.ipv6=2001:2:0:8000::2", "traffic.mix_n=2",
                         "traffic.mix_m=1", "dut.hops=3"]).flows(1000)
    assert {f["foreground"]["rx"]["ttl"] for f in flows} == {SENT_TTL - 3}
    assert {f["background"]["rx"]["ttl"] for f in flows} == {SENT_TTL - 1}
    assert error({"dut": {"background_hops": 10}}).startswith("dut.background_hops = 10: must be at most 9")


def test_frames_of_another_length_and_ip_fragments_are_said_too(tmp_path):
    """Issue 29 item 3: bad_length in the console line and the warnings like every refused
    kind; the ports' IP fragments (test frames a DUT fragmented) in both as well."""
    result = TrialResult.from_reply(1000, reply_with([{"bad_length": 5, "bad_address": 0, "bad_ttl": 0,
                                                       "bad_tos": 0, "bad_header": 0, "bad_checksum": 0}]))
    line = ConsoleReporter(console=Console(record=True))._trial_line(
        {"repetition": 1, "step": 1, "fragmented": {"1": 12}}, result)
    assert "5 of another length" in line and "12 IP fragments on port 1" in line
    entry = Entry("tp", tmp_path, {"procedure": "throughput"})
    entry.trials = [{"directions": {"forward": {"bad_length": 5}}, "fragmented": {"1": 12}},
                    {"directions": {"forward": {"bad_length": 0}}, "fragmented": {"1": 3}}]
    warnings = Family().warnings(entry)
    assert any(w.startswith("5 forward frames arrived with another length") for w in warnings)
    assert any(w.startswith("15 IP fragments arrived on the right port") for w in warnings)


def test_foreign_frames_beyond_the_links_noise_are_said():
    """Issue 29 item 3: a port's foreign frames beyond a link's own (ARP/ND: a few per trial)
    are said; the few are not."""
    from xlatperf.engine.protocol import foreign_beyond_noise
    record = {"directions": {"forward": {"sent": 100_000}, "reverse": {"sent": 100_000}},
              "foreign": {"0": 12, "1": 5_000}}
    assert foreign_beyond_noise(record) == {"1": 5_000}           # 100 + 0.1 % of 100,000 = 200
    assert foreign_beyond_noise({**record, "foreign": {"0": 200, "1": 201}}) == {"1": 201}
    result = TrialResult.from_reply(1000, reply_with([{"bad_address": 0, "bad_ttl": 0, "bad_tos": 0,
                                                       "bad_header": 0, "bad_checksum": 0}]))
    line = ConsoleReporter(console=Console(record=True))._trial_line(
        {"repetition": 1, "step": 1, "foreign": {"1": 5_000}}, result)
    assert "5,000 foreign frames on port 1" in line
    quiet = ConsoleReporter(console=Console(record=True))._trial_line(
        {"repetition": 1, "step": 1, "foreign": {"1": 10}}, result)
    assert "foreign" not in quiet


def test_a_zero_udp_checksum_over_ipv6_is_taken_as_0xffff_only_when_asked():
    assert all("ipv6_zero_udp_checksum" not in r for r in rx(SIIT).values())
    lenient = rx(SIIT + ["checks.zero_udp_checksum_ipv6=false"])
    assert lenient["reverse"]["ipv6_zero_udp_checksum"] is True      # arrives as IPv6
    assert "ipv6_zero_udp_checksum" not in lenient["forward"]         # arrives as IPv4


def test_frames_with_a_sequence_number_never_sent_are_counted_said_and_kept():
    """Issue 30, defect 4's audit of the engine's counters the front end dropped: a stream's
    `out_of_range` (test frames whose tag sequence number the stream never sent) was read by no
    one; it is a refused kind like the others now: counted, in the console line and the record."""
    result = TrialResult.from_reply(1000, reply_with([{"out_of_range": 5}]))
    forward = result.directions["forward"]
    assert forward.out_of_range == 5 and (5, "with a sequence number never sent") in forward.refused()
    line = ConsoleReporter(console=Console(record=True))._trial_line({"repetition": 1, "step": 1}, result)
    assert "5 with a sequence number never sent" in line
    record = json.loads(json.dumps(result.to_dict()))
    assert record["directions"]["forward"]["out_of_range"] == 5
    assert trial_from_record(record).directions == result.directions


def test_the_mac_a_side_sends_from_is_a_destination_its_frames_may_arrive_with():
    """The engine takes a test frame only when it is addressed to the receiving port's MAC; a
    side that sends from another MAC (left/right.mac) may get frames addressed to that one."""
    assert "dst_mac" not in rx([])["forward"]
    received = rx(["right.mac=02:00:00:00:aa:01"])
    assert received["forward"]["dst_mac"] == "02:00:00:00:aa:01" and "dst_mac" not in received["reverse"]
