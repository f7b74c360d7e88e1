// Hardware receive timestamps through the receiver (Trial::use_rx_timestamps): stamps of a
// NIC clock that runs at another rate than the TSC and wraps at 32 bits, injected into the
// mbufs by the in-memory ports as a NIC's driver would put them there. The delays reported
// are exactly the ones the stamps say, whatever the receive bursts' own times.
#include <gtest/gtest.h>
#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include <nlohmann/json.hpp>

#include "core/frame.hpp"
#include "core/nic_clock.hpp"
#include "harness.hpp"
#include "protocol/protocol.hpp"

namespace xlp {
namespace {

// The device clock of the test: 3 ticks per TSC tick from an offset, read 32 bits wide.
uint64_t device_at(uint64_t tsc) { return 3 * tsc + 12345; }

TEST(NicTimestamps, DelaysComeFromTheStampsOnTheTsc) {
  XLP_REQUIRE_EAL();
  int offset = -1;
  uint64_t flag = 0;
  ASSERT_EQ(rte_mbuf_dyn_rx_timestamp_register(&offset, &flag), 0);
  // Every frame is stamped as received exactly kDelay TSC ticks after the sender's TSC in its
  // tag, then held back a random-looking while: the burst's own TSC is later by that much.
  constexpr uint64_t kDelay = 5000;
  test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver&) {
    TestTag tag;
    ASSERT_TRUE(parse_test_frame(rte_pktmbuf_mtod(m, const uint8_t*), m->data_len, tag));
    const uint64_t now = rte_rdtsc();
    uint64_t sent = (now & ~kTimestampMask) | tag.timestamp;  // the full TSC the tag's 48 bits are of
    if (sent > now) sent -= kTimestampMask + 1;
    *RTE_MBUF_DYNFIELD(m, offset, uint64_t*) = uint32_t(device_at(sent + kDelay));
    m->ol_flags |= flag;
    bench.io.deliver_after(std::chrono::microseconds(200 + tag.seq % 7 * 300), uint16_t(1 - port), m);
  });
  const uint64_t t0 = rte_rdtsc(), t1 = t0 + test::eal().tsc_hz;
  const DeviceClockMap clock(device_at(t0), t0, device_at(t1), t1, 32);
  bench.before_run = [&](Trial& trial) { trial.use_rx_timestamps(1, offset, flag, clock); };
  nlohmann::json req = {{"duration", 1.0}, {"timeout", 0.5}, {"finish_early", true},
                        {"flows", {{{"name", "forward"}, {"tx_port", 0}, {"rx_port", 1}, {"rate", 2000},
                                    {"foreground", test::stream(4, 64)}}}}};
  req["delay"] = {{"histogram", true}};
  const TrialReport r = bench.run(protocol::parse_trial(req, 2));
  const StreamReport& s = r.flows[0].streams[0];
  // Over a second (a sender late on a busy host is cut off at the end: not every frame need be
  // sent); the 32-bit stamps wrapped every 2^32 / (3 x TSC rate) s meanwhile.
  EXPECT_GT(s.sent, 1000u);
  EXPECT_EQ(s.received, s.sent);
  ASSERT_TRUE(s.delay.has_value());
  EXPECT_EQ(s.delay->count, s.received);  // every frame's delay, each from its stamp
  const double want_ns = double(kDelay) * 1e9 / double(test::eal().tsc_hz);
  EXPECT_NEAR(s.delay->min_ns, want_ns, 1e9 / double(test::eal().tsc_hz));
  EXPECT_NEAR(s.delay->max_ns, want_ns, 1e9 / double(test::eal().tsc_hz));
}

}  // namespace
}  // namespace xlp
