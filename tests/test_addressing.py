# SPDX-License-Identifier: BSD-3-Clause
"""The IPv4aaS address mappings (xlatperf/frames/addressing.py) against the worked examples of
RFC 6052 §2.4, RFC 7915 Appendix A, RFC 7597 Appendices A and B and RFC 7599 Appendix A."""

import ipaddress
import re
from ipaddress import IPv4Address as V4, IPv4Network as Net4, IPv6Address as V6, IPv6Network as Net6
from pathlib import Path

import pytest

from xlatperf.frames.addressing import (BINDING_COLUMNS, BindingTable, MapRule, Softwire, embed_ipv4,
                                        extract_ipv4)

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


def test_a_6rd_domain_is_a_map_rule_without_port_sharing():
    """RFC 5969 §4: a CE's 6rd delegated prefix is the 6rd prefix (n bits) followed by its IPv4
    address less the IPv4MaskLen bits the domain's addresses share: a MAP rule with 32 -
    IPv4MaskLen EA bits and no PSID (RFC 7597 §1 builds on 6rd so). Checked against ipv6calc
    (`ipv6calc --action 6rd_local_prefix --6rd_prefix 2a01:79c::/30 --6rd_relay_prefix
    213.167.115.92/0 81.167.4.214` prints 2a01:79d:469c:1358::/62), software nobody here wrote."""
    domain = MapRule(Net6("2a01:79c::/30"), Net4("0.0.0.0/0"), 32)
    ce = domain.ce_of(V4("81.167.4.214"), 1234)
    assert (domain.k, domain.end_user_prefix_length) == (0, 62)
    assert Net6(f"{ce.ipv6}/62", strict=False) == Net6("2a01:79d:469c:1358::/62")
    # IPv4MaskLen 8: the domain's 192/8 in common, 24 bits embedded, a /56 for a /32 6rd prefix.
    masked = MapRule(Net6("2001:db8::/32"), Net4("192.0.0.0/8"), 24)
    assert Net6(f"{masked.ce_of(V4('192.0.2.1'), 1234).ipv6}/56", strict=False) == Net6("2001:db8:2:100::/56")
    assert masked.ce_of(V4("198.51.100.1"), 1234) is None   # outside the domain's IPv4 addresses


def test_rfc7597_examples_4_and_5_rules_without_ea_bits():
    # Example 4: BMR {2001:db8:0012:3400::/56, 192.0.2.18/32, 0}: one CE, no sharing.
    rule = MapRule(Net6("2001:db8:0012:3400::/56"), Net4("192.0.2.18/32"), 0)
    assert rule.ce_count == 1 and rule.k == 0
    assert rule.ce(0).ipv6 == V6("2001:db8:0012:3400:0000:c000:0212:0000")
    # The CE owns every port; the tester uses RFC 4814 §4.5's client ports (engine: PortSet).
    assert rule.port_ranges(0) == [(1024, 65535)]
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


# -- lw4o6 binding tables (RFC 7596 §6.1; it has no worked example: port sets are RFC 7597's) --

# Three sharing ratios (a file has one: BindingTable.read; the lookup takes any).
SOFTWIRES = [("2001:2::1", "198.18.0.1", 1, 2, 0),   # 198.18.0.1 shared 4 ways, contiguous sets
             ("2001:2::2", "198.18.0.1", 2, 2, 0),
             ("2001:2::3", "198.18.0.2", 0, 0, 0),   # 198.18.0.2 alone
             ("2001:2::4", "198.19.0.1", 0x34, 8, 6)]
TABLE = "b4_ipv6,ipv4,psid,psid_length,psid_offset\n2001:2::1,198.18.0.1,1,2,0\n"


def test_a_binding_table_finds_the_lwb4_of_an_address_and_port():
    table = BindingTable([Softwire(V6(b4), V4(ipv4), *numbers) for b4, ipv4, *numbers in SOFTWIRES])
    # 4-way sharing with offset 0: PSID 1 owns 16384..32767, PSID 2 32768..49151.
    assert table.lookup(V4("198.18.0.1"), 16384).b4_ipv6 == V6("2001:2::1")
    assert table.lookup(V4("198.18.0.1"), 32767).b4_ipv6 == V6("2001:2::1")
    assert table.lookup(V4("198.18.0.1"), 32768).b4_ipv6 == V6("2001:2::2")
    assert table.lookup(V4("198.18.0.1"), 16383) is None          # PSID 0: nobody's
    assert table.lookup(V4("198.18.0.1"), 49152) is None          # PSID 3: nobody's
    assert table.lookup(V4("198.18.0.2"), 7).b4_ipv6 == V6("2001:2::3")   # the whole address
    assert table.lookup(V4("198.18.0.3"), 1024) is None           # no entry
    # RFC 7597 Example 1's port set, now from a binding table: 1232 is PSID 0x34's.
    assert table.lookup(V4("198.19.0.1"), 1232).b4_ipv6 == V6("2001:2::4")
    assert table.lookup(V4("198.19.0.1"), 1236) is None
    assert table.softwires[3].ports()[0] == (1232, 1235)
    assert table.softwires[0].ports() == [(16384, 32767)]


@pytest.mark.parametrize("line, message", [
    ("2001:2::9,198.18.0.1,1,3,0", "psid_length 3, psid_offset 0; line 2 has 2, 0: a table has one "
                                   "sharing ratio"),
    ("2001:2::9,198.18.0.5,1,2,6", "psid_length 2, psid_offset 6; line 2 has 2, 0"),
    ("2001:2::1,198.18.0.5,0,2,0", "the lwB4 address of line 2 again"),
    ("2001:2::9,198.18.0.1,1,2,0", "the port set of line 2 again"),
    ("2001:2::9,198.18.0.7,4,2,0", "psid = '4': must be an integer in 0..3"),
    ("2001:2::9,198.18.0.7,0,12,6", "psid_offset + psid_length = 18: must be at most 16"),
    ("198.18.0.9,198.18.0.7,0,0,0", "b4_ipv6 = '198.18.0.9': must be an IPv6 address"),
    ("2001:2::9,198.18.0.7,0,0", "4 columns; must be 5"),
])
def test_a_bad_binding_table_names_the_line_column_and_rule(tmp_path, line, message):
    path = tmp_path / "bad.csv"
    path.write_text(TABLE + line + "\n")
    with pytest.raises(ValueError, match=re.escape(f"{path}:3: {message}")):
        BindingTable.read(path)


def test_a_binding_table_needs_its_header_and_a_softwire(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("ipv4,b4\n")
    with pytest.raises(ValueError, match="the header line must be b4_ipv6,ipv4,psid"):
        BindingTable.read(path)
    path.write_text(TABLE.splitlines()[0] + "\n")
    with pytest.raises(ValueError, match="no softwire"):
        BindingTable.read(path)


def test_many_softwires_are_read_and_looked_up(tmp_path):
    """RFC 7596 at scale: 2^16 lwB4s sharing 2^12 addresses 16 ways (a = 0, k = 4)."""
    path = tmp_path / "million.csv"
    rows = [",".join(BINDING_COLUMNS)]
    base6, base4 = int(V6("2001:2::")), int(V4("198.18.0.0"))
    rows += [f"{V6(base6 + i)},{V4(base4 + (i >> 4))},{i & 15},4,0" for i in range(1 << 16)]
    path.write_text("\n".join(rows) + "\n")
    table = BindingTable.read(path)
    assert len(table) == 1 << 16
    for i in (0, 17, 0xABCD, (1 << 16) - 1):
        port = (i & 15) << 12 | 0x123
        assert table.lookup(V4(base4 + (i >> 4)), port).b4_ipv6 == V6(base6 + i)


# -- one set of rules: the files engine/tests/test_softwires.cpp gives the engine's reader --

BINDING_TABLE_CASES = Path(__file__).resolve().parents[1] / "engine" / "tests" / "binding_tables.txt"


def binding_table_cases() -> list[tuple[str, int | None, str]]:
    """(name, softwires or None for "refuse", the file's contents) of each case, as the engine's
    test reads them (\\t a tab, \\r a CR, \\s a space)."""
    cases: list[tuple[str, int | None, list[str]]] = []
    for line in BINDING_TABLE_CASES.read_text(encoding="utf-8").split("\n")[:-1]:
        if line.startswith("=== "):
            verdict, _, rest = line[4:].partition(" ")
            count, name = rest.split(" ", 1) if verdict == "accept" else (None, rest)
            cases.append((name, None if count is None else int(count), []))
        elif cases:
            cases[-1][2].append(re.sub(r"\\([trs])", lambda m: {"t": "\t", "r": "\r", "s": " "}[m[1]], line))
    return [(name, count, "".join(f"{text}\n" for text in lines)) for name, count, lines in cases]


@pytest.mark.parametrize("softwires, text", [pytest.param(count, text, id=name)
                                             for name, count, text in binding_table_cases()])
def test_the_front_end_accepts_the_binding_tables_the_engine_accepts(tmp_path, softwires, text):
    path = tmp_path / "table.csv"
    path.write_bytes(text.encode("utf-8"))
    if softwires is None:
        with pytest.raises(ValueError, match=re.escape(str(path))):
            BindingTable.read(path)
    else:
        assert len(BindingTable.read(path)) == softwires


def test_an_empty_psid_offset_is_0_and_blanks_around_cells_are_no_part_of_them(tmp_path):
    cases = {name: text for name, _, text in binding_table_cases()}
    assert len(cases) >= 30
    path = tmp_path / "table.csv"
    path.write_text(cases["an empty psid_offset is 0 (RFC 7596 §5.1)"])
    assert [s.psid_offset for s in BindingTable.read(path).softwires] == [0, 0]
    path.write_text(cases["spaces and tabs around cells and lines"])
    assert BindingTable.read(path).softwires == [Softwire(V6("2001:db8::1"), V4("192.0.2.1"), 1, 8, 6)]
