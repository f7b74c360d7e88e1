// What the engine reports, as plain values: the data plane fills these, the protocol unit
// serialises them (docs/protocol.md). No JSON and no DPDK here, so result building can be
// tested on its own.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/dns.hpp"
#include "core/header_check.hpp"

namespace xlp {

// How a port was set up and what its driver offers (hello; docs/protocol.md "hello").
struct PortInfo {
  uint16_t index = 0;
  std::string name, driver;
  std::string bus;  // "pci", "vdev", ...
  int socket = -1;  // the device's NUMA node, -1 unknown
  std::array<uint8_t, 6> mac{};
  uint32_t link_speed_mbps = 0;  // 0: unknown
  bool link_up = false;
  bool link_full_duplex = false, link_autoneg = false;
  double link_wait = 0;  // s from the port's start until its link was up (or the wait gave up)
  uint16_t rx_queues = 0, tx_queues = 0;  // as configured (not the driver's maximum)
  uint16_t max_queues = 0;                // the most RX/TX queue pairs the driver offers
  uint16_t rx_descriptors = 0, tx_descriptors = 0;  // per queue, as the driver took them
  std::string rx_spread;                  // how frames are spread over the RX queues
  std::vector<std::string> rss_offered;   // the header fields the NIC's RSS can hash
  uint16_t reta_size = 0;                 // RSS redirection table entries (0: none)
  std::vector<uint32_t> reta_share;       // per RX queue, the entries that point to it (RSS in use)
  uint32_t mtu = 0;                       // as the port holds it after start
  uint32_t max_frame = 0;                 // the largest frame the port was set up to take
  std::string flow_control_found, flow_control;  // at start and now: none | rx_pause | tx_pause | full | unsupported
  std::string flow_control_error;         // why it could not be turned off ("" when it was, or was kept)
  bool promiscuous = false, allmulticast = false;
  uint32_t xstats_offered = 0;            // how many extended statistics the driver has
  std::vector<std::string> drop_counters, pause_counters;  // the driver's xstats of each kind (xstats.hpp)
  bool hw_timestamp = false;  // the NIC offers RX timestamps (RTE_ETH_RX_OFFLOAD_TIMESTAMP)
  bool timesync = false;      // IEEE 1588 timestamps of PTP frames (rte_eth_timesync_enable)
  bool read_clock = false;    // the NIC's clock can be read (rte_eth_read_clock)
};

struct HelloReport {
  std::string engine, dpdk;
  uint64_t tsc_hz = 0;
  unsigned main_lcore = 0;
  std::vector<unsigned> workers;
  std::vector<PortInfo> ports;
};

// One-way delays of a stream's received frames, in ns.
struct DelayRange {
  double min = 0, mean = 0, max = 0;
};

// The delay histogram of a stream (RFC 8219 §7.3): exact count/min/max/mean, percentiles to
// the histogram's resolution, and its non-empty buckets.
struct DelayDistribution {
  struct Bucket {
    double low_ns = 0, high_ns = 0;
    uint64_t count = 0;
  };
  uint64_t count = 0;
  double min_ns = 0, max_ns = 0, mean_ns = 0, p50_ns = 0, p99_ns = 0, p999_ns = 0;
  double relative_error = 0;
  std::vector<Bucket> buckets;
};

struct IpdvSummary {
  uint64_t count = 0;
  double min_ns = 0, median_ns = 0, max_ns = 0;
};

// RFC 8219 §7.2: the delay of each tagged frame, none for a lost or late one.
struct TaggedDelays {
  uint64_t lost = 0;
  std::vector<std::optional<double>> delays_ns;
};

// One stream's counts when a kind has several (IMIX: one stream per frame size).
struct SizeReport {
  uint32_t frame_size = 0, rx_frame_size = 0;
  uint64_t sent = 0, received = 0, bad_length = 0;
};

struct StreamReport {
  std::string kind;  // "foreground" | "background"
  uint64_t sent = 0, received = 0, duplicates = 0, reordered = 0, bad_length = 0, out_of_range = 0;
  uint64_t bad_vlan = 0;  // test frames of the stream that arrived with other VLAN IDs than rx_vlan
  // With ce.rx_fields: test frames whose CE fields name no CE in use, or disagree on which.
  std::optional<uint64_t> wrong_ce;
  // TCP: segments of the stream that were not the handshake step it expects (wrong flags or
  // acknowledgement: docs/tcp.md), not counted as received.
  std::optional<uint64_t> tcp_unexpected;
  // TCP SYNs or SYN-ACKs received: the smallest MSS they announced (RFC 9293 §3.7.1's default
  // where one had no MSS option): what the other side's data segments may carry.
  std::optional<uint32_t> mss_min;
  // With rx (header checks): test frames counted by their verdict (index Verdict; the good
  // ones, index 0, are the received), not counted as received.
  std::optional<std::array<uint64_t, kVerdicts>> header_faults;
  // With rx.count_df: the frames counted as received by their IPv4 DF flag.
  struct DfCounts {
    uint64_t set = 0, clear = 0;
  };
  std::optional<DfCounts> df;
  // With rx.count_tunnel_ecn: the frames counted as received by their tunnel header's ECN field
  // against the inner one's (RFC 6040 §4.1: copied, or Not-ECT).
  struct TunnelEcnCounts {
    uint64_t copied = 0, not_ect = 0;
  };
  std::optional<TunnelEcnCounts> tunnel_ecn;
  // DNS queries: replies counted by the client's verdict (dns::ReplyVerdict; index 0 unused:
  // the good ones in time are the received), not counted as received.
  std::optional<std::array<uint64_t, dns::kReplyVerdicts>> dns_faults;
  uint64_t dns_upstream_due = 0;  // the upstream queries its good replies needed (kCheckUpstream)
  uint32_t frame_size = 0, rx_frame_size = 0;
  std::optional<DelayRange> delay_ns;      // when a frame was received
  std::optional<uint64_t> late;            // with a per-frame timeout
  std::optional<DelayDistribution> delay;  // delay.histogram
  std::optional<IpdvSummary> ipdv;         // delay.ipdv
  std::optional<TaggedDelays> tagged;      // delay.tagged (foreground only)
  std::vector<SizeReport> sizes;           // per stream, when the kind has several
};

// A run of consecutive frames of a flow (in its sending order) that never arrived, by the
// frames' scheduled send times in s after the trial's start (RFC 6201's timestamp method:
// first_after_s - last_before_s; its frame-loss method: frames / rate).
struct LossPeriod {
  double first_lost_s = 0, last_lost_s = 0;
  uint64_t frames = 0;
  std::optional<double> last_before_s, first_after_s;  // none at the trial's start / end
};

struct LossReport {
  uint64_t periods = 0, lost = 0;
  std::vector<LossPeriod> first;  // the first kMaxListed periods
  std::vector<LossPeriod> last;   // the last kMaxListed periods, in order
  std::optional<LossPeriod> longest;
  static constexpr size_t kMaxListed = 100;
};

// What one TX queue (a lane of the flow) sent.
struct QueueSendReport {
  uint16_t queue = 0;
  uint64_t planned = 0, sent = 0;
  double send_time = 0, max_lag_us = 0;
  std::optional<uint64_t> lagged;  // frames sent more than max_lag late (with TrialPlan::max_lag)
};

struct FlowReport {
  std::string name;
  uint64_t rate = 0, planned = 0, sent = 0, received = 0;
  double send_time = 0;   // s from the schedule's start to the end of sending (the latest queue)
  double max_lag_us = 0;  // how far sending fell behind the schedule at worst (any queue)
  std::optional<uint64_t> lagged;  // its queues' lagged frames (with TrialPlan::max_lag)
  std::vector<StreamReport> streams;
  std::vector<QueueSendReport> queues;  // per TX queue
  std::optional<LossReport> losses;      // when the trial asked for it
};

// What one RX queue received: this trial's test frames (whatever their fate) and others.
struct QueueReceiveReport {
  uint16_t queue = 0;
  uint64_t test_frames = 0, foreign = 0;
};

// The sample of a port's received frames (TrialPlan::capture) as a pcapng file.
struct CaptureReport {
  uint64_t frames = 0;  // in the file
  uint64_t missed = 0;  // sampled, but no copy buffer was free (never with the engine's pool size)
  std::string pcapng;   // the file's bytes
};

// What the kernel counted for a port's AF_XDP sockets (ports/xsk_sockets.hpp).
struct XskDrops {
  uint64_t rx_dropped = 0;       // no buffer in the fill ring, or a frame too long for one
  uint64_t rx_full = 0;          // the RX ring was full
  uint64_t rx_invalid = 0;       // invalid descriptors
  uint64_t fill_ring_empty = 0;  // times the fill ring was found empty (each also an rx_dropped)
  // The frames the sockets lost: each is counted once in the first three.
  uint64_t lost() const { return rx_dropped + rx_full + rx_invalid; }
};

// The port's own counters over the trial (rte_eth_stats, after minus before): frames the
// tester itself dropped (imissed: its RX ring was full; rx_nombuf: no mbuf was free) or that
// arrived damaged (ierrors) or failed to leave (oerrors; some drivers also count frames they
// refused, which the senders offer again).
struct PortDrops {
  uint64_t imissed = 0, rx_nombuf = 0, ierrors = 0, oerrors = 0;
  // An af_xdp port: the frames its kernel interface dropped on receive (its rx_dropped: every
  // frame its XDP program could not hand to the AF_XDP socket). DPDK 22.11's PMD counts only
  // some of them (the socket's fill ring was empty) as imissed, and not those its ring was
  // full for; on a veth the interface counts both kinds, so the two overlap (tester_drops).
  uint64_t kernel_rx_dropped = 0;
  std::string kernel_interface;  // "" when the port has none
  // An af_xdp port: what the kernel counted for its AF_XDP sockets (XDP_STATISTICS):
  // their lost frames include those their RX ring was full for, which neither imissed nor
  // the interface's rx_dropped count.
  std::optional<XskDrops> xsk;
  // Per queue (rte_eth_stats q_errors), where kept: drivers differ in what they count there
  // (RX drops, TX failures), so it is recorded, not judged.
  std::vector<uint64_t> queue_errors;
  // The driver's own receive drop counters (xstats.hpp, XstatKind::kRxDrop) that grew, by
  // name: mlx5's rx_discards_phy, ...
  std::vector<std::pair<std::string, uint64_t>> xstats;
  // Drivers count one drop in several of their counters (mlx5's imissed is its
  // rx_out_of_buffer; Intel's rx_discards feed imissed) and document no overlap: the largest
  // of them is what the tester surely dropped.
  // Frames the driver took for sending that then failed to leave (its oerrors, where they mean
  // that: net_ring counts frames it refused there, which the sender offers again).
  uint64_t tx_lost = 0;
  uint64_t tester_drops() const {
    uint64_t most = std::max({imissed, kernel_rx_dropped, xsk ? xsk->lost() : 0});
    for (const auto& [name, count] : xstats) most = std::max(most, count);
    return rx_nombuf + most + tx_lost;
  }
};

// An authoritative port's DNS queries (docs/dns.md): answered, or not (not a query it answers:
// another zone, type or class, a malformed message; or the TX queue never took the answer).
struct DnsServerReport {
  uint64_t answered = 0, unanswered = 0, unsent = 0;
};

struct PortReport {
  uint16_t index = 0;
  uint64_t foreign = 0, neighbor_replies = 0;
  uint64_t fragmented = 0;  // IP fragments (is_ip_fragment): test frames a DUT fragmented, not foreign
  PortDrops drops;
  // Pause frames the port received (the driver's XstatKind::kRxPause counters that grew): the
  // DUT asked the tester to pause, a finding about the DUT.
  std::vector<std::pair<std::string, uint64_t>> pause_received;
  // How often the port's link was seen going down during the trial (polled by the control
  // thread): such a trial is invalid.
  uint32_t link_down = 0;
  std::vector<QueueReceiveReport> queues;  // per RX queue
  std::optional<CaptureReport> capture;    // when the trial asked for one
  std::optional<DnsServerReport> dns;      // in a DNS trial (all 0 on a port that does not answer)
};

struct StateTableReport {
  uint16_t port = 0;
  uint64_t entries = 0, capacity = 0;
  int ip_version = 4;
};

struct TrialReport {
  bool valid = true;
  std::string invalid_reason;  // empty when valid
  double elapsed = 0;          // s, the whole trial as the control thread saw it
  std::vector<FlowReport> flows;
  std::vector<PortReport> ports;
  std::optional<StateTableReport> state_table;  // after a trial with learn
  std::optional<StateTableReport> initiator_table;  // and over TCP the Initiator's (docs/tcp.md)
};

struct FlowProgress {
  std::string name;
  uint64_t sent = 0, received = 0;
};

struct ProgressReport {
  double elapsed = 0;
  std::vector<FlowProgress> flows;
};

}  // namespace xlp
