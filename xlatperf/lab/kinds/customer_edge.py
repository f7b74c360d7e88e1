# SPDX-License-Identifier: BSD-3-Clause
"""The lab's reference CEs of IPv4-as-a-Service, each a CE alone with the tester's right port
playing the AFTR or BR (docs/ipv4aas.md): `b4` (a DS-Lite B4, RFC 6333), `lwb4` (an lwB4, RFC
7596) and `mape-ce` (a MAP-E CE, RFC 7597), which encapsulate (xlatperf/lab/bpf/customer_edge.c),
and `mapt-ce` (a MAP-T CE, RFC 7599), which translates (xlatperf/lab/bpf/mapt_ce.c). This kernel
has neither ip6tnl devices nor Jool (shared/docs/lab-kernel.md): tc-BPF on the DUT's interfaces
does the CE's work.

None of them does NAPT44: the LAN (the left tester port) sends from the CE's own IPv4 address and
ports of its set, which the CE checks (a B4 keeps its LAN's private addresses: the AFTR
translates them). A CE with NAPT44 is tested with stateful.enabled (docs/ipv4aas.md).

    LAN (left tester)  --IPv4-->  xlp-dl | CE (tc-BPF) | xlp-dr  --IPv4 in IPv6-->  right tester
    the CE's IPv4          198.18.0.1               2001:2:0:8000::1           2001:2:0:8000::2,
    (a B4's: 198.18.0.2)                                                        the BR 2001:db8:ffff::1
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any

from ...frames import technology as ipv4aas
from ...frames.addressing import MapRule, embed_ipv4
from ..names import DUT_NS, DUT_PORTS, MACS, TESTER_PORTS, V4_LEFT, V4_RIGHT, V6_RIGHT, host
from ..shell import LabError, ip, sysctl
from .base import LabKind, bpf_faults, fault_defines, fault_params, integer, yes_no
from .common import attach_bpf, build_bpf, ifindex, load_nft, setup_router
from .nat import CONNTRACK_UDP_TIMEOUTS, stateful_sections
from .softwire import (BINDING_TABLE, BR_ADDRESS, DMR_PARAM, RULE_PARAMS, SOFTWIRE_PARAMS, binding_table,
                       binding_table_params, check_rule, halves, rule_keys, write_binding_table)

B4_ADDRESS = "2001:db8:b4::1"
SOFTWIRE_IPV4 = ("192.0.0.1", "192.0.0.2")   # RFC 6333 §5.7: the AFTR's and the B4's ends
CE_PARAMS = {
    "mtu": {**SOFTWIRE_PARAMS["mtu"], "help": "IPv4 MTU; the veths carry the tunnel's 40 bytes more"},
    "misdeliver": {**SOFTWIRE_PARAMS["misdeliver"],
                   "help": "a faulty CE: about one in N frames to the AFTR or BR leaves from another CE's "
                           "address"},
}


@dataclass(frozen=True)
class CePlace:
    """Where a reference CE runs: its namespace, its LAN and WAN interfaces, its WAN address
    (with prefix) and next hop, and the AFTR's or BR's address its tunnel ends at."""
    ns: str = DUT_NS
    lan: str = DUT_PORTS[0]
    wan: str = DUT_PORTS[1]
    wan_address: tuple[str, str] = V6_RIGHT
    next_hop: str = V6_RIGHT[1]
    br: str = BR_ADDRESS


class CustomerEdge(LabKind):
    """What the reference CEs share: the wiring, building and attaching the BPF program, the
    tester sides."""
    technology: ipv4aas.Technology
    role: ipv4aas.Role
    program = "customer_edge.c"
    tools = {"clang": "clang", "tc": "iproute2"}

    def veth_mtu(self, p: dict[str, Any]) -> int:
        return p["mtu"] + self.technology.wire_growth

    def the_ce(self, p: dict[str, Any]) -> tuple[str, str | None, int, int, int]:
        """The CE the DUT is: (IPv6 address, IPv4 address or None for a B4, PSID, PSID length,
        PSID offset)."""
        raise NotImplementedError

    def lan_side(self, p: dict[str, Any]) -> tuple[str, str]:
        """The LAN's addresses: the CE's (with prefix) and the LAN host's."""
        return V4_LEFT

    def wan_routes(self, p: dict[str, Any], place: "CePlace") -> list[str]:
        """What the CE routes to its WAN next hop: the AFTR's or BR's address."""
        return [f"{place.br}/128"]

    def own_address(self, p: dict[str, Any], place: "CePlace") -> None:
        """Where the CE's own IPv4 address is (without NAPT44 the LAN host uses it)."""
        _, ce4, _, _, _ = self.the_ce(p)
        if ce4 and not p.get("napt", False):
            ip(place.ns, "route", "add", f"{ce4}/32", "dev", place.lan)

    def ce_defines(self, p: dict[str, Any]) -> list[str]:
        """The program's -D parameters of the CE the DUT is."""
        ce6, ce4, psid, k, a = self.the_ce(p)
        hi, lo = halves(ce6)
        return [f"-DCE_ADDR_HI={hi:#x}ull", f"-DCE_ADDR_LO={lo:#x}ull",
                f"-DCE_IPV4={int(ipaddress.IPv4Address(ce4)) if ce4 else 0:#x}u", f"-DCE_PSID={psid}",
                f"-DPSID_LEN={k}", f"-DPSID_OFFSET={a}", f"-DNAPT={int(p.get('napt', False))}",
                f"-DOWN_IPV4={int(ipaddress.IPv4Address(host(V4_LEFT[0]))):#x}u"]

    def defines(self, p: dict[str, Any], place: "CePlace") -> list[str]:
        """The program's -D parameters besides the CE's, the interfaces and the faults."""
        hi, lo = halves(place.br)
        return [f"-DBR_ADDR_HI={hi:#x}ull", f"-DBR_ADDR_LO={lo:#x}ull"]

    def build(self, p: dict[str, Any]) -> None:
        self.build_at(p, CePlace())

    def build_at(self, p: dict[str, Any], place: "CePlace") -> None:
        """The CE in `place`: alone, the DUT namespace between the tester's ports; in a dual DUT
        (dual.py), a namespace of its own in front of the BR's. With p["napt"] the kernel
        forwards and translates (translate()), the programs only end the softwire."""
        setup_router(left=[self.lan_side(p)], right=[place.wan_address], ns=place.ns, devs=(place.lan, place.wan))
        napt = p.get("napt", False)
        self.own_address(p, place)
        for route in self.wan_routes(p, place):
            ip(place.ns, "route", "add", route, "via", place.next_hop, "dev", place.wan)
        obj = build_bpf(self.program, self.name, [
            *self.ce_defines(p),
            f"-DLAN_IFINDEX={ifindex(place.lan, place.ns)}", f"-DWAN_IFINDEX={ifindex(place.wan, place.ns)}",
            f"-DMISDELIVER={p.get('misdeliver', 0)}", *fault_defines(p), *self.defines(p, place)])
        attach_bpf(obj, [(place.wan, "ingress", "tc/from_wan"),
                         (place.wan, "egress", "tc/to_wan") if napt else (place.lan, "ingress", "tc/from_lan")],
                   place.ns)
        if napt:
            _, ce4, psid, k, _ = self.the_ce(p)
            self.translate(p, place, ce4, psid, k)

    def translate(self, p: dict[str, Any], place: "CePlace", ce4: str, psid: int, k: int) -> None:
        """NAPT44 of the LAN into the CE's address and port set (contiguous: PSID offset 0) by
        nftables, the kernel routing IPv4 into the softwire link: to RFC 6333 §5.7's AFTR end
        192.0.0.1 from the CE's 192.0.0.2, a neighbour at the IPv6 next hop's MAC (the tester's
        right port), so the egress program's IPv6 header goes out with the right Ethernet one."""
        ip(place.ns, "addr", "add", f"{SOFTWIRE_IPV4[1]}/29", "dev", place.wan)
        ip(place.ns, "neigh", "add", SOFTWIRE_IPV4[0], "lladdr", MACS[TESTER_PORTS[1]], "dev", place.wan,
           "nud", "permanent")
        ip(place.ns, "route", "add", "default", "via", SOFTWIRE_IPV4[0], "dev", place.wan)
        first = psid << (16 - k) if k else 0
        last = first + (1 << (16 - k)) - 1
        lan = ipaddress.ip_interface(V4_LEFT[0]).network
        load_nft("table ip xlp_napt {\n"
                 "\tchain postrouting {\n"
                 "\t\ttype nat hook postrouting priority srcnat; policy accept;\n"
                 f'\t\toifname "{place.wan}" ip saddr {lan} meta l4proto {{ tcp, udp }} snat to {ce4}:{first}-{last}\n'
                 "\t}\n"
                 "\tchain forward {\n"
                 "\t\ttype filter hook forward priority filter; policy accept;\n"
                 f'\t\tiifname "{place.wan}" ct state established,related accept\n'
                 f'\t\tiifname "{place.wan}" counter drop\n'
                 "\t}\n"
                 "}\n")
        sysctl(place.ns, {key: 3600 for key in CONNTRACK_UDP_TIMEOUTS})  # no entry expires in a test

    def ipv4aas_keys(self, p: dict[str, Any]) -> dict[str, Any]:
        return {}

    def tester_sections(self, p: dict[str, Any]) -> dict[str, dict[str, Any]]:
        ce6, ce4, _, _, _ = self.the_ce(p)
        return {
            # The LAN host: the CE's own address (a B4's LAN: the tester's).
            "left": {"ip_version": 4, "ipv4": ce4 or V4_LEFT[1], "dut_ipv4": host(V4_LEFT[0]), "dut_mac": ""},
            # The AFTR or BR side: IPv4 inside the tunnels, the IPv4 Internet's host right.ipv4;
            # the tester answers ND for the CE's next hop 2001:2:0:8000::2.
            "right": {"ip_version": 4, "ipv4": V4_RIGHT[1], "ipv6": V6_RIGHT[1], "dut_ipv6": host(V6_RIGHT[0]),
                      "dut_mac": ""},
            # The AFTR's or BR's tunnel end (none where the CE translates: MAP-T).
            "ipv4aas": {**self.ipv4aas_section(),
                        **({"endpoint_ipv6": BR_ADDRESS} if self.technology.wire.encapsulated else {}),
                        "ce_ipv6": ce6, **self.ipv4aas_keys(p)},
        }


class B4(CustomerEdge):
    name = "b4"
    description = ("reference DS-Lite B4 (RFC 6333) in tc-BPF: IPv4 from the LAN on the left into "
                   "its softwire to the AFTR the right tester port plays")
    technology, role = ipv4aas.DS_LITE, ipv4aas.B4
    kind_params = {**CE_PARAMS, **fault_params(role.name, bpf_faults(technology))}

    def the_ce(self, p):
        return B4_ADDRESS, None, 0, 0, 0


class LwB4(CustomerEdge):
    name = "lwb4"
    description = ("reference lw4o6 lwB4 (RFC 7596) in tc-BPF, one row of a generated binding "
                   "table: the LAN uses its IPv4 address and port set, or with napt=yes its own "
                   "address, translated by nftables")
    technology, role = ipv4aas.LW4O6, ipv4aas.LWB4
    kind_params = {
        **binding_table_params(64),
        "lwb4": {"default": "18", "allowed": "an integer 0..softwires - 1",
                 "help": "the binding table's row the DUT is", "parse": integer(0, 65535)},
        "napt": {"default": "no", "allowed": "yes or no",
                 "help": "the lwB4 translates its LAN (NAPT44, RFC 7596 §5.1) into one contiguous port "
                         "set (PSID offset 0, §5.1's SHOULD) with nftables; the tester runs RFC "
                         "9693's phases", "parse": yes_no},
        **CE_PARAMS,
        **fault_params(role.name, bpf_faults(technology)),
    }

    @property
    def tools(self) -> dict[str, str]:  # type: ignore[override]
        return {**CustomerEdge.tools, "nft": "nftables", "conntrack": "conntrack"}

    def resolve(self, p):
        if p["lwb4"] >= p["softwires"]:
            raise LabError(f"lab kind {self.name!r}: lwb4={p['lwb4']} must be below softwires={p['softwires']}")

    def the_ce(self, p):
        b4, ipv4, psid = binding_table(p["softwires"], p["psid_length"])[p["lwb4"]]
        return b4, ipv4, psid, p["psid_length"], self.psid_offset(p)

    @staticmethod
    def psid_offset(p: dict[str, Any]) -> int:
        """a: 0 (one contiguous set, what a NAPT44 port range is) when the lwB4 translates."""
        return 0 if p["napt"] else 6

    def defines(self, p, place):
        write_binding_table(binding_table(p["softwires"], p["psid_length"]), p["psid_length"], self.psid_offset(p))
        return super().defines(p, place)

    def tester_sections(self, p):
        sections = super().tester_sections(p)
        if p["napt"]:  # the LAN's own address; RFC 9693's phases open the translations
            sections["left"]["ipv4"] = V4_LEFT[1]
            sections |= stateful_sections(f"xlatperf lab {self.name}: {self.description}, with NAPT44 "
                                          "(nftables)")
        return sections

    def ipv4aas_keys(self, p):
        return {"binding_table": BINDING_TABLE}


class MapECe(CustomerEdge):
    name = "mape-ce"
    description = ("reference MAP-E CE (RFC 7597) in tc-BPF, one CE of a MAP rule, without NAPT44: "
                   "the LAN uses its IPv4 address and port set")
    technology, role = ipv4aas.MAP_E, ipv4aas.CE
    kind_params = {
        **RULE_PARAMS,
        "ce": {"default": "4660", "allowed": "an integer 0..2^ea_bits - 1",
               "help": "the CE's EA bits (its index in the rule): 4660 = 0x1234 is RFC 7597 App. A "
                       "Example 2's CE, 192.0.2.18 with PSID 0x34",
               "parse": integer(0, 2**48 - 1)},
        **CE_PARAMS,
        **fault_params(role.name, bpf_faults(technology)),
    }

    def resolve(self, p):
        check_rule(self.name, p)
        if p["ce"] >= 2 ** p["ea_bits"]:
            raise LabError(f"lab kind {self.name!r}: ce={p['ce']} must be below 2^ea_bits = {2 ** p['ea_bits']}")

    def rule(self, p: dict[str, Any]) -> MapRule:
        return MapRule(ipaddress.IPv6Network(p["rule_ipv6"]), ipaddress.IPv4Network(p["rule_ipv4"]),
                       p["ea_bits"], p["psid_offset"])

    def the_ce(self, p):
        rule = self.rule(p)
        ce = rule.ce(p["ce"])
        return str(ce.ipv6), str(ce.ipv4), ce.psid, rule.k, p["psid_offset"]

    def ipv4aas_keys(self, p):
        return rule_keys(p)


class MapTCe(MapECe):
    name = "mapt-ce"
    description = ("reference MAP-T CE (RFC 7599) in tc-BPF, one CE of a MAP rule, without NAPT44: "
                   "its LAN's IPv4 translated to IPv6 towards the BR the right tester port plays")
    technology = ipv4aas.MAP_T
    program = "mapt_ce.c"
    kind_params = {**MapECe.kind_params, "dmr": DMR_PARAM,
                   "mtu": {**SOFTWIRE_PARAMS["mtu"], "help": "IPv4 MTU; the veths carry 20 bytes more "
                           "for the translated IPv6 header"},
                   **fault_params(MapECe.role.name, bpf_faults(technology))}  # a translator's too (df)

    def wan_routes(self, p, place):
        return [p["dmr"]]

    def defines(self, p, place):
        return [f"-DDMR_HI={int(ipaddress.IPv6Network(p['dmr']).network_address) >> 64:#x}ull"]

    def tester_sections(self, p):
        sections = super().tester_sections(p)
        # The BR's side is IPv6: the IPv4 host right.ipv4 at its address in the DMR.
        sections["right"]["ip_version"] = 6
        sections["right"]["virtual_ipv6"] = str(embed_ipv4(ipaddress.IPv6Network(p["dmr"]),
                                                           ipaddress.IPv4Address(V4_RIGHT[1])))
        return sections

    def ipv4aas_keys(self, p):
        return {**super().ipv4aas_keys(p), "dmr": p["dmr"]}
