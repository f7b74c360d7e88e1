#include <gtest/gtest.h>

#include <random>

#include "core/checksum.hpp"
#include "reference.hpp"

using namespace xlp;

TEST(Checksum, Rfc1071Example) {
  // RFC 1071 §3: the words 0001 f203 f4f5 f6f7 sum to ddf2 (with carries folded).
  const uint8_t data[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
  EXPECT_EQ(fold(sum_words(data, sizeof data)), 0xddf2);
  EXPECT_EQ(internet_checksum(data, sizeof data), uint16_t(~0xddf2));
}

TEST(Checksum, KnownIpv4Header) {
  // 192.168.0.1 -> 192.168.0.199, TTL 64, UDP, total length 0x73: checksum 0xb861.
  const uint8_t h[] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                       0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
  EXPECT_EQ(internet_checksum(h, sizeof h), 0xb861);
}

TEST(Checksum, MatchesReferenceOnRandomData) {
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::vector<uint8_t> data(rng() % 1600);
    for (auto& b : data) b = uint8_t(rng());
    EXPECT_EQ(internet_checksum(data.data(), data.size()), reference_checksum(data)) << data.size();
  }
}

TEST(Checksum, FoldHandlesTheLargestSums) {
  // Against an end-around-carry loop, at the edges where the fixed number of steps matters.
  auto slow = [](uint64_t s) { while (s >> 16) s = (s & 0xffff) + (s >> 16); return uint16_t(s); };
  for (uint64_t s : {0ull, 0xffffull, 0x10000ull, 0x1fffeull, 0x2fffeull, 0xffffffffull, 0x1ffffffffull,
                     0xffff0000ffffull, 0xffffffffffffffffull, 0xfffffffeffffffffull})
    EXPECT_EQ(fold(s), slow(s)) << std::hex << s;
  std::mt19937_64 rng(3);
  for (int i = 0; i < 100000; ++i) {
    uint64_t s = rng() >> (rng() % 64);
    ASSERT_EQ(fold(s), slow(s)) << std::hex << s;
  }
}

TEST(Checksum, SumsToOnesIsFoldGivingAllOnes) {
  // Multiples of 0xffff at the edges (0 is not one: it folds to 0), their neighbours, and
  // random sums, against fold.
  for (uint64_t s : {0ull, 1ull, 0xfffeull, 0xffffull, 0x10000ull, 0x1fffeull, 0x1ffffull, 0xffffffffull,
                     0x1fffffffeull, 0xffffffffffffffffull, 0xfffffffffffffffeull, 0xffff0000ffffull})
    EXPECT_EQ(sums_to_ones(s), fold(s) == 0xffff) << std::hex << s;
  std::mt19937_64 rng(5);
  for (int i = 0; i < 200000; ++i) {
    // Every other one a multiple of 0xffff, so that both answers are drawn often.
    const uint64_t s = i % 2 ? (rng() >> (rng() % 64)) : (rng() >> 17) * 0xffff;
    ASSERT_EQ(sums_to_ones(s), fold(s) == 0xffff) << std::hex << s;
  }
}

TEST(Checksum, UdpZeroIsSentAsAllOnes) {
  EXPECT_EQ(udp_checksum_field(0xffff), 0xffff);  // ~0xffff == 0 -> 0xffff
  EXPECT_EQ(udp_checksum_field(0x1234), uint16_t(~0x1234));
}
