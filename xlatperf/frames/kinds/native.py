# SPDX-License-Identifier: BSD-3-Clause
"""Native traffic: both sides of the same IP version, a router or a stateful NAT44/NAT66
between them (RFC 2544, RFC 5180, RFC 9693)."""

from ..stack import IP_STACKS
from ..trial import direction_sides
from .base import TrafficKind


class Native(TrafficKind):
    name = "native"
    summary = "IPv4 or IPv6 on both sides (router, NAT44, NAT66)"

    def applies(self, config) -> bool:
        return config.left.ip_version == config.right.ip_version

    def stacks(self, config, direction):
        stack = IP_STACKS[config.left.ip_version]
        return stack, stack

    def addresses(self, config, direction):
        tx, rx = direction_sides(direction)
        version = config.side(tx).ip_version
        return f"{tx}.ipv{version}", f"{rx}.ipv{version}"
