#include <gtest/gtest.h>

#include <vector>

#include "core/pacing.hpp"
#include "protocol/plan.hpp"

using namespace xlp;

TEST(MaxFrameRate, RfcValues) {
  EXPECT_EQ(max_frame_rate(10'000'000'000ull, 64), 14'880'952u);
  EXPECT_EQ(max_frame_rate(10'000'000'000ull, 84), 12'019'230u);
  EXPECT_EQ(max_frame_rate(10'000'000'000ull, 1518), 812'743u);
  EXPECT_EQ(max_frame_rate(1'000'000'000ull, 64), 1'488'095u);
  EXPECT_EQ(max_frame_rate(10'000'000ull, 64, 20), 12'019u);  // RFC 8219 App. A, 6in4
  EXPECT_EQ(max_frame_rate(10'000'000ull, 1518), 812u);        // RFC 2544 App. B
}

TEST(Schedule, FrameKIsDueAtKOverRate) {
  const uint64_t hz = 2'000'000'000, rate = 3'000'000;
  Schedule s(hz, rate, 3'000'000, 1000);
  EXPECT_EQ(s.due_tsc(0), 1000u);
  EXPECT_EQ(s.due_tsc(3), 1000u + 2000u);        // 3 frames at 3 Mfps = 1 us = 2000 ticks
  EXPECT_EQ(s.due_count(999), 0u);
  EXPECT_EQ(s.due_count(1000), 1u);
  for (uint64_t k : {1ull, 7ull, 1000ull, 2'999'999ull}) {
    EXPECT_EQ(s.due_count(s.due_tsc(k)), k + 1) << k;
    EXPECT_EQ(s.due_count(s.due_tsc(k) - 1), k) << k;  // exact: no frame early
  }
  EXPECT_EQ(s.due_count(UINT64_MAX / 4), 3'000'000u);  // capped at the total
  // The last frame is due before the trial's duration ends.
  EXPECT_LT(s.due_tsc(s.frames() - 1), 1000u + hz);
}

TEST(Schedule, BurstCoversAboutOneMicrosecond) {
  EXPECT_EQ(Schedule(1'000'000'000, 10'000, 100, 0).min_burst(), 1u);
  EXPECT_EQ(Schedule(1'000'000'000, 14'880'952, 100, 0).min_burst(), 14u);
  EXPECT_EQ(Schedule(1'000'000'000, 100'000'000, 100, 0).min_burst(), kMaxBurst);
}

TEST(Schedule, NextSendWaitsForAMinimumBurstButNotAtTheEnd) {
  Schedule s(1'000'000'000, 10'000'000, 25, 0);  // 10 per us, bursts of 10
  EXPECT_EQ(s.min_burst(), 10u);
  EXPECT_EQ(s.next_send_tsc(0), s.due_tsc(9));
  EXPECT_EQ(s.next_send_tsc(20), s.due_tsc(24));  // only 5 left
}

TEST(Schedule, AverageRateIsExactOverLongTrials) {
  const uint64_t hz = 2'500'000'000, rate = 1'234'567;
  Schedule s(hz, rate, rate * 60, 0);
  // The frame due at 60 s: exactly rate * 60 frames fit in [0, 60 s).
  EXPECT_EQ(s.due_count(60 * hz - 1), rate * 60);
}

TEST(Schedule, LanesShareTheFlowScheduleExactly) {
  // Three lanes of a 7 Mfps flow of 100 frames: lane q sends the flow's frames q, q + 3, ...
  // at their own due times, so at any moment the lanes together have exactly the flow's
  // frames due, and no frame is early.
  const uint64_t hz = 2'000'000'000, rate = 7'000'000, total = 100, start = 500;
  const Schedule flow(hz, rate, total, start);
  std::vector<Schedule> lanes;
  uint64_t frames = 0;
  for (uint32_t q = 0; q < 3; ++q) {
    lanes.emplace_back(hz, rate, Schedule::lane_frames(total, q, 3), start, q, 3);
    frames += lanes.back().frames();
  }
  EXPECT_EQ(frames, total);
  EXPECT_EQ(lanes[0].frames(), 34u);
  EXPECT_EQ(lanes[2].frames(), 33u);
  for (uint64_t k = 0; k < total; ++k) EXPECT_EQ(lanes[k % 3].due_tsc(k / 3), flow.due_tsc(k)) << k;
  for (uint64_t now = start - 2; now < flow.due_tsc(total - 1) + 3; now += 37) {
    uint64_t due = 0;
    for (const auto& l : lanes) due += l.due_count(now);
    EXPECT_EQ(due, flow.due_count(now)) << now;
  }
  EXPECT_EQ(lanes[1].min_burst(), 2u);  // 7/3 Mfps per lane: about a microsecond's worth
}

TEST(Schedule, RateSegmentsFollowEachOther) {
  // RFC 2544 §26.5's shape: 3 Mfps for 1 ms (3000 frames), then 1 Mfps from 1 ms on.
  const uint64_t hz = 2'000'000'000;
  const std::vector<RateSegment> segments = {{0, 0.0, 3'000'000}, {3000, 0.001, 1'000'000}};
  Schedule s(hz, segments, 4000, 100);
  EXPECT_EQ(s.due_tsc(0), 100u);
  EXPECT_EQ(s.due_tsc(2999), 100u + (2999 * hz + 2'999'999) / 3'000'000);
  EXPECT_EQ(s.due_tsc(3000), 100u + 2'000'000u);        // the step, exactly at 1 ms
  EXPECT_EQ(s.due_tsc(3001), 100u + 2'000'000u + 2000);  // then 1 us apart
  for (uint64_t k : {0ull, 1500ull, 2999ull, 3000ull, 3500ull, 3999ull}) {
    EXPECT_EQ(s.due_count(s.due_tsc(k)), k + 1) << k;
    EXPECT_EQ(s.due_count(s.due_tsc(k) - 1), k) << k;
  }
  EXPECT_EQ(s.min_burst(), 3u);  // bursts sized for the fastest stretch
  // Two lanes share the segmented schedule exactly as they share a constant one.
  Schedule lane0(hz, segments, 2000, 100, 0, 2), lane1(hz, segments, 2000, 100, 1, 2);
  for (uint64_t k = 0; k < 4000; k += 7) EXPECT_EQ((k % 2 ? lane1 : lane0).due_tsc(k / 2), s.due_tsc(k)) << k;
  for (uint64_t now = 90; now < s.due_tsc(3999) + 10; now += 997)
    EXPECT_EQ(lane0.due_count(now) + lane1.due_count(now), s.due_count(now)) << now;
}

TEST(Schedule, ARateZeroStretchBeforeAStepIsADelayedStart) {
  // Rate 0 until 0.25 s, then 4000 fps (a flow started late, RFC 8219 §10.2.2): nothing is
  // due before 0.25 s, frame k is due at 0.25 s + k / 4000.
  const uint64_t hz = 2'000'000'000, start = 1000;
  FlowPlan plan;
  plan.rate = 0;
  plan.rate_steps = {{0.25, 4000}};
  const std::vector<RateSegment> segments = plan.segments();
  EXPECT_EQ(plan.planned_frames(1.0), 3000u);  // round(4000 x (1.0 - 0.25))
  const Schedule s(hz, segments, 3000, start);
  EXPECT_EQ(s.due_count(start), 0u);
  EXPECT_EQ(s.due_count(start + hz / 4 - 1), 0u);
  EXPECT_EQ(s.due_tsc(0), start + hz / 4);
  EXPECT_EQ(s.due_count(start + hz / 4), 1u);
  EXPECT_EQ(s.due_tsc(3), start + hz / 4 + 3 * hz / 4000);
  EXPECT_EQ(s.due_count(start + hz), 3000u);
  EXPECT_LT(s.due_tsc(2999), start + hz);  // the last frame within the duration
}
