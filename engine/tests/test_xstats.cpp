// Which driver counters the engine reads as the tester's receive drops and as pause frames
// received (ports/xstats.hpp), by the names real drivers give them.
#include <gtest/gtest.h>

#include "ports/xstats.hpp"

namespace xlp {
namespace {

TEST(Xstats, ReceiveDropsOfRealDrivers) {
  // mlx5 (NIC and PCIe drops, no room in the RX queue), ixgbe, i40e, ice, e1000.
  for (const char* name : {"rx_discards_phy", "rx_out_of_buffer", "rx_no_dma_resources", "rx_dropped_packets",
                           "rx_discards", "rx_missed_packets", "rx_no_buffer_count", "rx_phy_discard_packets",
                           "rx_buffer_full_drop"})
    EXPECT_EQ(classify_xstat(name), XstatKind::kRxDrop) << name;
}

TEST(Xstats, PauseFramesReceived) {
  for (const char* name : {"rx_xon_packets", "rx_xoff_packets", "rx_priority3_xoff_packets", "rx_pause_ctrl_phy",
                           "mac_rx_pause_frames"})
    EXPECT_EQ(classify_xstat(name), XstatKind::kRxPause) << name;
}

TEST(Xstats, NeitherTransmitSideNorDamagedFramesNorEthdevsOwnCopies) {
  for (const char* name : {"tx_dropped", "tx_xoff_packets", "tx_pause_ctrl_phy", "rx_crc_errors", "rx_length_errors",
                           "rx_good_packets", "rx_missed_errors", "rx_mbuf_allocation_errors", "rx_q0_errors",
                           "rx_q15_packets", "tx_q3_bytes", "rx_unicast_packets"})
    EXPECT_EQ(classify_xstat(name), XstatKind::kOther) << name;
}

}  // namespace
}  // namespace xlp
