# SPDX-License-Identifier: BSD-3-Clause
"""The IPv4-as-a-Service technologies (docs/ipv4aas.md), and 6rd, the IPv6 service over an
IPv4 network built the same way (RFC 5969), each declared once: the roles a DUT may play in it
and the IP versions the tester's ports send and receive around each, how the customers' traffic
crosses the operator's network (encapsulated, RFC 2473 and RFC 4213, or translated, RFC 7915),
where the CEs' fields come from, what the operator's side does to them, and the names the RFCs
give it all.

The configuration names a technology and a role by their keys (ipv4aas.technology = "map-e",
ipv4aas.role = "br"); the traffic kinds, the configuration's rules, the report and the lab
kinds look the objects up (technology_of, role_of) and read the facts from them."""

from dataclasses import dataclass
from enum import Enum

from .stack import IP_STACKS, IPV4_IN_IPV6, IPV6, IPV6_IN_IPV4, Stack


class Part(Enum):
    """Which part of its technology a DUT is."""
    DUAL = "a CE and the operator's side in line"  # RFC 8219 §4.2 Figure 2: the customers' IP on both ports
    OPERATOR = "the operator's side"    # AFTR, lwAFTR, BR, PLAT: the CEs' wire on the left port
    CUSTOMER = "a CE"                   # B4, lwB4, MAP CE, CLAT: its wire on the right port


@dataclass(frozen=True)
class Role:
    """What a DUT is in a technology."""
    key: str     # the value of ipv4aas.role
    name: str    # as the RFCs write it
    part: Part


DUAL = Role("dual", "dual DUT", Part.DUAL)
CLAT, PLAT = Role("clat", "CLAT", Part.CUSTOMER), Role("plat", "PLAT", Part.OPERATOR)
B4, AFTR = Role("b4", "B4", Part.CUSTOMER), Role("aftr", "AFTR", Part.OPERATOR)
LWB4, LWAFTR = Role("lwb4", "lwB4", Part.CUSTOMER), Role("lwaftr", "lwAFTR", Part.OPERATOR)
CE, BR = Role("ce", "CE", Part.CUSTOMER), Role("br", "BR", Part.OPERATOR)


@dataclass(frozen=True)
class CeSource:
    """Where the CEs' fields come from (the tester emulates CEs, or plays the operator's side of
    one CE). The protocol's `ce` object names it by `key` (docs/protocol.md)."""
    key: str
    description: str   # for the report
    holder: str        # what holds the CEs, for messages ("the CEs the rule has")


FROM_MAP_RULE = CeSource("map", "a MAP rule", "rule")
FROM_BINDING_TABLE = CeSource("softwires", "a binding table", "binding table")
# B4 i has left.ipv6 + i: a numbering rule.
FROM_NUMBERED_B4S = CeSource("b4", "numbered B4s", "rule")
CE_SOURCES = (FROM_MAP_RULE, FROM_NUMBERED_B4S, FROM_BINDING_TABLE)


@dataclass(frozen=True)
class Technology:
    key: str                    # the value of ipv4aas.technology
    name: str                   # as the RFCs write it
    roles: tuple[Role, ...]     # in the order messages list them
    # The header stack of the customers' packets between a CE and the operator's side: IPv4 in
    # IPv6 (RFC 2473), translated IPv6 (RFC 7915) or IPv6 in IPv4 (6rd, RFC 5969 §3).
    wire: Stack
    # Where the CEs' fields come from; None: the tester emulates no CE and plays no operator's
    # side (464XLAT's CLAT or PLAT alone is a translator between plain hosts, RFC 6877).
    ce_source: CeSource | None
    # The tunnels carry the traffic class over (RFC 6333 §7.1, made mandatory for lw4o6 by RFC
    # 7596 §5.2 and §6.2); MAP-E leaves it to RFC 2473 §6.4 (0 or copied).
    tunnel_carries_tos: bool = False
    # The operator's side is a NAT44 of its own (DS-Lite's AFTR, RFC 6333 §6.6): the CEs share
    # one private IPv4 address and own no port set, only their tunnel tells them apart; the AFTR
    # chooses the source of what they send and forwards IPv4 back to a CE only after the CE
    # opened the binding.
    operator_nat44: bool = False
    # The key in [ipv4aas] of the RFC 6052 prefix the IPv4 Internet is embedded in on the CEs'
    # side, and the rule that makes its addresses RFC 6052's (MAP-T's DMR, 464XLAT's PLAT prefix).
    prefix_key: str = ""
    prefix_rule: str = ""
    # The IP version of the customers' traffic (the CE's LAN, the Internet behind the operator's
    # side): IPv4 as a service, or IPv6 (6rd).
    customer: int = 4

    @property
    def translates(self) -> bool:
        """Whether the CEs' IPv4 is translated into IPv6 (RFC 7915), not encapsulated."""
        return not self.wire.encapsulated

    @property
    def ce_fields(self) -> list[str]:
        """The fields of its customers' traffic each CE owns (the protocol's `ce` fields): its
        IPv4 address and its port set (RFC 7597 §5.1, RFC 7596 §5.1); none where the CEs share
        one private address that the operator's NAT44 translates (DS-Lite's B4s), nor where a CE
        owns an IPv6 prefix whose addresses its LAN's hosts choose (6rd's delegated prefix, RFC
        5969 §4): only the tunnel names the CE then."""
        return [] if self.operator_nat44 or self.customer == 6 else ["ipv4", "port"]

    @property
    def emulated_ce_fields(self) -> list[str]:
        """The fields the tester writes per emulated CE into its customers' packets: those the
        CE owns, else the address that stands for it: DS-Lite's shared private IPv4, a 6rd CE's
        MAP address in its delegated prefix (RFC 7597 §6's form, which 6rd's prefix has)."""
        return self.ce_fields or [f"ipv{self.customer}"]

    @property
    def endpoint_key(self) -> str:
        """The configuration key of the operator's side's address, where the CEs' tunnels end:
        of the wire's outer IP version (an AFTR's IPv6, a 6rd BR's IPv4)."""
        return f"ipv4aas.endpoint_ipv{self.wire.outer}"

    @property
    def ce_key(self) -> str:
        """The configuration key that names the CE a DUT in a CE role is: its address on the
        wire (a B4's softwire address, a MAP CE's MAP address, a 6rd CE's IPv4 address)."""
        return f"ipv4aas.ce_ipv{self.wire.outer}"

    @property
    def ce_in_tag(self) -> bool:
        """Whether a frame's CE must ride in its test tag (the protocol's `ce.tag`): where its
        fields cannot name the CE the sender chose once the operator's side has handled it, as
        the B4s share one address behind the AFTR's NAT44 (RFC 6333 §6.6) and a translation
        keeps only one IP version's address (MAP-T). An encapsulated packet carries its CE's
        address and port unchanged (MAP-E, lw4o6): its fields name its CE."""
        return self.operator_nat44 or self.translates

    @property
    def operator(self) -> Role:
        """The role of the operator's side (what a CE's tunnels or translated packets go to)."""
        return next(role for role in self.roles if role.part is Part.OPERATOR)

    @property
    def customer_stack(self) -> Stack:
        """The header stack of the customers' packets on the CE's LAN and the Internet side."""
        return IP_STACKS[self.customer]

    @property
    def wire_growth(self) -> int:
        """What the CEs' wire adds to a customer's packet: the outer IPv6 header (40 bytes), the
        translated IPv6 header's 20 bytes more, 6in4's IPv4 header (20 bytes)."""
        return self.wire.ip_bytes - self.customer_stack.ip_bytes

    def role(self, key: str) -> Role | None:
        """The role named `key`; None if the technology has none of that name."""
        return next((role for role in self.roles if role.key == key), None)

    def side_versions(self, role: Role) -> tuple[int, int]:
        """The IP versions (left, right) the tester's ports send and receive around a DUT of
        `role`, inside any tunnel: the customers' (IPv4; IPv6 for 6rd), but IPv6 on the CEs'
        side when it is translated."""
        ce_side, customer = self.wire.inner, self.customer
        return {Part.DUAL: (customer, customer), Part.OPERATOR: (ce_side, customer),
                Part.CUSTOMER: (customer, ce_side)}[role.part]

    def wire_side(self, role: Role) -> str | None:
        """The tester port on the CEs' wire around a DUT of `role` (left: the CEs' side of the
        operator's; right: the operator's side of a CE); None for a dual DUT (the customers' IP
        on both)."""
        return {Part.DUAL: None, Part.OPERATOR: "left", Part.CUSTOMER: "right"}[role.part]

    def emulates_ces(self, role: Role) -> bool:
        """Whether the left port emulates the CEs (the DUT is an AFTR, lwAFTR or BR)."""
        return role.part is Part.OPERATOR and self.ce_source is not None

    def plays_operator(self, role: Role) -> bool:
        """Whether the right port plays the AFTR or BR of the one CE the DUT is."""
        return role.part is Part.CUSTOMER and self.ce_source is not None


XLAT464 = Technology("464xlat", "464XLAT", (DUAL, CLAT, PLAT), IPV6, None,
                     prefix_key="pref64", prefix_rule="RFC 6877 §6.1")
DS_LITE = Technology("ds-lite", "DS-Lite", (DUAL, AFTR, B4), IPV4_IN_IPV6, FROM_NUMBERED_B4S,
                     tunnel_carries_tos=True, operator_nat44=True)
LW4O6 = Technology("lw4o6", "lw4o6", (LWAFTR, LWB4), IPV4_IN_IPV6, FROM_BINDING_TABLE, tunnel_carries_tos=True)
MAP_E = Technology("map-e", "MAP-E", (DUAL, BR, CE), IPV4_IN_IPV6, FROM_MAP_RULE)
MAP_T = Technology("map-t", "MAP-T", (DUAL, BR, CE), IPV6, FROM_MAP_RULE, prefix_key="dmr",
                   prefix_rule="RFC 7599 §5.1")
# 6rd (RFC 5969): a CE's delegated IPv6 prefix embeds its IPv4 address's last 32 - IPv4MaskLen
# bits, a MAP rule with that many EA bits and no port sharing (RFC 7597 §1 grew out of it).
SIX_RD = Technology("6rd", "6rd", (DUAL, BR, CE), IPV6_IN_IPV4, FROM_MAP_RULE, customer=6)
TECHNOLOGIES = {t.key: t for t in (XLAT464, DS_LITE, LW4O6, MAP_E, MAP_T, SIX_RD)}


def technology_of(config) -> Technology | None:
    """The configuration's technology (ipv4aas.technology); None without one."""
    return TECHNOLOGIES.get(config.ipv4aas.technology)


def role_of(config) -> Role | None:
    """The configuration's role in its technology (ipv4aas.role); None without a technology,
    or for a role the technology does not have (refused by config/ipv4aas.py)."""
    technology = technology_of(config)
    return technology.role(config.ipv4aas.role) if technology else None
