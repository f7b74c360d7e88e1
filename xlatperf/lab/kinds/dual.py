# SPDX-License-Identifier: BSD-3-Clause
"""The lab's dual DUTs of IPv4-as-a-Service (RFC 8219 §4.2 Figure 2): a reference CE and a
reference BR, each in a namespace of its own, IPv4 on both tester ports and IPv6 between the
two DUTs: `dslite-dual` (B4 + AFTR, RFC 6333), `mape-dual` (MAP-E CE + BR, RFC 7597) and
`mapt-dual` (MAP-T CE + BR, RFC 7599). They are the single DUTs of customer_edge.py and
softwire.py / nat.py, cabled together:

    left tester --IPv4--> xlp-el | CE (xlp-ce) | xlp-ew --IPv6--> xlp-dl | BR (xlp-dut) | xlp-dr --IPv4--> right tester
                  198.18.0.1              2001:2::2           2001:2::1               198.19.0.1

The CEs do no NAPT44 (a MAP CE's LAN sends from the CE's own address and two ports of its set,
traffic.src_port and dst_port); the DS-Lite AFTR's NAT44 makes dslite-dual stateful (RFC 9693's
phase 1 before every trial, as the lab's config says). 464XLAT's dual DUT is `464xlat`
(nat.py: two TAYGAs).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from ...frames import technology as ipv4aas
from ...frames.addressing import MapRule
from ..names import CE_NS, CE_PORTS, CE_WAN_MACS, DUT_NS, DUT_PORTS, V4_LEFT, V4_RIGHT, V6_LEFT, host
from ..placement import Placement, steer_receive
from ..shell import add_veth, ip, run, sysctl
from .base import LabKind
from .customer_edge import B4, B4_ADDRESS, CePlace, MapECe, MapTCe, CustomerEdge
from .nat import AFTR_ADDRESS, B4_BASE, B4_SUBNET, CONNTRACK_PARAMS, DSLITE_PORTS, DsLiteAftr
from .softwire import BR_ADDRESS, RULE_PARAMS, MapEBr, MapTBr

# The CE's WAN address on the link to the BR, and the BR's (which routes the CEs' prefix there).
CE_WAN = (f"{V6_LEFT[1]}/64", host(V6_LEFT[0]))


# The parameters of a CE alone that a dual DUT does not take: its faults (a dual DUT's CE is a
# correct one).
CE_ALONE = ("misdeliver", "faulty", "faulty_share")

class DualDut(LabKind):
    """A reference CE (`ce`) in CE_NS in front of a reference BR (`br`) in DUT_NS."""
    ce: CustomerEdge
    br: LabKind
    role = ipv4aas.DUAL
    tunnel_end = BR_ADDRESS     # where the CE's tunnels go: the BR's or AFTR's address
    ce_wan = CE_WAN             # the CE's WAN address (with prefix) and its next hop, the BR's
    more_namespaces = (CE_NS,)
    steered_by = "RPS on the veth ends of both DUTs"

    @property
    def tools(self) -> dict[str, str]:  # type: ignore[override]
        return {**self.ce.tools, **self.br.tools}

    @property
    def technology(self) -> ipv4aas.Technology:  # type: ignore[override]
        return self.ce.technology

    def veth_mtu(self, p: dict[str, Any]) -> int:
        return self.br.veth_mtu(p)

    def build(self, p: dict[str, Any]) -> None:
        run(["ip", "netns", "add", CE_NS])
        ip(CE_NS, "link", "set", "lo", "up")
        sysctl(CE_NS, {"net.ipv6.conf.all.accept_dad": 0, "net.ipv6.conf.default.accept_dad": 0})
        # The tester's left port stays cabled to its peer, which becomes the CE's LAN port; a
        # new link joins the CE's WAN to the BR's CE side (DUT_PORTS[0] again).
        ip(DUT_NS, "link", "set", DUT_PORTS[0], "netns", CE_NS)
        ip(CE_NS, "link", "set", DUT_PORTS[0], "name", CE_PORTS[0])
        add_veth(CE_NS, CE_PORTS[1], DUT_NS, DUT_PORTS[0], self.veth_mtu(p), macs=CE_WAN_MACS)
        self.ce.build_at(p, CePlace(ns=CE_NS, lan=CE_PORTS[0], wan=CE_PORTS[1], wan_address=self.ce_wan,
                                    next_hop=self.ce_wan[1], br=self.tunnel_end))
        self.br.build(p)

    def place(self, placement: Placement) -> None:
        steer_receive(DUT_NS, DUT_PORTS, placement.dut_cpus)
        steer_receive(CE_NS, CE_PORTS, placement.dut_cpus)

    def tester_sections(self, p: dict[str, Any]) -> dict[str, dict[str, Any]]:
        _, ce4, _, _, _ = self.ce.the_ce(p)
        sections = {
            "left": {"ip_version": 4, "ipv4": ce4 or V4_LEFT[1], "dut_ipv4": host(V4_LEFT[0]), "dut_mac": ""},
            "right": {"ip_version": 4, "ipv4": V4_RIGHT[1], "dut_ipv4": host(V4_RIGHT[0]), "dut_mac": ""},
            "ipv4aas": self.ipv4aas_section(),
        }
        return sections


class _MapDual(DualDut):
    kind_params = {**RULE_PARAMS, **{k: v for k, v in MapECe.kind_params.items() if k not in CE_ALONE}}

    def resolve(self, p: dict[str, Any]) -> None:
        self.ce.resolve(p)
        p["misdeliver"] = 0

    def tester_sections(self, p):
        sections = super().tester_sections(p)
        # No NAPT44: the LAN's ports are two of the CE's (RFC 7597 §5.1), both ways.
        rule = MapRule(ipaddress.IPv6Network(p["rule_ipv6"]), ipaddress.IPv4Network(p["rule_ipv4"]),
                       p["ea_bits"], p["psid_offset"])
        first, last = rule.port_ranges(rule.ce(p["ce"]).psid)[0]
        sections["traffic"] = {"src_port": first, "dst_port": min(first + 1, last)}
        sections["ipv4aas"] |= self.ce.ipv4aas_keys(p)  # the rule the two DUTs share
        return sections


class MapEDual(_MapDual):
    name = "mape-dual"
    description = ("MAP-E dual DUT (RFC 7597, RFC 8219 Fig. 2): the reference CE and BR in tc-BPF, "
                   "IPv4 left and right, IPv4 in IPv6 between them")
    ce, br = MapECe(), MapEBr()


class MapTDual(_MapDual):
    name = "mapt-dual"
    description = ("MAP-T dual DUT (RFC 7599, RFC 8219 Fig. 2): the reference CE and BR in tc-BPF, "
                   "IPv4 left and right, translated IPv6 between them")
    ce, br = MapTCe(), MapTBr()
    kind_params = {**_MapDual.kind_params, **{k: v for k, v in MapTCe.kind_params.items() if k not in CE_ALONE}}


class DsLiteDual(DualDut):
    name = "dslite-dual"
    description = ("DS-Lite dual DUT (RFC 6333, RFC 8219 Fig. 2): the reference B4 and AFTR "
                   "(tc-BPF softwire, nftables NAT44 to 198.19.0.1), IPv4 left and right")
    ce, br = B4(), DsLiteAftr()
    tunnel_end = AFTR_ADDRESS
    kind_params = CONNTRACK_PARAMS
    assert B4_ADDRESS == B4_BASE   # the AFTR serves B4 0

    def resolve(self, p: dict[str, Any]) -> None:
        self.br.resolve(p)
        p.update(b4s=1, mtu=1500, misdeliver=0)

    def build(self, p: dict[str, Any]) -> None:
        super().build(p)
        # The AFTR routes the B4's LAN into the softwire link, to the B4's softwire address
        # 192.0.0.2 (RFC 6333 §5.7), which the B4 answers ARP for; its tc egress program then
        # encapsulates (after neighbour resolution, so a neighbour must exist).
        ip(CE_NS, "addr", "add", f"{B4_SUBNET[1]}/29", "dev", CE_PORTS[1])
        lan = str(ipaddress.ip_interface(V4_LEFT[0]).network)
        ip(DUT_NS, "route", "add", lan, "via", B4_SUBNET[1], "dev", DUT_PORTS[0])

    def tester_sections(self, p):
        aftr = self.br.tester_sections(p)
        sections = super().tester_sections(p)
        # The AFTR's NAT44: RFC 9693's phase 1 opens the LAN's connections first; the right
        # sees the left at the AFTR's public address.
        sections["left"]["virtual_ipv4"] = host(V4_RIGHT[0])
        return {**sections, "ports": dict(DSLITE_PORTS),
                "stateful": {**aftr["stateful"], "connections": DSLITE_PORTS["forward_dst_max"]},
                "dut": aftr["dut"]}
