#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "core/delays.hpp"
#include "core/histogram.hpp"

using namespace xlp;

namespace {

// RFC 2330 §11.3: the value of rank ceil(p/100 * N) in sorted order.
uint64_t exact_percentile(std::vector<uint64_t> v, double p) {
  std::sort(v.begin(), v.end());
  const size_t rank = std::max<size_t>(1, size_t(std::ceil(p / 100.0 * double(v.size()) - 1e-9)));
  return v[rank - 1];
}

}  // namespace

TEST(Histogram, SmallValuesAreExact) {
  Histogram h;
  for (uint64_t v = 1; v <= 1000; ++v) h.add(v);
  EXPECT_EQ(h.percentile(50), 500u);
  EXPECT_EQ(h.percentile(99.9), 999u);  // WCL of 1..1000 (methodology §14 item 14)
  EXPECT_EQ(h.percentile(100), 1000u);
  EXPECT_EQ(h.min(), 1u);
  EXPECT_EQ(h.max(), 1000u);
  EXPECT_DOUBLE_EQ(h.mean(), 500.5);
}

TEST(Histogram, TiesAndTinySets) {
  Histogram empty;
  EXPECT_EQ(empty.count(), 0u);
  EXPECT_EQ(empty.percentile(50), 0u);
  Histogram one;
  one.add(123456789);
  EXPECT_EQ(one.percentile(0.1), 123456789u);  // clamped to the exact min and max
  EXPECT_EQ(one.percentile(99.9), 123456789u);
  Histogram ties;
  for (uint64_t v : {5, 5, 5, 7}) ties.add(v);
  EXPECT_EQ(ties.percentile(50), 5u);
  EXPECT_EQ(ties.percentile(75), 5u);
  EXPECT_EQ(ties.percentile(76), 7u);
}

TEST(Histogram, ErrorStaysWithinTheDocumentedBoundOverAWideRange) {
  std::mt19937_64 rng(9);
  std::vector<uint64_t> values;
  Histogram h;
  for (int i = 0; i < 200000; ++i) {  // log-uniform over 1 .. 2^50 ticks
    const uint64_t v = uint64_t(std::exp2(std::uniform_real_distribution<double>(0, 50)(rng)));
    values.push_back(v);
    h.add(v);
  }
  const double bound = 1.0 / double(2 * Histogram::kSub);  // half a bucket: 0.049 %
  for (double p : {0.1, 1.0, 10.0, 50.0, 90.0, 99.0, 99.9, 99.99, 100.0}) {
    const double exact = double(exact_percentile(values, p));
    const double approx = double(h.percentile(p));
    if (exact < double(Histogram::kSub)) EXPECT_EQ(approx, exact) << p;
    else EXPECT_LE(std::abs(approx - exact) / exact, bound) << "p" << p << " exact " << exact;
  }
}

TEST(Histogram, BucketBoundsTileTheValues) {
  for (uint64_t v : {0ull, 1ull, 1023ull, 1024ull, 1025ull, 2047ull, 2048ull, 123456789ull, ~0ull}) {
    const size_t i = Histogram::index(v);
    EXPECT_LE(Histogram::lowest(i), v);
    EXPECT_GE(Histogram::highest(i), v);
    EXPECT_LE(double(Histogram::highest(i) - Histogram::lowest(i)), double(v) / double(Histogram::kSub));
  }
  EXPECT_EQ(Histogram::index(~0ull), Histogram::kBuckets - 1);
}

TEST(Histogram, MemoryDoesNotGrowWithTheNumberOfValues) {
  Histogram h;
  h.add(1);
  const size_t before = mallinfo2().uordblks;
  std::mt19937_64 rng(1);
  for (int i = 0; i < 5'000'000; ++i) h.add(rng() >> (rng() % 64));
  EXPECT_EQ(mallinfo2().uordblks, before);
  EXPECT_EQ(h.count(), 5'000'001u);
}

TEST(Ipdv, ConsecutiveDelayDifferencesInSendOrderEvenWhenReordered) {
  IpdvTracker in_order, reordered;
  const int64_t d[] = {10, 15, 12, 20};
  for (uint64_t i = 0; i < 4; ++i) in_order.add(i, d[i]);
  for (uint64_t i : {1, 0, 3, 2}) reordered.add(i, d[i]);
  for (const IpdvTracker* t : {&in_order, &reordered}) {
    const SignedHistogram& h = t->values();
    EXPECT_EQ(h.count(), 3u);  // 5, -3, 8
    EXPECT_EQ(h.min(), -3);
    EXPECT_EQ(h.percentile(50), 5);
    EXPECT_EQ(h.max(), 8);
  }
  IpdvTracker gap;  // frame 1 lost: no IPDV for the pairs (0,1) and (1,2)
  for (uint64_t i : {0, 2, 3}) gap.add(i, d[i]);
  EXPECT_EQ(gap.values().count(), 1u);
  EXPECT_EQ(gap.values().min(), 8);
}

TEST(TaggedFrames, SpreadEvenlyAfterTheStartAndRecorded) {
  TaggedFrames t(100, 1100, 500);  // seq 100, 102, ..., 1098
  for (uint64_t seq = 0; seq < 1100; ++seq) t.record(seq, int64_t(seq) * 10);
  ASSERT_EQ(t.delays().size(), 500u);
  for (uint64_t j = 0; j < 500; ++j) EXPECT_EQ(t.delays()[j], int64_t(100 + 2 * j) * 10) << j;
  TaggedFrames uneven(0, 1000, 3);  // 0, 333, 666
  uneven.record(333, 7);
  uneven.record(334, 8);
  EXPECT_EQ(uneven.delays(), (std::vector<int64_t>{-1, 7, -1}));
}
