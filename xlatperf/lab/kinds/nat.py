# SPDX-License-Identifier: BSD-3-Clause
"""The stateful kinds (RFC 9693, docs/stateful.md): nat44 and nat66, the kernel router
masquerading with nftables; nat64, TAYGA (lab/kinds/tayga.py) with a dynamic pool followed by
the same NAT44; and 464xlat, a CLAT (a second TAYGA, stateless) in front of that NAT64 (the
PLAT): IPv4 in and out, IPv6 between them (RFC 6877, RFC 8219 §4.2's dual DUT).

Each accepts only replies to connections the left side opened and drops what conntrack finds
invalid, both ways (a forward-chain filter, as a firewall's), sets
the UDP conntrack timeouts of the DUT namespace so that no entry expires during a test, sizes
the conntrack table and hash (global sysctls, restored by `lab down`), and writes a tester
config with the Initiator on the left, the [stateful] settings and `conntrack -F` as DUT hooks.
"""

from __future__ import annotations

import ipaddress
import os
from typing import Any

from ...frames import technology as ipv4aas
from ..names import DUT_NS, DUT_PORTS, V4_LEFT, V4_RIGHT, V6_LEFT, V6_RIGHT, host
from ..shell import ip, run, sysctl
from ..state import set_global_sysctls
from .base import LabKind, auto_or, bpf_faults, choice, fault_defines, fault_params, integer, yes_no
from .common import attach_bpf, build_bpf, load_nft, router_sides, setup_direct_router, setup_router
from .router import ADDRESSES
from .tayga import TAYGA_IPV6, TaygaDut, TaygaInstance, start_tayga

# nat64: TAYGA maps each IPv6 client to an address of its dynamic pool (the private IPv4 side),
# which nftables masquerades to the DUT's public address, as in the stateful NAT64 paper.
# A network-specific prefix (RFC 6052) inside 2001:2::/48: TAYGA refuses the well-known prefix
# 64:ff9b::/96 with non-global IPv4 addresses such as the benchmarking range 198.18.0.0/15.
NAT64_PREFIX = "2001:2:0:6464::/96"
NAT64_POOL = "198.18.0.0/16"
NAT64_TAYGA_IPV4 = "198.18.0.1"
NAT64_RESPONDER_AS_6 = "2001:2:0:6464::c613:2"  # 198.19.0.2 in that prefix
# The Initiator's phase-1 ranges (100 x 100 port pairs) and conntrack.
NAT_PORTS = {"forward_src": "random", "forward_src_min": 1024, "forward_src_max": 1123,
             "forward_dst": "random", "forward_dst_min": 1, "forward_dst_max": 100}
CONNTRACK_GLOBAL = ("net.netfilter.nf_conntrack_max", "net.netfilter.nf_conntrack_buckets")
CONNTRACK_UDP_TIMEOUTS = ("net.netfilter.nf_conntrack_udp_timeout",
                          "net.netfilter.nf_conntrack_udp_timeout_stream")
# TCP (docs/tcp.md): conntrack checks every segment against the windows it tracks (be_liberal
# 0: an out-of-window segment is invalid and not translated) and opens connections only from a
# SYN (loose 0: no pick-up of a connection in mid-stream), so that a handshake the tester
# counts as complete is one the DUT tracked from its start. An established connection outlives
# any test (the timeout parameter); the kernel's defaults stay for the closing states.
CONNTRACK_TCP = {"net.netfilter.nf_conntrack_tcp_be_liberal": "0",
                 "net.netfilter.nf_conntrack_tcp_loose": "0"}
CONNTRACK_TCP_TIMEOUTS = ("net.netfilter.nf_conntrack_tcp_timeout_established",)
FLUSH = f"ip netns exec {DUT_NS} conntrack -F"
# The DUT's connection table size after every trial (the trial's record, `dut_counters`): after a
# load and after closing, what a closing step left in the table (TIME_WAIT, CLOSE: RFC 9693
# §4.8's tear-down is the entries' deletion, docs/tcp.md).
COUNT = f"echo conntrack=$(ip netns exec {DUT_NS} conntrack -C)"

CONNTRACK_PARAMS = {
    "table_size": {"default": "1048576", "allowed": "an integer 1..67108864",
                   "help": "connection table size: the global nf_conntrack_max (restored by lab "
                           "down)",
                   "parse": integer(1, 2**26)},
    "buckets": {"default": "auto", "allowed": "auto or an integer 1..67108864",
                "help": "conntrack hash size, the global nf_conntrack_buckets; auto = table_size",
                "parse": auto_or(integer(1, 2**26))},
    "timeout": {"default": "3600", "allowed": "an integer 1..86400",
                "help": "UDP and TCP established conntrack timeouts in seconds (DUT namespace)",
                "parse": integer(1, 86400)},
}
NAT_ADDRESSES = {**ADDRESSES, "help": "tester addresses per side, enumerated with the ports "
                                      "(1 = a single pair)"}
# The masquerade's public source ports, stated as stateful.public_ports: apart from the tester's
# own (NAT_PORTS), so that a NAT that kept them, or chose outside the range, is seen.
PUBLIC_PORTS = "20000-29999"
PUBLIC_PORT_PARAMS = {
    "wide_ports": {"default": "no", "allowed": "yes or no",
                   "help": f"a faulty NAT: stateful.public_ports states {PUBLIC_PORTS}, the masquerade "
                           "uses 1024-65535 (and so keeps the tester's own source ports)",
                   "parse": yes_no}}


class Nat(LabKind):
    """Masquerading what leaves on the right (nftables table family `nft_family`) to the source
    ports PUBLIC_PORTS, behind what forwards the frames (`build_forwarding`): the kernel router of
    IP version `version`."""
    version: int
    nft_family = "ip"
    kind_params = {**CONNTRACK_PARAMS, "addresses": NAT_ADDRESSES, **PUBLIC_PORT_PARAMS}
    tools = {"nft": "nftables", "conntrack": "conntrack"}

    def resolve(self, p: dict[str, Any]) -> None:
        if p["buckets"] == "auto":
            p["buckets"] = p["table_size"]

    def build(self, p: dict[str, Any]) -> None:
        self.build_forwarding(p)
        set_global_sysctls(dict(zip(CONNTRACK_GLOBAL, (p["table_size"], p["buckets"]))))
        load_nft(self.ruleset(p))
        # Per namespace, and present once nftables' NAT has conntrack running there.
        sysctl(DUT_NS, {**{key: p["timeout"] for key in CONNTRACK_UDP_TIMEOUTS + CONNTRACK_TCP_TIMEOUTS},
                        **CONNTRACK_TCP})

    def build_forwarding(self, p: dict[str, Any]) -> None:
        setup_direct_router(self.version, p["addresses"])

    def ruleset(self, p: dict[str, Any]) -> str:
        return nat_ruleset(self.nft_family, "1024-65535" if p.get("wide_ports") else PUBLIC_PORTS)

    def sides(self, p: dict[str, Any]) -> dict[str, dict[str, Any]]:
        sides = router_sides(self.version)
        # The left as the right sees it: the masquerade's public address, which the header
        # checks then expect as the source of the left's frames (docs/config.md).
        right_dut = (V4_RIGHT if self.version == 4 else V6_RIGHT)[0]
        sides["left"][f"virtual_ipv{self.version}"] = host(right_dut)
        return sides

    def tester_sections(self, p: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """The sides, then the stateful sections (stateful_sections)."""
        description = (f"xlatperf lab {self.name}: {self.description}; Linux "
                       f"{os.uname().release} netfilter: nf_conntrack_max {p['table_size']}, "
                       f"nf_conntrack_buckets {p['buckets']}, UDP and TCP established timeouts "
                       f"{p['timeout']} s, tcp_be_liberal 0, tcp_loose 0")
        sections = {**self.sides(p), **stateful_sections(description, p.get("addresses", 1) > 1)}
        sections["stateful"]["public_ports"] = PUBLIC_PORTS
        return sections


def mss(text: str) -> int:
    """0, or an MSS a gateway may clamp to (RFC 9293 §3.7.1's IPv4 default, 536, up to jumbo)."""
    value = int(text, 10)
    if value != 0 and not 536 <= value <= 9000:
        raise ValueError
    return value


class Nat44(Nat):
    name = "nat44"
    description = ("stateful NAT44: nftables masquerade from the left (private) to 198.19.0.1 "
                   "on the right (RFC 9693)")
    version = 4
    kind_params = {**Nat.kind_params,
                   "mss_clamp": {"default": "0", "allowed": "0 (none) or an integer 536..9000",
                                 "help": "clamp the MSS of forwarded SYNs and SYN-ACKs as PPPoE and "
                                         "tunnel gateways do (iptables TCPMSS --set-mss: inserts an "
                                         "MSS option where a SYN has none)",
                                 "parse": mss},
                   "modulate": {"default": "off", "allowed": "off, on or faulty",
                                "help": "rewrite TCP sequence numbers towards the right as PF's modulate "
                                        "state does (tc-BPF, xlatperf/lab/bpf/modulate.c: each "
                                        "connection's offset added to its sequence numbers leaving, "
                                        "taken from the acknowledgements coming back); faulty: the "
                                        "acknowledgements are left as they come",
                                "parse": choice("off", "on", "faulty")}}
    tools = {**Nat.tools, "iptables": "iptables", "clang": "clang", "tc": "iproute2"}

    def build(self, p: dict[str, Any]) -> None:
        super().build(p)
        if p["mss_clamp"]:  # xt_TCPMSS through nftables' compat (docs/lab-kernel.md)
            run(["iptables", "-t", "mangle", "-A", "FORWARD", "-p", "tcp", "--tcp-flags", "SYN,RST", "SYN",
                 "-j", "TCPMSS", "--set-mss", str(p["mss_clamp"])], ns=DUT_NS)
        if p["modulate"] != "off":  # around netfilter on the right: conntrack sees the Initiator's numbers
            obj = build_bpf("modulate.c", f"{self.name}-modulate",
                            ["-DFAULT_ACK=1"] if p["modulate"] == "faulty" else [])
            attach_bpf(obj, [(DUT_PORTS[1], "egress", "tc/to_responder"),
                             (DUT_PORTS[1], "ingress", "tc/from_responder")])

    def tester_sections(self, p: dict[str, Any]) -> dict[str, dict[str, Any]]:
        sections = super().tester_sections(p)
        if p["mss_clamp"]:
            sections["dut"]["description"] += f", TCP MSS clamped to {p['mss_clamp']} (iptables TCPMSS)"
        if p["modulate"] == "on":
            sections["dut"]["description"] += ", TCP sequence numbers modulated towards the right (tc-BPF)"
        elif p["modulate"] == "faulty":
            sections["dut"]["description"] += (", TCP sequence numbers modulated towards the right (tc-BPF), "
                                               "faulty: acknowledgements not restored")
        return sections


class Nat66(Nat):
    name = "nat66"
    description = ("stateful NAT66: nftables masquerade from the left to 2001:2:0:8000::1 on "
                   "the right")
    version = 6
    nft_family = "ip6"


class Nat64(Nat, TaygaDut):
    """TAYGA maps the IPv6 clients into its dynamic pool, which the NAT44 masquerades."""
    name = "nat64"
    description = ("stateful NAT64: TAYGA (dynamic pool, prefix 2001:2:0:6464::/96) plus "
                   "nftables NAT44 to 198.19.0.1, IPv6 left, IPv4 right")
    kind_params = {**CONNTRACK_PARAMS, **PUBLIC_PORT_PARAMS}
    tools = {**Nat.tools, **TaygaDut.tools}

    def build_forwarding(self, p: dict[str, Any]) -> None:
        setup_router(left=[V6_LEFT], right=[V4_RIGHT])
        start_tayga([f"ipv4-addr {NAT64_TAYGA_IPV4}", f"ipv6-addr {TAYGA_IPV6}",
                     f"prefix {NAT64_PREFIX}", f"dynamic-pool {NAT64_POOL}"],
                    [NAT64_POOL, NAT64_PREFIX])

    def sides(self, p: dict[str, Any]) -> dict[str, dict[str, Any]]:
        # The Responder's frames come from the state table: left's virtual_ipv4 (the DUT's
        # public address, as the right sees the left) only completes the reverse template.
        return {"left": {"ip_version": 6, "ipv6": V6_LEFT[1], "virtual_ipv4": host(V4_RIGHT[0]),
                         "dut_mac": "", "dut_ipv6": host(V6_LEFT[0])},
                "right": {"ip_version": 4, "ipv4": V4_RIGHT[1],
                          "virtual_ipv6": NAT64_RESPONDER_AS_6, "dut_mac": "",
                          "dut_ipv4": host(V4_RIGHT[0])}}


def stateful_sections(description: str, many_addresses: bool = False) -> dict[str, dict[str, Any]]:
    """[ports], [stateful] and [dut] of a lab DUT that translates what the left opens (RFC 9693):
    100 x 100 port pairs (x the address pairs) enumerated pseudorandomly in phase 1, 10,000
    connections at 10,000 fps, and `conntrack -F` in the DUT namespace before every trial and as
    the timed tear-down."""
    return {"ports": dict(NAT_PORTS),
            "stateful": {"enabled": True, "initiator": "left", "connections": 10000,
                         "rate_phase1": 10000, "timeout_phase1": 1.0,
                         "enumerate": "both" if many_addresses else "ports", "order": "random",
                         "selection": "random", "validation": True},
            "dut": {"description": description, "before_trial": FLUSH, "teardown": FLUSH,
                    "counters": COUNT}}


def nat_ruleset(family: str, ports: str = "") -> str:
    """Masquerade what leaves on the right (to the source ports `ports`, "LOW-HIGH", where given);
    from the right, only replies to connections that the left opened pass (as on a NAT gateway);
    in both directions, what conntrack finds invalid (a TCP segment outside the windows it
    tracks: be_liberal 0) is dropped, as a firewall does, and counted (`nft list chain ...
    forward`; `conntrack -S` counts it too)."""
    return (f"table {family} xlp_nat {{\n"
            "\tchain postrouting {\n"
            "\t\ttype nat hook postrouting priority srcnat; policy accept;\n"
            + (f'\t\toifname "xlp-dr" meta l4proto {{ tcp, udp }} masquerade to :{ports}\n' if ports else "")
            + '\t\toifname "xlp-dr" masquerade\n'
            "\t}\n"
            "\tchain forward {\n"
            "\t\ttype filter hook forward priority filter; policy accept;\n"
            "\t\tct state invalid counter drop\n"
            '\t\tiifname "xlp-dr" ct state established,related accept\n'
            '\t\tiifname "xlp-dr" counter drop\n'
            "\t}\n"
            "}\n")


# 464xlat: the CLAT (RFC 6877 §6.3, stateless: the client's IPv4 address mapped to one IPv6
# address of the CLAT, destinations embedded in the PLAT's prefix) feeds the PLAT, a NAT64 with
# its own pool (not the left side's 198.18.0.0/16) and the NAT44 behind it.
CLAT = TaygaInstance("clat")
PLAT = TaygaInstance("plat")
CLAT_IPV4 = "192.0.0.1"              # RFC 7335's range for the CLAT's own address
CLAT_IPV6 = "2001:2:0:c1a7::1"
CLAT_PREFIX = "2001:2:0:c1a7::/64"   # the CLAT's IPv6 side: its clients' addresses
CLAT_CLIENT = (V4_LEFT[1], "2001:2:0:c1a7::2")  # the tester's left address and its IPv6 image
PLAT_POOL = "10.64.0.0/16"
PLAT_IPV4 = "10.64.0.1"
CLAT_TABLE = "464"                   # policy routing: what the left sends goes into the CLAT


class Xlat464(Nat64):
    """Two TAYGA processes in the DUT namespace, connected by its IPv6 routing: the CLAT (IPv4
    from the left into IPv6) and the PLAT (IPv6 into the pool, masqueraded to 198.19.0.1)."""
    name = "464xlat"
    description = ("464XLAT dual DUT (RFC 6877): a CLAT (TAYGA, stateless) and a PLAT (TAYGA "
                   "NAT64 + nftables NAT44 to 198.19.0.1), IPv4 left and right, IPv6 between")
    instances = (CLAT, PLAT)
    technology, role = ipv4aas.XLAT464, ipv4aas.DUAL

    def build_forwarding(self, p: dict[str, Any]) -> None:
        setup_router(left=[V4_LEFT], right=[V4_RIGHT])
        sysctl(DUT_NS, {"net.ipv6.conf.all.forwarding": 1})
        start_tayga([f"ipv4-addr {PLAT_IPV4}", f"ipv6-addr {TAYGA_IPV6}", f"prefix {NAT64_PREFIX}",
                     f"dynamic-pool {PLAT_POOL}"], [PLAT_POOL, NAT64_PREFIX], PLAT)
        start_tayga([f"ipv4-addr {CLAT_IPV4}", f"ipv6-addr {CLAT_IPV6}", f"prefix {NAT64_PREFIX}",
                     f"map {CLAT_CLIENT[0]} {CLAT_CLIENT[1]}"], [CLAT_PREFIX], CLAT)
        # IPv4 from the left goes into the CLAT, whatever its destination (the right's subnet
        # is directly connected, but reached only through CLAT and PLAT).
        ip(DUT_NS, "-4", "rule", "add", "iif", "xlp-dl", "lookup", CLAT_TABLE)
        ip(DUT_NS, "-4", "route", "add", "default", "dev", CLAT.tun, "table", CLAT_TABLE)

    def sides(self, p: dict[str, Any]) -> dict[str, dict[str, Any]]:
        sides = router_sides(4)
        # The Responder's frames come from the state table; left's address as the right sees
        # it (the NAT44's) completes the reverse template.
        sides["left"]["virtual_ipv4"] = host(V4_RIGHT[0])
        return sides

    def tester_sections(self, p: dict[str, Any]) -> dict[str, dict[str, Any]]:
        # pref64 as the two TAYGAs have it: the Well-Known Prefix would embed the benchmarking
        # range, which RFC 6052 §3.1 forbids (the configuration's warning).
        return {**super().tester_sections(p),
                "ipv4aas": {**self.ipv4aas_section(), "pref64": NAT64_PREFIX}}


class Clat(TaygaDut):
    """464XLAT's CLAT alone (RFC 6877 §6.3): TAYGA, stateless, the tester's client mapped to
    one IPv6 address and the IPv4 Internet embedded in the PLAT's prefix; the right port plays
    the PLAT's side (IPv6)."""
    name = "clat"
    description = ("464XLAT CLAT alone (RFC 6877): TAYGA translating the client's IPv4 on the left "
                   "into IPv6 towards the PLAT prefix 2001:2:0:6464::/96 on the right")
    instances = (CLAT,)
    technology, role = ipv4aas.XLAT464, ipv4aas.CLAT

    def build(self, p: dict[str, Any]) -> None:
        setup_router(left=[V4_LEFT], right=[V6_RIGHT])
        start_tayga([f"ipv4-addr {CLAT_IPV4}", f"ipv6-addr {CLAT_IPV6}", f"prefix {NAT64_PREFIX}",
                     f"map {CLAT_CLIENT[0]} {CLAT_CLIENT[1]}"], [CLAT_PREFIX], CLAT)
        # All IPv4 from the client goes into the CLAT; the PLAT's prefix is the tester's.
        ip(DUT_NS, "-4", "route", "add", "default", "dev", CLAT.tun)
        ip(DUT_NS, "-6", "route", "add", NAT64_PREFIX, "via", V6_RIGHT[1], "dev", "xlp-dr")

    def tester_sections(self, p: dict[str, Any]) -> dict[str, dict[str, Any]]:
        server = V4_RIGHT[1]   # the IPv4 server, at NAT64_RESPONDER_AS_6 in the PLAT's prefix
        return {"left": {"ip_version": 4, "ipv4": CLAT_CLIENT[0], "virtual_ipv6": CLAT_CLIENT[1],
                         "dut_mac": "", "dut_ipv4": host(V4_LEFT[0])},
                "right": {"ip_version": 6, "ipv6": NAT64_RESPONDER_AS_6, "virtual_ipv4": server,
                          "next_hop_ipv6": V6_RIGHT[1], "dut_mac": "", "dut_ipv6": host(V6_RIGHT[0])},
                "ipv4aas": {**self.ipv4aas_section(), "pref64": NAT64_PREFIX}}


# dslite-aftr: the AFTR's softwires end in tc-BPF (lab/bpf/aftr.c) on the B4 side, which carries
# IPv6 (the tunnels) and the B4s' private IPv4 subnet (RFC 6333 §5.7: 192.0.0.0/29, B4s at
# 192.0.0.2); B4 i is 2001:db8:b4::1 + i, routed to the tester's next hop 2001:2::2.
AFTR_ADDRESS = "2001:db8:af::1"
B4_BASE = "2001:db8:b4::1"
B4_PREFIX = "2001:db8:b4::/64"
B4_SUBNET = ("192.0.0.1/29", "192.0.0.2")   # the AFTR's address there, the B4s' shared one
NEXT_HOP = "2001:2::2"
# Phase 1: one source port, C destination ports (C odd), 2C connections: with the B4s taking
# turns, every (source, destination) pair comes from both B4s (RFC 6333 §6.6's case).
DSLITE_PORTS = {"forward_dst": "random", "forward_dst_min": 1, "forward_dst_max": 4999}


class DsLiteAftr(Nat):
    """The kernel's NAT44 behind tc-BPF softwire ends; a conntrack zone per softwire."""
    name = "dslite-aftr"
    description = ("reference DS-Lite AFTR (RFC 6333): softwires ended in tc-BPF, nftables NAT44 "
                   "to 198.19.0.1 with a conntrack zone per B4 (two B4s may share a private "
                   "address and port)")
    version = 4
    technology, role = ipv4aas.DS_LITE, ipv4aas.AFTR
    kind_params = {**CONNTRACK_PARAMS,
                   "b4s": {"default": "2", "allowed": "an integer 1..65535",
                           "help": "B4s the AFTR serves (B4 i: 2001:db8:b4::1 + i), all with 192.0.0.2",
                           "parse": integer(1, 65535)},
                   # towards the B4s only: the kernel forwards and translates the other way
                   **fault_params(role.name, bpf_faults(technology) |
                                  {"swap": "replies into another B4's softwire (B4 i's into B4 i ^ 1's)"}),
                   **PUBLIC_PORT_PARAMS}
    tools = {**Nat.tools, "clang": "clang", "tc": "iproute2"}

    def veth_mtu(self, p: dict[str, Any]) -> int:
        return 1500 + self.technology.wire_growth  # IPv4's 1500 inside the softwires (RFC 6333 §5.3)

    def build_forwarding(self, p: dict[str, Any]) -> None:
        setup_router(left=[V6_LEFT, B4_SUBNET], right=[V4_RIGHT, V6_RIGHT])  # native IPv6 routed (RFC 8219 §5.3)
        ip(DUT_NS, "addr", "add", f"{AFTR_ADDRESS}/128", "dev", "lo")
        ip(DUT_NS, "-6", "route", "add", B4_PREFIX, "via", NEXT_HOP, "dev", "xlp-dl")
        halves = lambda a: (int(ipaddress.IPv6Address(a)) >> 64, int(ipaddress.IPv6Address(a)) & (2**64 - 1))
        (aftr_hi, aftr_lo), (b4_hi, b4_lo) = halves(AFTR_ADDRESS), halves(B4_BASE)
        obj = build_bpf("aftr.c", self.name, [f"-DAFTR_ADDR_HI={aftr_hi:#x}ull", f"-DAFTR_ADDR_LO={aftr_lo:#x}ull",
                                              f"-DB4_BASE_HI={b4_hi:#x}ull", f"-DB4_BASE_LO={b4_lo:#x}ull",
                                              f"-DB4_COUNT={p['b4s']}", *fault_defines(p)])
        attach_bpf(obj, [("xlp-dl", "ingress", "tc/from_b4"), ("xlp-dl", "egress", "tc/to_b4")])

    def ruleset(self, p: dict[str, Any]) -> str:
        """NAT44 as nat_ruleset's, each B4's packets in the conntrack zone of its softwire (the
        mark the BPF program set; nftables takes a zone from a mark only through a map), the
        mark kept in the connection and restored on the replies for the way back."""
        zones = ", ".join(f"{i} : {i}" for i in range(1, p["b4s"] + 1))
        return ("table ip xlp_aftr {\n"
                "\tchain zone {\n"
                "\t\ttype filter hook prerouting priority raw; policy accept;\n"
                f'\t\tiifname "xlp-dl" meta mark != 0 ct original zone set meta mark map {{ {zones} }}\n'
                "\t}\n"
                "\tchain marks {\n"
                "\t\ttype filter hook prerouting priority mangle; policy accept;\n"
                '\t\tiifname "xlp-dl" ct mark set meta mark\n'
                '\t\tiifname "xlp-dr" meta mark set ct mark\n'
                "\t}\n"
                "}\n" + super().ruleset(p))

    def sides(self, p: dict[str, Any]) -> dict[str, dict[str, Any]]:
        return {"left": {"ip_version": 4, "ipv4": B4_SUBNET[1], "ipv6": B4_BASE, "next_hop_ipv6": NEXT_HOP,
                         "dut_ipv6": host(V6_LEFT[0]), "dut_mac": "", "virtual_ipv4": host(V4_RIGHT[0])},
                "right": {"ip_version": 4, "ipv4": V4_RIGHT[1], "ipv6": V6_RIGHT[1], "dut_ipv4": host(V4_RIGHT[0]),
                          "dut_mac": ""}}

    def tester_sections(self, p: dict[str, Any]) -> dict[str, dict[str, Any]]:
        sections = super().tester_sections(p)
        sections["ports"] = dict(DSLITE_PORTS)
        sections["stateful"] |= {"connections": 2 * DSLITE_PORTS["forward_dst_max"]}
        sections["ipv4aas"] = {**self.ipv4aas_section(), "endpoint_ipv6": AFTR_ADDRESS, "ces": p["b4s"],
                               "ce_mode": "increasing"}
        return sections
