# SPDX-License-Identifier: BSD-3-Clause
"""The lab's reference DUTs for the BRs of IPv4-as-a-Service: `mape-br` (a MAP-E Border Relay,
RFC 7597), `lwaftr` (a lightweight 4over6 AFTR, RFC 7596) and `mapt-br` (a MAP-T Border Relay,
RFC 7599, which translates instead of encapsulating: xlatperf/lab/bpf/mapt.c). This kernel has no ip6tnl device
(shared/docs/lab-kernel.md): tc-BPF on the DUT's interfaces (xlatperf/lab/bpf/softwire.c)
decapsulates what the CEs send, after checking the tunnel's source against the rule or the
binding table, and encapsulates what goes to them, forwarding with the kernel's FIB and
neighbour table. The lwAFTR's binding table is a BPF hash map the lab fills once the programs
are attached (fill_maps, lab/bpf_map.py), so that it holds the parameter's 65,536 softwires.
The tester's left port emulates the CEs (docs/ipv4aas.md), the right port is the IPv4 Internet:

    CEs (left tester)  --IPv4 in IPv6-->  xlp-dl | BR (tc-BPF) | xlp-dr  --IPv4-->  right tester
    2001:2::2 (next hop of the CEs' prefix)  2001:2::1, BR 2001:db8:ffff::1     198.19.0.1   198.19.0.2

The veths carry the IPv4 MTU plus the tunnel's 40 bytes (RFC 7597 §8.3: the MTU inside the
domain is the operator's to raise). `misdeliver=N` makes a faulty BR: about one in N frames
towards the CEs goes into the tunnel of the next CE, which the tester must report as wrong_ce.
"""

from __future__ import annotations

import ipaddress
import os
import random
import struct
from typing import Any

from ...frames import technology as ipv4aas
from ...frames.addressing import embed_ipv4
from ..bpf_map import fill_program_maps
from ..names import DUT_NS, LAB_DIR, V4_RIGHT, V6_LEFT, V6_RIGHT, host
from ..shell import LabError, ip
from .base import LabKind, bpf_faults, fault_defines, fault_params, integer
from .common import attach_bpf, build_bpf, ifindex, setup_router

BR_ADDRESS = "2001:db8:ffff::1"   # the BR's / lwAFTR's tunnel endpoint (RFC 7597 App. A's BR)
CE_SIDE, NET_SIDE = "xlp-dl", "xlp-dr"   # the CEs' side, the Internet's
# Where the BR's programs run: (interface, tc hook, the object's section).
PROGRAMS = [(CE_SIDE, "ingress", "tc/from_ce"), (NET_SIDE, "ingress", "tc/to_ce")]
BINDING_TABLE = os.path.join(LAB_DIR, "binding-table.csv")


def prefix_parser(version: int):
    """A parser of IPv`version` prefixes (ValueError for anything else)."""
    def parse(text: str) -> str:
        network = ipaddress.ip_network(text, strict=True)
        if network.version != version:
            raise ValueError
        return str(network)
    return parse


SOFTWIRE_PARAMS: dict[str, dict[str, Any]] = {
    "mtu": {"default": "1500", "allowed": "an integer 1280..9176",
            "help": "IPv4 MTU; the veths carry 40 bytes more for the tunnel header",
            "parse": integer(1280, 9176)},
    "misdeliver": {"default": "0", "allowed": "0 (a correct BR) or an integer 2..1000000",
                   "help": "a faulty BR: about one in N frames to the CEs goes to the next CE",
                   "parse": lambda text: _misdeliver(int(text, 10))},
}


def _slash64(prefix: str) -> str:
    if ipaddress.IPv6Network(prefix).prefixlen != 64:
        raise ValueError
    return prefix


DMR_PARAM = {"default": "2001:db8:ffff::/64", "allowed": "an IPv6 /64 prefix",
             "help": "the Default Mapping Rule's prefix (RFC 7599 App. A's; the IPv4 Internet's "
                     "addresses embedded after its u octet)",
             "parse": lambda text: _slash64(prefix_parser(6)(text))}

# A MAP rule (RFC 7597 §5), for the reference MAP BRs and CEs.
RULE_PARAMS: dict[str, dict[str, Any]] = {
    "rule_ipv6": {"default": "2001:db8::/40", "allowed": "an IPv6 prefix",
                  "help": "the Basic Mapping Rule's IPv6 prefix (RFC 7597 App. A Example 1's)",
                  "parse": prefix_parser(6)},
    "rule_ipv4": {"default": "192.0.2.0/24", "allowed": "an IPv4 prefix",
                  "help": "the rule's IPv4 prefix", "parse": prefix_parser(4)},
    "ea_bits": {"default": "16", "allowed": "an integer 0..48, with the IPv6 prefix at most 64 bits",
                "help": "EA-bits length (IPv4 suffix and PSID bits)", "parse": integer(0, 48)},
    "psid_offset": {"default": "6", "allowed": "an integer 0..15", "help": "PSID offset a",
                    "parse": integer(0, 15)},
}


def check_rule(kind: str, p: dict[str, Any]) -> None:
    n, r = (ipaddress.ip_network(p[k]).prefixlen for k in ("rule_ipv6", "rule_ipv4"))
    k = max(0, p["ea_bits"] - (32 - r))
    if n + p["ea_bits"] > 64 or p["psid_offset"] + k > 16:
        raise LabError(f"lab kind {kind!r}: rule_ipv6 /{n} + ea_bits {p['ea_bits']} must be "
                       f"at most 64 bits and psid_offset {p['psid_offset']} + PSID length {k} at "
                       "most 16 (the reference DUTs compute end-user prefixes within 64 bits)")


def rule_keys(p: dict[str, Any]) -> dict[str, Any]:
    """The [ipv4aas] keys of the rule."""
    return {"rule_ipv6_prefix": p["rule_ipv6"], "rule_ipv4_prefix": p["rule_ipv4"],
            "ea_bits": p["ea_bits"], "psid_offset": p["psid_offset"]}


def _misdeliver(n: int) -> int:
    if n != 0 and not 2 <= n <= 1_000_000:
        raise ValueError
    return n


LWB4_PREFIX = "2001:db8:b4::/64"   # the lwB4s' addresses, in shuffled order
LWB4_IPV4_BASE = "100.64.0.1"      # RFC 6598 shared address space, each shared by 2^psid_length lwB4s


def binding_table_params(softwires: int) -> dict[str, dict[str, Any]]:
    """The parameters of the lab's generated binding table (`softwires` lwB4s by default)."""
    return {"softwires": {"default": str(softwires), "allowed": "an integer 1..65536",
                          "help": "lwB4s in the binding table (the tester reads the same file)",
                          "parse": integer(1, 65536)},
            "psid_length": {"default": "4", "allowed": "an integer 0..10",
                            "help": "lwB4s per IPv4 address: 2^psid_length", "parse": integer(0, 10)}}


def binding_table(count: int, k: int) -> list[tuple[str, str, int]]:
    """The lab's binding table: lwB4 i shares IPv4 address LWB4_IPV4_BASE + i / 2^k with PSID
    i mod 2^k; its IPv6 address is drawn from LWB4_PREFIX (shuffled, so that nothing
    but the table links them)."""
    base4 = int(ipaddress.IPv4Address(LWB4_IPV4_BASE))
    base6 = int(ipaddress.IPv6Network(LWB4_PREFIX).network_address)
    hosts = random.Random(7596).sample(range(1, 2**32), count)
    return [(str(ipaddress.IPv6Address(base6 + hosts[i])), str(ipaddress.IPv4Address(base4 + (i >> k))),
             i & ((1 << k) - 1)) for i in range(count)]


def write_binding_table(table: list[tuple[str, str, int]], k: int, offset: int = 6) -> None:
    """The table as BINDING_TABLE, the file the tester reads (PSID length k, offset `offset`)."""
    with open(BINDING_TABLE, "w") as f:
        f.write("b4_ipv6,ipv4,psid,psid_length,psid_offset\n")
        f.writelines(f"{b4},{ipv4},{psid},{k},{offset}\n" for b4, ipv4, psid in table)


def halves(address: str) -> tuple[int, int]:
    value = int(ipaddress.IPv6Address(address))
    return value >> 64, value & (2**64 - 1)


def binding_table_entries(table: list[tuple[str, str, int]]) -> tuple[list[bytes], list[bytes]]:
    """The table as the lwAFTR's map holds it (lab/bpf/ce.h, binding_table): per softwire the
    key IPv4 address << 16 | PSID (a 64-bit integer) and the lwB4's IPv6 address as two 64-bit
    halves, first half first; integers in this host's byte order, which the program reads."""
    keys = [struct.pack("=Q", int(ipaddress.IPv4Address(ipv4)) << 16 | psid) for _, ipv4, psid in table]
    values = [struct.pack("=QQ", *halves(b4)) for b4, _, _ in table]
    return keys, values


class SoftwireBr(LabKind):
    """What the reference BRs share: the wiring, building and attaching the BPF program, the
    tester sides."""
    technology: ipv4aas.Technology
    role: ipv4aas.Role
    program = "softwire.c"
    program_maps = False  # whether the program has maps the lab fills (fill_maps)
    tools = {"clang": "clang", "tc": "iproute2"}
    # The CEs' side (the DUT's address and prefix, the tester's: the next hop of the CEs'
    # prefix) and the Internet side's addresses; native IPv6 is routed too: RFC 8219 §5.3's
    # background traffic beside the CEs'.
    ce_side = V6_LEFT
    net_side = (V4_RIGHT, V6_RIGHT)

    @property
    def endpoint(self) -> str | None:
        """The tunnels' end; none where the CEs' IPv4 is translated (MAP-T)."""
        return BR_ADDRESS if self.technology.wire.encapsulated else None

    def veth_mtu(self, p: dict[str, Any]) -> int:
        return p["mtu"] + self.technology.wire_growth

    def ce_prefix(self, p: dict[str, Any]) -> str:
        """The IPv6 prefix of the CEs' addresses, routed to the tester's left port."""
        raise NotImplementedError

    def defines(self, p: dict[str, Any]) -> list[str]:
        """The program's -D parameters besides the BR's address and the interfaces."""
        raise NotImplementedError

    def fill_maps(self, p: dict[str, Any]) -> None:
        """Fills the maps of the attached programs (with program_maps)."""

    def endpoint_defines(self) -> list[str]:
        """The program's -D parameters of the BR's own address."""
        hi, lo = halves(BR_ADDRESS)
        return [f"-DBR_ADDR_HI={hi:#x}ull", f"-DBR_ADDR_LO={lo:#x}ull"]

    def build(self, p: dict[str, Any]) -> None:
        setup_router(left=[self.ce_side], right=list(self.net_side))
        if self.endpoint:
            ip(DUT_NS, "addr", "add", str(ipaddress.ip_interface(self.endpoint)), "dev", "lo")
        ip(DUT_NS, "route", "add", self.ce_prefix(p), "via", self.ce_side[1], "dev", CE_SIDE)
        obj = build_bpf(self.program, self.name, [
            *self.endpoint_defines(), f"-DCE_IFINDEX={ifindex(CE_SIDE)}", f"-DNET_IFINDEX={ifindex(NET_SIDE)}",
            f"-DMISDELIVER={p['misdeliver']}", *fault_defines(p), *self.defines(p)], maps=self.program_maps)
        attach_bpf(obj, PROGRAMS)
        self.fill_maps(p)

    def ipv4aas_keys(self, p: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def tester_sections(self, p: dict[str, Any]) -> dict[str, dict[str, Any]]:
        return {
            # The CEs' side: IPv4 inside the tunnels; the tester answers ND for the next hop
            # 2001:2::2 the DUT routes the CEs' prefix to, and resolves the DUT by ND.
            "left": {"ip_version": 4, "ipv6": V6_LEFT[1], "dut_ipv6": host(V6_LEFT[0]),
                     "dut_mac": ""},
            "right": {"ip_version": 4, "ipv4": V4_RIGHT[1], "ipv6": V6_RIGHT[1], "dut_ipv4": host(V4_RIGHT[0]),
                      "dut_mac": ""},
            "ipv4aas": {**self.ipv4aas_section(),
                        **({"endpoint_ipv6": self.endpoint} if self.endpoint else {}),
                        **self.ipv4aas_keys(p)},
        }


# A MAP BR's own fault (MAP-E's and MAP-T's).
IID_FAULT = {"iid": "a CE's address with the whole IPv4 destination where the CE owns a prefix (RFC 7597 §6 pads it)"}


class MapEBr(SoftwireBr):
    name = "mape-br"
    description = ("reference MAP-E Border Relay (RFC 7597) in tc-BPF: CEs of a MAP rule on the "
                   "left in IPv4-in-IPv6 tunnels, IPv4 on the right")
    technology, role = ipv4aas.MAP_E, ipv4aas.BR
    kind_params = {**RULE_PARAMS, **SOFTWIRE_PARAMS,
                   **fault_params(role.name, bpf_faults(technology) | IID_FAULT)}

    def resolve(self, p: dict[str, Any]) -> None:
        check_rule(self.name, p)

    def ce_prefix(self, p):
        return p["rule_ipv6"]

    def defines(self, p):
        rule6, rule4 = ipaddress.ip_network(p["rule_ipv6"]), ipaddress.ip_network(p["rule_ipv4"])
        k = max(0, p["ea_bits"] - (32 - rule4.prefixlen))
        return ["-DMODE_MAP", f"-DRULE6_HI={int(rule6.network_address) >> 64:#x}ull",
                f"-DRULE6_LEN={rule6.prefixlen}", f"-DRULE4={int(rule4.network_address):#x}u",
                f"-DRULE4_LEN={rule4.prefixlen}", f"-DEA_BITS={p['ea_bits']}",
                f"-DPSID_OFFSET={p['psid_offset']}", f"-DPSID_LEN={k}"]

    def ipv4aas_keys(self, p):
        return rule_keys(p)


class MapTBr(MapEBr):
    name = "mapt-br"
    description = ("reference MAP-T Border Relay (RFC 7599) in tc-BPF: CEs of a MAP rule on the "
                   "left translated to IPv4 on the right (RFC 7915), the IPv4 Internet in the DMR")
    technology = ipv4aas.MAP_T
    program = "mapt.c"
    kind_params = {
        **MapEBr.kind_params,
        "dmr": DMR_PARAM,
        "mtu": {**SOFTWIRE_PARAMS["mtu"], "help": "IPv4 MTU; the veths carry 20 bytes more for "
                "the translated IPv6 header"},
        **fault_params(MapEBr.role.name, bpf_faults(technology) | IID_FAULT),  # a translator's too (df)
    }

    def defines(self, p):
        return super().defines(p) + [f"-DDMR_HI={int(ipaddress.IPv6Network(p['dmr']).network_address) >> 64:#x}ull"]

    def tester_sections(self, p):
        sections = super().tester_sections(p)
        # The CEs send IPv6; the IPv4 host right.ipv4 is seen from them at its DMR address.
        sections["left"]["ip_version"] = 6
        sections["right"]["virtual_ipv6"] = str(embed_ipv4(ipaddress.IPv6Network(p["dmr"]),
                                                           ipaddress.IPv4Address(V4_RIGHT[1])))
        sections["ipv4aas"]["dmr"] = p["dmr"]
        return sections




class LwAftr(SoftwireBr):
    name = "lwaftr"
    description = ("reference lw4o6 lwAFTR (RFC 7596) in tc-BPF with a generated binding table "
                   "of lwB4s sharing IPv4 addresses by port sets")
    technology, role = ipv4aas.LW4O6, ipv4aas.LWAFTR
    kind_params = {**binding_table_params(1024), **SOFTWIRE_PARAMS, **fault_params(role.name, bpf_faults(technology))}
    program_maps = True

    def ce_prefix(self, p):
        return LWB4_PREFIX

    def defines(self, p):
        return ["-DMODE_LW", f"-DSOFTWIRE_COUNT={p['softwires']}", "-DPSID_OFFSET=6",
                f"-DPSID_LEN={p['psid_length']}"]

    def fill_maps(self, p):
        # The table is a map filled here, after loading: compiled into the program, the
        # verifier refused a search over more than about 4,096 softwires.
        table = binding_table(p["softwires"], p["psid_length"])
        write_binding_table(table, p["psid_length"])
        keys, values = binding_table_entries(table)
        fill_program_maps(DUT_NS, [(dev, hook) for dev, hook, _ in PROGRAMS], "binding_table", keys, values)

    def ipv4aas_keys(self, p):
        return {"binding_table": BINDING_TABLE}
