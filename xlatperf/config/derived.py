# SPDX-License-Identifier: BSD-3-Clause
"""Facts derived from a validated configuration that several layers need: which directions
run, which side sends which IP version, which keys address a direction's frames."""

from .imix import imix_period

DIRECTIONS = ("forward", "reverse")


def active_directions(config: dict) -> list[str]:
    """"both" -> ["forward", "reverse"]; forward is left -> right."""
    direction = config.traffic.direction
    return list(DIRECTIONS) if direction == "both" else [direction]


def has_background(config: dict) -> bool:
    return config.traffic.mix_m < config.traffic.mix_n


def carries_ipv6(config: dict) -> bool:
    """Whether a trial sends or receives any IPv6 frame. Every direction touches both sides,
    so this does not depend on the direction."""
    return (config.left.ip_version == 6 or config.right.ip_version == 6
            or has_background(config))


# An IEEE 802.1Q / 802.1ad VLAN tag: 4 bytes on the wire on top of the frame (frame sizes in
# the configuration name the untagged frame; RFC 2544 App. B counts every byte on the wire).
VLAN_TAG_BYTES = 4


def side_vlan(config, side: str) -> list[int]:
    """The VLAN IDs a side's frames carry, outermost first (the protocol's `vlan` list): [] for
    an untagged port, [vlan] for an IEEE 802.1Q C-tag, [vlan_outer, vlan] for 802.1ad QinQ."""
    s = config.side(side)
    return [v for v in (s.vlan_outer, s.vlan) if v]


def size_period(config) -> list[int]:
    """The configured frame sizes in sending order, one period: the IMIX's (traffic.imix,
    RFC 6985) or the one traffic.frame_size. Each names a frame as traffic.frame_size does."""
    return imix_period(config.traffic.imix) if config.traffic.imix else [config.traffic.frame_size]


def largest_frame(config) -> int:
    """The largest frame a trial of this configuration sends or receives, in bytes on the wire
    (FCS and VLAN tags included): what the engine's ports must be set up for. Frame sizes name
    the largest (IPv6) frame of a trial, translated frames are never longer."""
    tags = max(len(side_vlan(config, side)) for side in ("left", "right"))
    return max(size_period(config)) + VLAN_TAG_BYTES * tags


def direction_sides(direction: str) -> tuple[str, str]:
    """(sending side, receiving side) of a direction."""
    return ("left", "right") if direction == "forward" else ("right", "left")


def foreground_addresses(config: dict, direction: str) -> tuple[str, str]:
    """(source key, destination key) of a direction's foreground frames, e.g.
    ("left.ipv6", "right.virtual_ipv6") for forward frames from an IPv6 left to an IPv4 right:
    the destination is the receiver's real address when both sides have the same version,
    else its virtual address in the sender's version (docs/config.md)."""
    tx, rx = direction_sides(direction)
    version = config.side(tx).ip_version
    same = config.side(rx).ip_version == version
    return f"{tx}.ipv{version}", f"{rx}.{'' if same else 'virtual_'}ipv{version}"


def lookup(config, dotted: str):
    """The value of a "section.key" name."""
    return config.value(dotted)
