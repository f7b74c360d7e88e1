# SPDX-License-Identifier: BSD-3-Clause
"""Single translation: one side IPv4, the other IPv6, a SIIT or NAT64 translator between them
(RFC 7915, RFC 6146, RFC 8219 §4.1). Frames are addressed to the receiver's virtual address in
the sender's IP version (the translator maps it, docs/config.md)."""

from ..stack import IP_STACKS
from ..trial import direction_sides
from .base import Received, TrafficKind, translated_df
from .ipv4aas import tester_plays_ipv4aas

class SiitTraffic(TrafficKind):
    name = "siit"
    summary = "IPv4 on one side, IPv6 on the other (SIIT, NAT64)"

    def applies(self, config) -> bool:
        return not tester_plays_ipv4aas(config) and config.left.ip_version != config.right.ip_version

    def stacks(self, config, direction):
        tx, rx = direction_sides(direction)
        return (IP_STACKS[config.side(tx).ip_version], IP_STACKS[config.side(rx).ip_version])

    def addresses(self, config, direction):
        tx, rx = direction_sides(direction)
        version = config.side(tx).ip_version
        return f"{tx}.ipv{version}", f"{rx}.virtual_ipv{version}"

    def received(self, config, direction):
        # RFC 7915 §4.1, §5.1: the sender's address in the receiver's IP version (its virtual
        # address there), the receiver's own; the ports and the traffic class carried, the hop
        # limit decremented.
        tx, rx = direction_sides(direction)
        version = config.side(rx).ip_version
        return Received(f"{tx}.virtual_ipv{version}", f"{rx}.ipv{version}", ports=True, ttl_tos=True)

    def df(self, config, direction, rx_frame_size):
        received = config.side(direction_sides(direction)[1]).ip_version
        return translated_df(rx_frame_size) if received == 4 else None  # IPv6 has no DF

    def address_use(self, config, direction):
        tx, rx = direction_sides(direction)
        return (f"{tx} sends IPv{config.side(tx).ip_version} and {rx} is "
                f"IPv{config.side(rx).ip_version}, so {direction} frames are addressed to "
                f"{rx}'s virtual address")
