// The ports as the engine sets them up (ports/ports.cpp), on a ring pair inside this process:
// sides taken by device name whatever DPDK's order, what hello says of a device without pause
// frames or a link of its own, and the RSS table's spread.
#include <gtest/gtest.h>
#include <rte_ethdev.h>

#include <cstring>

#include "harness.hpp"
#include "engine.hpp"
#include "ports/ports.hpp"

namespace xlp {
namespace {

uint64_t frames_sent_by(const std::string& device) {
  uint16_t id = 0;
  EXPECT_EQ(rte_eth_dev_get_port_by_name(device.c_str(), &id), 0) << device;
  rte_eth_stats stats{};
  rte_eth_stats_get(id, &stats);
  return stats.opackets;
}

// A new ring pair for each test ("sidesN": ports net_ring_sidesN0 and 1): closing a ring port
// releases it, and the tests may run in one process. Returns its name.
std::string new_ring_pair() {
  static int pairs = 0;
  const std::string name = "sides" + std::to_string(pairs++);
  create_ring_pair(name, 1);
  return name;
}

TEST(Ports, SidesFollowTheNamesNotDpdksOrder) {
  XLP_REQUIRE_EAL();
  const std::string ring = "net_ring_" + new_ring_pair();
  PortOptions options;
  options.names = {ring + "1", ring + "0"};  // the later DPDK port on the left
  options.link_timeout = 1;
  Ports ports(options);
  ASSERT_EQ(ports.count(), 2);
  const std::vector<PortInfo> info = ports.info();
  EXPECT_EQ(info[0].name, ring + "1");
  EXPECT_EQ(info[1].name, ring + "0");
  EXPECT_EQ(info[0].index, 0);
  // A frame sent on protocol port 0 leaves through the DPDK port named for the left side.
  const uint64_t before = frames_sent_by(ring + "1");
  rte_mbuf* m = rte_pktmbuf_alloc(ports.pools().at(0));
  ASSERT_NE(m, nullptr);
  std::memset(rte_pktmbuf_mtod(m, uint8_t*), 0, 64);
  m->data_len = m->pkt_len = 64;
  ASSERT_EQ(ports.io().send(0, 0, &m, 1), 1);
  EXPECT_EQ(frames_sent_by(ring + "1"), before + 1);
  rte_mbuf* got[4];
  EXPECT_EQ(ports.io().receive(1, 0, got, 4), 1);  // and arrives at the other end, the right side
  rte_pktmbuf_free(got[0]);
  // A ring has no pause frames to turn off and a link that is up from the start.
  for (const PortInfo& p : info) {
    EXPECT_EQ(p.flow_control, "unsupported");
    EXPECT_TRUE(p.flow_control_error.empty());
    EXPECT_TRUE(p.link_up);
    EXPECT_LT(p.link_wait, 1.0);
    EXPECT_GE(p.xstats_offered, 8u);  // ethdev's basic statistics, whatever the driver
    EXPECT_EQ(p.max_frame, kDefaultMaxFrame);
    EXPECT_EQ(p.bus, "vdev");
  }
  EXPECT_TRUE(ports.wait_for_links(0).empty());
}

TEST(Ports, AnUnknownNameIsRefusedWithTheNamesThereAre) {
  XLP_REQUIRE_EAL();
  const std::string ring = "net_ring_" + new_ring_pair();
  PortOptions options;
  options.names = {"0000:03:00.0", "0000:04:00.0"};
  try {
    Ports ports(options);
    FAIL() << "ports built without their devices";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("no DPDK port named 0000:03:00.0 (ports: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(ring + "0, " + ring + "1)"), std::string::npos) << e.what();
  }
}

TEST(Ports, DropsCountTheDriversCountersOnceAndFramesThatFailedToLeave) {
  const std::vector<std::string> drops = {"rx_discards_phy", "rx_out_of_buffer"}, pause = {"rx_xoff_packets"};
  PortCounters before, after;
  for (PortCounters* c : {&before, &after}) {
    c->drop_names = &drops;
    c->pause_names = &pause;
  }
  before.drop_xstats = {10, 20};
  after.drop_xstats = {13, 27};  // 3 and 7 more: one drop may be in both, so the larger
  before.pause_xstats = {1};
  after.pause_xstats = {4};
  after.eth.imissed = 5;
  after.eth.oerrors = 2;
  PortDrops d = drops_between(before, after, 1);
  EXPECT_EQ(d.xstats, (std::vector<std::pair<std::string, uint64_t>>{{"rx_discards_phy", 3}, {"rx_out_of_buffer", 7}}));
  EXPECT_EQ(d.tx_lost, 2u);
  EXPECT_EQ(d.tester_drops(), 7u + 2u);
  EXPECT_EQ(pause_between(before, after), (std::vector<std::pair<std::string, uint64_t>>{{"rx_xoff_packets", 3}}));
  after.oerrors_lost = false;  // net_ring: frames it refused, offered again
  d = drops_between(before, after, 1);
  EXPECT_EQ(d.tx_lost, 0u);
  EXPECT_EQ(d.tester_drops(), 7u);
  TrialReport report;
  report.ports.push_back(PortReport{});
  report.ports.back().index = 1;
  report.ports.back().drops = drops_between(before, before, 1);
  report.ports.back().drops.tx_lost = 4;
  invalidate_on_tester_drops(report);
  EXPECT_FALSE(report.valid);
  EXPECT_NE(report.invalid_reason.find("4 frames it took for sending failed to leave (oerrors)"), std::string::npos)
      << report.invalid_reason;
}

TEST(Ports, RetaShareCountsTheEntriesOfEachQueue) {
  EXPECT_EQ(reta_share({0, 1, 0, 1, 1, 3}, 2), (std::vector<uint32_t>{2, 3}));  // 3: no such queue
  EXPECT_EQ(mtu_for(1526), 1508u);  // 1,518 bytes and two VLAN tags on a NIC
}

}  // namespace
}  // namespace xlp
