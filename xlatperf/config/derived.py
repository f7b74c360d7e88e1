# SPDX-License-Identifier: BSD-3-Clause
"""Facts derived from a validated configuration that several layers need: which directions
run, which side sends which IP version, which keys address a direction's frames."""

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
