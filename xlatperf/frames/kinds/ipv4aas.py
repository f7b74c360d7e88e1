# SPDX-License-Identifier: BSD-3-Clause
"""IPv4-as-a-Service with the DUT on the operator's side (an AFTR, lwAFTR or BR alone): the
left tester port emulates the CEs (B4s, lwB4s, MAP CEs), every frame possibly from another one,
the right port is the IPv4 Internet (docs/ipv4aas.md).

  * encapsulation (DS-Lite RFC 6333, lw4o6 RFC 7596, MAP-E RFC 7597): IPv4 in IPv6 (RFC 2473)
    on the left, IPv4 on the right;
  * MAP-T (RFC 7599): the CEs' translated IPv6 on the left, IPv4 on the right.

The CEs' fields come from the MAP rule, the binding table or DS-Lite's numbering (B4 i has
left.ipv6 + i, all with the private address left.ipv4); the engine writes them per frame and
checks them on receipt (the protocol's `ce`)."""

import ipaddress
from functools import lru_cache
from pathlib import Path

from ..addressing import BindingTable, MapRule
from ..stack import IPV4, IPV4_IN_IPV6, IPV6
from .base import TrafficKind

# What the DUT is, per technology. "dual": CE and BR (B4 and AFTR, CLAT and PLAT) together,
# IPv4 on both tester ports (RFC 8219 §4.2 Fig. 2).
ROLES = {
    "464xlat": ("dual", "clat", "plat"),
    "ds-lite": ("dual", "aftr", "b4"),
    "lw4o6": ("lwaftr", "lwb4"),
    "map-e": ("dual", "br", "ce"),
    "map-t": ("dual", "br", "ce"),
}
# The roles in which the tester's left port emulates many CEs (the DUT is the operator's side).
BR_ROLES = ("aftr", "lwaftr", "br")


def emulates_ces(config) -> bool:
    """Whether the left port emulates CEs (the DUT is an AFTR, lwAFTR or BR)."""
    return bool(config.ipv4aas.technology) and config.ipv4aas.role in BR_ROLES


def map_rule(config) -> MapRule:
    """The Basic Mapping Rule of a MAP-E or MAP-T configuration."""
    a = config.ipv4aas
    return MapRule(ipaddress.IPv6Network(a.rule_ipv6_prefix), ipaddress.IPv4Network(a.rule_ipv4_prefix),
                   a.ea_bits, a.psid_offset)


def binding_table_path(config) -> Path:
    return Path(config.ipv4aas.binding_table).resolve()


@lru_cache(maxsize=4)
def _read_table(path: Path, mtime_ns: int) -> BindingTable:
    return BindingTable.read(path)


def binding_table(config) -> BindingTable:
    """The lw4o6 binding table, read once per version of the file."""
    path = binding_table_path(config)
    return _read_table(path, path.stat().st_mtime_ns)


def available_ces(config) -> int | None:
    """The CEs the rule or the binding table has; None for DS-Lite's numbered B4s."""
    technology = config.ipv4aas.technology
    if technology in ("map-e", "map-t"):
        return map_rule(config).ce_count
    if technology == "lw4o6":
        return len(binding_table(config))
    return None


def ce_count(config) -> int:
    """The CEs the left port emulates in a BR role (RFC 8219 §10.1.2's n): ipv4aas.ces, or every
    CE of the rule or the binding table when 0 (one B4 for DS-Lite)."""
    return config.ipv4aas.ces or available_ces(config) or 1


def ce_request(config, side: str, fields: list[str], rx_fields: list[str]) -> dict:
    """The protocol's `ce` object of a stream whose CEs are on `side` ("src": they send)."""
    a = config.ipv4aas
    if a.technology in ("map-e", "map-t"):
        source = {"map": {"ipv6_prefix": a.rule_ipv6_prefix, "ipv4_prefix": a.rule_ipv4_prefix,
                          "ea_bits": a.ea_bits, "psid_offset": a.psid_offset}}
    elif a.technology == "lw4o6":
        source = {"softwires": str(binding_table_path(config))}
    else:
        source = {"b4": {"ipv6": config.left.ipv6, "ipv4": config.left.ipv4}}
    return {**source, "count": ce_count(config), "side": side, "mode": a.ce_mode,
            "fields": fields, "rx_fields": rx_fields}


class _EmulatedCes(TrafficKind):
    """The CE side (left) sends `ce_stack` frames, the Internet side (right) IPv4."""
    technologies: tuple[str, ...] = ()
    ce_stack = IPV4_IN_IPV6

    def applies(self, config) -> bool:
        return emulates_ces(config) and config.ipv4aas.technology in self.technologies

    def stacks(self, config, direction):
        return (self.ce_stack, IPV4) if direction == "forward" else (IPV4, self.ce_stack)

    def side_stack(self, config, side):
        return self.ce_stack if side == "left" else IPV4

    def address_use(self, config, direction):
        return (f"{direction} frames go between the emulated CEs (left) and the IPv4 Internet "
                f"(right) through the {config.ipv4aas.role.upper()}")


class Encapsulation(_EmulatedCes):
    name = "encapsulation"
    summary = ("IPv4 in IPv6 from emulated CEs on the left, IPv4 on the right (DS-Lite AFTR, "
               "lw4o6 lwAFTR, MAP-E BR)")
    technologies = ("ds-lite", "lw4o6", "map-e")

    def addresses(self, config, direction):
        return ("left.ipv4", "right.ipv4") if direction == "forward" else ("right.ipv4", "left.ipv4")

    def stream_keys(self, config, direction):
        # B4s own no port set, and the AFTR's NAT44 rewrites what they send (RFC 6333 §6.6): only
        # frames towards them are checked. MAP-E and lw4o6 keep a CE's address and port.
        stateless = config.ipv4aas.technology != "ds-lite"
        own = ["ipv4", "port"] if stateless else ["ipv4"]
        if direction == "forward":
            return {"tunnel": {"src_ip": config.left.ipv6 or config.ipv4aas.endpoint_ipv6,
                               "dst_ip": config.ipv4aas.endpoint_ipv6},
                    "ce": ce_request(config, "src", ["tunnel"] + own, own if stateless else [])}
        return {"ce": ce_request(config, "dst", own if stateless else [], ["tunnel"] + own)}


class MapT(_EmulatedCes):
    name = "map-t"
    summary = "MAP-T CEs' translated IPv6 on the left, IPv4 on the right (MAP-T BR)"
    technologies = ("map-t",)
    ce_stack = IPV6

    def addresses(self, config, direction):
        # The IPv4 Internet's hosts, seen from the CEs: embedded in the DMR (right.virtual_ipv6).
        return ("left.ipv6", "right.virtual_ipv6") if direction == "forward" else ("right.ipv4", "left.ipv4")

    def stream_keys(self, config, direction):
        if direction == "forward":
            return {"ce": ce_request(config, "src", ["ipv6", "port"], ["ipv4", "port"])}
        return {"ce": ce_request(config, "dst", ["ipv4", "port"], ["ipv6", "port"])}
