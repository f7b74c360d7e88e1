# SPDX-License-Identifier: BSD-3-Clause
"""Traffic kinds of the front end: VLAN tags (IEEE 802.1Q / 802.1ad per side) in the
configuration, the flows of a trial request and the medium's maximum frame rate."""

import json
import subprocess
import sys

import pytest

from fakes import FAKE_ENGINE
from xlatperf.config.schema import load_config
from xlatperf.engine.protocol import TrialResult
from xlatperf.config.derived import largest_frame, side_vlan
from xlatperf.traffic.plan import TrafficPlan
from xlatperf.util.errors import ConfigError

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
    assert largest_frame(config) == 9220
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
