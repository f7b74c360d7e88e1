#include <gtest/gtest.h>

#include <random>
#include <set>

#include "core/enumerate.hpp"
#include "emulation/patches.hpp"
#include "protocol/plan.hpp"
#include "protocol/protocol.hpp"
#include "reference.hpp"
#include "emulation/statetable.hpp"

using namespace xlp;

TEST(Feistel, IsABijectionOnEverySize) {
  for (uint64_t size : {1ull, 2ull, 3ull, 5ull, 17ull, 64ull, 1000ull, 4097ull, 65536ull, 100003ull}) {
    FeistelPermutation p(size, 42);
    std::vector<bool> seen(size, false);
    for (uint64_t i = 0; i < size; ++i) {
      const uint64_t v = p(i);
      ASSERT_LT(v, size);
      ASSERT_FALSE(seen[v]) << "size " << size << ": " << v << " twice";
      seen[v] = true;
    }
  }
}

TEST(Feistel, LargeSpacesStayInRangeAndDependOnTheSeed) {
  // A bijection by construction: every round xors a function of one part into the other (its
  // own inverse), so the network permutes the 2^bits domain, and cycle walking restricted to
  // [0, size) keeps a permutation one. Sampled here: in range, no two of 200,000 inputs
  // (consecutive and spread) collide, and the order depends on the seed.
  for (uint64_t size : {64512ull * 49151ull * 1000ull, 400000000ull, (1ull << 63) + 12345}) {
    FeistelPermutation a(size, 1), b(size, 2);
    std::set<uint64_t> outputs;
    int same = 0;
    for (uint64_t i = 0; i < 100000; ++i) {
      const uint64_t spread = size / 2 + i * (size / 200000);  // disjoint from [0, 100000)
      for (uint64_t x : {i, spread}) {
        const uint64_t y = a(x);
        ASSERT_LT(y, size);
        outputs.insert(y);
      }
      same += a(i) == b(i);
    }
    EXPECT_EQ(outputs.size(), 200000u) << size;
    EXPECT_LT(same, 5);
  }
}

TEST(TupleEnumerator, EveryCombinationExactlyOnceInEachOrder) {
  for (auto order : {TupleEnumerator::Order::kIncreasing, TupleEnumerator::Order::kDecreasing,
                     TupleEnumerator::Order::kRandom}) {
    TupleEnumerator e({3, 4, 5}, order, 7);  // 60 combinations
    ASSERT_EQ(e.space(), 60u);
    uint32_t digits[8][32];
    std::set<std::tuple<uint32_t, uint32_t, uint32_t>> seen;
    std::vector<uint32_t> first_digit;
    for (int burst = 0; burst < 2; ++burst) {
      const uint32_t n = burst == 0 ? 32 : 28;
      e.generate(digits, n);
      for (uint32_t k = 0; k < n; ++k) {
        ASSERT_LT(digits[0][k], 3u);
        ASSERT_LT(digits[1][k], 4u);
        ASSERT_LT(digits[2][k], 5u);
        seen.insert({digits[0][k], digits[1][k], digits[2][k]});
        first_digit.push_back(digits[0][k]);
      }
    }
    EXPECT_EQ(seen.size(), 60u);
    if (order == TupleEnumerator::Order::kIncreasing) {  // the first field varies fastest
      EXPECT_EQ(std::vector<uint32_t>(first_digit.begin(), first_digit.begin() + 4),
                (std::vector<uint32_t>{0, 1, 2, 0}));
    }
    if (order == TupleEnumerator::Order::kDecreasing) {
      EXPECT_EQ(first_digit[0], 2u);
    }
  }
  EXPECT_THROW(TupleEnumerator({65536, 65536, 65536, 65536}, TupleEnumerator::Order::kRandom, 1),
               std::invalid_argument);  // 2^64 combinations do not fit
}

namespace {

FrameTemplate responder_template(int v) {
  FrameSpec s;
  s.ip_version = v;
  s.src_ip = parse_ip(v == 4 ? "198.19.0.2" : "2001:2:0:8000::2", v);
  s.dst_ip = parse_ip(v == 4 ? "198.19.0.1" : "2001:2:0:8000::1", v);
  s.frame_size = v == 4 ? 64 : 84;
  return build_template(s, 2, 1);
}

}  // namespace

TEST(StateTable, LearnsTuplesAndAnswersSwappedWithValidChecksums) {
  for (int v : {4, 6}) {
    // Phase 1 frames as they arrive at the Responder: from the NAT's public address and ports.
    StateTable table(v, 3);
    for (uint16_t port : {40000, 40001, 40002, 40003}) {
      FrameSpec s;
      s.ip_version = v;
      s.src_ip = parse_ip(v == 4 ? "198.19.0.1" : "2001:2:0:8000::1", v);
      s.dst_ip = parse_ip(v == 4 ? "198.19.0.2" : "2001:2:0:8000::2", v);
      s.src_port = port;
      s.dst_port = 80;
      s.frame_size = v == 4 ? 64 : 84;
      FrameTemplate f = build_template(s, 0, 1);
      table.learn(f.bytes.data() + 14, nullptr, uint16_t(0xce00 + port % 4));  // from CE 0xce00 + i
    }
    EXPECT_EQ(table.size(), 3u);  // capacity reached: the fourth is not stored
    EXPECT_TRUE(table.full());
    const FrameTemplate t = responder_template(v);
    table.prepare(t);
    for (uint64_t i = 0; i < 3; ++i) {
      std::vector<uint8_t> frame = t.bytes;
      const uint64_t delta = table.write(i, frame.data(), t);
      stamp_frame(frame.data(), t, 7, 12345, delta);
      ASSERT_TRUE(udp_checksum_ok(frame.data(), frame.size())) << "IPv" << v << " entry " << i;
      if (v == 4) {
        ASSERT_EQ(reference_checksum({frame.begin() + 14, frame.begin() + 34}), 0);
      }
      const size_t udp = t.l4_offset;
      EXPECT_EQ(frame[udp] << 8 | frame[udp + 1], 80);                 // source port = stored dport
      EXPECT_EQ(frame[udp + 2] << 8 | frame[udp + 3], int(40000 + i));  // destination = stored sport
      const size_t dst = 14 + (v == 4 ? 16 : 24);
      EXPECT_EQ(frame[dst + (v == 4 ? 3 : 15)], 1);  // to the NAT's public address (...::1 / .0.1)
      // The CE its entry was learned from, for the receiver's check (in the UDP checksum above).
      EXPECT_EQ(frame[t.tag_offset + kTagCe] << 8 | frame[t.tag_offset + kTagCe + 1], int(0xce00 + i));
    }
  }
  StateTable wrong(4, 10);
  FrameTemplate v6 = responder_template(6);
  EXPECT_FALSE(wrong.learn(v6.bytes.data() + 14));  // IPv6 frame, IPv4 table
}

TEST(EntrySelector, OrdersAndUniformCoverage) {
  EntrySelector inc(EntrySelector::Mode::kIncreasing, 3, 1), dec(EntrySelector::Mode::kDecreasing, 3, 1),
      fixed(EntrySelector::Mode::kFixed, 3, 1), rnd(EntrySelector::Mode::kRandom, 7, 1);
  std::vector<uint64_t> a, b;
  for (int i = 0; i < 5; ++i) a.push_back(inc.next()), b.push_back(dec.next());
  EXPECT_EQ(a, (std::vector<uint64_t>{0, 1, 2, 0, 1}));
  EXPECT_EQ(b, (std::vector<uint64_t>{2, 1, 0, 2, 1}));
  EXPECT_EQ(fixed.next(), 0u);
  std::vector<int> counts(7, 0);
  for (int i = 0; i < 70000; ++i) ++counts[rnd.next()];
  for (int c : counts) EXPECT_NEAR(c, 10000, 500);
}

// TCP lanes (owned shares): each entry belongs to one lane, whatever the mode, and every entry
// to some lane; a lane beyond the entries has none.
TEST(EntrySelector, OwnedSharesPartitionTheEntries) {
  for (const auto mode : {EntrySelector::Mode::kIncreasing, EntrySelector::Mode::kDecreasing,
                          EntrySelector::Mode::kRandom, EntrySelector::Mode::kFixed}) {
    std::vector<int> lane_of(7, -1);
    for (uint64_t q = 0; q < 3; ++q) {
      EntrySelector s = EntrySelector::owned(mode, 7, 5, q, 3);
      EXPECT_EQ(s.entries(), q == 0 ? 3u : 2u);
      for (int i = 0; i < 300; ++i) {
        const uint64_t e = s.next();
        ASSERT_LT(e, 7u);
        EXPECT_EQ(e % 3, q);
        lane_of[e] = int(q);
      }
    }
    if (mode != EntrySelector::Mode::kFixed)
      for (int l : lane_of) EXPECT_GE(l, 0);
    else
      EXPECT_EQ(lane_of, (std::vector<int>{0, 1, 2, -1, -1, -1, -1}));
  }
  EntrySelector inc = EntrySelector::owned(EntrySelector::Mode::kIncreasing, 7, 5, 1, 3);
  std::vector<uint64_t> order;
  for (int i = 0; i < 3; ++i) order.push_back(inc.next());
  EXPECT_EQ(order, (std::vector<uint64_t>{1, 4, 1}));
  EXPECT_EQ(EntrySelector::owned(EntrySelector::Mode::kRandom, 2, 5, 2, 3).entries(), 0u);
}

TEST(Plan, StatefulValidation) {
  auto error_of = [](const std::string& extra_flow, const std::string& extra_trial) -> std::string {
    try {
      protocol::parse_trial(nlohmann::json::parse(R"({"duration":1,)" + extra_trial + R"("flows":[{"tx_port":0,"rx_port":1,"rate":10,)" +
                                        extra_flow + R"("foreground":{"ip_version":4,"src_mac":"02:00:00:00:00:01",
        "dst_mac":"02:00:00:00:00:02","src_ip":"198.18.0.2","dst_ip":"198.19.0.2","frame_size":64,
        "vary":[{"field":"src_port","mode":"enumerate","min":1024,"max":1033}],"enumerate":"random"}}]})"),
                  2);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error_of(R"("frames":11,)", ""), "");
  EXPECT_EQ(error_of(R"("frames":12,)", ""), "flows[0].frames = 12: must be at most duration x rate + 1 = 11");
  EXPECT_EQ(error_of("", R"("learn":{"port":1,"flow":0,"ip_version":4,"table_size":10},)"), "");
  EXPECT_EQ(error_of("", R"("learn":{"port":0,"flow":0,"ip_version":4,"table_size":10},)"),
            "learn.port = 0: must be the rx_port of flow flow0 (1)");
  EXPECT_EQ(error_of(R"("from_table":{"port":1,"selection":"random"},)", ""),
            "flows[0].from_table = {\"port\":1,\"selection\":\"random\"}: its addresses and ports come from the state table: no vary fields");
}

// The precomputed records (the fast path of phase 1) give byte for byte the frames that the
// per-field path gives for the same enumeration, with valid checksums, and restart after one
// period; mixed fields (an enumerated one and a random one) are not precomputed.
TEST(FramePatches, SameFramesAsThePerFieldPathAndValidChecksums) {
  for (int v : {4, 6}) {
    StreamPlan sp = test_stream(v);
    using F = VarySpec::Field;
    sp.vary = {{F::kSrcPort, 0, 16, VaryMode::kEnumerate, 1024, 1030, "sp"},
               {F::kDstPort, 0, 16, VaryMode::kEnumerate, 80, 84, "dp"},
               {F::kSrcIp, uint32_t(v == 4 ? 2 : 12), 16, VaryMode::kEnumerate, 2, 4, "si"},
               {F::kDstIp, uint32_t(v == 4 ? 2 : 14), 16, VaryMode::kEnumerate, 7, 8, "di"}};
    const FrameTemplate t = build_template(sp.spec, 0, 1);
    std::vector<FieldGenerator> gens;
    std::vector<uint64_t> radices;
    for (const FieldSpec& f : resolve_fields(sp, t)) {
      const uint8_t* w = t.bytes.data() + f.word_offset;
      gens.emplace_back(f, uint16_t(w[0] << 8 | w[1]), 3);
      radices.push_back(f.max - f.min + 1);
    }
    const uint64_t space = 7 * 5 * 3 * 2, frames = 2 * space + 17;  // wraps around twice
    TupleEnumerator for_records(radices, TupleEnumerator::Order::kRandom, 9);
    TupleEnumerator for_fields(radices, TupleEnumerator::Order::kRandom, 9);
    auto patches = FramePatches::precompute(gens, for_records, t, frames, 1 << 20);
    ASSERT_NE(patches, nullptr);
    EXPECT_EQ(patches->period(), space);
    EXPECT_EQ(patches->sets_ipv4_checksum(), v == 4);
    EXPECT_EQ(FramePatches::precompute(gens, for_records, t, frames, space), nullptr);  // too large

    std::set<std::vector<uint8_t>> period_frames;
    uint32_t digits[kMaxFields][kMaxBurst];
    uint16_t values[kMaxBurst];
    for (uint64_t done = 0; done < frames;) {
      const uint32_t n = uint32_t(std::min<uint64_t>(kMaxBurst, frames - done));
      std::vector<std::vector<uint8_t>> a(n, t.bytes), b(n, t.bytes);
      uint8_t* pa[kMaxBurst];
      uint8_t* pb[kMaxBurst];
      for (uint32_t k = 0; k < n; ++k) pa[k] = a[k].data(), pb[k] = b[k].data();
      const auto at = [](uint32_t k) { return k; };
      uint64_t patched_delta[kMaxBurst] = {}, udp_delta[kMaxBurst] = {}, ip_delta[kMaxBurst] = {};
      patches->apply(n, pa, at, patched_delta);
      for_fields.generate(digits, n);
      for (size_t f = 0; f < gens.size(); ++f) {
        for (uint32_t k = 0; k < n; ++k) values[k] = gens[f].word_at(digits[f][k]);
        apply_field(gens[f], values, n, pb, at, udp_delta, ip_delta);
      }
      for (uint32_t k = 0; k < n; ++k, ++done) {
        if (v == 4) finish_ipv4_header(pb[k], t, ip_delta[k]);
        stamp_frame(pa[k], t, uint32_t(done), 12345 + done, patched_delta[k]);
        stamp_frame(pb[k], t, uint32_t(done), 12345 + done, udp_delta[k]);
        ASSERT_EQ(a[k], b[k]) << "IPv" << v << " frame " << done;
        ASSERT_TRUE(udp_checksum_ok(pa[k], a[k].size()));
        if (v == 4) {
          ASSERT_EQ(reference_checksum({a[k].begin() + 14, a[k].begin() + 34}), 0);
        }
        if (done < space) {
          std::vector<uint8_t> tuple(a[k].begin() + 14, a[k].begin() + 14 + (v == 4 ? 24 : 44));
          tuple[v == 4 ? 10 : 6] = tuple[v == 4 ? 11 : 7] = 0;  // not the IPv4 checksum
          period_frames.insert(tuple);
        }
      }
    }
    EXPECT_EQ(period_frames.size(), space);  // every combination once per period

    gens[1] = FieldGenerator({"dp", gens[1].spec().word_offset, 0, false, false, VaryMode::kRandom, 80, 84}, 0, 1);
    TupleEnumerator three(radices, TupleEnumerator::Order::kRandom, 9);
    EXPECT_EQ(FramePatches::precompute(gens, three, t, frames, 1 << 20), nullptr);
  }
}

TEST(Divider, QuotientAndRemainderEqualDivision) {
  std::mt19937_64 rng(3);
  for (uint64_t d : {1ull, 2ull, 3ull, 7ull, 1000ull, 45ull, 20000ull, 64512ull, 65536ull, 4294967291ull,
                     (1ull << 63) + 5, ~0ull}) {
    const Divider div(d);
    for (int i = 0; i < 20000; ++i) {
      uint64_t t = rng() >> (i % 64);
      if (i < 8) t = i < 4 ? uint64_t(i) : ~0ull - uint64_t(i - 4);  // the edges
      uint64_t q;
      const uint64_t r = div.divide(t, q);
      ASSERT_EQ(q, t / d) << t << " / " << d;
      ASSERT_EQ(r, t % d) << t << " % " << d;
    }
  }
}
