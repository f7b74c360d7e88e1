# SPDX-License-Identifier: BSD-3-Clause
"""IPv4-as-a-Service with one side of the service as the DUT (docs/ipv4aas.md):

  * the operator's side (an AFTR, lwAFTR or BR alone): the left tester port emulates the CEs
    (B4s, lwB4s, MAP CEs), every frame possibly from another one, the right port is the IPv4
    Internet;
  * the customer's side (a B4, lwB4 or MAP CE alone): the left port is the CE's LAN, the right
    port plays the AFTR or BR with the IPv4 Internet behind it.

On the CEs' wire: IPv4 in IPv6 (RFC 2473) for DS-Lite (RFC 6333), lw4o6 (RFC 7596) and MAP-E
(RFC 7597); the CEs' translated IPv6 for MAP-T (RFC 7599); IPv6 in IPv4 for 6rd (RFC 5969),
whose customers' traffic is IPv6. The CEs' fields come from the MAP rule (6rd's domain is one),
the binding table or DS-Lite's numbering (B4 i has left.ipv6 + i, all with the private address
left.ipv4); the engine writes them per frame and checks them on receipt (the protocol's `ce`).
A CE alone is one of them, named by its address on the wire (ipv4aas.ce_ipv6; a 6rd CE's
ipv4aas.ce_ipv4). What differs between the technologies is declared in frames/technology.py."""

import ipaddress
from functools import lru_cache
from pathlib import Path

from ..addressing import BindingTable, MapRule
from ..stack import Stack
from ..technology import FROM_BINDING_TABLE, FROM_MAP_RULE, FROM_NUMBERED_B4S, Part, role_of, technology_of
from .base import Received, TrafficKind, translated_df


def emulates_ces(config) -> bool:
    """Whether the left port emulates CEs (the DUT is an AFTR, lwAFTR or BR)."""
    role = role_of(config)
    return role is not None and technology_of(config).emulates_ces(role)


def dual_dut(config) -> bool:
    """Whether the DUT is a CE and a BR in line (RFC 8219 §4.2 Figure 2), IPv4 on both ports."""
    role = role_of(config)
    return role is not None and role.part is Part.DUAL


def translates_between(config) -> bool:
    """Whether a dual DUT translates IPv4 into IPv6 and back (464XLAT, MAP-T)."""
    return dual_dut(config) and technology_of(config).translates


def dual_middle_stack(config) -> Stack | None:
    """The header stack of a dual DUT's frames between its CE and its BR: translated IPv6
    (464XLAT, MAP-T) or IPv4 in IPv6 (DS-Lite, MAP-E); None for any other DUT."""
    return technology_of(config).wire if dual_dut(config) else None


def plays_br(config) -> bool:
    """Whether the right port plays the AFTR or BR (the DUT is a B4, lwB4 or MAP CE)."""
    role = role_of(config)
    return role is not None and technology_of(config).plays_operator(role)


def tester_plays_ipv4aas(config) -> bool:
    """Whether the tester plays one end of an IPv4aaS technology (the CEs or the BR): its
    frames are then this module's kinds', and no plain kind's (native, siit)."""
    return emulates_ces(config) or plays_br(config)


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


Ce = tuple[int, ipaddress.IPv4Address | None, list[tuple[int, int]] | None]


class _Ces:
    """How the CEs of one source (frames/technology.py) are read from the configuration: how
    many there are (None: any number), the CE an IPv6 address names, and the source's entry of
    the protocol's `ce` object."""

    def emulated(self, config) -> dict:
        """What the `ce` object of emulated CEs (a BR role) says besides their count."""
        return {}


class _MapRuleCes(_Ces):
    """MAP-E and MAP-T: the CEs of the Basic Mapping Rule (RFC 7597 §5)."""

    def count(self, config) -> int | None:
        return map_rule(config).ce_count

    def find(self, config, address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> Ce:
        rule = map_rule(config)
        if address.version == 4:  # a 6rd CE, by its IPv4 address (RFC 5969 §7.1.1)
            ce = rule.ce_of(address, 0)
            if ce is None:
                raise ValueError(f"is outside the CEs' common prefix ipv4aas.rule_ipv4_prefix = "
                                 f"{rule.ipv4_prefix} (RFC 5969 §4: IPv4MaskLen bits shared by every CE)")
            return ce.index, None, None  # the LAN's IPv6 addresses are its own
        ce = rule.ce_with_address(address)
        if ce is None:
            raise ValueError(f"is the MAP IPv6 address of no CE of the rule (RFC 7597 §6: rule prefix, "
                             f"EA bits, subnet 0, then 16 zero bits, the IPv4 address and the PSID; "
                             f"its first CE has {rule.ce(0).ipv6})")
        return ce.index, ce.ipv4, rule.port_ranges(ce.psid)

    def parameters(self, config) -> dict:
        a = config.ipv4aas
        return {"ipv6_prefix": a.rule_ipv6_prefix, "ipv4_prefix": a.rule_ipv4_prefix, "ea_bits": a.ea_bits,
                "psid_offset": a.psid_offset}

    def emulated(self, config) -> dict:
        # A rule that gives each CE an IPv4 prefix: the emulated CEs use every address of it (a
        # BR must put the prefix, not the address, into a CE's MAP address: RFC 7597 §6); a CE
        # alone is reached at its own address (the LAN host's).
        return {"prefix_hosts": True} if map_rule(config).host_bits > 0 else {}


class _BindingTableCes(_Ces):
    """lw4o6: the lwB4s of the binding table (RFC 7596)."""

    def count(self, config) -> int | None:
        return len(binding_table(config))

    def find(self, config, address: ipaddress.IPv6Address) -> Ce:
        for index, softwire in enumerate(binding_table(config).softwires):
            if softwire.b4_ipv6 == address:
                return index, softwire.ipv4, softwire.ports()
        raise ValueError(f"is no lwB4 of the binding table {config.ipv4aas.binding_table}")

    def parameters(self, config) -> str:
        return str(binding_table_path(config))


class _NumberedB4s(_Ces):
    """DS-Lite: B4 i has left.ipv6 + i (ipv4aas.ce_ipv6 for the B4 the DUT is), all with the
    private address left.ipv4 (RFC 6333)."""

    def count(self, config) -> int | None:
        return None  # as many as asked for

    def find(self, config, address: ipaddress.IPv6Address) -> Ce:
        return 0, None, None  # a B4's LAN addresses and ports are its own

    def parameters(self, config) -> dict:
        return {"ipv6": config.ipv4aas.ce_ipv6 if plays_br(config) else config.left.ipv6,
                "ipv4": config.left.ipv4}


_CES = {FROM_MAP_RULE: _MapRuleCes(), FROM_BINDING_TABLE: _BindingTableCes(), FROM_NUMBERED_B4S: _NumberedB4s()}


def the_ce(config) -> Ce:
    """The CE a DUT in a CE role is, named by its address on the wire (the technology's ce_key:
    ipv4aas.ce_ipv6, a 6rd CE's ipv4aas.ce_ipv4): its index in the rule or the binding table,
    its IPv4 address and its port ranges (None for a B4 or a 6rd CE: its LAN's addresses and
    ports are its own). ValueError when no CE of the rule or the table has that address."""
    technology = technology_of(config)
    address = ipaddress.ip_address(config.value(technology.ce_key))
    return _CES[technology.ce_source].find(config, address)


def available_ces(config) -> int | None:
    """The CEs the rule or the binding table has; None for DS-Lite's numbered B4s."""
    technology = technology_of(config)
    if technology is None or technology.ce_source is None:
        return None
    return _CES[technology.ce_source].count(config)


def ce_count(config) -> int:
    """The CEs the left port emulates in a BR role (RFC 8219 §10.1.2's n): ipv4aas.ces, or every
    CE of the rule or the binding table when 0 (one B4 for DS-Lite)."""
    return config.ipv4aas.ces or available_ces(config) or 1


def ce_request(config, side: str, fields: list[str], rx_fields: list[str]) -> dict:
    """The protocol's `ce` object of a stream whose CEs are on `side` ("src": they send): the
    emulated CEs in a BR role, the DUT's one CE in a CE role."""
    source = technology_of(config).ce_source
    ces = _CES[source]
    technology = technology_of(config)
    extent = {"count": 1, "first": the_ce(config)[0]} if plays_br(config) else \
        {"count": ce_count(config), **ces.emulated(config), **({"tag": True} if technology.ce_in_tag else {})}
    return {source.key: ces.parameters(config), **extent, "side": side, "mode": config.ipv4aas.ce_mode,
            "fields": fields, "rx_fields": rx_fields}


class _Ipv4aasTraffic(TrafficKind):
    """What the IPv4aaS kinds share: the DF of their IPv4 arrivals."""

    def df(self, config, direction, rx_frame_size):
        # A tunnel hands the inner packet on as it was sent (DF set); a translation into IPv4
        # sets DF by size (RFC 7915 §5.1).
        return translated_df(rx_frame_size) if technology_of(config).translates else True


def _tunnel(config, src: str, dst: str) -> dict:
    """A stream's `tunnel` (docs/protocol.md) of the technology's wire, between the addresses
    of the configuration keys `src` and `dst` (the first one set of a tuple)."""
    addresses = {name: next((config.value(key) for key in keys if config.value(key)), "")
                 for name, keys in (("src_ip", src), ("dst_ip", dst))}
    return {**addresses, **technology_of(config).wire.tunnel_keys}


class _EmulatedCes(_Ipv4aasTraffic):
    """The CE side (left) sends the frames of the CEs' wire, the Internet side (right) the
    customers' IP: the kind of the technologies whose wire encapsulates (`encapsulates`) or
    translates (frames/technology.py)."""
    encapsulates = True

    def applies(self, config) -> bool:
        return emulates_ces(config) and technology_of(config).wire.encapsulated == self.encapsulates

    def stacks(self, config, direction):
        technology = technology_of(config)
        wire, customer = technology.wire, technology.customer_stack
        return (wire, customer) if direction == "forward" else (customer, wire)

    def side_stack(self, config, side):
        technology = technology_of(config)
        return technology.wire if side == "left" else technology.customer_stack

    def address_use(self, config, direction):
        return (f"{direction} frames go between the emulated CEs (left) and the IPv4 Internet "
                f"(right) through the {role_of(config).name}")


def _customer_addresses(config, direction) -> tuple[str, str]:
    """The keys of a direction's addresses in the customers' IP, left to right or back."""
    left, right = (f"{side}.ipv{technology_of(config).customer}" for side in ("left", "right"))
    return (left, right) if direction == "forward" else (right, left)


class EncapsulationTraffic(_EmulatedCes):
    name = "encapsulation"
    summary = ("the customers' IP in tunnels from emulated CEs on the left, bare on the right: IPv4 "
               "in IPv6 (DS-Lite AFTR, lw4o6 lwAFTR, MAP-E BR), IPv6 in IPv4 (6rd BR)")

    def addresses(self, config, direction):
        return _customer_addresses(config, direction)

    def received(self, config, direction):
        # The CEs' own fields are the CE check's; a DS-Lite AFTR's NAT44 chooses the source of
        # what the B4s send and restores their destination (RFC 6333 §6.6).
        technology = technology_of(config)
        source, destination = _customer_addresses(config, direction)
        if direction == "forward":  # out of the tunnel: the DUT is its exit
            return Received(source, destination, ports=True, ttl_tos=True, tunnel_exits=1,
                            nat=technology.operator_nat44)
        return Received(source, destination, ports=True, ttl_tos=True, tunnel_src=technology.endpoint_key,
                        tunnel_carries_tos=technology.tunnel_carries_tos, nat=technology.operator_nat44)

    def stream_keys(self, config, direction):
        # What the tester writes per CE (emulated_ce_fields) comes out of the DUT unchanged, but
        # where the AFTR's NAT44 rewrites what the B4s send (RFC 6333 §6.6): frames towards them
        # are checked then, for the private address they share.
        technology = technology_of(config)
        written = technology.emulated_ce_fields
        kept = [] if technology.operator_nat44 else written
        if direction == "forward":
            outer = technology.wire.outer
            return {"tunnel": _tunnel(config, (f"left.ipv{outer}", technology.endpoint_key), (technology.endpoint_key,)),
                    "ce": ce_request(config, "src", ["tunnel"] + written, kept)}
        return {"ce": ce_request(config, "dst", kept, ["tunnel"] + written)}


class MapTTraffic(_EmulatedCes):
    name = "map-t"
    summary = "MAP-T CEs' translated IPv6 on the left, IPv4 on the right (MAP-T BR)"
    encapsulates = False

    def addresses(self, config, direction):
        # The IPv4 Internet's hosts, seen from the CEs: embedded in the DMR (right.virtual_ipv6).
        return ("left.ipv6", "right.virtual_ipv6") if direction == "forward" else ("right.ipv4", "left.ipv4")

    def received(self, config, direction):
        # Translated both ways (RFC 7599 §8.3, §8.4; RFC 7915): the server's address in the DMR
        # towards the CEs, the CEs' own fields the CE check's.
        if direction == "forward":
            return Received("left.ipv4", "right.ipv4", ports=True, ttl_tos=True)
        return Received("right.virtual_ipv6", "left.ipv6", ports=True, ttl_tos=True)

    def stream_keys(self, config, direction):
        if direction == "forward":
            return {"ce": ce_request(config, "src", ["ipv6", "port"], ["ipv4", "port"])}
        return {"ce": ce_request(config, "dst", ["ipv4", "port"], ["ipv6", "port"])}


class _EmulatedBr(_Ipv4aasTraffic):
    """The CE's LAN (left) sends the customers' IP, the AFTR or BR the right port plays frames
    of the CE's wire: the kind of the technologies whose wire encapsulates (`encapsulates`) or
    translates (frames/technology.py). A CE that translates its LAN's addresses (NAPT44:
    stateful.enabled) is reached back at what the right port learnt in RFC 9693's phase 1; one
    that does not, at its own address and ports."""
    encapsulates = True

    def applies(self, config) -> bool:
        return plays_br(config) and technology_of(config).wire.encapsulated == self.encapsulates

    def stacks(self, config, direction):
        technology = technology_of(config)
        wire, customer = technology.wire, technology.customer_stack
        return (customer, wire) if direction == "forward" else (wire, customer)

    def side_stack(self, config, side):
        technology = technology_of(config)
        return technology.customer_stack if side == "left" else technology.wire

    def address_use(self, config, direction):
        return (f"{direction} frames go between the CE's LAN (left) and the IPv4 Internet behind the "
                f"{technology_of(config).operator.name} the right port plays, through the "
                f"{role_of(config).name}")

    @staticmethod
    def own_fields(config) -> list[str]:
        """The CE's fields the left port writes (its address and ports: a CE without NAPT44);
        none for a B4 or a 6rd CE (their LANs' addresses are the LAN's own) or a CE that
        translates (stateful)."""
        return [] if config.stateful.enabled else technology_of(config).ce_fields


class EncapsulatingCeTraffic(_EmulatedBr):
    name = "encapsulating-ce"
    summary = ("the customers' IP on the left, in tunnels to and from the AFTR or BR the right port "
               "plays on the right: IPv4 in IPv6 (DS-Lite B4, lwB4, MAP-E CE), IPv6 in IPv4 (6rd CE)")

    def addresses(self, config, direction):
        return _customer_addresses(config, direction)

    def received(self, config, direction):
        # Into the tunnel to the BR the right port plays (the DUT is its entry point), and out
        # of it; the CE's own fields are the CE check's.
        technology = technology_of(config)
        source, destination = _customer_addresses(config, direction)
        if direction == "forward":
            return Received(source, destination, ports=True, ttl_tos=True, tunnel_src=technology.ce_key,
                            tunnel_dst=technology.endpoint_key, tunnel_carries_tos=technology.tunnel_carries_tos)
        return Received(source, destination, ports=True, ttl_tos=True, tunnel_exits=1)

    def stream_keys(self, config, direction):
        # What arrives at the right port must be in the CE's tunnel, from its address and port
        # set (a B4's NAT-free IPv4 is its LAN's, a 6rd CE's IPv6 too: only the tunnel names it).
        technology = technology_of(config)
        checked = technology.ce_fields
        own = self.own_fields(config)
        if direction == "forward":
            return {"ce": ce_request(config, "src", own, ["tunnel"] + checked)}
        keys = {"tunnel": _tunnel(config, (technology.endpoint_key,), (technology.ce_key,))}
        return {**keys, "ce": ce_request(config, "dst", own, own)} if own else keys


class MapTCeTraffic(_EmulatedBr):
    name = "map-t-ce"
    summary = "IPv4 on the left, the CE's translated IPv6 on the right (MAP-T CE)"
    encapsulates = False

    def addresses(self, config, direction):
        # The IPv4 Internet's host right.ipv4 is right.virtual_ipv6 in the DMR, seen from the CE.
        return ("left.ipv4", "right.ipv4") if direction == "forward" else ("right.virtual_ipv6", "ipv4aas.ce_ipv6")

    def received(self, config, direction):
        if direction == "forward":  # translated by the CE (RFC 7599 §8.1)
            return Received("ipv4aas.ce_ipv6", "right.virtual_ipv6", ports=True, ttl_tos=True)
        return Received("right.ipv4", "left.ipv4", ports=True, ttl_tos=True)

    def stream_keys(self, config, direction):
        own = self.own_fields(config)
        if direction == "forward":
            return {"ce": ce_request(config, "src", own, ["ipv6", "port"])}
        if not own:  # the learnt address and port are the CE's
            return {}
        return {"ce": ce_request(config, "dst", ["ipv6", "port"], own)}
