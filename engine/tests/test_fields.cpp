#include <gtest/gtest.h>

#include <map>
#include <random>

#include "fields.hpp"
#include "pacing.hpp"
#include "plan.hpp"
#include "protocol.hpp"
#include "reference.hpp"

using namespace xlp;

// Over every possible input word, each output value must be hit exactly equally often:
// the mapping has no bias at all, not just a small one.
TEST(RangeMapper, ExactlyUniformOverAFullPeriod) {
  for (uint32_t range : {1u, 2u, 3u, 7u, 100u, 255u, 256u, 1000u, 40000u, 65535u}) {
    BasicRangeMapper<uint16_t, uint32_t> m{uint16_t(range)};
    std::vector<uint32_t> counts(range, 0);
    for (uint32_t x = 0; x < 65536; ++x) {
      uint16_t out;
      if (m.map(uint16_t(x), out)) {
        ASSERT_LT(out, range);
        ++counts[out];
      }
    }
    const uint32_t expected = 65536 / range;  // accepted inputs per value
    for (uint32_t v = 0; v < range; ++v) ASSERT_EQ(counts[v], expected) << "range " << range << " value " << v;
  }
  // 8-bit words: ranges that do not divide 256.
  for (uint32_t range = 1; range < 256; ++range) {
    BasicRangeMapper<uint8_t, uint16_t> m{uint8_t(range)};
    std::vector<uint32_t> counts(range, 0);
    for (uint32_t x = 0; x < 256; ++x) {
      uint8_t out;
      if (m.map(uint8_t(x), out)) ++counts[out];
    }
    for (uint32_t v = 0; v < range; ++v) ASSERT_EQ(counts[v], 256 / range) << range;
  }
}

namespace {

FieldSpec spec(VaryMode mode, uint32_t min, uint32_t max) {
  return FieldSpec{"f", 0, 0, false, false, mode, min, max};
}

std::vector<uint16_t> draw(FieldGenerator& g, uint32_t n, uint32_t burst = kMaxBurst) {
  std::vector<uint16_t> out(n);
  for (uint32_t i = 0; i < n; i += burst) g.generate(out.data() + i, std::min(burst, n - i));
  return out;
}

}  // namespace

TEST(FieldGenerator, IncreasingAndDecreasingWrapExactly) {
  FieldGenerator inc(spec(VaryMode::kIncreasing, 1024, 1027), 0, 1);
  EXPECT_EQ(draw(inc, 10), (std::vector<uint16_t>{1024, 1025, 1026, 1027, 1024, 1025, 1026, 1027, 1024, 1025}));
  FieldGenerator dec(spec(VaryMode::kDecreasing, 5, 7), 0, 1);
  EXPECT_EQ(draw(dec, 7), (std::vector<uint16_t>{7, 6, 5, 7, 6, 5, 7}));
}

TEST(FieldGenerator, RandomStaysInRangeHitsBothEndsAndRepeatsPerSeed) {
  FieldGenerator ga(spec(VaryMode::kRandom, 1024, 65535), 0, 42), gb(spec(VaryMode::kRandom, 1024, 65535), 0, 42),
      gc(spec(VaryMode::kRandom, 1024, 65535), 0, 43);
  // Same seed, same sequence (RFC 4814 §4.2.1), even when the bursts are cut differently.
  auto va = draw(ga, 2000000), vb = draw(gb, 2000000, 7), vc = draw(gc, 2000000);
  EXPECT_EQ(va, vb);
  EXPECT_NE(va, vc);
  std::map<uint16_t, int> seen;
  for (uint16_t v : va) {
    ASSERT_GE(v, 1024);
    ++seen[v];
  }
  EXPECT_TRUE(seen.count(1024) && seen.count(65535));
}

TEST(FieldGenerator, ByteFieldKeepsTheOtherByte) {
  FieldSpec hi{"net", 0, 8, true, false, VaryMode::kIncreasing, 0, 255};
  FieldGenerator g(hi, 0x12ab, 3);
  auto v = draw(g, 3);
  EXPECT_EQ(v, (std::vector<uint16_t>{0x00ab, 0x01ab, 0x02ab}));
  FieldSpec lo{"net", 0, 0, true, false, VaryMode::kDecreasing, 0, 255};
  FieldGenerator g2(lo, 0x12ab, 3);
  EXPECT_EQ(draw(g2, 2), (std::vector<uint16_t>{0x12ff, 0x12fe}));
}

// Property: after applying random field values and a random sequence number/timestamp,
// the incrementally updated IPv4 header and UDP checksums equal a full recomputation.
TEST(ApplyFields, IncrementalChecksumsEqualFullRecomputation) {
  std::mt19937_64 rng(11);
  for (int v : {4, 6}) {
    StreamPlan sp = test_stream(v);
    using F = VarySpec::Field;
    sp.vary = {{F::kSrcPort, 0, 16, VaryMode::kRandom, 1024, 65535, "sp"},
               {F::kDstPort, 0, 16, VaryMode::kRandom, 1, 49151, "dp"},
               {F::kSrcIp, uint32_t(v == 4 ? 2 : 12), 16, VaryMode::kRandom, 0, 65535, "si"},
               {F::kDstIp, uint32_t(v == 4 ? 2 : 8), 16, VaryMode::kRandom, 0, 65535, "di"},
               {F::kDstIp, uint32_t(v == 4 ? 1 : 7), 8, VaryMode::kRandom, 0, 255, "net"}};
    FrameTemplate t = build_template(sp.spec, 0, 1);
    std::vector<FieldGenerator> gens;
    for (const FieldSpec& f : resolve_fields(sp, t)) {
      const uint8_t* w = t.bytes.data() + f.word_offset;
      gens.emplace_back(f, uint16_t(w[0] << 8 | w[1]), 5 + gens.size());
    }
    uint16_t values[kMaxFields][kMaxBurst];
    uint8_t positions[kMaxBurst];
    for (uint32_t j = 0; j < kMaxBurst; ++j) positions[j] = uint8_t(j);
    for (int burst = 0; burst < 300; ++burst) {
      std::vector<std::vector<uint8_t>> burst_frames(kMaxBurst, t.bytes);
      uint8_t* frames[kMaxBurst];
      for (uint32_t j = 0; j < kMaxBurst; ++j) frames[j] = burst_frames[j].data();
      uint64_t udp_delta[kMaxBurst] = {}, ip_delta[kMaxBurst] = {};
      for (size_t f = 0; f < gens.size(); ++f) {
        gens[f].generate(values[f], kMaxBurst);
        apply_field(gens[f], values[f], kMaxBurst, frames, [&](uint32_t k) { return positions[k]; },
                    udp_delta, ip_delta);
      }
      for (uint32_t j = 0; j < kMaxBurst; ++j) {
        std::vector<uint8_t>& f = burst_frames[j];
        if (v == 4) finish_ipv4_header(f.data(), t, ip_delta[j]);
        stamp_frame(f.data(), t, uint32_t(rng()), rng(), udp_delta[j]);
        ASSERT_TRUE(udp_checksum_ok(f.data(), f.size())) << "IPv" << v;
        if (v == 4) {
          ASSERT_EQ(reference_checksum({f.begin() + 14, f.begin() + 34}), 0);
        }
        // Fields land where documented: IPv4 source word at bytes 2-3 of the address.
        const size_t src = 14 + (v == 4 ? 12 : 8) + (v == 4 ? 2 : 12);
        ASSERT_EQ(uint16_t(f[src] << 8 | f[src + 1]), values[2][j]);
        const size_t net = 14 + (v == 4 ? 16 + 1 : 24 + 7);
        ASSERT_EQ(f[net], uint8_t(values[4][j] & 0xff));  // odd byte: the word's low byte
      }
    }
  }
}

TEST(Plan, VaryValidation) {
  auto req = [](const std::string& vary) {
    return nlohmann::json::parse(R"({"duration":1,"flows":[{"tx_port":0,"rx_port":1,"rate":10,
      "foreground":{"ip_version":4,"src_mac":"02:00:00:00:00:01","dst_mac":"02:00:00:00:00:02",
      "src_ip":"198.18.0.2","dst_ip":"198.19.0.2","frame_size":64,"vary":)" + vary + "}}]}");
  };
  auto error_of = [&](const std::string& vary) -> std::string {
    try { protocol::parse_trial(req(vary), 2); } catch (const std::invalid_argument& e) { return e.what(); }
    return "";
  };
  EXPECT_EQ(error_of(R"([{"field":"src_port","mode":"random","min":1024,"max":65535}])"), "");
  EXPECT_EQ(error_of(R"([{"field":"src_port","mode":"random","min":1024,"max":70000}])"),
            "flows[0].foreground.vary[0].max = 70000: must be an integer in 1024..65535");
  EXPECT_EQ(error_of(R"([{"field":"dst_ip","mode":"up","min":0,"max":1}])"),
            "flows[0].foreground.vary[0].mode = \"up\": must be one of increasing, decreasing, random, enumerate");
  EXPECT_EQ(error_of(R"([{"field":"dst_ip","offset":3,"mode":"random","min":0,"max":1}])"),
            "flows[0].foreground.vary[0].offset = 3: must be an integer in 0..2");
  EXPECT_EQ(error_of(R"([{"field":"dst_ip","offset":2,"mode":"random","min":0,"max":65535},
                        {"field":"dst_ip","offset":2,"bits":8,"mode":"random","min":0,"max":255}])"),
            "flows[0].foreground.vary[1] collides with flows[0].foreground.vary[0]: both change the same 16 bits of the header");
}

// The sender maps sixteen draws at a time with vector operations; it must give exactly what
// the scalar RangeMapper (proven unbiased above) gives on the same draws, in the same order.
TEST(FieldGenerator, VectorMappingEqualsTheScalarMapper) {
  for (uint32_t range : {3u, 1000u, 49151u, 64512u, 65535u}) {
    const uint64_t seed = 99 + range;
    FieldGenerator g(spec(VaryMode::kRandom, 7, 7 + range - 1), 0, seed);
    std::vector<uint16_t> produced = draw(g, 4000);
    LaneRng lanes(seed);
    RangeMapper mapper(range);
    std::vector<uint16_t> expected;
    while (expected.size() < produced.size()) {
      const LaneRng::Vec r = lanes.next();
      for (int half = 0; half < 2; ++half)
        for (int l = 0; l < LaneRng::kLanes; ++l) {
          uint32_t v;
          if (mapper.map(uint32_t(half ? r[l] >> 32 : r[l] & 0xffffffffu), v)) expected.push_back(uint16_t(7 + v));
        }
    }
    expected.resize(produced.size());
    EXPECT_EQ(produced, expected) << "range " << range;
  }
}
