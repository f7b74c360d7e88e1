#include <gtest/gtest.h>

#include "core/seqtrack.hpp"

using namespace xlp;
using R = SequenceTracker::Result;

TEST(SequenceTracker, CountsNewDuplicateReorderedAndOutOfRange) {
  SequenceTracker t(10);
  EXPECT_EQ(t.record(0), R::kNew);
  EXPECT_EQ(t.record(2), R::kNew);
  EXPECT_EQ(t.record(1), R::kNew);        // arrived after 2: reordered
  EXPECT_EQ(t.record(2), R::kDuplicate);  // does not offset a loss
  EXPECT_EQ(t.record(10), R::kOutOfRange);
  EXPECT_EQ(t.received(), 3u);
  EXPECT_EQ(t.reordered(), 1u);
}

TEST(SequenceTracker, ExtendsThe32BitSequenceBeyondItsWrap) {
  const uint64_t n = (uint64_t(1) << 32) + 100;
  SequenceTracker t(n);
  EXPECT_EQ(t.record(0xfffffffeu), R::kNew);
  EXPECT_EQ(t.record(0xffffffffu), R::kNew);
  EXPECT_EQ(t.record(5), R::kNew);               // 2^32 + 5
  EXPECT_EQ(t.record(0xfffffffdu), R::kNew);     // late frame from before the wrap
  EXPECT_EQ(t.record(5), R::kDuplicate);
  EXPECT_EQ(t.record(200), R::kOutOfRange);      // 2^32 + 200 > planned
  EXPECT_EQ(t.received(), 4u);
  EXPECT_EQ(t.reordered(), 1u);
}
