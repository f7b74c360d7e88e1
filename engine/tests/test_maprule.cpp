// The MAP algorithm (maprule.hpp) on the worked examples of RFC 7597 Appendices A and B and
// RFC 7599 Appendix A, and a uniform choice of CEs and ports over a million-CE rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "emulation/ce.hpp"
#include "emulation/fields.hpp"
#include "core/frame.hpp"
#include "emulation/maprule.hpp"

using namespace xlp;

namespace {
uint32_t v4(const char* text) {
  const auto a = parse_ip(text, 4);
  return uint32_t(a[0]) << 24 | uint32_t(a[1]) << 16 | uint32_t(a[2]) << 8 | a[3];
}
// RFC 7597 App. A Example 1 (= RFC 7599 App. A Example 1): BMR {2001:db8::/40, 192.0.2.0/24, 16}.
MapRule example1() { return MapRule(parse_ip("2001:db8::", 6), 40, v4("192.0.2.0"), 24, 16, 6); }
}  // namespace

TEST(MapRule, Rfc7597Example1TheCesAddressAndPortSet) {
  const MapRule rule = example1();
  EXPECT_EQ(rule.psid_length(), 8u);
  EXPECT_EQ(rule.contiguous_bits(), 2u);
  const MapCe ce = rule.ce(0x1234);  // IPv4 suffix 0x12, PSID 0x34
  EXPECT_EQ(ce.ipv4, v4("192.0.2.18"));
  EXPECT_EQ(ce.psid, 0x34);
  EXPECT_EQ(ce.ipv6, parse_ip("2001:db8:0012:3400:0000:c000:0212:0034", 6));
  // "Available ports (63 ranges): 1232-1235, 2256-2259, ...... , 63696-63699, 64720-64723"
  ASSERT_EQ(rule.ports_per_ce(), 252u);
  EXPECT_EQ(rule.port(0x34, 0), 1232);
  EXPECT_EQ(rule.port(0x34, 3), 1235);
  EXPECT_EQ(rule.port(0x34, 4), 2256);
  EXPECT_EQ(rule.port(0x34, 248), 64720);
  EXPECT_EQ(rule.port(0x34, 251), 64723);
  for (uint32_t i = 0; i < rule.ports_per_ce(); ++i) ASSERT_EQ(rule.psid_of_port(rule.port(0x34, i)), 0x34);
}

TEST(MapRule, Rfc7597Examples4And5RulesWithoutEaBits) {
  const auto prefix = parse_ip("2001:db8:0012:3400::", 6);
  const MapRule whole(prefix, 56, v4("192.0.2.18"), 32, 0);
  EXPECT_EQ(whole.ce_count(), 1u);
  EXPECT_EQ(whole.ce(0).ipv6, parse_ip("2001:db8:0012:3400:0000:c000:0212:0000", 6));
  EXPECT_EQ(whole.ports_per_ce(), 65536u - 1024u);  // the tester's: RFC 4814's 1024..65535
  const MapRule shared(prefix, 56, v4("192.0.2.18"), 32, 0, 6, 8);  // PSID 0x34 from DHCPv6
  EXPECT_EQ(shared.ce(0, 0x34).ipv6, parse_ip("2001:db8:0012:3400:0000:c000:0212:0034", 6));
  EXPECT_EQ(shared.port(0x34, 0), 1232);
  // RFC 7599 Example 4 as its rule says (192.0.2.1/32; the text's 192.0.2.18 is a slip).
  const MapRule one(prefix, 56, v4("192.0.2.1"), 32, 0);
  EXPECT_EQ(one.ce(0).ipv6, parse_ip("2001:db8:0012:3400:0000:c000:0201:0000", 6));
}

TEST(MapRule, Rfc7597AppendixBGmaExamples) {
  const MapRule r256 = example1();  // R = 256, a = 6, k = 8: PSID 0 has 1024-1027, 2048-2051, ...
  EXPECT_EQ(r256.port(0, 0), 1024);
  EXPECT_EQ(r256.port(0, 4), 2048);
  EXPECT_EQ(r256.port(0, 248), 64512);
  EXPECT_EQ(r256.port(0, 251), 64515);
  // R = 64, a = 0, k = 6: "Available ports (1 range): 0-1023".
  const MapRule r64(parse_ip("2001:db8::", 6), 40, v4("192.0.2.0"), 24, 14, 0);
  EXPECT_EQ(r64.psid_length(), 6u);
  ASSERT_EQ(r64.ports_per_ce(), 1024u);
  EXPECT_EQ(r64.port(0, 0), 0);
  EXPECT_EQ(r64.port(0, 1023), 1023);
}

// The sender's 64-bit path gives the same CEs as the 128-bit one, wherever the EA bits fall:
// in the high half, across the halves, in the low half, or none.
TEST(MapRule, HalvesAgreeWithTheWholeAddress) {
  const auto p = parse_ip("2001:db8:aaaa:bbbb:cccc::", 6);
  for (const auto& [n, r, o] : std::vector<std::array<unsigned, 3>>{
           {40, 24, 16}, {48, 16, 20}, {56, 16, 24}, {60, 24, 12}, {64, 24, 8}, {72, 32, 0}, {32, 8, 32}}) {
    const MapRule rule(p, n, v4("198.18.0.0") & (r ? ~0u << (32 - r) : 0), r, o, 6);
    for (uint64_t index : {uint64_t(0), uint64_t(1), rule.ce_count() / 3, rule.ce_count() - 1}) {
      uint64_t hi, lo;
      uint32_t ipv4;
      uint16_t psid;
      rule.fields(index, hi, lo, ipv4, psid);
      const auto whole = rule.fields(index);
      EXPECT_EQ(hi, uint64_t(whole.ipv6 >> 64)) << n << "/" << o << " CE " << index;
      EXPECT_EQ(lo, uint64_t(whole.ipv6)) << n << "/" << o << " CE " << index;
      EXPECT_EQ(ipv4, whole.ipv4);
      EXPECT_EQ(psid, whole.psid);
    }
  }
}

TEST(MapRule, BadRulesSayWhatIsWrong) {
  const auto p = parse_ip("2001:db8::", 6);
  EXPECT_THROW(MapRule(p, 40, 0, 24, 49), std::invalid_argument);
  EXPECT_THROW(MapRule(p, 64, 0, 24, 24), std::invalid_argument);
  EXPECT_THROW(MapRule(p, 40, 0, 24, 16, 10), std::invalid_argument);
}

// A million CEs (RFC 5180's 2001:2::/48, RFC 2544's 198.18.0.0/16, 20 EA bits, 16 CEs per
// address), drawn by the sender's CeGenerator (ce.hpp) a burst at a time: every frame's words
// (tunnel address, IPv4 address, port) are one CE's, and the CEs are uniform (chi-squared over
// 1,024 bins of 1,024 CEs each), and so are the ports within a set.
TEST(MapRule, AMillionCesChosenUniformly) {
  const MapRule rule(parse_ip("2001:2::", 6), 48, v4("198.18.0.0"), 16, 20, 6);
  ASSERT_EQ(rule.ce_count(), uint64_t(1) << 20);
  const CeSource source(rule, rule.ce_count());
  CeLayout layout;
  layout.ipv6 = 22, layout.ipv4 = 66, layout.port = 74;  // IPv4 in IPv6, untagged
  CeGenerator generator(source, layout, true, 42);
  ASSERT_TRUE(generator.placed());  // the sender's fast path: the rows as placements of the index
  const std::vector<CeRow>& rows = generator.rows();
  // Words 3-4 (the EA bits, address bits 48-67), 6 (the IPv4 suffix in the interface
  // identifier) and 7 (the PSID) change; word 5 (198.18) is the same for every CE and stays
  // the template's. Of the IPv4 address only its second word changes.
  ASSERT_EQ(rows.size(), 4u + 1u + 1u);
  constexpr size_t kBins = 1024, kDraws = 4 << 20;
  std::vector<uint64_t> bins(kBins, 0), port_bins(64, 0);
  uint16_t words[CeGenerator::kMaxRows][kFrameBlock];
  for (size_t drawn = 0; drawn < kDraws; drawn += kMaxBurst) {
    generator.generate(words, kMaxBurst);
    for (uint32_t k = 0; k < kMaxBurst; ++k) {
      Ipv6Bits address = source.at(0).ipv6;  // the template's
      uint32_t ipv4 = source.at(0).ipv4;
      uint16_t port = 0;
      for (size_t r = 0; r < rows.size(); ++r) {
        const uint16_t w = words[r][k];
        if (r < 4) {
          const unsigned shift = 112 - 16 * unsigned(rows[r].offset - layout.ipv6) / 2;
          address = (address & ~(Ipv6Bits(0xffff) << shift)) | Ipv6Bits(w) << shift;
        } else if (r == 4) {
          ASSERT_EQ(rows[r].offset, layout.ipv4 + 2);
          ipv4 = (ipv4 & 0xffff0000u) | w;
        } else {
          port = w;
        }
      }
      const auto index = rule.index_of(address);
      ASSERT_TRUE(index.has_value());
      const MapCe ce = rule.ce(*index);
      ASSERT_EQ(ce.ipv6, ipv6_bytes(address));
      ASSERT_EQ(ce.ipv4, ipv4);
      ASSERT_EQ(rule.psid_of_port(port), ce.psid);
      ASSERT_GE(port, 1024);  // A > 0: never a system port
      ++bins[*index / (rule.ce_count() / kBins)];
      ++port_bins[port & 63];
    }
  }
  auto chi2 = [](const std::vector<uint64_t>& observed, double expected) {
    double sum = 0;
    for (uint64_t o : observed) sum += (double(o) - expected) * (double(o) - expected) / expected;
    return sum;
  };
  // 1,023 degrees of freedom: mean 1023, sd 45; 1,250 is beyond 5 sd (p < 1e-6).
  EXPECT_LT(chi2(bins, double(kDraws) / kBins), 1250.0);
  EXPECT_LT(chi2(port_bins, double(kDraws) / 64), 63 + 5 * std::sqrt(2 * 63.0));
}

// Without sharing a CE owns every port (RFC 7597 §5.1), and the tester sends from, and to, RFC
// 4814 §4.5's client ports 1024..65535 only: never port 0, never a system port (docs/ipv4aas.md,
// "Port sets"). The receiver still takes every port as the CE's.
TEST(PortSet, WithoutSharingTheTesterUsesRfc4814sClientPorts) {
  for (const unsigned a : {0u, 6u, 15u}) {
    const PortSet whole(a, 0);
    ASSERT_EQ(whole.ports_per_ce(), 64512u) << a;
    for (uint32_t i = 0; i < whole.ports_per_ce(); ++i) ASSERT_EQ(whole.port(0, i), 1024 + i) << a;
    EXPECT_TRUE(whole.in_a_set(0) && whole.in_a_set(80) && whole.in_a_set(65535));
    EXPECT_EQ(whole.psid_of_port(80), 0);
  }
  // The sender, by the kernels' placements (a MAP rule) and by lookup (a binding table), a CE
  // alone (its port drawn jointly with it) and 16 CEs, random and in turn: every port in
  // 1024..65535, both ends reached.
  const auto p = parse_ip("2001:db8::", 6);
  const MapRule one_to_one(p, 48, v4("192.0.2.0"), 24, 8, 6);
  SoftwireTable table;
  table.ports = PortSet(0, 0);
  for (uint32_t i = 0; i < 4; ++i) table.softwires.push_back({ipv6_bits(p) + i, v4("192.0.2.1") + i, 0});
  struct Case {
    const char* name;
    CeSource source;
  };
  const std::vector<Case> cases{{"MAP 1:1, CE 5 alone", CeSource(one_to_one, 1, 5)},
                                {"MAP 1:1, 16 CEs", CeSource(one_to_one, 16)},
                                {"binding table without sharing", CeSource(table, 4)}};
  for (const Case& c : cases) {
    for (const bool random : {true, false}) {
      SCOPED_TRACE(std::string(c.name) + (random ? ", random" : ", increasing"));
      CeLayout layout;
      layout.ipv6 = 22, layout.ipv4 = 66, layout.port = 74;
      CeGenerator generator(c.source, layout, random, 11);
      ASSERT_EQ(generator.rows().back().offset, layout.port);
      const size_t row = generator.rows().size() - 1;
      uint16_t words[CeGenerator::kMaxRows][kFrameBlock];
      uint16_t lowest = 65535, highest = 0;
      for (uint32_t drawn = 0; drawn < (1u << 20) + 4 * 64512; drawn += kMaxBurst) {
        generator.generate(words, kMaxBurst);
        for (uint32_t k = 0; k < kMaxBurst; ++k) {
          ASSERT_GE(words[row][k], 1024);
          lowest = std::min(lowest, words[row][k]), highest = std::max(highest, words[row][k]);
        }
      }
      EXPECT_EQ(lowest, 1024);
      EXPECT_EQ(highest, 65535);
    }
  }
}

// The sender computes a CE's words from its index by placing the index's bits (CeGenerator's
// placements, derived from and checked against the CEs' fields) where it can, and from the
// fields otherwise. Either way every frame's words are one CE's, whatever the rule's shape:
// the EA bits across the interface identifier's boundary, PSID offset 0, no sharing, a count
// that is no power of two, one CE that is not the first; numbered B4s from a first address
// with the index's bits clear (placed) or set (carries: computed); a binding table (looked up).
TEST(CeGenerator, EveryFramesWordsAreOneCesOnEveryPath) {
  const auto p = parse_ip("2001:db8::", 6);
  struct Case {
    const char* name;
    CeSource source;
    bool placed;
  };
  std::vector<Case> cases;
  const MapRule wide(p, 40, v4("198.18.0.0"), 16, 24, 6), across(p, 56, v4("198.18.0.0"), 16, 20, 0),
      one_to_one(p, 48, v4("192.0.2.0"), 24, 8, 6);
  cases.push_back({"MAP /40, 24 EA bits", CeSource(wide, 1 << 20), true});
  cases.push_back({"MAP /56 + 20 EA bits, PSID offset 0", CeSource(across, across.ce_count()), true});
  cases.push_back({"MAP 1:1 (no PSID)", CeSource(one_to_one, one_to_one.ce_count()), true});
  cases.push_back({"MAP, 1,000 CEs", CeSource(wide, 1000), true});
  cases.push_back({"MAP, CE 12,345 alone", CeSource(wide, 1, 12345), true});
  B4Range clear, carrying;
  clear.ipv6 = ipv6_bits(p), clear.ipv4 = v4("192.0.0.2"), clear.count = 4096;
  carrying = clear, carrying.ipv6 += 1, carrying.ipv4_count = 3;
  cases.push_back({"B4s from 2001:db8::", CeSource(clear, 4096), true});
  cases.push_back({"B4s from 2001:db8::1, 3 IPv4 addresses", CeSource(carrying, 4096), false});
  SoftwireTable table;
  table.ports = PortSet(6, 4);
  for (uint32_t i = 0; i < 64; ++i) table.softwires.push_back({ipv6_bits(p) + 7 * i, v4("192.0.2.1") + i / 16, uint16_t(i % 16)});
  cases.push_back({"lw4o6 binding table", CeSource(table, 64), false});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    CeLayout layout;
    layout.ipv6 = 22, layout.ipv4 = 66, layout.port = c.source.ports() ? 74 : 0;
    for (const bool random : {true, false}) {
      CeGenerator generator(c.source, layout, random, 7);
      EXPECT_EQ(generator.placed(), c.placed);
      const std::vector<CeRow>& rows = generator.rows();
      uint16_t words[CeGenerator::kMaxRows][kFrameBlock];
      for (int burst = 0; burst < 64; ++burst) {
        generator.generate(words, kMaxBurst);
        for (uint32_t k = 0; k < kMaxBurst; ++k) {
          Ipv6Bits ipv6 = c.source.at(0).ipv6;  // the words no CE changes: the template's
          uint32_t ipv4 = c.source.at(0).ipv4;
          CeSource::Seen seen;
          for (size_t r = 0; r < rows.size(); ++r) {
            const uint16_t w = words[r][k];
            if (rows[r].offset >= layout.ipv6 && rows[r].offset < layout.ipv6 + 16) {
              const unsigned shift = 112 - 8 * unsigned(rows[r].offset - layout.ipv6);
              ipv6 = (ipv6 & ~(Ipv6Bits(0xffff) << shift)) | Ipv6Bits(w) << shift;
            } else if (rows[r].offset >= layout.ipv4 && rows[r].offset < layout.ipv4 + 4) {
              const unsigned shift = 16 - 8 * unsigned(rows[r].offset - layout.ipv4);
              ipv4 = (ipv4 & ~(uint32_t(0xffff) << shift)) | uint32_t(w) << shift;
            } else {
              ASSERT_EQ(rows[r].offset, layout.port);
              seen.port = w;
            }
          }
          seen.ipv6 = ipv6, seen.ipv4 = ipv4;
          ASSERT_TRUE(c.source.consistent(seen)) << "burst " << burst << ", frame " << k;
        }
      }
    }
  }
}

// A 6rd CE (RFC 5969: a MAP rule of 32 - IPv4MaskLen EA bits, no PSID) is seen in its IPv4
// tunnel's address alone, without a port: the receiver names it by that address, and the
// address's next CE is another CE.
TEST(CeSource, ACeWithoutAPortSetIsNamedByItsIpv4AddressAlone) {
  const MapRule domain(parse_ip("2001:db8::", 6), 32, v4("100.64.0.0"), 16, 16, 6);
  ASSERT_EQ(domain.ports().psid_length(), 0u);
  const CeSource one(domain, 1, 0x1234);  // the CE role's one CE, 100.64.18.52
  CeSource::Seen seen;
  seen.ipv4 = v4("100.64.18.52");
  EXPECT_TRUE(one.consistent(seen));
  seen.ipv4 = v4("100.64.18.53");
  EXPECT_FALSE(one.consistent(seen));
  seen.ipv4 = v4("100.65.18.52");  // outside the domain
  EXPECT_FALSE(one.consistent(seen));
  // With sharing the port still decides (RFC 7597 App. A Example 1: 192.0.2.18 is 256 CEs).
  const CeSource shared(example1(), 1, 0x1234);
  seen.ipv4 = v4("192.0.2.18");
  EXPECT_FALSE(shared.consistent(seen));
  seen.port = 1232;
  EXPECT_TRUE(shared.consistent(seen));
}

// The CE generator splits one draw into a CE and a port by SmallDivisor: exact for every
// 16-bit number and every divisor up to 65,535 (all of them checked here, on a sample of
// numbers, and every number for the divisors at the ends and a few port-set sizes).
TEST(SmallDivisor, EqualsIntegerDivision) {
  for (uint32_t d = 2; d < 65536; ++d) {
    const SmallDivisor by(d);
    const bool every = d < 16 || d > 65520 || d == 252 || d == 1008 || d == 4032;
    for (uint32_t v = 0; v < 65536; v += every ? 1 : 251) ASSERT_EQ(by.quotient(v), v / d) << v << " / " << d;
    ASSERT_EQ(by.quotient(65535), 65535 / d) << d;
    ASSERT_EQ(by.quotient(d - 1), 0u) << d;
    ASSERT_EQ(by.quotient(d), 1u) << d;
  }
}
