# SPDX-License-Identifier: BSD-3-Clause
"""The IPv4aaS address mappings (xlatperf/frames/addressing.py) against the worked examples of
RFC 6052 §2.4, RFC 7915 Appendix A, RFC 7597 Appendices A and B and RFC 7599 Appendix A."""

import ipaddress
from ipaddress import IPv4Address as V4, IPv4Network as Net4, IPv6Address as V6, IPv6Network as Net6

import pytest

from xlatperf.frames.addressing import MapRule, embed_ipv4, extract_ipv4

# RFC 6052 §2.4, Table 1: 192.0.2.33 embedded after each prefix length.
RFC6052_TABLE_1 = [("2001:db8::/32", "2001:db8:c000:221::"),
                   ("2001:db8:100::/40", "2001:db8:1c0:2:21::"),
                   ("2001:db8:122::/48", "2001:db8:122:c000:2:2100::"),
                   ("2001:db8:122:300::/56", "2001:db8:122:3c0:0:221::"),
                   ("2001:db8:122:344::/64", "2001:db8:122:344:c0:2:2100::"),
                   ("2001:db8:122:344::/96", "2001:db8:122:344::192.0.2.33")]


@pytest.mark.parametrize("prefix, expected", RFC6052_TABLE_1)
def test_rfc6052_table_1(prefix, expected):
    address = embed_ipv4(Net6(prefix), V4("192.0.2.33"))
    assert address == V6(expected)
    assert extract_ipv4(Net6(prefix), address) == V4("192.0.2.33")


def test_rfc6052_table_2_and_rfc7915_appendix_a():
    assert embed_ipv4(Net6("64:ff9b::/96"), V4("192.0.2.33")) == V6("64:ff9b::192.0.2.33")
    # RFC 7915 Appendix A: NSP 2001:db8:100::/40, H4 198.51.100.2 = 2001:db8:1c6:3364:2::.
    assert embed_ipv4(Net6("2001:db8:100::/40"), V4("198.51.100.2")) == V6("2001:db8:1c6:3364:2::")
    with pytest.raises(ValueError, match="/32, /40, /48, /56, /64 or /96"):
        embed_ipv4(Net6("2001:db8::/72"), V4("192.0.2.33"))


def test_every_address_survives_the_round_trip_at_every_length():
    for length in (32, 40, 48, 56, 64, 96):
        prefix = Net6(f"2001:db8::/{length}")
        for value in (0, 1, 0x80000000, 0xFFFFFFFF, 0xC6120002):
            embedded = embed_ipv4(prefix, V4(value))
            assert extract_ipv4(prefix, embedded) == V4(value)
            assert (int(embedded) >> 56) & 0xFF == 0, "the u octet, bits 64-71, is zero"


# RFC 7597 Appendix A Example 1 (and RFC 7599 Appendix A Example 1): BMR {2001:db8::/40,
# 192.0.2.0/24, 16}, PSID offset 6; the CE with End-user prefix 2001:db8:0012:3400::/56.
EXAMPLE_1 = MapRule(Net6("2001:db8::/40"), Net4("192.0.2.0/24"), 16, 6)
CE_ADDRESS = V6("2001:db8:0012:3400:0000:c000:0212:0034")


def test_rfc7597_example_1_the_ces_address_and_port_set():
    rule = EXAMPLE_1
    assert (rule.suffix_bits, rule.k, rule.m, rule.end_user_prefix_length) == (8, 8, 2, 56)
    ce = rule.ce(0x1234)                    # EA bits: IPv4 suffix 0x12, PSID 0x34
    assert ce.ipv4 == V4("192.0.2.18") and ce.psid == 0x34 and ce.ipv6 == CE_ADDRESS
    ranges = rule.port_ranges(0x34)
    # "Available ports (63 ranges): 1232-1235, 2256-2259, ...... , 63696-63699, 64720-64723"
    assert len(ranges) == 63 and ranges[:2] == [(1232, 1235), (2256, 2259)]
    assert ranges[-2:] == [(63696, 63699), (64720, 64723)]
    assert sum(last - first + 1 for first, last in ranges) == 252


def test_rfc7597_examples_2_and_3_the_forwarding_rule_finds_the_ce():
    # Example 2: a packet to 192.0.2.18 port 1232 goes to the CE of Example 1 (PSID 0x34).
    assert EXAMPLE_1.psid_of_port(1232) == 0x34
    assert EXAMPLE_1.ce_of(V4("192.0.2.18"), 1232).ipv6 == CE_ADDRESS
    # Every port of the set maps to the same CE, a port of another set to another CE.
    assert {EXAMPLE_1.ce_of(V4("192.0.2.18"), p).index for p in (1232, 1235, 64720)} == {0x1234}
    assert EXAMPLE_1.ce_of(V4("192.0.2.18"), 1236).psid == 0x35
    assert EXAMPLE_1.ce_of(V4("192.0.2.18"), 80) is None      # A = 0: no CE's port
    assert EXAMPLE_1.ce_of(V4("198.18.0.1"), 1232) is None     # outside the rule


def test_rfc7597_examples_4_and_5_rules_without_ea_bits():
    # Example 4: BMR {2001:db8:0012:3400::/56, 192.0.2.18/32, 0}: one CE, no sharing.
    rule = MapRule(Net6("2001:db8:0012:3400::/56"), Net4("192.0.2.18/32"), 0)
    assert rule.ce_count == 1 and rule.k == 0
    assert rule.ce(0).ipv6 == V6("2001:db8:0012:3400:0000:c000:0212:0000")
    assert rule.port_ranges(0) == [(0, 65535)]
    # Example 5: the same rule sharing 256 ways, PSID 0x34 from DHCPv6, offset 6.
    shared = MapRule(Net6("2001:db8:0012:3400::/56"), Net4("192.0.2.18/32"), 0, 6, psid_length=8)
    assert shared.ce(0, psid=0x34).ipv6 == CE_ADDRESS
    assert shared.port_ranges(0x34)[0] == (1232, 1235) and shared.port_ranges(0x34)[-1] == (64720, 64723)


def test_rfc7597_appendix_b_gma_examples():
    # B.2 Example 1: R = 256, PSID 0, a = 6, k = 8.
    rule = MapRule(Net6("2001:db8::/40"), Net4("192.0.2.0/24"), 16, 6)
    ranges = rule.port_ranges(0)
    assert len(ranges) == 63 and ranges[:2] == [(1024, 1027), (2048, 2051)]
    assert ranges[-2:] == [(63488, 63491), (64512, 64515)]
    # B.2 Example 2: R = 64, PSID 0, a = 0, k = 6: "Available ports (1 range): 0-1023".
    rule = MapRule(Net6("2001:db8::/40"), Net4("192.0.2.0/24"), 14, 0)
    assert rule.k == 6 and rule.port_ranges(0) == [(0, 1023)]


def test_rfc7599_examples():
    # Example 2 (BR -> CE) and 3 (CE -> outside): the DMR 2001:db8:ffff::/64 embeds the
    # server 10.2.3.4 as 2001:db8:ffff:0:000a:0203:0400::; the CE is Example 1's.
    dmr = Net6("2001:db8:ffff::/64")
    assert embed_ipv4(dmr, V4("10.2.3.4")) == V6("2001:db8:ffff:0:000a:0203:0400::")
    assert EXAMPLE_1.ce_of(V4("192.0.2.18"), 1232).ipv6 == CE_ADDRESS
    # Example 4 as its rule says (192.0.2.1/32; the RFC's text names 192.0.2.18 but its CE
    # address ...:c000:0201:0000 is 192.0.2.1's: the example is inconsistent, the address right).
    rule = MapRule(Net6("2001:db8:0012:3400::/56"), Net4("192.0.2.1/32"), 0)
    assert rule.ce(0).ipv6 == V6("2001:db8:0012:3400:0000:c000:0201:0000")


def test_a_million_ces_in_the_benchmarking_ranges():
    """RFC 5180's 2001:2::/48 and RFC 2544's 198.18.0.0/16 with 20 EA bits: 2^20 CEs, 16 per
    IPv4 address, each with 63 x 64 ports; every CE's address maps back to it."""
    rule = MapRule(Net6("2001:2::/48"), Net4("198.18.0.0/16"), 20, 6)
    assert rule.ce_count == 1 << 20 and (rule.k, rule.m) == (4, 6)
    for index in (0, 1, 0x12345, (1 << 20) - 1):
        ce = rule.ce(index)
        assert ce.ipv4 in Net4("198.18.0.0/16") and ce.ipv6 in Net6("2001:2::/48")
        first, last = rule.port_ranges(ce.psid)[5]
        assert rule.ce_of(ce.ipv4, first) == ce == rule.ce_of(ce.ipv4, last)
        assert ipaddress.IPv6Network(f"{ce.ipv6}/{rule.end_user_prefix_length}", strict=False) \
            .network_address == V6(int(ce.ipv6) >> 60 << 60)


@pytest.mark.parametrize("args, message", [
    ((Net6("2001:db8::/40"), Net4("192.0.2.0/24"), 49), "EA-bits length 49: must be in 0..48"),
    ((Net6("2001:db8::/64"), Net4("192.0.2.0/24"), 24), "must be at most 80 bits"),
    ((Net6("2001:db8::/40"), Net4("192.0.2.0/24"), 16, 10), "PSID offset 10 \\+ PSID length 8"),
])
def test_bad_rules_say_what_is_wrong(args, message):
    with pytest.raises(ValueError, match=message):
        MapRule(*args)
