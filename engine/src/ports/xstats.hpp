// Which of a driver's extended statistics (rte_eth_xstats) matter to a measurement: the
// counters of frames the tester's own NIC dropped on receive, and of pause frames it
// received. Drivers name their counters freely (mlx5 counts NIC and PCIe drops only as
// rx_discards_phy and rx_out_of_buffer; Intel's count pause frames as rx_xon_packets and
// rx_xoff_packets), so the names are classified by their words. Pure string logic, no DPDK.
#pragma once
#include <array>
#include <cctype>
#include <string>
#include <string_view>

namespace xlp {

enum class XstatKind { kOther, kRxDrop, kRxPause };

namespace xstats_detail {

inline bool contains(std::string_view name, std::string_view word) { return name.find(word) != std::string_view::npos; }

// "rx_q12_errors" and the like: ethdev's own per-queue copies of rte_eth_stats.
inline bool generic_per_queue(std::string_view name) {
  if (name.size() < 5 || !(name.substr(0, 4) == "rx_q" || name.substr(0, 4) == "tx_q")) return false;
  size_t i = 4;
  while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i]))) ++i;
  return i > 4 && i < name.size() && name[i] == '_';
}

}  // namespace xstats_detail

// ethdev's basic statistics as extended statistics: the same numbers as rte_eth_stats, which
// the engine reads itself (imissed, rx_nombuf, ierrors, oerrors).
inline constexpr std::array<std::string_view, 8> kGenericXstats = {
    "rx_good_packets", "tx_good_packets", "rx_good_bytes",  "tx_good_bytes",
    "rx_missed_errors", "rx_errors",      "tx_errors",      "rx_mbuf_allocation_errors"};

// What a counter of this name counts, as far as a trial cares.
//  - kRxPause: pause (IEEE 802.3x) or priority flow control frames received ("xon", "xoff",
//    "pause"): the DUT asked the tester to stop sending, a finding about the DUT.
//  - kRxDrop: frames the port dropped on receive before the application had them ("missed",
//    "discard", "drop", "no buffer", "out of buffer", "no DMA resources"): the tester's drops.
//    Damaged frames (CRC, length, alignment errors) are not: they arrived damaged.
//  - kOther: everything else, and ethdev's generic copies of rte_eth_stats.
inline XstatKind classify_xstat(std::string_view name) {
  using xstats_detail::contains;
  for (std::string_view generic : kGenericXstats)
    if (name == generic) return XstatKind::kOther;
  if (xstats_detail::generic_per_queue(name)) return XstatKind::kOther;
  const bool rx = contains(name, "rx_");
  const bool tx = name.substr(0, 3) == "tx_" || contains(name, "_tx_");
  if (!rx || tx) return XstatKind::kOther;
  if (contains(name, "xon") || contains(name, "xoff") || contains(name, "pause")) return XstatKind::kRxPause;
  for (std::string_view word : {"missed", "discard", "drop", "nombuf", "no_buf", "no_mbuf", "out_of_buffer",
                                "no_dma", "buffer_full"})
    if (contains(name, word)) return XstatKind::kRxDrop;
  return XstatKind::kOther;
}

}  // namespace xlp
