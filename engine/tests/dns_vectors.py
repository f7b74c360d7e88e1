#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes engine/tests/dns_vectors.txt: DNS messages encoded by dnspython (an implementation
nobody here wrote), which the engine's codec (src/core/dns.cpp) must write byte for byte
and judge as test_dns.cpp says. tests/test_dns_vectors.py checks that the file is this script's
output, so the vectors cannot drift from dnspython's encoding.

    python3 engine/tests/dns_vectors.py > engine/tests/dns_vectors.txt

Each line: a vector's name, then its message in hex.
"""

import ipaddress
import sys

import dns.flags
import dns.message
import dns.name
import dns.rdata
import dns.rdataclass
import dns.rdatatype
import dns.rrset

ZONE = "dns64perf.test."
TTL = 3600          # the A and AAAA records' (RecordRule::ttl)
SOA_TTL = 300       # the SOA record's, below its MINIMUM: the negative TTL (RFC 2308 §3)
SOA_MINIMUM = 900
MASK64 = (1 << 64) - 1


def mix64(z: int) -> int:
    """splitmix64's output function (as src/core/random.hpp)."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def name(nonce: int, stream: int, index: int) -> str:
    return f"{nonce:08x}{stream:02x}{index:08x}.{ZONE}"


def records(nonce: int, stream: int, index: int, aaaa_share: int = 0):
    """The name's A record in 198.18.0.0/15, and its AAAA in 2001:db8::/96 for aaaa_share of
    65536 names (records_of in src/core/dns.cpp)."""
    h = mix64(((nonce << 40) ^ (stream << 32) ^ index) & MASK64)
    a = ipaddress.IPv4Address((0xC6120000 & ~0x1FFFF) | (h & 0x1FFFF))
    aaaa = ipaddress.IPv6Address((0x20010DB8 << 96) | (h & 0xFFFFFFFF)) if (h >> 48) < aaaa_share else None
    return a, aaaa


def embed(prefix: str, ipv4: ipaddress.IPv4Address) -> ipaddress.IPv6Address:
    """RFC 6052 §2.2, written from the RFC's figure: the IPv4 bits around bits 64..71."""
    net = ipaddress.IPv6Network(prefix)
    bits = format(int(net.network_address), "0128b")[:net.prefixlen] + format(int(ipv4), "032b")
    if net.prefixlen <= 64:  # the IPv4 bits reach past bit 63: bits 64..71 (u) stay zero
        bits = bits[:64] + "0" * 8 + bits[64:]
    return ipaddress.IPv6Address(int(bits.ljust(128, "0")[:128], 2))


def query(qname: str, qtype: str, qid: int, edns: bool) -> dns.message.Message:
    q = dns.message.make_query(qname, qtype, use_edns=0 if edns else False, payload=1232)
    q.id = qid
    return q


def answer(q: dns.message.Message, rdtype: str | None, address=None) -> dns.message.Message:
    """The authoritative side's answer: AA, the record, or NODATA with the zone's SOA."""
    r = dns.message.make_response(q, our_payload=1232)
    r.flags |= dns.flags.AA
    r.flags &= ~dns.flags.RA
    qname = q.question[0].name
    if rdtype:
        r.answer.append(dns.rrset.from_text(qname, TTL, "IN", rdtype, str(address)))
    else:
        r.authority.append(dns.rrset.from_text(ZONE, min(SOA_TTL, SOA_MINIMUM), "IN", "SOA",
                                               f"{ZONE} {ZONE} 1 3600 600 86400 {SOA_MINIMUM}"))
    return r


def resolver_reply(q: dns.message.Message, rdtype: str, addresses, rcode=0, tc=False, ttl=60, ra=True,
                   edns=True, soa_ttl=None) -> dns.message.Message:
    """What a DNS64 resolver sends the client: RA, not AA; EDNS(0) when the query had it; a
    synthesis's TTL (60 s) below the negative AAAA answer's (SOA_TTL). Each keyword makes one
    fault: a TTL, RA clear, no OPT record, a NODATA answer's SOA of that TTL."""
    r = dns.message.make_response(q)
    if ra:
        r.flags |= dns.flags.RA
    if tc:
        r.flags |= dns.flags.TC
    if not edns:
        r.use_edns(False)
    r.set_rcode(rcode)
    for address in addresses:
        r.answer.append(dns.rrset.from_text(q.question[0].name, ttl, "IN", rdtype, str(address)))
    if soa_ttl is not None:
        r.authority.append(dns.rrset.from_text(ZONE, soa_ttl, "IN", "SOA",
                                               f"{ZONE} {ZONE} 1 3600 600 86400 {SOA_MINIMUM}"))
    return r


def vectors() -> list[tuple[str, bytes]]:
    out = []
    n = (0x5BE2A7C0, 1, 0x1F0)
    q_aaaa = query(name(*n), "AAAA", 0x1234, edns=True)
    q_a = query(name(*n), "A", 0xBEEF, edns=False)
    out += [("query_aaaa_edns", q_aaaa.to_wire()), ("query_a", q_a.to_wire())]
    a, _ = records(*n)
    out.append(("answer_a", answer(q_a, "A", a).to_wire()))
    out.append(("answer_aaaa_nodata_edns", answer(q_aaaa, None).to_wire()))
    # A name with a AAAA record when every name has one (aaaa_share 65536).
    _, aaaa = records(*n, aaaa_share=65536)
    out.append(("answer_aaaa_record_edns", answer(q_aaaa, "AAAA", aaaa).to_wire()))
    # The same query with its name's letters in random case (0x20): answered as received.
    mixed = "".join(c.upper() if i % 3 == 0 else c for i, c in enumerate(name(*n)))
    q_mixed = query(mixed, "A", 7, edns=False)
    out.append(("query_a_mixed_case", q_mixed.to_wire()))
    out.append(("answer_a_mixed_case", answer(q_mixed, "A", a).to_wire()))
    # dns64perf++'s names ({000..255}-{000..255}-{000..255}-{000..255}.<zone>): A the four
    # numbers, AAAA none (NODATA), as a zone of theirs would serve them; the resolver's case.
    q_perf_a = query("010-000-002-255.DNS64perf.test.", "A", 0x4242, edns=True)
    q_perf_aaaa = query("010-000-002-255.dns64perf.test.", "AAAA", 0x4243, edns=False)
    out += [("query_dns64perf_a", q_perf_a.to_wire()), ("query_dns64perf_aaaa", q_perf_aaaa.to_wire())]
    out.append(("answer_dns64perf_a", answer(q_perf_a, "A", "10.0.2.255").to_wire()))
    out.append(("answer_dns64perf_aaaa", answer(q_perf_aaaa, None).to_wire()))
    # A DNS64's replies to the client's AAAA query: synthesized with each RFC 6052 prefix length.
    for prefix in ("64:ff9b::/96", "2001:db8::/32", "2001:db8:100::/40", "2001:db8:122::/48",
                   "2001:db8:122:300::/56", "2001:db8:122:344::/64"):
        length = prefix.split("/")[1]
        out.append((f"dns64_reply_{length}", resolver_reply(q_aaaa, "AAAA", [embed(prefix, a)]).to_wire()))
    # Faults, each of its own kind.
    out.append(("dns64_reply_wrong_prefix",
                resolver_reply(q_aaaa, "AAAA", [embed("64:ff9b:1::/96", a)]).to_wire()))
    out.append(("dns64_reply_nodata", resolver_reply(q_aaaa, "AAAA", []).to_wire()))
    out.append(("dns64_reply_servfail", resolver_reply(q_aaaa, "AAAA", [], rcode=2).to_wire()))
    out.append(("dns64_reply_nxdomain", resolver_reply(q_aaaa, "AAAA", [], rcode=3).to_wire()))
    out.append(("dns64_reply_refused", resolver_reply(q_aaaa, "AAAA", [], rcode=5).to_wire()))
    out.append(("dns64_reply_truncated", resolver_reply(q_aaaa, "AAAA", [], tc=True).to_wire()))
    # The checks of a right answer (Expectation::checks), a fault each.
    synthesized = embed("64:ff9b::/96", a)
    out.append(("dns64_reply_ttl_of_a", resolver_reply(q_aaaa, "AAAA", [synthesized], ttl=TTL).to_wire()))
    out.append(("dns64_reply_no_ra", resolver_reply(q_aaaa, "AAAA", [synthesized], ra=False).to_wire()))
    out.append(("dns64_reply_no_edns", resolver_reply(q_aaaa, "AAAA", [synthesized], edns=False).to_wire()))
    # The record twice: dnspython's rrsets keep one of each, so its record is written again
    # after itself (a pointer to the question, TYPE .. RDLENGTH, 16 bytes), ANCOUNT 2.
    once = resolver_reply(q_aaaa, "AAAA", [synthesized]).to_wire()
    start = 12 + len(dns.name.from_text(name(*n)).to_wire()) + 4
    record = once[start:start + 2 + 10 + 16]
    twice = once[:6] + (2).to_bytes(2, "big") + once[8:start] + record + once[start:]
    out.append(("dns64_reply_duplicate_record", twice))
    out.append(("dns64_reply_nodata_soa", resolver_reply(q_aaaa, "AAAA", [], soa_ttl=SOA_TTL).to_wire()))
    out.append(("dns64_reply_nodata_soa_minimum",
                resolver_reply(q_aaaa, "AAAA", [], soa_ttl=SOA_MINIMUM).to_wire()))
    q_upper = query(name(*n).upper(), "AAAA", 0x1234, edns=True)
    out.append(("dns64_reply_upper_case", resolver_reply(q_upper, "AAAA", [synthesized]).to_wire()))
    other = query(name(n[0], n[1], n[2] + 1), "AAAA", 0x1234, edns=True)
    out.append(("dns64_reply_other_name", resolver_reply(other, "AAAA", [embed("64:ff9b::/96", a)]).to_wire()))
    return out


def main() -> None:
    for key, wire in vectors():
        sys.stdout.write(f"{key} {wire.hex()}\n")


if __name__ == "__main__":
    main()
