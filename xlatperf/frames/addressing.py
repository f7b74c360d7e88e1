# SPDX-License-Identifier: BSD-3-Clause
"""Address mappings of the IPv4-as-a-Service technologies, as pure functions of their rules:

  * RFC 6052 IPv4-embedded IPv6 addresses (464XLAT's PLAT prefix, MAP-T's Default Mapping Rule);
  * the MAP algorithm of RFC 7597 §5-6 (MAP-E, and verbatim MAP-T, RFC 7599 §5-6; and 6rd, RFC
    5969 §4, as a rule of 32 - IPv4MaskLen EA bits and no PSID): a Mapping
    Rule's CEs, each with its IPv4 address (or prefix), its PSID and port set, and its MAP IPv6
    address; the Forwarding Mapping Rule's way back from an IPv4 address and port to the CE.

A CE is named by its index, its Embedded-Address bits (0 .. 2^o - 1): the tester picks one per
frame and writes every field of that CE together; nothing is stored per CE."""

import ipaddress
import re
from dataclasses import dataclass
from functools import cached_property

from .trial import RFC4814_PORTS

# RFC 6052 §2.2: the prefix lengths an IPv4-embedded IPv6 address may have.
RFC6052_LENGTHS = (32, 40, 48, 56, 64, 96)
# RFC 6052 §2.2: bits 64-71 of an IPv4-embedded IPv6 address (the "u" octet) MUST be zero; a
# /96 prefix holds them itself.
U_OCTET = ((1 << 8) - 1) << (128 - 72)


def u_octet(prefix: ipaddress.IPv6Network) -> int:
    """The u octet (bits 64-71) a prefix sets: non-zero only in a /96 that breaks RFC 6052 §2.2."""
    return (int(prefix.network_address) & U_OCTET) >> (128 - 72)


def embed_ipv4(prefix: ipaddress.IPv6Network, ipv4: ipaddress.IPv4Address) -> ipaddress.IPv6Address:
    """RFC 6052 §2.2: `ipv4` embedded after `prefix`, skipping bits 64-71 (the "u" octet, which
    MUST be zero), the suffix zero."""
    if prefix.prefixlen not in RFC6052_LENGTHS:
        raise ValueError(f"{prefix}: an RFC 6052 prefix is /32, /40, /48, /56, /64 or /96")
    bits, v4 = prefix.prefixlen, int(ipv4)
    if bits == 96:
        return ipaddress.IPv6Address(int(prefix.network_address) | v4)
    # The 32 IPv4 bits start at bit `bits`; those that would fall on bits 64-71 move 8 further.
    before_u = max(0, 64 - bits)                      # IPv4 bits written before the u octet
    high = v4 >> (32 - before_u) if before_u else 0
    low = v4 & ((1 << (32 - before_u)) - 1)
    value = high << 64 | low << (128 - 72 - (32 - before_u))
    return ipaddress.IPv6Address(int(prefix.network_address) | value)


def extract_ipv4(prefix: ipaddress.IPv6Network, address: ipaddress.IPv6Address) -> ipaddress.IPv4Address:
    """RFC 6052 §2.3: the IPv4 address embed_ipv4 put into `address`."""
    bits, value = prefix.prefixlen, int(address)
    if bits == 96:
        return ipaddress.IPv4Address(value & 0xFFFFFFFF)
    before_u = max(0, 64 - bits)
    high = (value >> 64) & ((1 << before_u) - 1)
    low = (value >> (128 - 72 - (32 - before_u))) & ((1 << (32 - before_u)) - 1)
    return ipaddress.IPv4Address(high << (32 - before_u) | low)


# The ports the tester uses of a CE's port set without sharing (PSID length 0: the CE owns
# every port, RFC 7597 §5.1): RFC 4814 §4.5's client ports, 1024..65535. A CE's port is where
# its hosts send from and where replies come back to; port 0 and the system ports 1-1023 would
# measure what a DUT does with them. The engine's PortSet uses the same (engine/src/emulation/maprule.hpp).
UNSHARED_PORTS = RFC4814_PORTS["src"]


@dataclass(frozen=True)
class Ce:
    """One MAP CE: its IPv4 address (the first of its prefix, o + r < 32), its PSID (k bits,
    0 without sharing) and its MAP IPv6 address (RFC 7597 §6)."""
    index: int
    ipv4: ipaddress.IPv4Address
    psid: int
    ipv6: ipaddress.IPv6Address


@dataclass(frozen=True)
class MapRule:
    """A MAP Basic/Forwarding Mapping Rule (RFC 7597 §5): Rule IPv6 prefix (n bits), Rule IPv4
    prefix (r bits), EA-bits length o, PSID offset a. `psid_length` only for a rule without
    EA bits that shares an address (RFC 7597 Appendix A, Example 5: the PSID comes from DHCPv6);
    otherwise it follows from the rule: k = o - (32 - r)."""
    ipv6_prefix: ipaddress.IPv6Network
    ipv4_prefix: ipaddress.IPv4Network
    ea_bits: int
    psid_offset: int = 6
    psid_length: int | None = None

    def __post_init__(self):
        n, r, o = self.ipv6_prefix.prefixlen, self.ipv4_prefix.prefixlen, self.ea_bits
        if not 0 <= o <= 48:
            raise ValueError(f"EA-bits length {o}: must be in 0..48 (RFC 7597 §5.2)")
        if n + o > 80:   # beyond 80 the end-user prefix would overwrite the IID's IPv4 address
            raise ValueError(f"Rule IPv6 prefix /{n} + {o} EA bits: must be at most 80 bits")
        if self.k > 16 or self.psid_offset + self.k > 16:
            raise ValueError(f"PSID offset {self.psid_offset} + PSID length {self.k}: must be at "
                             "most 16 bits (RFC 7597 §5.1)")
        if self.psid_length is not None and o > 0 and self.psid_length != o - (32 - r):
            raise ValueError("psid_length is given by the rule when it has EA bits")

    # -- the rule's derived lengths (RFC 7597 §5.2) --------------------------------------------

    @cached_property
    def suffix_bits(self) -> int:
        """p: the IPv4 suffix bits in the EA bits (all of them for o + r <= 32)."""
        return min(self.ea_bits, 32 - self.ipv4_prefix.prefixlen)

    @cached_property
    def k(self) -> int:
        """The PSID length: the EA bits beyond the IPv4 address (o + r > 32), else as given."""
        if self.ea_bits:
            return max(0, self.ea_bits - (32 - self.ipv4_prefix.prefixlen))
        return self.psid_length or 0

    @cached_property
    def m(self) -> int:
        return 16 - self.psid_offset - self.k if self.k else 0

    @cached_property
    def host_bits(self) -> int:
        """The bits of a CE's IPv4 prefix below it (r + p < 32 without sharing: each CE owns
        2^host_bits addresses, RFC 7597 §5.2); 0 for CEs of one address, shared or not."""
        return 32 - self.ipv4_prefix.prefixlen - self.suffix_bits if not self.k else 0

    @property
    def end_user_prefix_length(self) -> int:
        return self.ipv6_prefix.prefixlen + self.ea_bits

    @property
    def ce_count(self) -> int:
        """How many CEs the rule maps: one per EA-bits value."""
        return 1 << self.ea_bits

    # -- a CE from its index, and back --------------------------------------------------------

    def ce(self, index: int, psid: int = 0) -> Ce:
        """The CE whose EA bits are `index` (RFC 7597 §5.2, §6; `psid` only for a rule without
        EA bits that shares, Appendix A Example 5)."""
        if not 0 <= index < self.ce_count:
            raise ValueError(f"CE index {index}: the rule has {self.ce_count} CEs")
        r = self.ipv4_prefix.prefixlen
        if self.ea_bits:
            psid = index & ((1 << self.k) - 1)
        suffix = index >> self.k
        ipv4 = int(self.ipv4_prefix.network_address) | (suffix << (32 - r - self.suffix_bits))
        n, o = self.ipv6_prefix.prefixlen, self.ea_bits
        prefix = int(self.ipv6_prefix.network_address) | (index << (128 - n - o) if o else 0)
        # Interface identifier (RFC 7597 §6): 16 zero bits, the IPv4 address (a prefix
        # right-padded with zeros), the PSID (left-padded to 16 bits); an end-user prefix longer
        # than 64 bits overwrites its leading bits.
        iid = ipv4 << 16 | psid
        keep = 128 - max(64, n + o)
        ipv6 = prefix | (iid & ((1 << keep) - 1))
        return Ce(index, ipaddress.IPv4Address(ipv4), psid, ipaddress.IPv6Address(ipv6))

    def ce_of(self, ipv4: ipaddress.IPv4Address, port: int) -> Ce | None:
        """The CE that owns `ipv4` and `port` (the Forwarding Mapping Rule, §5.3), or None when
        the address is outside the rule or the port in no CE's set (well-known ports)."""
        if ipv4 not in self.ipv4_prefix:
            return None
        r = self.ipv4_prefix.prefixlen
        suffix = (int(ipv4) >> (32 - r - self.suffix_bits)) & ((1 << self.suffix_bits) - 1)
        if self.k and port >> (16 - self.psid_offset) == 0 and self.psid_offset:
            return None                       # A = 0: ports outside every set (§5.1)
        psid = self.psid_of_port(port)
        return self.ce((suffix << self.k | psid) if self.ea_bits else 0,
                       psid if not self.ea_bits else 0)

    def ce_with_address(self, ipv6: ipaddress.IPv6Address) -> Ce | None:
        """The CE whose MAP IPv6 address is `ipv6` (its EA bits after the rule prefix, RFC 7597
        §6), or None when no CE of the rule has that address."""
        if ipv6 not in self.ipv6_prefix:
            return None
        n, o = self.ipv6_prefix.prefixlen, self.ea_bits
        ce = self.ce((int(ipv6) >> (128 - n - o)) & ((1 << o) - 1) if o else 0)
        return ce if ce.ipv6 == ipv6 else None

    # -- port sets (RFC 7597 §5.1, Appendix B) -------------------------------------------------

    def psid_of_port(self, port: int) -> int:
        return (port >> self.m) & ((1 << self.k) - 1) if self.k else 0

    def port_ranges(self, psid: int) -> list[tuple[int, int]]:
        """The CE's ports the tester uses, as (first, last) ranges: port = A | PSID | j with A
        in 1..2^a - 1 (a > 0; "A MUST be larger than 0") and j in 0..2^m - 1. Without sharing
        the CE owns every port, and the tester uses UNSHARED_PORTS."""
        if not self.k:
            return [UNSHARED_PORTS]
        a, m = self.psid_offset, self.m
        blocks = range(1, 1 << a) if a else range(1)
        return [((block << (16 - a)) | (psid << m), (block << (16 - a)) | (psid << m) | ((1 << m) - 1))
                for block in blocks]


@dataclass(frozen=True)
class Softwire:
    """One lw4o6 binding table entry (RFC 7596 §6.1): the lwB4's IPv6 address, its public IPv4
    address and its restricted port set (a PSID of `psid_length` bits after `psid_offset`)."""
    b4_ipv6: ipaddress.IPv6Address
    ipv4: ipaddress.IPv4Address
    psid: int
    psid_length: int
    psid_offset: int

    def ports(self) -> list[tuple[int, int]]:
        """The port set as (first, last) ranges: the MAP algorithm (RFC 7596 §5.1)."""
        rule = MapRule(ipaddress.IPv6Network("::/0"), ipaddress.IPv4Network(f"{self.ipv4}/32"), 0,
                       self.psid_offset, self.psid_length)
        return rule.port_ranges(self.psid)


BINDING_COLUMNS = ("b4_ipv6", "ipv4", "psid", "psid_length", "psid_offset")
# Spaces and tabs around a line or a cell are no part of it, nor a CR (CR LF line ends).
BLANKS = " \t\r"
_DIGITS = re.compile(r"[0-9]+")


class BindingTable:
    """An lwAFTR's binding table (RFC 7596 §6.1), read from a CSV file with the header line
    `b4_ipv6,ipv4,psid,psid_length,psid_offset` (psid_offset may be empty: 0, RFC 7596 §5.1's
    SHOULD, one contiguous port set per lwB4). A file has one sharing ratio (PSID length and
    offset): the tester emulates lwB4s of one (and RFC 7597 §5.1 requires one per shared
    address); a (IPv4, PSID) pair and an lwB4 address appear once. The engine reads the file
    by the same rules (engine/src/emulation/ce.cpp, read_softwires; engine/tests/binding_tables.txt holds
    files both must accept or refuse)."""

    def __init__(self, softwires: list[Softwire]):
        self.softwires = softwires
        self._by_port_set: dict[tuple[int, int], Softwire] = {}
        self._layout: dict[int, tuple[int, int]] = {}   # IPv4 -> (psid_length, psid_offset)
        for softwire in softwires:
            self._layout[int(softwire.ipv4)] = (softwire.psid_length, softwire.psid_offset)
            self._by_port_set[(int(softwire.ipv4), softwire.psid)] = softwire

    @classmethod
    def read(cls, path) -> "BindingTable":
        """The table in `path`; ValueError naming the file, line, column, value and what is
        allowed."""
        softwires, ratio, seen_b4, seen_sets = [], None, {}, {}
        # Bytes as the engine sees them: lines end at LF only, and no byte is a decoding error.
        with open(path, encoding="latin-1", newline="\n") as handle:
            lines = handle.read().split("\n")
        if tuple(c.strip(BLANKS) for c in lines[0].split(",")) != BINDING_COLUMNS:
            raise ValueError(f"{path}:1: the header line must be {','.join(BINDING_COLUMNS)}")
        for number, line in enumerate(lines[1:], 2):
            line = line.strip(BLANKS)
            if not line or line.startswith("#"):
                continue
            where = f"{path}:{number}"
            cells = [c.strip(BLANKS) for c in line.split(",")]
            if len(cells) != len(BINDING_COLUMNS):
                raise ValueError(f"{where}: {len(cells)} columns; must be {len(BINDING_COLUMNS)} "
                                 f"({','.join(BINDING_COLUMNS)})")
            b4, ipv4, psid, length, offset = cells
            b4_ipv6 = _address(where, "b4_ipv6", b4, ipaddress.IPv6Address)
            address = _address(where, "ipv4", ipv4, ipaddress.IPv4Address)
            psid_length = _integer(where, "psid_length", length, 0, 16)
            psid_offset = _integer(where, "psid_offset", offset or "0", 0, 16)
            if psid_length + psid_offset > 16:
                raise ValueError(f"{where}: psid_offset + psid_length = "
                                 f"{psid_offset + psid_length}: must be at most 16")
            softwire = Softwire(b4_ipv6, address, _integer(where, "psid", psid, 0, (1 << psid_length) - 1),
                                psid_length, psid_offset)
            ratio = ratio or ((psid_length, psid_offset), number)
            if ratio[0] != (psid_length, psid_offset):
                raise ValueError(f"{where}: psid_length {psid_length}, psid_offset {psid_offset}; line "
                                 f"{ratio[1]} has {ratio[0][0]}, {ratio[0][1]}: a table has one sharing "
                                 "ratio (the tester emulates lwB4s of one)")
            for key, table, what in ((softwire.b4_ipv6, seen_b4, "lwB4 address"),
                                     ((softwire.ipv4, softwire.psid), seen_sets, "port set")):
                if key in table:
                    raise ValueError(f"{where}: the {what} of line {table[key]} again")
                table[key] = number
            softwires.append(softwire)
        if not softwires:
            raise ValueError(f"{path}: no softwire (a line after the header)")
        return cls(softwires)

    def __len__(self) -> int:
        return len(self.softwires)

    def lookup(self, ipv4: ipaddress.IPv4Address, port: int) -> Softwire | None:
        """The softwire owning (ipv4, port): what the lwAFTR encapsulates a packet from the
        IPv4 side towards (RFC 7596 §6.2), or None (the packet MUST be discarded)."""
        layout = self._layout.get(int(ipv4))
        if layout is None:
            return None
        length, offset = layout
        if length and offset and port >> (16 - offset) == 0:
            return None                     # A = 0: in no port set
        psid = (port >> (16 - offset - length)) & ((1 << length) - 1) if length else 0
        return self._by_port_set.get((int(ipv4), psid))


def _address(where: str, column: str, text: str, kind):
    try:
        if "%" not in text:  # an IPv6 zone (fe80::1%eth0) names no global address
            return kind(text)
    except ValueError:
        pass
    raise ValueError(f"{where}: {column} = {text!r}: must be an "
                     f"IPv{4 if kind is ipaddress.IPv4Address else 6} address")


def _integer(where: str, column: str, text: str, low: int, high: int) -> int:
    """A cell of ASCII digits (int() would take a sign, '_' and other scripts' digits too)."""
    value = int(text) if _DIGITS.fullmatch(text) else None
    if value is None or not low <= value <= high:
        raise ValueError(f"{where}: {column} = {text!r}: must be an integer in {low}..{high}")
    return value
