# SPDX-License-Identifier: BSD-3-Clause
"""The frame model (xlatperf/frames): header stacks, the frame size rule and the traffic kinds'
registry."""

import pytest

from xlatperf.config.loading import load_config
from xlatperf.frames.kinds import KINDS, kind_of, trial_frames
from xlatperf.frames.stack import (IPV4, IPV4_IN_IPV6, IPV6, TCP_ACK, TCP_DATA, TCP_SYN, UDP, frame_size,
                                   named_stack, size_name)
from xlatperf.util.errors import ConfigError
from xlatperf.util.rates import max_frame_rate

V6_LEFT = ["left.ip_version=6", "left.ipv6=2001:2::2", "left.virtual_ipv4=198.18.0.2",
           "right.virtual_ipv6=64:ff9b::c613:2"]


def test_each_stack_knows_its_headers_and_smallest_frame():
    # Ethernet 14 + IP headers + UDP 8 + tag 18 + FCS 4 (docs/protocol.md)
    assert (IPV4.min_frame, IPV6.min_frame, IPV4_IN_IPV6.min_frame) == (64, 84, 104)
    assert (IPV4.overhead, IPV6.overhead, IPV4_IN_IPV6.overhead) == (0, 0, 40)
    assert IPV4_IN_IPV6.inner == 4 and IPV4_IN_IPV6.outer == 6 and IPV4_IN_IPV6.encapsulated
    assert str(IPV4_IN_IPV6) == "IPv4 in IPv6"


def test_the_transport_is_the_stacks_last_layer():
    # UDP with the 18-byte tag unless a stack says otherwise; TCP with the 20-byte tag option,
    # 4 more on a SYN or SYN-ACK (the window scale option), a data segment one byte of payload
    # more (engine/src/core/frame.hpp tcp_header_size, docs/tcp.md).
    assert IPV4.transport == UDP and IPV4.carrying(UDP) == IPV4
    sizes = {stack: [stack.carrying(t).min_frame for t in (TCP_SYN, TCP_ACK, TCP_DATA)]
             for stack in (IPV4, IPV6, IPV4_IN_IPV6)}
    assert sizes == {IPV4: [86, 78, 79], IPV6: [106, 98, 99], IPV4_IN_IPV6: [126, 118, 119]}
    # The transport changes neither the IP headers nor the frame size rule: a data segment is as
    # long as the datagram of the same configured size.
    tcp = IPV4_IN_IPV6.carrying(TCP_DATA)
    assert (tcp.layers, tcp.overhead, str(tcp)) == (IPV4_IN_IPV6.layers, 40, "IPv4 in IPv6")
    assert frame_size(128, tcp, IPV4) == frame_size(128, IPV4_IN_IPV6, IPV4) == 168


def test_the_size_names_the_largest_frame_before_encapsulation():
    # SIIT (RFC 8219 §5.1.1): 84-byte IPv6 frames are 64-byte IPv4 frames.
    assert named_stack([IPV4, IPV6]) == IPV6
    assert frame_size(84, IPV4, IPV6) == 64 and frame_size(84, IPV6, IPV6) == 84
    # Encapsulation (RFC 8219 Appendix A: X + O): a 64-byte IPv4 frame is 104 bytes in IPv6.
    assert named_stack([IPV4_IN_IPV6, IPV4]) == IPV4
    assert frame_size(64, IPV4_IN_IPV6, IPV4) == 104
    for stack in (IPV4, IPV6, IPV4_IN_IPV6):
        for named in (IPV4, IPV6):
            assert size_name(frame_size(1518, stack, named), stack, named) == 1518


def test_rfc_8219_appendix_a_worked_example():
    """6in4 over 10 Mb/s Ethernet with 64-byte frames: 10^7 / (8 x (64 + 20 + 20)) = 12,019 fps;
    the overhead is the encapsulating header (20 bytes there, 40 for IPv4 in IPv6)."""
    assert max_frame_rate(10_000_000, 64, overhead=20) == 12_019
    assert max_frame_rate(10_000_000, frame_size(64, IPV4_IN_IPV6, IPV4)) == \
        max_frame_rate(10_000_000, 64, overhead=IPV4_IN_IPV6.overhead) == 10_080


def test_the_registry_picks_the_kind_from_the_sides():
    assert [k.name for k in KINDS] == ["encapsulation", "map-t", "encapsulating-ce", "map-t-ce", "native", "siit"]
    native, siit = load_config(None, []), load_config(None, V6_LEFT + ["traffic.frame_size=84"])
    assert kind_of(native).name == "native" and kind_of(siit).name == "siit"
    assert trial_frames(native).stacks == (IPV4,) and set(trial_frames(siit).stacks) == {IPV4, IPV6}
    assert kind_of(siit).addresses(siit, "forward") == ("left.ipv6", "right.virtual_ipv6")
    assert kind_of(siit).addresses(siit, "reverse") == ("right.ipv4", "left.virtual_ipv4")
    assert kind_of(native).addresses(native, "reverse") == ("right.ipv4", "left.ipv4")


def test_a_trials_frame_facts_follow_from_its_stacks():
    native = trial_frames(load_config(None, ["traffic.frame_size=64"]))
    assert native.min_frame_size() == 64 and native.largest_frame == 64
    siit = trial_frames(load_config(None, V6_LEFT + ["traffic.frame_size=1518", "left.vlan=5"]))
    assert siit.min_frame_size() == 84 and siit.directions == {"forward": (IPV6, IPV4), "reverse": (IPV4, IPV6)}
    assert siit.frame_size_of(IPV4) == 1498 and siit.size_name_of(IPV4, 1498) == 1518
    assert siit.largest_frame == 1518 + 4       # the IPv6 frame with its VLAN tag
    # Native IPv6 background makes the sizes name IPv6 frames in an IPv4 trial too.
    mixed = trial_frames(load_config(None, ["traffic.frame_size=84", "traffic.mix_n=10", "traffic.mix_m=9",
                                            "left.ipv6=2001:2::2", "right.ipv6=2001:2:0:8000::2"]))
    assert mixed.min_frame_size() == 84 and mixed.frame_size_of(IPV4) == 64


def test_a_size_too_small_for_the_trials_frames_names_the_rule():
    with pytest.raises(ConfigError, match=r"traffic.frame_size = 64: must be an integer in "
                                          r"84..9216 when the trial carries IPv6 frames"):
        load_config(None, V6_LEFT + ["traffic.frame_size=64"])
