# SPDX-License-Identifier: BSD-3-Clause
"""Native traffic: both sides of the same IP version, a router or a stateful NAT44/NAT66
between them (RFC 2544, RFC 5180, RFC 9693)."""

from ..stack import IP_STACKS
from ..technology import technology_of
from ..trial import direction_sides
from .base import Received, TrafficKind, translated_df
from .ipv4aas import dual_dut, dual_middle_stack, tester_plays_ipv4aas, translates_between


class NativeTraffic(TrafficKind):
    name = "native"
    summary = "IPv4 or IPv6 on both sides (router, NAT44, NAT66)"

    def applies(self, config) -> bool:
        return not tester_plays_ipv4aas(config) and config.left.ip_version == config.right.ip_version

    def stacks(self, config, direction):
        stack = IP_STACKS[config.left.ip_version]
        return stack, stack

    def addresses(self, config, direction):
        tx, rx = direction_sides(direction)
        version = config.side(tx).ip_version
        return f"{tx}.ipv{version}", f"{rx}.ipv{version}"

    def received(self, config, direction):
        # Forwarded as sent, the TTL decremented (what a stateful NAT rewrites is the plan's
        # rule, the same for every kind: traffic/plan.py).
        # A dual DUT that tunnels (DS-Lite, MAP-E) has a tunnel exit among its hops; DS-Lite's
        # AFTR is a NAT44 of its own (RFC 6333 §6.6).
        source, destination = self.addresses(config, direction)
        tunnels = dual_dut(config) and not translates_between(config)
        return Received(source, destination, ports=True, ttl_tos=True, tunnel_exits=int(tunnels),
                        nat=tunnels and technology_of(config).operator_nat44)

    def middle_stack(self, config, direction):
        return dual_middle_stack(config)  # a dual DUT (IPv4 on both sides) is native to the tester

    def df(self, config, direction, rx_frame_size):
        if config.left.ip_version != 4:
            return None  # IPv6 has no DF
        if translates_between(config):  # IPv4 -> IPv6 drops it, IPv6 -> IPv4 sets it by size
            return translated_df(rx_frame_size)
        return True  # the tester sends DF set (engine/src/core/frame.cpp); routers and NATs keep it
