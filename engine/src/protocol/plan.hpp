// A trial request, parsed and validated (docs/protocol.md, op "trial"; parsed by trial.cpp).
// Pure: no DPDK.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "emulation/ce.hpp"
#include "core/enumerate.hpp"
#include "emulation/fields.hpp"
#include "core/frame.hpp"
#include "core/header_check.hpp"
#include "core/pacing.hpp"
#include "emulation/statetable.hpp"
#include "emulation/tcp.hpp"

namespace xlp {

// A varying field as requested: which header field, which part of it, how it varies.
struct VarySpec {
  enum class Field { kSrcPort, kDstPort, kSrcIp, kDstIp } field;
  uint32_t offset = 0;  // byte offset within the address (0 for ports)
  uint32_t bits = 16;   // 16: a 16-bit word at an even offset; 8: one byte
  VaryMode mode = VaryMode::kRandom;
  uint32_t min = 0, max = 0;
  std::string name;     // the request key, for messages
};

// A stream's emulated CEs (ce.hpp; docs/protocol.md "ce"): which CEs, which side of the
// frames they are, and which of their fields the sender writes and the receiver checks.
struct CePlan {
  enum Field : uint8_t { kTunnel = 1, kIpv6 = 2, kIpv4 = 4, kPort = 8 };  // kTunnel: the tunnel's address
  std::shared_ptr<const CeSource> source;
  bool src = true;     // the CEs send the frames (else they receive them)
  bool random = true;  // else increasing
  uint8_t tx = 0, rx = 0;  // Field bits
  // The CE's index rides in the test tag (kTagCe) of its UDP frames: written with its fields,
  // checked on receipt, kept by a Responder's state table for its phase-2 frames.
  bool tag = false;
};

// Where `fields` of a CE plan sit in a frame whose layers start at these offsets (0: none; the
// tunnel's is the innermost tunnel header's, `tunnel_version` 0 without one),
// with the test tag's CE word (the CE's index) beside them where the plan has `tag`, in a UDP
// datagram (`tag_offset` 0: a TCP segment's tag option lies too far from the headers for the
// words a sender varies).
CeLayout ce_layout(const CePlan& ce, uint8_t fields, uint16_t tunnel_offset, int tunnel_version, uint16_t ip_offset,
                   int ip_version, uint16_t l4_offset, uint16_t tag_offset);

// The receiver's check of a test frame's CE fields (ce.rx), their layers found by the parser
// (`tag`): false when the frame lacks one of them, or they name no CE in use, or two, or
// another CE than the tag's.
bool ce_received_consistent(const CePlan& ce, const TestTag& tag, const uint8_t* frame);

struct StreamPlan {
  enum class Kind : uint8_t { kForeground = 0, kBackground = 1 } kind = Kind::kForeground;  // RFC 8219 §5.3
  FrameSpec spec;
  uint32_t rx_frame_size = 0;  // size of the frame as it arrives (after translation), untagged
  VlanStack rx_vlan;           // the VLAN IDs it arrives with
  std::vector<VarySpec> vary;
  std::optional<CePlan> ce;
  std::optional<RxSpec> rx;  // what the DUT must have written (header checks)
  // Order of the joint enumeration of the fields whose mode is kEnumerate (stateful phase 1).
  std::optional<TupleEnumerator::Order> enumerate;
};

// The header fields of a stream's received frames that its CEs own (CePlan's tx and rx fields):
// the CE check judges them, the header check leaves them out.
std::vector<OwnedField> ce_owned_fields(const StreamPlan& stream);

// Phase 2 of a stateful test: frames built from the Responder's state table (RFC 9693).
struct FromTable {
  uint16_t port = 0;
  EntrySelector::Mode selection = EntrySelector::Mode::kRandom;
};

// Phase 1 of a stateful test: the receiver on `port` stores the four-tuples of flow `flow`.
struct LearnPlan {
  uint16_t port = 0;
  size_t flow = 0;
  int ip_version = 4;  // of the frames as they arrive at the Responder
  uint64_t table_size = 0;
};

// Where the varying fields of a stream sit in its frame template.
std::vector<FieldSpec> resolve_fields(const StreamPlan& stream, const FrameTemplate& tmpl);
// Throws BadParameter when the words a stream's frames vary (fields, CE rows, the IPv4
// checksum) span more than the sender writes per frame (BlockWords::kChunks x 8 bytes).
void check_span(const std::vector<FieldSpec>& fields, const std::vector<CeRow>& ce_rows, const FrameTemplate& tmpl,
                const std::string& stream);

// Among the first `total` frames of a repeating pattern of stream indices, the frames of `s`.
inline uint64_t frames_in_pattern(const std::vector<uint8_t>& pattern, size_t s, uint64_t total) {
  const uint64_t n = pattern.size();
  uint64_t per_period = 0, in_rest = 0;
  for (uint64_t j = 0; j < n; ++j) {
    per_period += pattern[j] == s;
    in_rest += pattern[j] == s && j < total % n;
  }
  return total / n * per_period + in_rest;
}

// Streams per flow at most: an IMIX of 16 sizes, each with foreground and background frames.
constexpr size_t kMaxStreams = 32;
// The longest frame pattern of a flow (e.g. an IMIX period mixed with a foreground/background
// period).
constexpr size_t kMaxPattern = 65536;

// A flow of TCP segments (docs/tcp.md). The request names the flow the Initiator sends (SYNs,
// FINs or RSTs); for SYNs and FINs the parser adds the flows that answer them (SYN-ACKs and
// ACKs, FIN-ACKs and last ACKs), each answering the frames of the flow before it as they arrive
// (on its tx_port), sent by that port's receiver instead of a sender of its own.
struct TcpFlow {
  TcpStep step = TcpStep::kSyn;
  TcpKey key;
  size_t answers = 0;  // SYN-ACK and ACK: the index of the flow whose frames it answers
};

// DNS (docs/dns.md): the trial's test zone and the records its names have, and the ports whose
// receivers answer queries for it (the authoritative side, dns_frame.hpp).
struct DnsPlan {
  std::shared_ptr<const dns::Zone> zone;
  dns::RecordRule records;
  std::vector<uint16_t> authoritative;
};

// A flow of DNS queries (its foreground's FrameSpec::dns): their replies arrive on its tx_port.
// Consecutive queries leave from consecutive source ports of `ports` from the foreground's
// src_port (dns::QueryKeys); a AAAA answer is expected synthesized with `prefix` where the name
// has no AAAA record (dns::Expectation).
struct DnsFlow {
  uint32_t ports = 1;
  std::array<uint8_t, 16> prefix{};
  int prefix_bits = 96;
  std::vector<std::pair<std::array<uint8_t, 16>, int>> exclude;  // dns::Expectation's
  std::vector<std::pair<uint32_t, int>> mapped;
  uint8_t checks = 0;  // dns::ReplyCheck bits: what a right answer is held to besides its records
  // Names asked again (dns::RepeatSchedule): `repeat` of 65536 queries, `repeat_after` seconds
  // after the first (the lag in queries follows from each lane's rate).
  uint32_t repeat = 0;
  double repeat_after = 0;
  // In a zone of dns64perf++ names: the number of the trial's first name among the A records'
  // prefix's addresses (the front end moves it on from trial to trial, so that no trial asks a
  // name an earlier one asked).
  uint64_t names_from = 0;
};

struct FlowPlan {
  std::string name;
  uint16_t tx_port = 0, rx_port = 0;
  uint64_t rate = 0;           // frames/s, all streams together
  // The flow's streams (each a frame template with its own sequence numbers) and which stream
  // frame k of the flow belongs to: pattern[k % pattern.size()]. One mechanism for RFC 8219's
  // foreground/background mix (protocol keys foreground, background, mix: frame k is
  // foreground iff k % n < m) and for IMIX (RFC 6985: a stream per frame size, the sizes in a
  // fixed repeating order). streams[0] is a foreground stream (it carries the tagged frames).
  std::vector<StreamPlan> streams;
  std::vector<uint8_t> pattern;
  uint64_t frames = 0;  // > 0: send exactly this many frames (else rate x duration)
  std::optional<FromTable> from_table;
  // From `at` seconds after the start on, send at `rate` (strictly increasing `at`): `rate`
  // above is the rate before the first step (RFC 2544 §26.5 system recovery).
  struct RateStep {
    double at = 0;
    uint64_t rate = 0;
  };
  std::vector<RateStep> rate_steps;
  std::optional<TcpFlow> tcp;
  std::optional<DnsFlow> dns;
  // Its frames answer another flow's (TCP SYN-ACKs and ACKs): no sender of its own.
  bool answers() const { return tcp && answers_segment(tcp->step); }

  // The flow's stretches at one rate: the first at `rate` from 0, then one per step, each
  // with round(its rate x its length) frames.
  std::vector<RateSegment> segments() const;
  uint64_t planned_frames(double duration) const;
  // Frames of stream `s` among the flow's first `total` frames.
  uint64_t frames_of(size_t s, uint64_t total) const { return frames_in_pattern(pattern, s, total); }
};

// Delay measurements of a trial (RFC 8219 §7.2-7.3; per-frame timeout of the SIIT paper).
struct DelayPlan {
  double frame_timeout = 0;  // seconds; > 0: a frame later than this counts as lost ("late")
  bool histogram = false;    // the delay distribution of every received frame (PDV)
  bool ipdv = false;         // inter-packet delay variation
  uint64_t tagged = 0;       // latency: frames tagged per flow (their delays reported one by one)
  double tagged_start = 0;   // seconds into the trial where the tagged frames begin
};

// A sample of each receiving port's frames, written as a pcapng file per port after the trial
// (docs/protocol.md, "Capture"): the first `frames` test frames the port receives (every
// `stride`-th of each RX queue), `snaplen` bytes of each, foreign frames too when `foreign`.
struct CapturePlan {
  uint32_t frames = 100;
  uint32_t stride = 1;
  uint32_t snaplen = 65535;
  bool foreign = false;
  static constexpr uint32_t kMaxFrames = 4096;  // per port: with 9220-byte frames 38 MB at most
};

struct TrialPlan {
  double duration = 0, timeout = 2.0, progress_interval = 1.0;
  uint64_t seed = 0;  // pseudorandom fields: the same seed gives the same frames (RFC 4814 §3.1)
  DelayPlan delay;
  std::optional<LearnPlan> learn;
  bool finish_early = true;
  // Report each flow's loss periods: runs of consecutive frames (in the flow's sending order)
  // that never arrived, with their send times (RFC 2544 §26.5/26.6, RFC 6201).
  bool losses = false;
  // The validity rule (docs/protocol.md "Validity"). Absent: siitperf's, every frame sent
  // within duration x (1 + 1e-5). Set (s): the schedule's, every frame sent and none more than
  // max_lag behind its scheduled time; a sender may then finish up to max_lag after duration.
  std::optional<double> max_lag;
  std::optional<CapturePlan> capture;
  std::optional<DnsPlan> dns;
  std::vector<FlowPlan> flows;
};

// Every frame the plan sends or expects must fit the ports' set-up (`max_frame`: on the wire,
// FCS and VLAN tags included; the engine's --max-frame-size): throws BadParameter naming the
// flow, the frame and the limit.
void check_frame_sizes(const TrialPlan& plan, uint32_t max_frame);

// Seconds after the schedule's start by which every frame must have been sent (the validity
// rule's limit; senders are cut off there).
inline double send_limit(const TrialPlan& plan) {
  return plan.max_lag ? plan.duration + *plan.max_lag : plan.duration * (1 + 1e-5);
}

// The first foreground sequence number sent at or after delay.tagged_start.
uint64_t tagged_first(uint64_t foreground_frames, const TrialPlan& plan);

}  // namespace xlp
