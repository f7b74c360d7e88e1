# SPDX-License-Identifier: BSD-3-Clause
"""Stateful tests over TCP without a lab (docs/tcp.md): what the configuration allows, the
phase-1 request that makes the engine open connections with handshakes, and how a step of
handshakes passes or fails."""

import pytest

from xlatperf.config.loading import load_config
from xlatperf.engine.protocol import DirectionCounts, TrialResult
from xlatperf.frames.stack import IPV4, IPV4_IN_IPV6, IPV6, TCP_ACK, TCP_SYN
from xlatperf.measure.stateful import EstablishmentStep, StatefulTest
from xlatperf.procedures.search import SearchResult
from xlatperf.traffic.plan import TrafficPlan
from xlatperf.util.errors import ConfigError

PORTS = [{"index": 0, "name": "net_null0", "mac": "02:00:00:00:00:01", "link_speed_mbps": 10000},
         {"index": 1, "name": "net_null1", "mac": "02:00:00:00:00:02", "link_speed_mbps": 10000}]
NAT44_TCP = ["stateful.enabled=true", "stateful.transport=tcp", "stateful.connections=10000",
             "stateful.rate_phase1=100000", "ports.forward_src=random",
             "ports.forward_src_min=1024", "ports.forward_src_max=1123",
             "ports.forward_dst=random", "ports.forward_dst_min=1", "ports.forward_dst_max=100",
             "left.dut_mac=02:00:00:00:01:01", "right.dut_mac=02:00:00:00:01:02"]


def cfg(*overrides):
    return load_config(None, [*NAT44_TCP, *overrides])


def test_segment_sizes_follow_the_engines_layout():
    # docs/protocol.md: a 40-byte TCP header with the tag option, 8 more on SYNs (window scale
    # and MSS).
    assert (IPV4.carrying(TCP_SYN).min_frame, IPV4.carrying(TCP_ACK).min_frame) == (86, 78)
    assert (IPV6.carrying(TCP_SYN).min_frame, IPV6.carrying(TCP_ACK).min_frame) == (106, 98)
    assert IPV4_IN_IPV6.carrying(TCP_SYN).min_frame == 126  # engine/tests/test_tcp.cpp: InAnIpv6Tunnel


def test_phase1_request_sends_syns_and_describes_the_replies():
    config = cfg("traffic.mix_n=1")
    test = StatefulTest(TrafficPlan(config, PORTS), phase2=False)
    request = test.requests.phase1_request(10000, 50000, 10000).to_json()
    (flow,) = request["flows"]
    assert (flow["name"], flow["tx_port"], flow["rx_port"], flow["frames"]) == ("forward", 0, 1,
                                                                                10000)
    assert "background" not in flow and "mix" not in flow
    syn = flow["foreground"]
    assert (syn["frame_size"], syn["rx_frame_size"]) == (86, 86)
    assert [v["mode"] for v in syn["vary"]] == ["enumerate", "enumerate"]
    # The SYN-ACKs leave the right port for the DUT's right MAC, and arrive as SYN-sized frames.
    assert flow["tcp"]["reply"] == {"ip_version": 4, "src_mac": "02:00:00:00:00:02",
                                    "dst_mac": "02:00:00:00:01:02", "rx_frame_size": 86}
    key = flow["tcp"]["key"]
    assert 0 <= key < 2**63
    # The key follows the seed: the same test sends the same segments.
    assert StatefulTest(TrafficPlan(cfg("traffic.mix_n=1"), PORTS), phase2=False).requests.tcp_key == key
    other = StatefulTest(TrafficPlan(cfg("traffic.mix_n=1", "traffic.seed=2"), PORTS), phase2=False)
    assert other.requests.tcp_key != key
    assert request["learn"] == {"port": 1, "flow": 0, "table_size": 10000, "ip_version": 4}
    assert test.report()["transport"] == "tcp" and "data segment" in test.report()["validation_segments"]


@pytest.mark.parametrize(("overrides", "named"), [
    (["traffic.mix_n=2", "traffic.mix_m=1", "traffic.frame_size=84"], ["stateful.transport", "traffic.mix"]),
    (["tester.queues=33"], ["tester.queues", "33", "at most 32", "264 of the test tag's 256 stream ids"]),
    (["stateful.transport=udp", "stateful.teardown=fin"], ["stateful.teardown", '"hook"', "TCP"]),
])
def test_what_tcp_cannot_do_yet_is_refused_naming_the_keys(overrides, named):
    with pytest.raises(ConfigError) as err:
        cfg(*overrides)
    for text in named:
        assert text in str(err.value), str(err.value)


def test_tcp_on_several_queues_shares_the_handshakes_out_over_them():
    # Each queue's worker answers what arrives on it (docs/tcp.md, "Several queues"): accepted
    # up to the stream ids of a handshake's four flows.
    for queues in (2, 32):
        test = StatefulTest(TrafficPlan(cfg(f"tester.queues={queues}"), PORTS), phase2=False)
        assert test.requests.phase1_request(100, 1000, 100).to_json()["flows"][0]["tcp"]["segments"] == "open"


DS_LITE_AFTR = ["ipv4aas.technology=ds-lite", "ipv4aas.role=aftr", "ipv4aas.endpoint_ipv6=2001:db8:af::1",
                "ipv4aas.ces=2", "ipv4aas.ce_mode=increasing", "left.ipv4=192.0.0.2",
                "left.ipv6=2001:db8:b4::1", "left.dut_ipv6=2001:2::1", "right.ipv4=198.19.0.2",
                "ports.forward_src=fixed", "ports.forward_dst_max=99", "stateful.connections=198"]


def test_through_a_ds_lite_aftr_the_initiators_segments_travel_in_softwires():
    """The SYN leaves in an emulated B4's softwire (40 bytes of IPv6 more), the SYN-ACK arrives
    in one; the Responder's side is plain IPv4. The ACKs (the engine's NAME.ack flow) copy the
    SYN's flow, tunnel and CEs included (docs/tcp.md)."""
    config = cfg(*DS_LITE_AFTR, "stateful.teardown=fin")
    test = StatefulTest(TrafficPlan(config, PORTS), phase2=False)
    (flow,) = test.requests.phase1_request(198, 1000, 198).to_json()["flows"]
    syn = flow["foreground"]
    assert (syn["frame_size"], syn["rx_frame_size"]) == (126, 86)
    assert syn["tunnel"] == {"src_ip": "2001:db8:b4::1", "dst_ip": "2001:db8:af::1"}
    assert syn["ce"]["count"] == 2 and syn["ce"]["fields"] == ["tunnel", "ipv4"]
    assert flow["tcp"]["reply"]["rx_frame_size"] == 126 and "tunnel" not in flow["tcp"]["reply"]
    (fin,) = test.requests.close_request(198, 1000).to_json()["flows"]
    assert (fin["foreground"]["frame_size"], fin["tcp"]["reply"]["rx_frame_size"]) == (118, 118)


@pytest.mark.parametrize(("overrides", "named"), [
    (["ipv4aas.role=dual", "stateful.connections=99"], ["stateful.transport", "ds-lite", "'dual'"]),
    (["ipv4aas.technology=map-e", "ipv4aas.role=br", "ipv4aas.rule_ipv6_prefix=2001:db8::/40",
      "ipv4aas.rule_ipv4_prefix=192.0.2.0/24", "ipv4aas.ea_bits=16"], ["stateful.transport", "'map-e'"]),
])
def test_other_ipv4aas_set_ups_refuse_tcp(overrides, named):
    with pytest.raises(ConfigError) as err:
        cfg(*DS_LITE_AFTR, *overrides)
    for text in named:
        assert text in str(err.value), str(err.value)


def test_phase2_through_a_ds_lite_aftr_sends_the_b4s_data_in_their_softwires():
    """The Initiator's data segments come from its table, whose entries keep the softwire each
    connection came in (the engine writes the B4 per entry): a tunnel, but no CEs drawn. The
    Responder's come back through the AFTR to the B4s, checked as CE traffic is."""
    config = cfg(*DS_LITE_AFTR, "traffic.frame_size=128")
    test = StatefulTest(TrafficPlan(config, PORTS))
    forward, reverse = test.requests.phase2_flows(TrafficPlan(config, PORTS).flows(1000))
    assert forward["from_table"]["port"] == 0 and reverse["from_table"]["port"] == 1
    assert forward["foreground"]["tunnel"] == {"src_ip": "2001:db8:b4::1", "dst_ip": "2001:db8:af::1"}
    assert "ce" not in forward["foreground"] and forward["foreground"]["frame_size"] == 168
    assert reverse["foreground"]["ce"]["rx_fields"] == ["tunnel", "ipv4"]
    assert (reverse["foreground"]["frame_size"], reverse["foreground"]["rx_frame_size"]) == (128, 168)


def test_phase2_sends_data_from_both_sides_tables():
    config = cfg("traffic.mix_n=1", "traffic.frame_size=128")
    test = StatefulTest(TrafficPlan(config, PORTS))
    forward, reverse = test.requests.phase2_flows(TrafficPlan(config, PORTS).flows(1000))
    assert forward["from_table"] == {"port": 0, "selection": "random"}   # the Initiator's table
    assert reverse["from_table"] == {"port": 1, "selection": "random"}   # the Responder's
    for flow in (forward, reverse):
        assert flow["tcp"] == {"key": test.requests.tcp_key, "segments": "data"}
        assert flow["foreground"]["vary"] == [] and "background" not in flow
        assert flow["foreground"]["frame_size"] == 128


def test_phase2_frames_must_hold_tcp_data():
    with pytest.raises(ConfigError) as err:
        StatefulTest(TrafficPlan(cfg("traffic.mix_n=1", "traffic.frame_size=78"), PORTS))
    assert "traffic.frame_size = 78" in str(err.value) and "at least 79 bytes" in str(err.value)
    StatefulTest(TrafficPlan(cfg("traffic.mix_n=1", "traffic.frame_size=79"), PORTS))


def handshake_step(syn, syn_ack, ack, window=None, connections=2000) -> EstablishmentStep:
    """Phase 1's flows over TCP (docs/tcp.md); the window ACKs, when not given, as the ACKs."""
    counts = {"forward": DirectionCounts(*syn), "forward.syn_ack": DirectionCounts(*syn_ack),
              "forward.ack": DirectionCounts(*ack), "forward.window": DirectionCounts(*(window or ack))}
    return EstablishmentStep(connections, connections,
                             TrialResult(rate=1000, valid=True, directions=counts))


def test_a_step_passes_when_every_handshake_completed():
    assert handshake_step((2000, 2000), (2000, 2000), (2000, 2000)).failure() is None
    # A lost window ACK (the Initiator's data would leave the window a DUT tracks after 64 KiB),
    # a lost ACK, a lost SYN-ACK, a lost SYN: each leaves a connection not fully open.
    for counts in [((2000, 2000), (2000, 2000), (2000, 2000), (2000, 1999)),
                   ((2000, 2000), (2000, 2000), (2000, 1999)),
                   ((2000, 2000), (2000, 1999), (1999, 1999)),
                   ((2000, 1999), (1999, 1999), (1999, 1999))]:
        assert handshake_step(*counts).failure() == "phase 1: 1,999 of 2,000 handshakes completed"
    # The Initiator sent fewer SYNs than N.
    assert handshake_step((1999, 1999), (1999, 1999), (1999, 1999)).failure() == \
        "phase 1: 1,999 of 2,000 handshakes completed"


def test_udp_steps_keep_their_message():
    step = EstablishmentStep(100, 100, TrialResult(
        rate=1000, valid=True, directions={"forward": DirectionCounts(100, 99)}))
    assert step.failure() == "phase 1: 99 of 100 frames reached the Responder"



@pytest.mark.parametrize(("teardown", "segments", "size"), [("fin", "close", 78), ("rst", "reset", 78)])
def test_close_requests_end_the_connections_phase1_opened(teardown, segments, size):
    config = cfg("traffic.mix_n=1", f"stateful.teardown={teardown}")
    test = StatefulTest(TrafficPlan(config, PORTS), phase2=False)
    opening = test.requests.phase1_request(10000, 50000, 10000).to_json()["flows"][0]
    request = test.requests.close_request(10000, 20000).to_json()
    (flow,) = request["flows"]
    assert "learn" not in request
    # The connections the load opened, from the Initiator's table (the numbers it learned, issue
    # 30's sequence-rewriting DUTs), each once.
    assert flow["from_table"] == {"port": 0, "selection": "increasing"}
    assert flow["foreground"]["vary"] == [] and "enumerate" not in flow["foreground"]
    assert (flow["frames"], flow["rate"]) == (10000, 20000)
    assert flow["tcp"]["segments"] == segments and flow["tcp"]["key"] == opening["tcp"]["key"]
    assert (flow["foreground"]["frame_size"], flow["foreground"]["rx_frame_size"]) == (size, size)
    assert ("reply" in flow["tcp"]) == (teardown == "fin")
    if teardown == "fin":
        assert flow["tcp"]["reply"]["rx_frame_size"] == size


def test_closing_steps_say_what_did_not_complete():
    step = handshake_step((2000, 2000), (2000, 2000), (2000, 1990))
    closing = EstablishmentStep(2000, 2000, step.phase1, kind="fin")
    assert closing.failure() == "FIN: 1,990 of 2,000 closings (FIN, FIN-ACK, ACK) completed"
    resets = EstablishmentStep(2000, 2000, TrialResult(
        rate=1000, valid=True, directions={"forward": DirectionCounts(2000, 1999)}), kind="rst")
    assert resets.failure() == "RST: 1,999 of 2,000 RSTs reached the Responder"


def handshakes_at(rate: int, *, valid: bool = True, reason: str | None = None, syn_ack_sent: int = 2000,
                  port_drops: dict | None = None) -> EstablishmentStep:
    counts = {"forward": DirectionCounts(2000, 2000), "forward.syn_ack": DirectionCounts(syn_ack_sent, syn_ack_sent),
              "forward.ack": DirectionCounts(syn_ack_sent, syn_ack_sent),
              "forward.window": DirectionCounts(syn_ack_sent, syn_ack_sent)}
    return EstablishmentStep(2000, 2000, TrialResult(rate=rate, valid=valid, directions=counts,
                                                     invalid_reason=reason, port_drops=port_drops))


@pytest.mark.parametrize(("reason", "port_drops"), [
    # The engine's reason when a receiver's TX queue did not take the replies it wrote.
    ("tester could not send 12 of the 2000 TCP replies of flow forward.syn_ack", None),
    # A tester port that dropped frames itself.
    ("tester dropped frames: port 1 imissed 12", {"1": {"imissed": 12}})])
def test_a_connection_rate_bounded_by_the_testers_own_faults_says_so(reason, port_drops):
    """Issue 30, defect 3: a phase 1 made invalid by the tester's own limits is the tester's
    bound, not the DUT's (before: tester_limited = false, the rate charged to the DUT)."""
    failed = handshakes_at(4000, valid=False, reason=reason, syn_ack_sent=1988, port_drops=port_drops)
    assert failed.failure() is not None
    result = SearchResult.from_steps([failed, handshakes_at(2000)], 0.0)
    assert result.throughput == 2000 and result.tester_limited
    # A DUT that lost handshakes of its own in the same trial is the DUT's failure.
    lossy = EstablishmentStep(2000, 2000, TrialResult(
        rate=4000, valid=False, invalid_reason=reason, port_drops=port_drops,
        directions={"forward": DirectionCounts(2000, 1500), "forward.syn_ack": DirectionCounts(1488, 1488),
                    "forward.ack": DirectionCounts(1488, 1488), "forward.window": DirectionCounts(1488, 1488)}))
    assert not SearchResult.from_steps([lossy, handshakes_at(2000)], 0.0).tester_limited
