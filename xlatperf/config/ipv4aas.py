# SPDX-License-Identifier: BSD-3-Clause
"""IPv4-as-a-Service in the configuration (docs/ipv4aas.md): the [ipv4aas] section's keys and the
rules of check_ipv4aas() (the technologies and the roles the DUT may play in each are
frames/technology.py's).

The left tester port is always the customer side (hosts, CEs, B4s, lwB4s), the right one the
IPv4 Internet (RFC 8219 §4.2's set-ups drawn with the CE on the left). In the BR roles (an
AFTR, lwAFTR or BR alone) the left port emulates the CEs: every frame may come from another
one, their fields from the MAP rule, the binding table or DS-Lite's numbering. In the CE roles
(a B4, lwB4 or MAP CE alone) the left port is the CE's LAN and the right port plays the AFTR or
BR: the CE is the one ipv4aas.ce_ipv6 names.

6rd (RFC 5969) is built the same way around IPv6: the customers' traffic is IPv6, the CEs' wire
IPv6 in IPv4, the BR at ipv4aas.endpoint_ipv4 and a CE named by ipv4aas.ce_ipv4."""

import ipaddress

from ..frames.addressing import embed_ipv4
from ..frames.kinds.ipv4aas import available_ces, binding_table, ce_count, map_rule, the_ce
from ..frames.technology import (CLAT, FROM_BINDING_TABLE, FROM_MAP_RULE, FROM_NUMBERED_B4S, MAP_T, SIX_RD, Part,
                                 TECHNOLOGIES, role_of, technology_of)
from ..frames.trial import has_background
from ..util.errors import key_error

TECHNOLOGY_CHOICES = ("",) + tuple(TECHNOLOGIES)


def prefix(version: int):
    """A checker of "address/length" prefixes ("" allowed)."""
    cls = ipaddress.IPv4Network if version == 4 else ipaddress.IPv6Network

    def check(value):
        if value == "":
            return ""
        try:
            if isinstance(value, str) and "/" in value:
                return str(cls(value, strict=True))
        except ValueError as exc:
            raise ValueError(f"must be an IPv{version} prefix, address/length with no bits set "
                             f"after the length ({exc})") from None
        raise ValueError(f"must be an IPv{version} prefix, address/length")
    return check


def check_ipv4aas(config) -> None:
    """The [ipv4aas] rules; ConfigError names the key, the value and what is allowed."""
    a = config.ipv4aas
    if not a.technology:
        for key in ("role", "rule_ipv6_prefix", "rule_ipv4_prefix", "dmr", "binding_table", "endpoint_ipv6",
                    "endpoint_ipv4", "ce_ipv6", "ce_ipv4"):
            if getattr(a, key):
                raise key_error(f"ipv4aas.{key}", getattr(a, key),
                                f"takes effect only with ipv4aas.technology set ({', '.join(TECHNOLOGIES)})")
        return
    technology, role = technology_of(config), role_of(config)
    if role is None:
        raise key_error("ipv4aas.role", a.role, f"must be one of {', '.join(r.key for r in technology.roles)} "
                        f'with ipv4aas.technology = "{a.technology}" (what the DUT is)')
    left, right = technology.side_versions(role)
    for side, version in (("left", left), ("right", right)):
        if config.side(side).ip_version != version:
            raise key_error(f"{side}.ip_version", config.side(side).ip_version,
                            f"must be {version} with ipv4aas.role = \"{a.role}\" ({a.technology}: the "
                            f"{side} port sends and receives IPv{version}"
                            + (" inside the tunnel" if _tunnelled(config, side) else "") + ")")
    if technology.ce_source is FROM_MAP_RULE:
        for key in ("rule_ipv6_prefix", "rule_ipv4_prefix"):
            if not getattr(a, key):
                raise key_error(f"ipv4aas.{key}", "", f"must be set with ipv4aas.technology = "
                                f'"{a.technology}" (the Basic Mapping Rule, RFC 7597 §5)')
        try:
            map_rule(config)
        except ValueError as exc:
            raise key_error("ipv4aas.ea_bits", a.ea_bits, str(exc)) from None
    if technology is MAP_T and role.part is not Part.DUAL and not a.dmr:
        raise key_error("ipv4aas.dmr", "", "must be set with MAP-T (the Default Mapping Rule's "
                        "prefix, RFC 7599 §5.1: IPv4 destinations are embedded in it)")
    if a.dmr:
        length = ipaddress.IPv6Network(a.dmr).prefixlen
        if length not in (32, 40, 48, 56, 64, 96):
            raise key_error("ipv4aas.dmr", a.dmr, "must have an RFC 6052 prefix length: 32, 40, 48, "
                            "56, 64 or 96")
    if technology is MAP_T and role.part is not Part.DUAL:
        _check_embedded("right.virtual_ipv6", config, "dmr", "the CEs reach the IPv4 host right.ipv4 "
                        "at its address in the Default Mapping Rule's prefix (RFC 7599 §5.1)")
    if technology.ce_source is FROM_BINDING_TABLE:
        if not a.binding_table:
            raise key_error("ipv4aas.binding_table", "", "must name the binding table file (CSV: "
                            "b4_ipv6,ipv4,psid,psid_length,psid_offset; docs/ipv4aas.md)")
        try:
            binding_table(config)  # the engine's rules too (one sharing ratio per table)
        except (OSError, ValueError) as exc:
            raise key_error("ipv4aas.binding_table", a.binding_table, str(exc)) from None
    if technology.emulates_ces(role):
        if technology.wire.encapsulated and not config.value(technology.endpoint_key):
            raise key_error(technology.endpoint_key, "", f"must be the {role.name}'s IPv{technology.wire.outer} "
                            "address: the emulated CEs' tunnels end there")
        if technology.ce_source is FROM_NUMBERED_B4S and not config.left.ipv6:
            raise key_error("left.ipv6", "", "must be the first B4's IPv6 address (B4 i has "
                            "left.ipv6 + i; all share left.ipv4, RFC 6333)")
        available = available_ces(config)
        if available is not None and a.ces > available:
            raise key_error("ipv4aas.ces", a.ces, f"must be in 0..{available} (the CEs the "
                            f"{technology.ce_source.holder} has; 0: all)")
        if ce_count(config) > 2**32:
            raise key_error("ipv4aas.ces", a.ces, f"must be set, at most {2**32}: the rule has "
                            f"{ce_count(config)} CEs, more than the tester draws from")
        if technology.operator_nat44 and config.traffic.direction != "forward" \
                and not config.stateful.enabled:
            raise key_error("traffic.direction", config.traffic.direction,
                            'must be "forward" unless stateful.enabled = true: the AFTR\'s NAT44 '
                            "forwards IPv4 back to a B4 only after the B4 opened the binding (RFC "
                            "9693 phase 1)")
    if technology.plays_operator(role):
        _check_ce_role(config)
    if technology is SIX_RD:
        _check_6rd(config)
    if role is CLAT and config.right.virtual_ipv4:
        _check_embedded("right.ipv6", config, "pref64", "the CLAT sends the IPv4 server "
                        "right.virtual_ipv4 to its address in the PLAT's prefix (RFC 6052, RFC 6877)",
                        ipv4_key="right.virtual_ipv4")


def _tunnelled(config, side: str) -> bool:
    """Whether the side's frames travel inside IPv4-in-IPv6 tunnels."""
    technology = technology_of(config)
    return technology.wire.encapsulated and technology.wire_side(role_of(config)) == side


def _check_ce_role(config) -> None:
    """A B4, lwB4, MAP CE or 6rd CE alone: the CE it is, the AFTR or BR the right port plays."""
    technology = technology_of(config)
    outer = technology.wire.outer
    ce = config.value(technology.ce_key)
    if not ce:
        raise key_error(technology.ce_key, "", f"must be the IPv{outer} address of the {role_of(config).name} "
                        "the DUT is (its softwire's, its MAP address, a 6rd CE's IPv4 address): the "
                        "right port checks that every frame comes from it and sends to it")
    try:
        _, ipv4, ports = the_ce(config)
    except ValueError as exc:
        raise key_error(technology.ce_key, ce, str(exc)) from None
    if technology.wire.encapsulated and not config.value(technology.endpoint_key):
        raise key_error(technology.endpoint_key, "", f"must be the {technology.operator.name}'s "
                        f"IPv{outer} address, the tunnel's end the right port plays")
    if not config.value(f"right.ipv{outer}"):
        raise key_error(f"right.ipv{outer}", "", f"must be the right port's IPv{outer} address: the DUT's next "
                        "hop towards the AFTR or BR the port plays (it answers ARP or ND for it)")
    if ipv4 is not None and not config.stateful.enabled and config.left.ipv4 != str(ipv4):
        raise key_error("left.ipv4", config.left.ipv4,
                        f"must be {ipv4}, the CE's IPv4 address, when stateful.enabled = false: the "
                        f"LAN port sends from it and from the CE's ports ({_ranges(ports)}); for a "
                        "CE that translates its LAN's private addresses (NAPT44) set "
                        "stateful.enabled = true")


def _check_6rd(config) -> None:
    """6rd's domain (RFC 5969 §4, §7.1.1): every CE's IPv4 address after the IPv4MaskLen bits
    they share is embedded in its delegated prefix, no port sharing; IPv6 end to end, which the
    CEs and BRs forward untranslated; a CE's LAN in its delegated prefix."""
    a, role = config.ipv4aas, role_of(config)
    embedded = 32 - ipaddress.IPv4Network(a.rule_ipv4_prefix).prefixlen
    if a.ea_bits != embedded:
        raise key_error("ipv4aas.ea_bits", a.ea_bits, f"must be {embedded} with 6rd: 32 - IPv4MaskLen, the "
                        f"length of ipv4aas.rule_ipv4_prefix = {a.rule_ipv4_prefix} (RFC 5969 §4: the CE's "
                        "IPv4 bits after the common prefix follow the 6rd prefix)")
    if config.stateful.enabled:
        raise key_error("stateful.enabled", True, "must be false with 6rd: its CEs and BRs forward the "
                        "customers' IPv6 untranslated (RFC 5969)")
    if has_background(config):
        raise key_error("traffic.mix_m", config.traffic.mix_m, f"must be traffic.mix_n = {config.traffic.mix_n} "
                        "with 6rd: the customers' traffic is IPv6 already, RFC 8219 §5.3's native IPv6 "
                        "background has no IPv6 link of its own to take")
    if role.part is Part.CUSTOMER and config.left.ipv6:
        rule = map_rule(config)
        prefix = ipaddress.IPv6Network(f"{rule.ce(the_ce(config)[0]).ipv6}/{rule.end_user_prefix_length}",
                                       strict=False)
        if ipaddress.IPv6Address(config.left.ipv6) not in prefix:
            raise key_error("left.ipv6", config.left.ipv6, f"must be in {prefix}, the delegated prefix of "
                            f"the CE ipv4aas.ce_ipv4 = {a.ce_ipv4} (RFC 5969 §4): the CE's LAN sends from it")


def _ranges(ports: list[tuple[int, int]]) -> str:
    shown = ", ".join(f"{lo}-{hi}" for lo, hi in ports[:3])
    return shown + (f", ... ({len(ports)} ranges)" if len(ports) > 3 else "")


def _check_embedded(key: str, config, prefix_key: str, why: str, ipv4_key: str = "right.ipv4") -> None:
    """`key` must be the IPv4 address `ipv4_key` embedded in ipv4aas.`prefix_key` (RFC 6052)."""
    prefix = getattr(config.ipv4aas, prefix_key)
    expected = embed_ipv4(ipaddress.IPv6Network(prefix), ipaddress.IPv4Address(config.value(ipv4_key)))
    value = config.value(key)
    if value == "" or ipaddress.IPv6Address(value) != expected:
        raise key_error(key, value, f"must be {expected}, {ipv4_key} = {config.value(ipv4_key)} in "
                        f"ipv4aas.{prefix_key} = {prefix}: {why}")
