# SPDX-License-Identifier: BSD-3-Clause
"""What a trial's frames are, as a validated configuration says: which directions run, which
side sends and receives each, the VLAN tags of a side, the frame sizes in sending order, and
whether native IPv6 background traffic is mixed in (RFC 8219 §5.3)."""

from .imix import imix_period

DIRECTIONS = ("forward", "reverse")
# RFC 4814 §4.5's ranges of pseudorandom UDP/TCP ports: clients send from 1024..65535, services
# are addressed at 1..49151.
RFC4814_PORTS = {"src": (1024, 65535), "dst": (1, 49151)}


def active_directions(config) -> list[str]:
    """"both" -> ["forward", "reverse"]; forward is left -> right."""
    direction = config.traffic.direction
    return list(DIRECTIONS) if direction == "both" else [direction]


def direction_sides(direction: str) -> tuple[str, str]:
    """(sending side, receiving side) of a direction."""
    return ("left", "right") if direction == "forward" else ("right", "left")


def has_background(config) -> bool:
    return config.traffic.mix_m < config.traffic.mix_n


# The ECN field's codepoints (RFC 3168 §5), by traffic.ecn's names.
ECN_CODEPOINTS = {"not-ect": 0, "ect1": 1, "ect0": 2, "ce": 3}
ECN_CE = ECN_CODEPOINTS["ce"]


def sent_tos(config) -> int:
    """The IPv4 TOS octet and IPv6 traffic class of the test frames: traffic.dscp in the six
    DSCP bits (RFC 2474), traffic.ecn in the two ECN bits (RFC 3168 §5)."""
    return config.traffic.dscp << 2 | ECN_CODEPOINTS[config.traffic.ecn]


def arriving_ecn(sent: int) -> list[int]:
    """The ECN codepoints a packet sent with ECN field `sent` may arrive with through a router,
    NAT, translator or tunnel: as sent, or CE where it was ECT (RFC 3168 §5: a congested router
    marks an ECT packet, never a Not-ECT one; RFC 6040 §4.2: a decapsulator hands the inner on as
    it came where the outer is the same, CE where the outer was marked)."""
    return [sent, ECN_CE] if sent in (ECN_CODEPOINTS["ect0"], ECN_CODEPOINTS["ect1"]) else [sent]


def side_vlan(config, side: str) -> list[int]:
    """The VLAN IDs a side's frames carry, outermost first (the protocol's `vlan` list): [] for
    an untagged port, [vlan] for an IEEE 802.1Q C-tag, [vlan_outer, vlan] for 802.1ad QinQ."""
    s = config.side(side)
    return [v for v in (s.vlan_outer, s.vlan) if v]


def size_period(config) -> list[int]:
    """The configured frame sizes in sending order, one period: the IMIX's (traffic.imix,
    RFC 6985) or the one traffic.frame_size. Each names a frame as traffic.frame_size does."""
    return imix_period(config.traffic.imix) if config.traffic.imix else [config.traffic.frame_size]


def lookup(config, dotted: str):
    """The value of a "section.key" name."""
    return config.value(dotted)
