# SPDX-License-Identifier: BSD-3-Clause
"""The lab's reference DUTs for 6rd (RFC 5969: IPv6 Rapid Deployment, IPv6 over the operator's
IPv4 in RFC 4213's IPv4 header, protocol 41): `6rd-br` (the Border Relay, the tester's left port
emulating the CEs), `6rd-ce` (a CE alone, the right port playing its BR) and `6rd-dual` (CE and
BR in line, RFC 8219 Figure 2 with IPv6 on both tester ports). This kernel has no sit device
(shared/docs/lab-kernel.md): tc-BPF (xlatperf/lab/bpf/sixrd.c) does the BR's and the CE's work,
the kinds are softwire.py's BR, customer_edge.py's CE and dual.py's pair with an IPv4 tunnel.

One 6rd domain (`sixrd_prefix`, `ipv4_prefix`): a CE's delegated prefix is the 6rd prefix
followed by the 32 - IPv4MaskLen low bits of its IPv4 address (RFC 5969 §7.1.1; a MAP rule
without port sharing, frames/addressing.py). The BR's IPv4 address (6rdBRIPv4Address) is
BR_IPV4 on the DUT's lo.

    6rd-br:  CEs (left tester) --IPv6 in IPv4--> xlp-dl | BR | xlp-dr --IPv6--> right tester
             198.18.0.2 (next hop of the CEs'       198.18.0.1, BR 203.0.113.1  2001:2:0:8000::1/::2
             IPv4 prefix 100.64.0.0/16)
    6rd-ce:  LAN (left tester) --IPv6--> xlp-dl | CE | xlp-dr --IPv6 in IPv4--> right tester (the BR)
             2001:db8:1234::2    2001:db8:1234::1/64    198.19.0.1, CE 100.64.18.52 on lo   198.19.0.2

The veths carry the IPv6 MTU (`mtu`) plus the tunnel header's 20 bytes (RFC 5969 §9.1: the
operator sizes its IPv4 network so that nothing is fragmented). `misdeliver=N`: a faulty BR
sends about one in N packets to the CEs into another CE's tunnel, a faulty CE about one in N
from another CE's address (the IPv4 address's last bit flipped).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from ...frames import technology as ipv4aas
from ...frames.addressing import MapRule
from ..names import V4_LEFT, V4_RIGHT, V6_LEFT, V6_RIGHT, host
from ..shell import LabError, ip
from .base import LabKind, bpf_faults, fault_params, integer
from .customer_edge import CePlace, CustomerEdge
from .dual import DualDut
from .softwire import SOFTWIRE_PARAMS, SoftwireBr, prefix_parser

BR_IPV4 = "203.0.113.1"  # 6rdBRIPv4Address (RFC 5737 documentation address), on the BR's lo

DOMAIN_PARAMS: dict[str, dict[str, Any]] = {
    "sixrd_prefix": {"default": "2001:db8::/32", "allowed": "an IPv6 prefix",
                     "help": "the 6rd prefix (RFC 5969 §4)", "parse": prefix_parser(6)},
    "ipv4_prefix": {"default": "100.64.0.0/16", "allowed": "an IPv4 prefix",
                    "help": "the CEs' common IPv4 prefix, its length IPv4MaskLen (RFC 5969 §4)",
                    "parse": prefix_parser(4)},
    "mtu": {"default": "1500", "allowed": "an integer 1280..9196",
            "help": "IPv6 MTU; the veths carry 20 bytes more for the IPv4 tunnel header",
            "parse": integer(1280, 9196)},
}
# IPv6 has no header checksum: the checksum fault spoils the tunnel's IPv4 header (sixrd.c).
FAULTS = bpf_faults(ipv4aas.SIX_RD) | {"checksum": "the tunnel header's IPv4 checksum wrong"}
CE_PARAM = {"default": "100.64.18.52", "allowed": "an IPv4 address in ipv4_prefix",
            "help": "the CE's IPv4 address (100.64.18.52 delegates 2001:db8:1234::/48 in the default domain)",
            "parse": lambda text: str(ipaddress.IPv4Address(text))}
# The lab's own networks besides the domain's: the BR's address, the CE sides', the IPv6 ones.
LAB_IPV4 = [ipaddress.ip_network(BR_IPV4), *(ipaddress.ip_interface(a).network for a, _ in (V4_LEFT, V4_RIGHT))]
LAB_IPV6 = [ipaddress.ip_interface(a).network for a, _ in (V6_LEFT, V6_RIGHT)]


def domain(p: dict[str, Any]) -> MapRule:
    """The 6rd domain as a MAP rule: 32 - IPv4MaskLen EA bits, no port sharing (RFC 7597 §1)."""
    prefix4 = ipaddress.IPv4Network(p["ipv4_prefix"])
    return MapRule(ipaddress.IPv6Network(p["sixrd_prefix"]), prefix4, 32 - prefix4.prefixlen)


def check_domain(kind: str, p: dict[str, Any]) -> None:
    prefix6, prefix4 = ipaddress.IPv6Network(p["sixrd_prefix"]), ipaddress.IPv4Network(p["ipv4_prefix"])
    n, r = prefix6.prefixlen, prefix4.prefixlen
    if n + 32 - r > 64:
        raise LabError(f"lab kind {kind!r}: sixrd_prefix /{n} + 32 - IPv4MaskLen {r} = {n + 32 - r} bits: must be "
                       "at most 64 (a CE's delegated prefix within the routing prefix, RFC 5969 §7.1.1)")
    # The BR would take the lab's own IPv6 for CEs'; a CEs' IPv4 prefix inside a lab network
    # would clash with its connected route (one around them, down to 0.0.0.0/0, is fine).
    if n == 0 or any(prefix6.overlaps(net) for net in LAB_IPV6) or any(prefix4.subnet_of(net) for net in LAB_IPV4):
        raise LabError(f"lab kind {kind!r}: sixrd_prefix {prefix6} must not be ::/0 nor hold the lab's "
                       f"{', '.join(map(str, LAB_IPV6))}, ipv4_prefix {prefix4} not lie within "
                       f"{', '.join(map(str, LAB_IPV4))}")
    if "ce" in p and ipaddress.IPv4Address(p["ce"]) not in prefix4:
        raise LabError(f"lab kind {kind!r}: ce={p['ce']} must be in ipv4_prefix {prefix4}")


def domain_defines(p: dict[str, Any]) -> list[str]:
    """The -D parameters of sixrd.c's domain and BR."""
    prefix6, prefix4 = ipaddress.IPv6Network(p["sixrd_prefix"]), ipaddress.IPv4Network(p["ipv4_prefix"])
    return [f"-DSIXRD_HI={int(prefix6.network_address) >> 64:#x}ull", f"-DSIXRD_LEN={prefix6.prefixlen}",
            f"-DRULE4={int(prefix4.network_address):#x}u", f"-DRULE4_LEN={prefix4.prefixlen}",
            f"-DBR_IPV4={int(ipaddress.IPv4Address(BR_IPV4)):#x}u"]


def delegated_lan(p: dict[str, Any]) -> tuple[str, str]:
    """The CE's LAN, the first /64 of its delegated prefix: (the CE's address with prefix, the LAN
    host's, the left tester port's)."""
    rule = domain(p)
    ce = rule.ce_of(ipaddress.IPv4Address(p["ce"]), 0)
    lan = ipaddress.IPv6Network(f"{ce.ipv6}/64", strict=False)
    return f"{lan.network_address + 1}/64", str(lan.network_address + 2)


def domain_keys(kind: LabKind, p: dict[str, Any]) -> dict[str, Any]:
    """The [ipv4aas] keys of a 6rd kind: the technology and role, the domain (ea_bits 32 -
    IPv4MaskLen, psid_offset left alone: no port sharing), the BR's address."""
    return {**kind.ipv4aas_section(), "rule_ipv6_prefix": p["sixrd_prefix"], "rule_ipv4_prefix": p["ipv4_prefix"],
            "ea_bits": domain(p).ea_bits, "endpoint_ipv4": BR_IPV4}


class SixrdBr(SoftwireBr):
    name = "6rd-br"
    description = ("reference 6rd Border Relay (RFC 5969) in tc-BPF: CEs of a 6rd domain on the left "
                   "in IPv6-in-IPv4 tunnels, IPv6 on the right")
    technology, role = ipv4aas.SIX_RD, ipv4aas.BR
    program = "sixrd.c"
    kind_params = {**DOMAIN_PARAMS,
                   "misdeliver": SOFTWIRE_PARAMS["misdeliver"], **fault_params(role.name, FAULTS)}
    # The CEs' side is IPv4 (the kernel routes the CEs' IPv4 prefix to the tester's left
    # address), the Internet's IPv6.
    ce_side = V4_LEFT
    net_side = (V6_RIGHT,)
    endpoint = BR_IPV4  # type: ignore[assignment]

    def resolve(self, p):
        check_domain(self.name, p)

    def ce_prefix(self, p):
        return p["ipv4_prefix"]

    def endpoint_defines(self):
        return []

    def defines(self, p):
        return ["-DMODE_BR", *domain_defines(p)]

    def tester_sections(self, p):
        return {
            # The CEs: IPv6 inside IPv4 tunnels from each CE's IPv4 address; ipv6 is a template,
            # the first CE's address in RFC 7597 §6's form (the engine writes each CE's).
            "left": {"ip_version": 6, "ipv4": V4_LEFT[1], "dut_ipv4": host(V4_LEFT[0]),
                     "ipv6": str(domain(p).ce(0).ipv6), "dut_mac": ""},
            "right": {"ip_version": 6, "ipv6": V6_RIGHT[1], "dut_ipv6": host(V6_RIGHT[0]), "dut_mac": ""},
            "ipv4aas": domain_keys(self, p),
        }


class SixrdCe(CustomerEdge):
    name = "6rd-ce"
    description = ("reference 6rd CE (RFC 5969) in tc-BPF: IPv6 from its delegated prefix's LAN on the "
                   "left into its IPv4 tunnel to the BR the right tester port plays")
    technology, role = ipv4aas.SIX_RD, ipv4aas.CE
    program = "sixrd.c"
    kind_params = {**DOMAIN_PARAMS, "ce": CE_PARAM,
                   "misdeliver": {**SOFTWIRE_PARAMS["misdeliver"], "allowed": "0 (a correct CE) or an integer 2..1000000",
                                  "help": "a faulty CE: about one in N frames to the BR leaves from another "
                                          "CE's IPv4 address"},
                   **fault_params(role.name, FAULTS)}

    def resolve(self, p):
        check_domain(self.name, p)

    def the_ce(self, p):
        ce = domain(p).ce_of(ipaddress.IPv4Address(p["ce"]), 0)
        return str(ce.ipv6), p["ce"], 0, 0, 0

    def lan_side(self, p):
        return delegated_lan(p)

    def own_address(self, p, place):
        # The CE's 6rd address (its tunnels' end) on lo: the programs take its tunnels before
        # the kernel sees them, the kernel answers the rest (a ping).
        ip(place.ns, "addr", "add", f"{p['ce']}/32", "dev", "lo")

    def wan_routes(self, p, place):
        # The BR, and the domain's other CEs (RFC 5969 §7.1.2: reached directly).
        return [f"{place.br}/32", p["ipv4_prefix"]]

    def ce_defines(self, p):
        return ["-DMODE_CE", f"-DCE_IPV4={int(ipaddress.IPv4Address(p['ce'])):#x}u", *domain_defines(p)]

    def defines(self, p, place):
        return []

    def tester_sections(self, p):
        lan = delegated_lan(p)
        return {
            # The LAN host in the CE's delegated prefix.
            "left": {"ip_version": 6, "ipv6": lan[1], "dut_ipv6": host(lan[0]), "dut_mac": ""},
            # The BR's side: IPv6 in the tunnel to and from the IPv6 Internet's host right.ipv6;
            # the tester answers ARP for the CE's next hop 198.19.0.2, behind which the BR is.
            "right": {"ip_version": 6, "ipv4": V4_RIGHT[1], "dut_ipv4": host(V4_RIGHT[0]), "ipv6": V6_RIGHT[1],
                      "dut_mac": ""},
            "ipv4aas": {**domain_keys(self, p), "ce_ipv4": p["ce"]},
        }

    def build(self, p):
        self.build_at(p, CePlace(wan_address=V4_RIGHT, next_hop=V4_RIGHT[1], br=BR_IPV4))


class SixrdDual(DualDut):
    name = "6rd-dual"
    description = ("6rd dual DUT (RFC 5969, RFC 8219 Fig. 2): the reference CE and BR in tc-BPF, IPv6 left "
                   "and right, IPv6 in IPv4 between them")
    ce, br = SixrdCe(), SixrdBr()
    tunnel_end = BR_IPV4
    # The CE's WAN takes the tester's place on the BR's CE side: the BR routes the CEs' IPv4
    # prefix to 198.18.0.2 as it does alone.
    ce_wan = (f"{V4_LEFT[1]}/{ipaddress.ip_interface(V4_LEFT[0]).network.prefixlen}", host(V4_LEFT[0]))
    kind_params = {**DOMAIN_PARAMS, "ce": CE_PARAM}

    def resolve(self, p):
        check_domain(self.name, p)
        p["misdeliver"] = 0   # a correct pair: the faults are the single DUTs'

    def tester_sections(self, p):
        lan = delegated_lan(p)
        return {
            "left": {"ip_version": 6, "ipv6": lan[1], "dut_ipv6": host(lan[0]), "dut_mac": ""},
            "right": {"ip_version": 6, "ipv6": V6_RIGHT[1], "dut_ipv6": host(V6_RIGHT[0]), "dut_mac": ""},
            "ipv4aas": {**domain_keys(self, p), "ce_ipv4": p["ce"]},
        }
