# SPDX-License-Identifier: BSD-3-Clause
"""Header stacks and frame sizes.

A test frame is Ethernet (with the VLAN tags of its side), a stack of IP headers and a
transport: UDP with the test tag in its payload, or TCP with the tag in its first option
(docs/protocol.md "Test frame payload", docs/tcp.md). The IP headers are what differs between
traffic kinds: one IPv4 or IPv6 header, IPv4 encapsulated in IPv6 (RFC 2473) or IPv6 in IPv4
(6in4, RFC 4213 §3.5: 6rd's, RFC 5969); the transport
is UDP unless a stateful test opens TCP connections.

Frame size rule (docs/config.md "Frame size"): `traffic.frame_size` (and each IMIX size) names
the trial's largest frame *before encapsulation*: the IPv6 frame whenever a translated or
native IPv6 frame is part of the trial (siitperf's convention, RFC 8219 §5.1.1: 84-byte IPv6
frames are 64-byte IPv4 frames), else the IPv4 frame. Every frame of the trial carries the same
transport and payload, so a frame's size follows from its IP headers; encapsulation adds its
outer headers on top (RFC 8219 Appendix A: X + O, O = 40 bytes for IPv4 in IPv6, 20 for IPv6
in IPv4). A TCP
segment without payload (a handshake's, a FIN, a RST) is as small as its stack allows."""

from dataclasses import dataclass, replace

ETHERNET_BYTES = 14       # untagged: MAC addresses and EtherType
UDP_BYTES = 8
TAG_BYTES = 18            # the test tag (docs/protocol.md "Test frame payload")
FCS_BYTES = 4
# An IEEE 802.1Q / 802.1ad VLAN tag: 4 bytes on the wire on top of the frame (frame sizes name
# the untagged frame; RFC 2544 App. B counts every byte on the wire).
VLAN_TAG_BYTES = 4
MAX_FRAME_SIZE = 9216     # RFC 8219 §5.1.1's largest; the engine's (hello limits.max_frame_size)
# The IPv4 TTL and IPv6 hop limit of every test frame (RFC 2544 App. C.2.6.4), sent as the
# streams' `ttl` (docs/protocol.md): the value the receiver's TTL check counts the DUT's hops
# down from.
SENT_TTL = 10


@dataclass(frozen=True)
class Transport:
    """What follows a test frame's IP headers, up to the test tag's end (the engine's
    `l4_header_size`, engine/src/core/frame.hpp)."""
    name: str
    header_bytes: int
    # The payload a frame must carry beyond the tag: a TCP data segment at least one byte
    # (docs/tcp.md "Phase 2"); handshake segments carry none.
    min_payload: int = 0
    # The segments that have this layout, as the report lists them.
    segments: str = ""


UDP = Transport("UDP", UDP_BYTES + TAG_BYTES)
# TCP (docs/tcp.md): the 20-byte header and the tag in its first option (kind, length, the tag:
# 20 bytes); a SYN or SYN-ACK also carries the window scale option (a NOP and 3 bytes) and the
# MSS option (4 bytes).
TCP_HEADER_BYTES = 20
TCP_TAG_OPTION_BYTES = 2 + TAG_BYTES
TCP_WINDOW_SCALE_BYTES = 4
TCP_MSS_BYTES = 4
TCP_SYN = Transport("TCP", TCP_HEADER_BYTES + TCP_TAG_OPTION_BYTES + TCP_WINDOW_SCALE_BYTES
                    + TCP_MSS_BYTES, segments="SYN and SYN-ACK")
TCP_ACK = Transport("TCP", TCP_HEADER_BYTES + TCP_TAG_OPTION_BYTES, segments="ACK, FIN and RST")
TCP_DATA = Transport("TCP", TCP_HEADER_BYTES + TCP_TAG_OPTION_BYTES, min_payload=1, segments="data")

# DNS (docs/dns.md): a query is UDP to port 53 with a DNS message in place of the test tag: the
# header, one question (a test name: one label of 18 hex digits, then the zone; its type and
# class) and with EDNS(0) an OPT record. Its size follows from the zone (the engine's
# dns::query_size).
DNS_HEADER_BYTES = 12
# A test name's first label (docs/dns.md "Test names"), by dns.names: xlatperf's 18 hex digits
# (nonce, stream, index), dns64perf++'s ddd-ddd-ddd-ddd (an IPv4 address).
DNS_LABEL_CHARS = {"xlatperf": 18, "dns64perf": 15}
DNS_QUESTION_TAIL_BYTES = 4   # QTYPE, QCLASS
DNS_OPT_BYTES = 11
DNS_ANSWER_BYTES = {"A": 2 + 10 + 4, "AAAA": 2 + 10 + 16}  # a compressed name, the fixed part, RDATA


def zone_wire_bytes(zone: str) -> int:
    """A zone's wire form (RFC 1035 §3.1): each label after its length, then the root's 0."""
    return sum(1 + len(label) for label in zone.rstrip(".").split(".")) + 1


def dns_query(zone: str, names: str, edns: bool) -> Transport:
    """The transport of a DNS query of the zone, of a name in the style `names`: UDP and the
    message."""
    message = (DNS_HEADER_BYTES + 1 + DNS_LABEL_CHARS[names] + zone_wire_bytes(zone) + DNS_QUESTION_TAIL_BYTES
               + (DNS_OPT_BYTES if edns else 0))
    return Transport("DNS", UDP_BYTES + message, segments="queries")


def dns_answer(zone: str, names: str, edns: bool, qtype: str) -> Transport:
    """The transport of the answer to such a query with one address record (the reply a DUT's
    medium carries the other way)."""
    query = dns_query(zone, names, edns)
    return replace(query, header_bytes=query.header_bytes + DNS_ANSWER_BYTES[qtype], segments="answers")


@dataclass(frozen=True)
class Layer:
    """A header layer between a test frame's Ethernet header and its transport, declared once:
    its name (as the engine names its declaration: engine/src/core/layers/, hello
    `limits.ip_headers` for the IP headers),
    how a report writes it, the bytes of its fixed part, and for an IP header its version (what
    the sides' IP versions, the addresses' keys and the protocol's `ip_version` and
    `tunnel.version` say). A stack holds any of them, at any depth: its sizes, overhead and name
    follow from the declarations."""
    name: str
    title: str
    header_bytes: int
    ip_version: int | None = None


IPV4_HEADER = Layer("ipv4", "IPv4", 20, ip_version=4)
IPV6_HEADER = Layer("ipv6", "IPv6", 40, ip_version=6)
IP_HEADERS = {4: IPV4_HEADER, 6: IPV6_HEADER}


@dataclass(frozen=True)
class Stack:
    """A frame's header layers, outermost first (IPv4; IPv4 in IPv6: an IPv6 header, then the
    IPv4 one; IPv6 in IPv4), and the transport in the innermost one."""
    layers: tuple[Layer, ...]
    transport: Transport = UDP

    @classmethod
    def of_ip(cls, *versions: int) -> "Stack":
        """The stack of IP headers of these versions, outermost first: of_ip(6, 4) is IPv4 in
        IPv6."""
        return cls(tuple(IP_HEADERS[v] for v in versions))

    def carrying(self, transport: Transport) -> "Stack":
        """The same header layers around `transport`."""
        return replace(self, transport=transport)

    @property
    def inner(self) -> int:
        """The IP version of the header the transport is in."""
        return next(layer.ip_version for layer in reversed(self.layers) if layer.ip_version)

    @property
    def outer(self) -> int:
        """The IP version of the outermost IP header: the one the wire's neighbours are resolved
        with."""
        return next(layer.ip_version for layer in self.layers if layer.ip_version)

    @property
    def encapsulated(self) -> bool:
        return len(self.layers) > 1

    @property
    def ip_bytes(self) -> int:
        """The bytes of the header layers (the fixed parts)."""
        return sum(layer.header_bytes for layer in self.layers)

    @property
    def overhead(self) -> int:
        """What encapsulation adds to the frame (RFC 8219 Appendix A's O): the outer layers."""
        return self.ip_bytes - self.layers[-1].header_bytes

    @property
    def min_frame(self) -> int:
        """The smallest frame that holds the test tag: with UDP 64 bytes for IPv4, 84 for IPv6,
        104 for IPv4 in IPv6 and for IPv6 in IPv4; a TCP segment without payload 78 bytes for
        IPv4, 98 for IPv6, 4 more for a SYN or SYN-ACK; a TCP data segment one byte more."""
        return (ETHERNET_BYTES + self.ip_bytes + self.transport.header_bytes + self.transport.min_payload
                + FCS_BYTES)

    @property
    def tunnel_keys(self) -> dict:
        """What the protocol's `tunnel` and `rx.tunnel` objects of frames of this stack say of
        its outer header besides its addresses: its IP version where it is not 6, the default
        (docs/protocol.md)."""
        return {"version": self.outer} if self.encapsulated and self.outer != 6 else {}

    def __str__(self) -> str:
        # The header layers alone: what the reports name a stack by (the transport is UDP but
        # for a stateful test's TCP segments, which its report describes apart).
        return " in ".join(layer.title for layer in reversed(self.layers))


IPV4, IPV6 = Stack.of_ip(4), Stack.of_ip(6)
IPV4_IN_IPV6, IPV6_IN_IPV4 = Stack.of_ip(6, 4), Stack.of_ip(4, 6)


def ip_packet_bytes(frame_size: int) -> int:
    """The bytes of the IP packet (its outermost header and all inside) in an untagged frame."""
    return frame_size - ETHERNET_BYTES - FCS_BYTES


def named_stack(stacks) -> Stack:
    """The stack a configured frame size names among a trial's `stacks`: the largest header
    before encapsulation (IPv6 when any frame carries its datagram in IPv6)."""
    return IPV6 if any(s.inner == 6 for s in stacks) else IPV4


def frame_size(size: int, stack: Stack, named: Stack) -> int:
    """The size of the frame of `stack` that carries the payload of a `size`-byte frame of the
    `named` stack."""
    return size - named.ip_bytes + stack.ip_bytes


def size_name(size: int, stack: Stack, named: Stack) -> int:
    """frame_size inverted: the configured size a `size`-byte frame of `stack` was built from."""
    return size - stack.ip_bytes + named.ip_bytes


# The stack of plain IPv4 or IPv6 frames, by IP version.
IP_STACKS = {4: IPV4, 6: IPV6}
