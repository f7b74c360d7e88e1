# SPDX-License-Identifier: BSD-3-Clause
"""Single translation: one side IPv4, the other IPv6, a SIIT or NAT64 translator between them
(RFC 7915, RFC 6146, RFC 8219 §4.1). Frames are addressed to the receiver's virtual address in
the sender's IP version (the translator maps it, docs/config.md)."""

from ..stack import IP_STACKS
from ..trial import direction_sides
from .base import TrafficKind


class Siit(TrafficKind):
    name = "siit"
    summary = "IPv4 on one side, IPv6 on the other (SIIT, NAT64)"

    def applies(self, config) -> bool:
        return config.left.ip_version != config.right.ip_version

    def stacks(self, config, direction):
        tx, rx = direction_sides(direction)
        return (IP_STACKS[config.side(tx).ip_version], IP_STACKS[config.side(rx).ip_version])

    def addresses(self, config, direction):
        tx, rx = direction_sides(direction)
        version = config.side(tx).ip_version
        return f"{tx}.ipv{version}", f"{rx}.virtual_ipv{version}"

    def address_use(self, config, direction):
        tx, rx = direction_sides(direction)
        return (f"{tx} sends IPv{config.side(tx).ip_version} and {rx} is "
                f"IPv{config.side(rx).ip_version}, so {direction} frames are addressed to "
                f"{rx}'s virtual address")
