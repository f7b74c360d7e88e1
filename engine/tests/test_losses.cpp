// Loss periods (RFC 2544 §26.5-26.6, RFC 6201): runs of consecutive frames of a flow that
// never arrived, with the send times of the frames around them, also when the flow is shared
// out over several TX queues and its rate changes during the trial.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "core/frame.hpp"
#include "harness.hpp"
#include "protocol/protocol.hpp"

using namespace xlp;
using nlohmann::json;

namespace {

// `frames` at `rate` in a trial long enough that a worker the OS schedules late does not
// make it invalid (it ends when everything arrived).
json request(uint64_t rate, uint64_t frames) {
  return {{"duration", 1.0}, {"timeout", 0.05}, {"finish_early", true}, {"losses", true},
          {"flows", {{{"name", "forward"}, {"tx_port", 0}, {"rx_port", 1}, {"rate", rate}, {"frames", frames},
                      {"foreground", {{"ip_version", 4}, {"src_mac", "02:00:00:00:00:01"},
                                      {"dst_mac", "02:00:00:00:00:02"}, {"src_ip", "198.18.0.2"},
                                      {"dst_ip", "198.19.0.2"}, {"frame_size", 64}}}}}}};
}

// A DUT that drops the flow's frames k in [first, last]; the flow's frame k is lane k % Q's
// frame seq = k / Q (one stream), and lane q has stream id 2q.
test::MemoryIo::Dut dropping(uint64_t first, uint64_t last, uint16_t queues) {
  return [=](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
    TestTag tag;
    parse_test_frame(rte_pktmbuf_mtod(m, const uint8_t*), m->data_len, tag);
    const uint64_t k = uint64_t(tag.seq) * queues + tag.stream / 2;
    if (k >= first && k <= last) rte_pktmbuf_free(m);
    else deliver(uint16_t(1 - port), m);
  };
}

class LossPeriods : public ::testing::TestWithParam<uint16_t> {};

}  // namespace

TEST_P(LossPeriods, ARunOfLostFramesIsOnePeriodWithItsSendTimes) {
  XLP_REQUIRE_EAL();
  const uint16_t queues = GetParam();
  test::Bench bench(dropping(1000, 1499, queues), queues);  // 500 frames at 10 kfps: 50 ms
  const TrialReport r = bench.run(protocol::parse_trial(request(10000, 3000), 2));
  ASSERT_TRUE(r.valid) << r.invalid_reason;
  ASSERT_TRUE(r.flows[0].losses.has_value());
  const LossReport& l = *r.flows[0].losses;
  EXPECT_EQ(l.periods, 1u);
  EXPECT_EQ(l.lost, 500u);
  EXPECT_EQ(r.flows[0].sent - r.flows[0].received, 500u);
  ASSERT_EQ(l.first.size(), 1u);
  const LossPeriod& p = l.first[0];
  EXPECT_EQ(p.frames, 500u);
  EXPECT_NEAR(p.first_lost_s, 0.1, 1e-9);      // frame 1000 is due at 1000 / 10 kfps
  EXPECT_NEAR(p.last_lost_s, 0.1499, 1e-9);
  ASSERT_TRUE(p.last_before_s && p.first_after_s);
  EXPECT_NEAR(*p.last_before_s, 0.0999, 1e-9);
  EXPECT_NEAR(*p.first_after_s, 0.15, 1e-9);
  // RFC 6201: timestamp method 50.1 ms, frame-loss method 500 / 10 kfps = 50 ms.
  EXPECT_NEAR(*p.first_after_s - *p.last_before_s, 0.0501, 1e-9);
  ASSERT_TRUE(l.longest.has_value());
  EXPECT_EQ(l.longest->frames, 500u);
}

INSTANTIATE_TEST_SUITE_P(Queues, LossPeriods, ::testing::Values(uint16_t(1), uint16_t(2), uint16_t(3)));

TEST(LossPeriods, RateStepsAndLossesAtTheEnd) {
  XLP_REQUIRE_EAL();
  // 20 kfps for 0.1 s (2000 frames), then 5 kfps to 0.3 s (1000 frames); the DUT drops the
  // last 10 frames and frame 100.
  test::Bench bench(
      [](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
        TestTag tag;
        parse_test_frame(rte_pktmbuf_mtod(m, const uint8_t*), m->data_len, tag);
        if (tag.seq >= 2990 || tag.seq == 100) rte_pktmbuf_free(m);
        else deliver(uint16_t(1 - port), m);
      });
  json req = request(20000, 3000);
  req["flows"][0]["rate_steps"] = {{{"at", 0.1}, {"rate", 5000}}};
  const TrialReport r = bench.run(protocol::parse_trial(req, 2));
  ASSERT_TRUE(r.valid) << r.invalid_reason;
  EXPECT_EQ(r.flows[0].planned, 3000u);
  EXPECT_GE(r.flows[0].send_time, 0.1 + 999.0 / 5000);  // the last frame, due at 0.2998 s
  const LossReport& l = *r.flows[0].losses;
  EXPECT_EQ(l.periods, 2u);
  EXPECT_EQ(l.lost, 11u);
  ASSERT_EQ(l.first.size(), 2u);
  EXPECT_NEAR(l.first[0].first_lost_s, 100.0 / 20000, 1e-9);
  EXPECT_EQ(l.first[0].frames, 1u);
  EXPECT_NEAR(l.first[1].first_lost_s, 0.1 + 990.0 / 5000, 1e-9);
  EXPECT_NEAR(l.first[1].last_lost_s, 0.1 + 999.0 / 5000, 1e-9);
  EXPECT_FALSE(l.first[1].first_after_s.has_value());  // lost up to the end
  EXPECT_EQ(l.longest->frames, 10u);
  ASSERT_EQ(l.last.size(), 2u);  // fewer than 100 periods: `last` lists them all
  EXPECT_NEAR(l.last[1].last_lost_s, 0.1 + 999.0 / 5000, 1e-9);
}

TEST(LossPeriods, ManyPeriodsListTheFirstAndTheLastHundred) {
  XLP_REQUIRE_EAL();
  // Every tenth frame of 3000 lost: 300 periods of one frame each.
  test::Bench bench([](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
    TestTag tag;
    parse_test_frame(rte_pktmbuf_mtod(m, const uint8_t*), m->data_len, tag);
    if (tag.seq % 10 == 5) rte_pktmbuf_free(m);
    else deliver(uint16_t(1 - port), m);
  });
  const TrialReport r = bench.run(protocol::parse_trial(request(10000, 3000), 2));
  ASSERT_TRUE(r.valid) << r.invalid_reason;
  const LossReport& l = *r.flows[0].losses;
  EXPECT_EQ(l.periods, 300u);
  EXPECT_EQ(l.lost, 300u);
  ASSERT_EQ(l.first.size(), 100u);
  ASSERT_EQ(l.last.size(), 100u);
  EXPECT_NEAR(l.first[0].first_lost_s, 5.0 / 10000, 1e-9);
  EXPECT_NEAR(l.last[0].first_lost_s, 2005.0 / 10000, 1e-9);   // period 201
  EXPECT_NEAR(l.last[99].first_lost_s, 2995.0 / 10000, 1e-9);  // period 300, the last
}

TEST(LossPeriods, ADelayedStartSendsItsShareFromItsStepOn) {
  XLP_REQUIRE_EAL();
  // Rate 0 until 0.1 s, then 10 kfps to 0.3 s (RFC 8219 §10.2.2's flow started late): exactly
  // round(10000 x (0.3 - 0.1)) = 2000 frames, the first due at 0.1 s. The DUT drops frame 0,
  // so the loss report states its scheduled send time.
  test::Bench bench(dropping(0, 0, 1));
  json req = request(0, 0);
  req["duration"] = 0.3;
  // The schedule rule with a tolerance no preemption reaches: the test asserts counts and
  // scheduled times, which hold however late the OS runs the sender, not its pacing (the
  // siitperf rule would fail it whenever the worker was preempted near 0.3 s).
  req["max_lag"] = 10.0;
  req["flows"][0].erase("frames");
  req["flows"][0]["rate_steps"] = {{{"at", 0.1}, {"rate", 10000}}};
  const TrialReport r = bench.run(protocol::parse_trial(req, 2));
  ASSERT_TRUE(r.valid) << r.invalid_reason;
  EXPECT_EQ(r.flows[0].planned, 2000u);
  EXPECT_EQ(r.flows[0].sent, 2000u);
  EXPECT_EQ(r.flows[0].received, 1999u);
  const LossReport& l = *r.flows[0].losses;
  ASSERT_EQ(l.first.size(), 1u);
  EXPECT_NEAR(l.first[0].first_lost_s, 0.1, 1e-9);
  EXPECT_FALSE(l.first[0].last_before_s.has_value());  // nothing was sent before it
  EXPECT_NEAR(*l.first[0].first_after_s, 0.1001, 1e-9);
  // Without rate steps a rate of 0 stays refused.
  json plain = request(0, 0);
  plain["flows"][0].erase("frames");
  EXPECT_THROW(protocol::parse_trial(plain, 2), BadParameter);
}
