# SPDX-License-Identifier: BSD-3-Clause
"""Traffic kinds of the front end: VLAN tags (IEEE 802.1Q / 802.1ad per side) in the
configuration, the flows of a trial request and the medium's maximum frame rate."""

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from fakes import FAKE_ENGINE
from xlatperf.config.loading import load_config
from xlatperf.frames.imix import imix_period, interleave, mixed_length, mixed_pattern
from xlatperf.engine.protocol import TrialResult, trial_from_record
from xlatperf.frames.kinds import trial_frames
from xlatperf.frames.trial import side_vlan
from xlatperf.traffic.plan import TrafficPlan, imix_size_names
from xlatperf.util.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
PORTS = [
    {"index": 0, "name": "net_af_packet0", "mac": "02:00:00:00:00:01", "link_speed_mbps": 10000},
    {"index": 1, "name": "net_af_packet1", "mac": "02:00:00:00:00:02", "link_speed_mbps": 10000},
]


# -- VLAN tags -------------------------------------------------------------------------------

@pytest.mark.parametrize("assignment, message", [
    ("left.vlan=4095", "left.vlan = 4095: must be 0 (untagged) or a VLAN ID in 1..4094"),
    ("right.vlan=-1", "right.vlan = -1: must be 0 (untagged) or a VLAN ID in 1..4094"),
    ("left.vlan_outer=5000", "left.vlan_outer = 5000: must be 0 (untagged) or a VLAN ID in 1..4094"),
    ('left.vlan="100"', 'left.vlan = "100": must be 0 (untagged) or a VLAN ID in 1..4094'),
    ("right.vlan_outer=200", "right.vlan_outer = 200: needs right.vlan (the inner C-tag) too"),
])
def test_bad_vlan_settings_name_key_value_and_range(assignment, message):
    with pytest.raises(ConfigError) as info:
        load_config(None, [assignment])
    assert str(info.value).startswith(message), str(info.value)


def test_each_side_sends_its_tags_and_expects_the_other_sides():
    config = load_config(None, ["left.vlan=100", "right.vlan=200", "right.vlan_outer=300"])
    assert side_vlan(config, "left") == [100]
    assert side_vlan(config, "right") == [300, 200]  # outermost first
    forward, reverse = TrafficPlan(config, PORTS).flows(1000)
    assert (forward["foreground"]["vlan"], forward["foreground"]["rx_vlan"]) == ([100], [300, 200])
    assert (reverse["foreground"]["vlan"], reverse["foreground"]["rx_vlan"]) == ([300, 200], [100])
    # Untagged on both sides: the request carries no VLAN keys at all.
    plain = TrafficPlan(load_config(None, []), PORTS).flows(1000)[0]["foreground"]
    assert "vlan" not in plain and "rx_vlan" not in plain
    # Tagged on one side only: the other side's empty list is explicit.
    one = TrafficPlan(load_config(None, ["left.vlan=7"]), PORTS).flows(1000)
    assert (one[0]["foreground"]["vlan"], one[0]["foreground"]["rx_vlan"]) == ([7], [])
    # On a cable between the tester's own ports a frame arrives with the tags it was sent with.
    wire = TrafficPlan(load_config(None, ["left.vlan=7"]), PORTS, through_dut=False).flows(1000)
    assert wire[0]["foreground"]["rx_vlan"] == [7]


def test_the_maximum_frame_rate_counts_the_tags_on_the_wire():
    # RFC 2544 App. B: every byte on the wire counts. 64-byte frames (without tags) at 10G:
    # untagged 10^10 / (8 x 84) = 14,880,952 fps; with the QinQ side's two tags (8 bytes) the
    # largest frame of each direction is 72 bytes: 10^10 / (8 x (72 + 20)) = 13,586,956.
    plain = TrafficPlan(load_config(None, []), PORTS)
    assert plain.max_rate == 14_880_952
    qinq = TrafficPlan(load_config(None, ["right.vlan=200", "right.vlan_outer=300"]), PORTS)
    assert [d.largest_frame for d in qinq.directions] == [72, 72]
    assert qinq.max_rate == 13_586_956
    with pytest.raises(ConfigError, match="must be at most 13586956 frames/s"):
        qinq.check_rate(13_586_957)
    single = TrafficPlan(load_config(None, ["left.vlan=100", "traffic.direction=forward"]), PORTS)
    assert single.max_rate == 10**10 // (8 * 88) == 14_204_545


def test_the_fake_engine_accepts_tagged_requests_and_the_record_counts_bad_vlan(tmp_path):
    config = load_config(None, ["left.vlan=100", "right.vlan=200", "right.vlan_outer=300"])
    flows = TrafficPlan(config, PORTS).flows(1000)
    request = {"id": 1, "op": "trial", "duration": 0.01, "flows": flows}
    done = subprocess.run([sys.executable, str(FAKE_ENGINE), "--vdev", "net_null0", "--vdev", "net_null1", "--"],
                          input=json.dumps(request) + "\n", capture_output=True, text=True, timeout=30)
    reply = json.loads(done.stdout.splitlines()[-1])
    assert reply["ok"], reply
    reply["flows"][0]["streams"][0]["bad_vlan"] = 3
    result = TrialResult.from_reply(1000, reply)
    assert result.directions["forward"].bad_vlan == 3
    assert result.to_dict()["directions"]["forward"]["bad_vlan"] == 3
    assert "bad_vlan" not in result.to_dict()["directions"]["reverse"]


# -- jumbo frames ----------------------------------------------------------------------------

def test_jumbo_frames_up_to_9216_bytes_and_their_maximum_rate():
    config = load_config(None, ["traffic.frame_size=9216", "left.vlan=5"])
    assert trial_frames(config).largest_frame == 9220
    plan = TrafficPlan(config, PORTS)
    # 10G, 9220 bytes on the wire with the tag: 10^10 / (8 x (9220 + 20)) = 135,281.
    assert plan.max_rate == 135_281
    with pytest.raises(ConfigError, match="traffic.frame_size = 9217: must be an integer in 64..9216"):
        load_config(None, ["traffic.frame_size=9217"])


def test_af_xdp_ports_refuse_frames_beyond_one_umem_chunk():
    load_config(None, ["left.port=af_xdp:veth0", "traffic.frame_size=1792"])
    with pytest.raises(ConfigError) as info:
        load_config(None, ["left.port=af_xdp:veth0", "traffic.frame_size=1792", "right.vlan=7"])
    assert str(info.value).startswith("traffic.frame_size = 1792: must make frames of at most 1792 bytes on the "
                                      "wire (VLAN tags included; here 1796) with left.port = \"af_xdp:veth0\"")


# -- IMIX (RFC 6985) -------------------------------------------------------------------------

def test_simple_imix_interleaves_its_sizes_by_their_weights():
    assert interleave([7, 4, 1]) == [0, 1, 0, 0, 1, 0, 2, 0, 1, 0, 1, 0]
    assert imix_period("simple") == imix_period("64:7,594:4,1518:1") == \
        [64, 594, 64, 64, 594, 64, 1518, 64, 594, 64, 594, 64]
    # The genome notation is the sending order itself.
    assert imix_period("aaadg") == [64, 64, 64, 512, 1518]
    for weights in ([3, 1], [5, 5, 1], [1]):
        order = interleave(weights)
        assert [order.count(i) for i in range(len(weights))] == weights


@pytest.mark.parametrize("value, message", [
    ("64:7,64:1", 'traffic.imix = "64:7,64:1": must be "" (one frame_size)'),
    ("64:0,128:1", 'traffic.imix = "64:0,128:1": must be "" (one frame_size)'),
    ("abx", 'traffic.imix = "abx": must be "" (one frame_size)'),
    ("64:1,9300:1", 'traffic.imix = "64:1,9300:1": has a frame size of 9300 bytes; sizes must be in 64..9216'),
])
def test_bad_imix_names_the_key_value_and_what_is_allowed(value, message):
    with pytest.raises(ConfigError) as info:
        load_config(None, [f'traffic.imix="{value}"'])
    assert str(info.value).startswith(message), str(info.value)


def test_imix_refuses_stateful_tests_and_too_long_patterns():
    with pytest.raises(ConfigError, match='traffic.imix = "simple": must be "" with stateful.enabled'):
        load_config(None, ["traffic.imix=simple", "stateful.enabled=true"])
    with pytest.raises(ConfigError, match="the mix 96/97: foreground and background frames each through the IMIX.s order repeat after 96903, more than the engine.s 65536"):
        load_config(None, ['traffic.imix="84:100,128:899"', "traffic.mix_n=97", "traffic.mix_m=96"])
    with pytest.raises(ConfigError, match='traffic.imix = "64:999999999": must be ""'):
        load_config(None, ['traffic.imix="64:999999999"'])  # refused before a period is built
    # 8 sizes with background: 16 streams per direction, x 2 directions x 8 queues = 256 ids.
    many = ['traffic.imix="84:1,128:1,256:1,512:1,1024:1,1280:1,1518:1,2000:1"', "traffic.mix_n=2",
            "traffic.mix_m=1"]
    load_config(None, [*many, "tester.queues=8"])
    with pytest.raises(ConfigError, match="makes 16 streams per direction; with 2 direction.s. and "
                                          "tester.queues = 9 they need 288 stream ids, the test tag has 256"):
        load_config(None, [*many, "tester.queues=9"])


def test_the_maximum_rate_of_a_mix_is_the_line_rate_over_the_mean_frame():
    # Simple IMIX at 10 Gbit/s (RFC 6985 notation 64:7,594:4,1518:1). A period of 12 frames
    # carries 7 x 64 + 4 x 594 + 1 x 1518 = 448 + 2376 + 1518 = 4342 bytes of frames and
    # 12 x 20 = 240 bytes of preamble and gap (RFC 2544 App. B), so 4582 bytes = 36,656 bits per
    # 12 frames: 10^10 x 12 / 36,656 = 3,273,679.6 -> 3,273,679 frames/s.
    plan = TrafficPlan(load_config(None, ["traffic.imix=simple"]), PORTS)
    assert [d.mean_frame for d in plan.directions] == [Fraction(4342, 12)] * 2
    assert plan.max_rate == 3_273_679
    assert "frames of 361.8 bytes on average" in plan.directions[0].describe_limit()
    # The largest frame alone would have allowed only 812,743 frames/s: the mix is not limited
    # by its largest size.
    assert TrafficPlan(load_config(None, ["traffic.frame_size=1518"]), PORTS).max_rate == 812_743
    # With one VLAN tag on the right, every received frame is 4 bytes longer:
    # 10^10 x 12 / (8 x (4342 + 48 + 240)) = 3,239,740.8.
    tagged = TrafficPlan(load_config(None, ["traffic.imix=simple", "right.vlan=9"]), PORTS)
    assert tagged.max_rate == 3_239_740


def test_imix_flows_name_every_stream_and_the_pattern():
    # 4/4 with native IPv6 background in every second frame: the IMIX sizes name the IPv6
    # frames, the IPv4 ones are 20 bytes shorter (the Simple IMIX's IPv4 sizes).
    config = load_config(None, ['traffic.imix="84:7,614:4,1538:1"', "traffic.direction=forward",
                                "traffic.mix_n=2", "traffic.mix_m=1"])
    [flow] = TrafficPlan(config, PORTS).flows(1000)
    assert "foreground" not in flow and "mix" not in flow
    assert [(s["kind"], s["ip_version"], s["frame_size"]) for s in flow["streams"]] == [
        ("foreground", 4, 64), ("foreground", 4, 594), ("foreground", 4, 1518),
        ("background", 6, 84), ("background", 6, 614), ("background", 6, 1538)]
    # Frame k: background iff k is odd; the even (foreground) and the odd (background) frames
    # each go through the Simple IMIX's order, so both kinds have its sizes 7:4:1 (24 frames).
    order = [0, 1, 0, 0, 1, 0, 2, 0, 1, 0, 1, 0]
    assert flow["pattern"] == [i for size in order for i in (size, size + 3)]
    assert mixed_pattern([64, 594, 1518], 3, 1) == [(True, 64), (False, 64), (False, 594), (True, 594),
                                                    (False, 1518), (False, 64), (True, 1518),
                                                    (False, 594), (False, 1518)]
    assert mixed_length(12, 10, 9) == 120 and mixed_length(12, 1, 1) == 12


def test_per_size_counts_reach_the_record():
    config = load_config(None, ["traffic.imix=simple", "traffic.direction=forward"])
    flows = TrafficPlan(config, PORTS).flows(1000)
    assert [s["frame_size"] for s in flows[0]["streams"]] == [64, 594, 1518]
    assert flows[0]["pattern"] == [0, 1, 0, 0, 1, 0, 2, 0, 1, 0, 1, 0]
    request = {"id": 1, "op": "trial", "duration": 0.1, "flows": flows}
    done = subprocess.run([sys.executable, str(FAKE_ENGINE), "--vdev", "net_null0", "--vdev", "net_null1", "--"],
                          input=json.dumps(request) + "\n", capture_output=True, text=True, timeout=30)
    reply = json.loads(done.stdout.splitlines()[-1])
    assert reply["ok"], reply
    result = TrialResult.from_reply(1000, reply)
    # 100 frames: 8 periods of 12 and the first 4 of the next (64 594 64 64).
    assert result.directions["forward"].sizes == {"64": {"sent": 59, "received": 59},
                                                  "594": {"sent": 33, "received": 33},
                                                  "1518": {"sent": 8, "received": 8}}
    record = result.to_dict()
    assert trial_from_record(record).directions["forward"].sizes == result.directions["forward"].sizes


def test_a_trial_with_imix_records_and_reports_its_counts_per_size(fake_config, tmp_path):
    out = tmp_path / "imix"
    run = [sys.executable, "-m", "xlatperf"]
    done = subprocess.run([*run, "trial", "-c", str(fake_config), "--set", "traffic.imix=simple",
                           "--set", "traffic.direction=forward", "--rate", "1200", "--duration", "1",
                           "--out", str(out), "-q"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    [record] = [json.loads(line) for line in (out / "trials.jsonl").read_text().splitlines()]
    # 1200 frames = 100 periods of 7 + 4 + 1.
    assert record["directions"]["forward"]["sizes"] == {"64": {"sent": 700, "received": 700},
                                                        "594": {"sent": 400, "received": 400},
                                                        "1518": {"sent": 100, "received": 100}}
    done = subprocess.run([*run, "report", str(out), "--out", str(tmp_path / "r"), "--no-plots"],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    markdown = (tmp_path / "r" / "report.md").read_text()
    assert "simple: 64 594 64 64 594 64 1518 64 594 64 594 64 (repeating)" in markdown
    assert "frames per IMIX frame size (RFC 6985)" in markdown
    assert "| 1 | 1,200 | forward | 594 | 400 | 400 | 0 | 0 |" in markdown
    assert "maximum 3,273,679 frames/s for the IMIX's frames of 361.8 bytes on average" in markdown
    assert "| IMIX simple (forward) |" in markdown


def test_per_size_counts_name_the_configured_size_on_both_sides_of_a_translator():
    # SIIT (IPv6 left, IPv4 right) with native IPv6 background in every third frame: the
    # forward foreground frames leave as IPv6 of 84 bytes and arrive as IPv4 of 64, the reverse
    # ones leave as IPv4 of 64; the background frames are IPv6 of 84 both ways. All are frames
    # of the IMIX size 84 and are counted under that name in both directions (named by the
    # frames as sent, the forward 64-byte IPv4 frames of the size 84 and the reverse 84-byte
    # background frames would fall under different names, and a size 104's IPv4 frames would
    # share the name 84 with the background).
    config = load_config(None, ['traffic.imix="84:7,614:4,1518:1"', "left.ip_version=6",
                                "traffic.mix_n=3", "traffic.mix_m=2",
                                'right.virtual_ipv6="2001:2:0:6464::c613:2"',
                                'left.virtual_ipv4="198.18.0.66"', 'right.ipv6="2001:2:0:8000::2"'])
    flows = TrafficPlan(config, PORTS).flows(1000)
    assert [(s["kind"], s["ip_version"], s["frame_size"], s["rx_frame_size"]) for s in flows[1]["streams"]][:4] \
        == [("foreground", 4, 64, 84), ("foreground", 4, 594, 614), ("foreground", 4, 1498, 1518),
            ("background", 6, 84, 84)]
    names = imix_size_names(trial_frames(config).named, flows)
    assert names["forward"] == names["reverse"] == {"foreground": [84, 614, 1518], "background": [84, 614, 1518]}
    request = {"id": 1, "op": "trial", "duration": 0.144, "flows": flows}
    done = subprocess.run([sys.executable, str(FAKE_ENGINE), "--vdev", "net_null0", "--vdev", "net_null1", "--"],
                          input=json.dumps(request) + "\n", capture_output=True, text=True, timeout=30)
    reply = json.loads(done.stdout.splitlines()[-1])
    assert reply["ok"], reply
    result = TrialResult.from_reply(1000, reply, size_names=names)
    # 144 frames: 4 periods of 36 (the 24 foreground frames go through the IMIX's 12 twice,
    # the 12 background ones once), 7 + 4 + 1 frames 12 times, background or not.
    expected = {"84": {"sent": 84, "received": 84}, "614": {"sent": 48, "received": 48},
                "1518": {"sent": 12, "received": 12}}
    assert result.directions["forward"].sizes == result.directions["reverse"].sizes == expected
    # Without the names, the frames as sent name the sizes (the engine's own view).
    assert set(TrialResult.from_reply(1000, reply).directions["reverse"].sizes) == {"64", "84", "594", "614", "1498", "1518"}


def test_exactly_one_kind_applies_to_every_configuration_whatever_the_order():
    """Issue 29: kind selection is not first-match; a kind listed after another that also
    applied would otherwise never be chosen."""
    from xlatperf.frames import kinds as kind_module
    configs = [[], ["left.ip_version=6", "right.ip_version=6", "traffic.frame_size=84"],
               ["left.ip_version=6", "traffic.frame_size=84", "right.virtual_ipv6=64:ff9b::c613:2",
                "left.virtual_ipv4=198.18.0.2"],
               ["ipv4aas.technology=map-e", "ipv4aas.role=br", "ipv4aas.endpoint_ipv6=2001:db8:ffff::1",
                "ipv4aas.rule_ipv6_prefix=2001:db8::/40", "ipv4aas.rule_ipv4_prefix=192.0.2.0/24",
                "ipv4aas.ea_bits=16"]]
    for assignments in configs:
        config = load_config(None, assignments)
        applying = [kind.name for kind in kind_module.KINDS if kind.applies(config)]
        assert len(applying) == 1, (assignments, applying)
    # A kind that overlaps another is refused, not skipped.
    class Overlapping(kind_module.NativeTraffic):
        name = "overlapping"
    saved = list(kind_module.KINDS)
    try:
        kind_module.KINDS.append(Overlapping())
        with pytest.raises(AssertionError, match="exactly one"):
            kind_module.kind_of(load_config(None, []))
    finally:
        kind_module.KINDS[:] = saved
