#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>

#include "emulation/ce.hpp"
#include "emulation/fields.hpp"
#include "core/pacing.hpp"
#include "protocol/plan.hpp"
#include "protocol/protocol.hpp"
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

// Runs `check` once on every kernel path this CPU runs (field_kernels.hpp), with generators
// made under that path; a failure names the path.
template <class F>
void on_every_path(F&& check) {
  for (Isa isa : {Isa::kScalar, Isa::kSse, Isa::kAvx2, Isa::kAvx512}) {
    if (!(supported_isas() >> int(isa) & 1)) continue;
    const FieldKernels& k = kernels_for(isa);
    SCOPED_TRACE(std::string("kernel path ") + k.name);
    const FieldKernels* previous = use_kernels(&k);
    check(k);
    use_kernels(previous);
  }
}

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
  std::vector<uint16_t> first_path;
  on_every_path([&](const FieldKernels&) {
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
    // ... and on every CPU.
    if (first_path.empty()) first_path = va;
    EXPECT_EQ(va, first_path);
  });
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

namespace {

// The values as field_kernels.hpp defines them, computed independently of the kernels: eight
// scalar xoshiro256** generators, the draws x_i = w[16 + i] * 2^16 + w[i] of each step, and
// the scalar RangeMapper (proven unbiased above).
class ReferenceField {
 public:
  ReferenceField(uint64_t seed, uint32_t min, uint32_t max, uint8_t shift = 0, uint16_t other = 0)
      : min_(min), shift_(shift), other_(other), mapper_(max - min + 1), full_(max - min + 1 == 65536) {
    Rng seeder(seed);
    for (auto& word : s_)
      for (auto& lane : word) lane = seeder.next();
  }
  uint16_t next() {
    for (;;) {
      if (i_ == 16) step();
      const uint32_t x = uint32_t(w_[16 + i_]) << 16 | w_[i_];
      ++i_;
      uint32_t v;
      if (full_) v = x >> 16;  // RangeMapper's range is 32 bits wide: 2^16 is the identity on the high half
      else if (!mapper_.map(x, v)) continue;
      return uint16_t((min_ + v) << shift_ | other_);
    }
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  void step() {
    for (int l = 0; l < 8; ++l) {
      uint64_t *s0 = &s_[0][l], *s1 = &s_[1][l], *s2 = &s_[2][l], *s3 = &s_[3][l];
      const uint64_t result = rotl(*s1 * 5, 7) * 9, t = *s1 << 17;
      *s2 ^= *s0, *s3 ^= *s1, *s1 ^= *s2, *s0 ^= *s3, *s2 ^= t, *s3 = rotl(*s3, 45);
      for (int j = 0; j < 4; ++j) w_[4 * l + j] = uint16_t(result >> 16 * j);
    }
    i_ = 0;
  }
  uint64_t s_[4][8];
  uint16_t w_[32];
  int i_ = 16;
  uint32_t min_;
  uint8_t shift_;
  uint16_t other_;
  RangeMapper mapper_;
  bool full_;
};

}  // namespace

// Every kernel path gives exactly the defined values, rejections included, whatever the
// bursts: 65175 has the highest rejection rate of all 16-bit ranges (1.5e-5), so two million
// draws reject about 30.
TEST(FieldKernels, EveryPathGivesTheDefinedValues) {
  struct Case {
    uint32_t min, max, draws;
    bool byte_only;
    uint8_t shift;
  };
  const Case cases[] = {{0, 0, 1000, false, 0},         {7, 9, 5000, false, 0},      {1, 49151, 20000, false, 0},
                        {1024, 65535, 20000, false, 0}, {2, 65534, 20000, false, 0}, {0, 65535, 20000, false, 0},
                        {65535, 65535, 100, false, 0},  {0, 255, 5000, true, 8},     {3, 200, 5000, true, 0},
                        {5, 65179, 2000000, false, 0}};
  on_every_path([&](const FieldKernels&) {
    for (const Case& c : cases) {
      SCOPED_TRACE("range " + std::to_string(c.min) + ".." + std::to_string(c.max));
      FieldSpec fs{"f", 0, c.shift, c.byte_only, false, VaryMode::kRandom, c.min, c.max};
      const uint16_t template_word = 0x5aa5;
      const uint16_t other = c.byte_only ? uint16_t(template_word & (c.shift ? 0x00ff : 0xff00)) : 0;
      FieldGenerator g(fs, template_word, 1000 + c.max);
      ReferenceField ref(1000 + c.max, c.min, c.max, c.shift, other);
      std::vector<uint16_t> got(c.draws);
      for (uint32_t i = 0, b = 1; i < c.draws; i += b, b = b % kMaxBurst + 1)  // bursts of 1, 2, ..., 32, 1, ...
        g.generate(got.data() + i, std::min(b, c.draws - i));
      for (uint32_t i = 0; i < c.draws; ++i) ASSERT_EQ(got[i], ref.next()) << "draw " << i;
    }
  });
}

// The kernels' Lemire mapping (16-bit multiplications with a carry) against the scalar
// RangeMapper, on the draws where it can go wrong: the product's low half just below and at
// the threshold (the rare exact check), carries out of the middle sum, the extremes.
TEST(FieldKernels, MappingEqualsTheScalarMapperAtTheEdges) {
  std::mt19937_64 rng(5);
  on_every_path([&](const FieldKernels& k) {
    for (uint32_t range : {1u, 2u, 3u, 255u, 1000u, 40000u, 49151u, 64512u, 65175u, 65534u, 65535u}) {
      const uint32_t threshold = uint32_t((uint64_t(1) << 32) % range);
      std::vector<uint32_t> x = {0, 1, 0xffff, 0x10000, 0xffffffffu, 0x80000000u, 0x7fffffffu};
      for (uint64_t q = 1; q < range && x.size() < 20000; q += 1 + q / 8) {
        // The smallest x with x * range >= q * 2^32: its product's low half is below range.
        const uint64_t lo = ((q << 32) + range - 1) / range;
        for (uint64_t d : {0ull, 1ull}) x.push_back(uint32_t(lo + d)), x.push_back(uint32_t(lo - 1 - d));
      }
      while (x.size() % 32 || x.size() < 40000) x.push_back(uint32_t(rng()));
      std::vector<uint16_t> out(x.size());
      std::vector<uint8_t> accepted(x.size());
      k.map(x.data(), uint32_t(x.size()), range, threshold, out.data(), accepted.data());
      const RangeMapper mapper(range);
      uint32_t rejected = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        uint32_t v = 0;
        const bool ok = mapper.map(x[i], v);
        ASSERT_EQ(bool(accepted[i]), ok) << "range " << range << " x " << x[i];
        if (ok) {
          ASSERT_EQ(out[i], v) << "range " << range << " x " << x[i];
        }
        rejected += !ok;
      }
      if (threshold > 0) {
        EXPECT_GT(rejected, 0u) << "range " << range << ": the edge inputs reject nothing";
      }
    }
  });
}

// Bursts of fields built in one pass (FieldBlock, what the sender does) equal the per-field
// reference byte for byte on every kernel path, with valid checksums, for every kind of field,
// across blocks.
TEST(FieldBlock, SameFramesAsThePerFieldReferenceOnEveryPath) {
  using F = VarySpec::Field;
  for (int c = 0; c < 6; ++c) {
    const int v = c % 2 ? 6 : 4;
    SCOPED_TRACE("IPv" + std::to_string(v) + " case " + std::to_string(c));
    StreamPlan sp = test_stream(v);
    if (c < 2) {
      sp.vary = {{F::kSrcPort, 0, 16, VaryMode::kRandom, 1024, 65535, "sp"},
                 {F::kDstPort, 0, 16, VaryMode::kIncreasing, 1, 49151, "dp"},
                 {F::kSrcIp, uint32_t(v == 4 ? 2 : 12), 16, VaryMode::kRandom, 2, 65534, "si"},
                 {F::kDstIp, uint32_t(v == 4 ? 2 : 14), 16, VaryMode::kDecreasing, 0, 65535, "di"},
                 {F::kDstIp, uint32_t(v == 4 ? 1 : 7), 8, VaryMode::kRandom, 0, 255, "net"}};
    } else if (c < 4) {  // the widest span: the source address's first word to the destination port
      sp.vary = {{F::kDstPort, 0, 16, VaryMode::kRandom, 1, 49151, "dp"},
                 {F::kSrcIp, 0, 8, VaryMode::kRandom, 0, 255, "si"}};
    } else if (c == 4) {  // one byte
      sp.vary = {{F::kDstIp, 3, 8, VaryMode::kRandom, 1, 254, "net"}};
    } else {  // words far apart: an address's first and sixth words, a port (three windows)
      sp.vary = {{F::kSrcIp, 0, 16, VaryMode::kRandom, 0, 65535, "si"},
                 {F::kDstIp, 10, 16, VaryMode::kIncreasing, 0, 65535, "di"},
                 {F::kDstPort, 0, 16, VaryMode::kRandom, 1, 49151, "dp"}};
    }
    const FrameTemplate t = build_template(sp.spec, 0, 1);
    on_every_path([&](const FieldKernels&) {
      std::vector<FieldGenerator> burst_gens, ref_gens;
      for (const FieldSpec& f : resolve_fields(sp, t)) {
        const uint8_t* w = t.bytes.data() + f.word_offset;
        burst_gens.emplace_back(f, uint16_t(w[0] << 8 | w[1]), 77 + burst_gens.size());
        ref_gens.emplace_back(f, uint16_t(w[0] << 8 | w[1]), 77 + ref_gens.size());
      }
      std::vector<FieldGenerator> stamped_gens = burst_gens;  // the same values again
      const FieldLayout layout(burst_gens, t);
      FieldBlock block(layout, burst_gens), stamped(layout, stamped_gens);
      uint32_t seq = 0;
      for (uint32_t burst = 0; burst < 200; ++burst) {
        // Bursts of 1, 2, ..., 32 frames, shortened at a block's end (fit).
        const uint32_t n = block.fit(burst % kMaxBurst + 1);
        ASSERT_EQ(stamped.fit(n), n);
        const uint64_t tsc = 0xfedcba9876ull * seq;  // one per burst, as the sender reads it
        std::vector<std::vector<uint8_t>> a(n, t.bytes), b(n, t.bytes), c(n, t.bytes);
        uint8_t* pb[kMaxBurst];
        for (uint32_t k = 0; k < n; ++k) pb[k] = b[k].data();
        uint64_t udp_delta[kMaxBurst] = {}, ip_delta[kMaxBurst] = {};
        uint16_t values[kMaxBurst];
        for (auto& g : ref_gens) {
          g.generate(values, n);
          apply_field(g, values, n, pb, [](uint32_t k) { return k; }, udp_delta, ip_delta);
        }
        uint32_t sums[kMaxBurst];
        block.write_burst(n, nullptr, [&](auto writer) {
          for (uint32_t k = 0; k < n; ++k) sums[k] = writer.write(a[k].data());
        });
        // Stamped ahead (the sender's single-stream path): checksums computed with the burst.
        const BurstStamp stamp{&t, seq, tsc};
        stamped.write_burst(n, &stamp, [&](auto writer) {
          for (uint32_t k = 0; k < n; ++k) writer.stamp(c[k].data(), t, seq + k, tsc);
        });
        for (uint32_t k = 0; k < n; ++k, ++seq) {
          stamp_frame(a[k].data(), t, seq, tsc, sums[k]);
          if (v == 4) finish_ipv4_header(pb[k], t, ip_delta[k]);
          stamp_frame(pb[k], t, seq, tsc, udp_delta[k]);
          ASSERT_EQ(a[k], b[k]) << "frame " << seq;
          ASSERT_EQ(c[k], b[k]) << "frame " << seq << ", stamped ahead";
          ASSERT_TRUE(udp_checksum_ok(a[k].data(), a[k].size()));
          if (v == 4) {
            ASSERT_EQ(reference_checksum({a[k].begin() + 14, a[k].begin() + 34}), 0);
          }
        }
      }
    });
  }
}

// The UDP checksum fields a stamped burst computes are stamp_frame's, on every kernel path,
// including a computed 0, which goes out as 0xffff (RFC 768), for bursts anywhere in a block.
TEST(FieldKernels, StampedChecksumsAreStampFramesOnEveryPath) {
  on_every_path([&](const FieldKernels& kernels) {
    auto b = std::make_unique<BlockWords>();
    BlockSums s;
    s.rows = 1, s.udp_rows = 1, s.count = kFrameBlock;
    s.chunks = 1, s.template_chunks[0] = 0;  // the row's window
    s.lane_row[0][0] = 0, s.lane_row[0][1] = s.lane_row[0][2] = s.lane_row[0][3] = -1;
    s.udp_base = 0xfffe;
    const uint32_t stamp_sum = 0x2345;
    // Frame 0 from 0x1fffe: 0xfffe + 0x2345 + (1 + 0xfffe) + w folds to 0xffff when w = 0xdcbb.
    for (uint32_t k = 0; k < kFrameBlock; ++k) b->words[0][k] = uint16_t(0xdcbb + 977 * (k % kMaxBurst));
    kernels.finish(*b, s);
    for (uint32_t k = 0; k < kFrameBlock; ++k)
      ASSERT_EQ(fold(b->udp_sum[k]), fold(s.udp_base + b->words[0][k])) << "frame " << k;
    // Sequence numbers from 0x1fffe, and across 2^32 (from 0xfffffff0: they wrap around).
    for (const uint32_t first_seq : {0x1fffeu, 0xfffffff0u})
      for (const auto& [first, count] : {std::pair{0u, kMaxBurst}, {kFrameBlock - kMaxBurst, kMaxBurst}, {3u, 7u}}) {
        uint16_t checksum[kMaxBurst];
        kernels.stamp_checksums(b->udp_sum + first, count, first_seq, stamp_sum, checksum);
        for (uint32_t k = 0; k < count; ++k) {
          const uint32_t seq = first_seq + k;
          const uint64_t sum = s.udp_base + b->words[0][first + k] + stamp_sum + (seq >> 16) + (seq & 0xffff);
          const uint16_t field = udp_checksum_field(sum);
          EXPECT_EQ(checksum[k], __builtin_bswap16(field)) << "first_seq " << first_seq << ", frame " << first + k;
          if (first + k == 0 && first_seq == 0x1fffe) {
            EXPECT_EQ(field, 0xffff);
          }
        }
      }
  });
}

// An emulated CE's rows as placements of its index's bits (CePlacements, ce.hpp): every vector
// kernel gives the scalar one's words, for random plans (runs from either index word, a port
// row with and without a port set's block, a joint draw split by any port count), and the
// split is exact: q * ports + port is the draw, port < ports.
TEST(FieldKernels, PlacedCeRowsAreTheScalarOnesOnEveryPath) {
  std::mt19937 rng(11);
  const auto any = [&](uint32_t n) { return uint32_t(rng() % n); };
  for (int trial = 0; trial < 200; ++trial) {
    CePlacements p;
    p.rows = 1 + any(kMaxCeRows);
    for (uint32_t r = 0; r < p.rows; ++r) {
      CeRowPlan& row = p.row[r];
      row.constant = uint16_t(rng());
      row.port = r + 1 == p.rows && any(2);
      row.runs = any(4);
      for (uint32_t i = 0; i < row.runs; ++i)
        row.run[i] = {uint8_t(any(2)), uint8_t(any(16)), uint8_t(any(16)), uint16_t((1u << (1 + any(16))) - 1)};
    }
    p.joint = any(2), p.joint_word = uint8_t(any(2));
    const uint32_t ports = 2 + any(65534);
    const SmallDivisor by(ports);
    p.ports = uint16_t(ports), p.multiplier = by.multiplier, p.shift = by.shift;
    if (any(2)) {  // a port set: PSID offset a, m contiguous bits
      const uint32_t a = any(7), m = any(10);
      p.port_shift = uint8_t(m), p.port_block = a ? 1 : 0, p.port_block_shift = uint8_t(16 - a);
      p.port_low = uint16_t((1u << m) - 1);
    }
    uint16_t index[2][kFrameBlock], port[kFrameBlock];
    for (uint32_t k = 0; k < kFrameBlock; ++k) index[0][k] = uint16_t(rng()), index[1][k] = uint16_t(rng()), port[k] = uint16_t(rng());
    const uint32_t count = trial % 2 ? kFrameBlock : 1 + any(kFrameBlock);
    uint16_t want_index[2][kFrameBlock], want_port[kFrameBlock], want[kMaxCeRows][kFrameBlock];
    std::memcpy(want_index, index, sizeof index), std::memcpy(want_port, port, sizeof port);
    kScalarKernels.place_ce(want_index, want_port, p, want, count);
    if (p.joint)
      for (uint32_t k = 0; k < count; ++k) {
        ASSERT_EQ(uint32_t(want_index[p.joint_word][k]) * ports + want_port[k], index[p.joint_word][k]);
        ASSERT_LT(want_port[k], ports);
      }
    on_every_path([&](const FieldKernels& kernels) {
      uint16_t got_index[2][kFrameBlock], got_port[kFrameBlock], got[kMaxCeRows][kFrameBlock];
      std::memcpy(got_index, index, sizeof index), std::memcpy(got_port, port, sizeof port);
      kernels.place_ce(got_index, got_port, p, got, count);
      for (uint32_t k = 0; k < count; ++k) {
        ASSERT_EQ(got_index[p.joint_word][k], want_index[p.joint_word][k]) << "trial " << trial << ", frame " << k;
        ASSERT_EQ(got_port[k], want_port[k]) << "trial " << trial << ", frame " << k;
        for (uint32_t r = 0; r < p.rows; ++r) ASSERT_EQ(got[r][k], want[r][k]) << "trial " << trial << ", row " << r;
      }
    });
  }
}

TEST(FieldKernels, ChoiceByNameAndItsErrors) {
  EXPECT_EQ(kernels_named("scalar").isa, Isa::kScalar);
  ASSERT_TRUE(supported_isas() & 1u << int(Isa::kScalar));
#if defined(__x86_64__)
  EXPECT_TRUE(supported_isas() & 1u << int(Isa::kSse));
#endif
  if (!std::getenv("XLATPERF_ISA")) {  // by default the best path this CPU runs
    EXPECT_EQ(int(field_kernels().isa), 31 - __builtin_clz(supported_isas()));
  }
  const FieldKernels* previous = use_kernels(&kScalarKernels);
  EXPECT_EQ(&field_kernels(), &kScalarKernels);
  use_kernels(previous);
  try {
    kernels_named("avx1024");
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("XLATPERF_ISA = \"avx1024\": must be one of scalar", 0), 0u) << e.what();
  }
  for (Isa isa : {Isa::kScalar, Isa::kSse, Isa::kAvx2, Isa::kAvx512})
    if (!(supported_isas() >> int(isa) & 1)) {
      EXPECT_THROW(kernels_for(isa), std::invalid_argument);
    }
}
