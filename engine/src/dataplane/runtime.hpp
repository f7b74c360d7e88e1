// Executing one elementary trial on DPDK ports. A port has one or more TX/RX queue pairs. A
// flow is sent by one lane per TX queue of its port (lane q sends the flow's frames k with
// k % lanes == q, on the one constant-rate schedule); each lane's frames of a stream form a
// sub-stream with its own stream id and sequence numbers. Each RX queue of a port has its
// own receiver state per sub-stream, merged into the stream's report after the trial. Tasks
// (a lane's sender, a queue's receiver) run on workers (lcores); a queue pair (port, q) is
// served by one worker, so every queue has a single user.
#pragma once
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <array>
#include <atomic>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <vector>

#include "core/delays.hpp"
#include "emulation/fields.hpp"
#include "emulation/patches.hpp"
#include "core/frame.hpp"
#include "core/nic_clock.hpp"
#include "ports/io.hpp"
#include "core/neighbor.hpp"
#include "core/pacing.hpp"
#include "protocol/plan.hpp"
#include "protocol/report.hpp"
#include "core/seqtrack.hpp"
#include "emulation/statetable.hpp"

namespace xlp {

// Single-writer counter that another thread may read for progress reports: a plain store,
// no locked instruction in the hot loop.
struct Counter {
  std::atomic<uint64_t> v{0};
  void add(uint64_t d) { v.store(v.load(std::memory_order_relaxed) + d, std::memory_order_relaxed); }
  uint64_t get() const { return v.load(std::memory_order_relaxed); }
};

// What one RX queue saw of one sub-stream. Written only by that queue's worker; `received`
// and `late` are read by the other queues' receivers (all frames arrived?) and for progress.
struct Receiver {
  SequenceTracker seq;
  Counter received;
  Counter late;  // arrived after the per-frame timeout: counted as lost
  uint64_t duplicates = 0, bad_length = 0, bad_vlan = 0, out_of_range = 0;
  uint64_t wrong_ce = 0;  // fields that name no CE in use or disagree on which (ce.hpp)
  uint64_t tcp_unexpected = 0;  // TCP segments other than the step expects (tcp.hpp expected_segment)
  uint32_t mss_min = UINT32_MAX;  // SYNs and SYN-ACKs: the smallest MSS announced (announced_mss)
  std::array<uint64_t, kVerdicts> header_faults{};  // by the header check's verdict (index 0 unused)
  uint64_t df_set = 0, df_clear = 0;  // frames that passed, by their DF flag (rx.count_df)
  uint64_t tunnel_ecn_copied = 0, tunnel_ecn_not_ect = 0;  // ... by their tunnel's ECN (rx.count_tunnel_ecn)
  // DNS replies (docs/dns.md) by the client's verdict (index 0, good, unused); those that
  // answered a query (every verdict but kMismatch; and a reply with a bad checksum, counted in
  // header_faults) are also `dns_failed`, which arrived() adds.
  std::array<uint64_t, dns::kReplyVerdicts> dns_faults{};
  // The upstream queries the good replies needed (DnsClient::upstream_due), where counted.
  uint64_t dns_upstream_due = 0;
  Counter dns_failed;
  uint64_t delay_min = UINT64_MAX, delay_max = 0, delay_sum = 0;  // TSC ticks
  std::unique_ptr<Histogram> delays;       // every frame's delay, when asked for
  std::unique_ptr<IpdvTracker> ipdv;
  std::unique_ptr<TaggedFrames> tagged;    // latency: the tagged frames' delays
  explicit Receiver(uint64_t planned) : seq(planned) {}
};

// A stream of DNS queries (docs/dns.md): what its receivers need to take a reply for its query.
// A query's send time cannot ride in it (the reply carries the query's name, ID and port, all
// taken), so the sender keeps it in a ring by sequence number, which the receivers read.
// The flow's lanes (one per TX queue) share its source ports out: lane q of n takes every n-th
// from the q-th, so a reply's port alone names the lane, and its port and ID the query (a reply
// without its question has nothing else).
class DnsClient {
 public:
  // `window`: the queries the ring must remember, those sent within twice the reply timeout.
  // `lane` of `lanes`: which share of the flow's ports it asks from (lane < lanes <= ports).
  DnsClient(const dns::Expectation& expect, const FrameSpec& spec, const DnsFlow& flow, uint64_t window,
            dns::RepeatSchedule repeat, uint16_t lane = 0, uint16_t lanes = 1)
      : expect_(expect), qtype_(spec.dns->qtype), nonce_(spec.dns->nonce), nonce_hex_(dns::hex_digits(nonce_)),
        zone_letters_(expect.zone->first_word_letters()), names_from_(flow.names_from),
        keys_(flow.ports / lanes + (lane < flow.ports % lanes)), lane_(lane), lanes_(lanes),
        first_port_(spec.src_port), repeat_(repeat), ip_version_(uint8_t(spec.ip_version)), queries_from_(spec.src_mac) {
    // A reply comes from where the queries went and goes to where they left from.
    const size_t n = ip_version_ == 4 ? 4 : 16;
    std::memcpy(reply_addresses_.data(), spec.dst_ip.data(), n);
    std::memcpy(reply_addresses_.data() + n, spec.src_ip.data(), n);
    while ((uint64_t(1) << ring_bits_) < window) ++ring_bits_;
    sent_at_ = std::vector<std::atomic<uint64_t>>(size_t(1) << ring_bits_);
    for (auto& e : sent_at_) e.store(kNever, std::memory_order_relaxed);
  }
  // The sender: query `seq` left at `tsc`. A relaxed store: the reply that reads it came after
  // the query passed through the ports (which order memory on the way).
  void sent(uint64_t seq, uint64_t tsc) {
    sent_at_[seq & mask()].store(round(seq) << 48 | tag_timestamp(tsc), std::memory_order_relaxed);
    newest_.store(seq, std::memory_order_relaxed);
  }
  // The newest query sent: the reference a reply's key is read against (QueryKeys::seq_of).
  uint64_t newest() const { return newest_.load(std::memory_order_relaxed); }
  // The receivers: when query `seq` left (tag_timestamp), or none when the ring no longer holds
  // it (a query sent twice the ring's window later took its place: the reply is late).
  std::optional<uint64_t> sent_at(uint64_t seq) const {
    const uint64_t e = sent_at_[seq & mask()].load(std::memory_order_relaxed);
    if (e >> 48 != round(seq)) return std::nullopt;
    return e & kTimestampMask;
  }
  // The index of the name query `seq` asks (that of the query that first asked it), and the
  // name: of the trial's nonce and the stream, or a dns64perf++ name's address (the lanes take
  // the zone's addresses in turn from the flow's names_from on, the range's low bits wrapping).
  uint32_t index_of(uint64_t seq) const { return uint32_t(repeat_.first_ask(seq)); }
  dns::TestName name_of(uint64_t seq, uint8_t stream) const {
    const uint32_t index = index_of(seq);
    if (expect_.zone->style() == dns::NameStyle::kXlatperf) return {nonce_, stream, index};
    const uint32_t mask = expect_.rule.host_mask();
    return {0, 0, (expect_.rule.a_base & ~mask) | (uint32_t(names_from_ + uint64_t(index) * lanes_ + lane_) & mask)};
  }
  // The queries the DUT's resolver must have asked the authoritative side to answer query
  // `seq` (of `name`) as it did: a new name's, and a name's asked again after its records
  // expired (kCheckUpstreamExpired); none for one asked again from a live cache.
  uint32_t upstream_due(uint64_t seq, const dns::TestName& name) const {
    if (!(expect_.checks & dns::kCheckUpstream)) return 0;
    if (repeat_.repeats(seq) && !(expect_.checks & dns::kCheckUpstreamExpired)) return 0;
    return dns::upstream_asks(dns::records_of(name, expect_.rule, expect_.zone->style()), qtype_, expect_.exclude);
  }
  // The case of the letters of query `seq`'s name `name` (dns::case_flips): random where the
  // reply's question is held to it, else lower case. A dns64perf++ name's label has no letter.
  dns::CaseFlips flips(uint64_t seq, const dns::TestName& name) const {
    if (!(expect_.checks & dns::kCheckQuestion)) return {};
    if (expect_.zone->style() == dns::NameStyle::kDns64perf) return dns::case_flips(seq, 0, 0, zone_letters_);
    return dns::case_flips(seq, nonce_hex_, dns::hex_digits(name.index), zone_letters_);
  }
  // What the sender writes into query `seq`'s name (dns::Zone::stamp).
  dns::NameStamp stamp(uint64_t seq) const {
    const dns::TestName name = name_of(seq, 0);
    return expect_.zone->stamp(name, flips(seq, name));
  }
  uint32_t nonce() const { return nonce_; }
  uint16_t qtype() const { return qtype_; }
  const dns::QueryKeys& keys() const { return keys_; }
  // The sender's: the next query's sequence number and key, each query's key a step from the
  // last one's (QueryKeys::next).
  struct NextKey {
    uint64_t seq = 0;
    dns::QueryKey key;
  };
  NextKey next_key;
  uint16_t first_port() const { return first_port_; }
  // The MAC the queries left from (left/right.mac where the config sets one): a resolver may
  // answer to it as well as to the port's own.
  const PortMac& queries_from() const { return queries_from_; }
  // A key of this lane's (its port among the lane's) as the query carries it: its port among
  // the flow's, from the first.
  dns::QueryKey on_wire(dns::QueryKey key) const {
    return {uint16_t(uint32_t(key.port_offset) * lanes_ + lane_), key.id};
  }
  // The lane's port of a reply that came to `port`, or none where that is not one of this lane's.
  std::optional<uint16_t> lane_port(uint16_t port) const {
    const uint32_t offset = uint32_t(port) - first_port_;  // wraps below the first
    if (offset % lanes_ != lane_ || offset / lanes_ >= keys_.ports()) return std::nullopt;
    return uint16_t(offset / lanes_);
  }
  const dns::Expectation& expectation() const { return expect_; }
  // Whether the IP header `ip` of a reply is of the queries' version, from the address they
  // went to (the DUT's server, or the tester's other side through the DUT) to the one they
  // left from: a stub resolver takes no other as an answer (RFC 5452 §3). Its length is the
  // caller's: the frame parsed as a datagram in this IP version holds it.
  bool addressed_back(const uint8_t* ip) const {
    if (ip[0] >> 4 != ip_version_) return false;
    return ip_version_ == 4 ? std::memcmp(ip + 12, reply_addresses_.data(), 8) == 0
                            : std::memcmp(ip + 8, reply_addresses_.data(), 32) == 0;
  }

 private:
  static constexpr uint64_t kNever = ~uint64_t(0);  // round 0xffff: no sequence number's for long
  uint64_t mask() const { return (uint64_t(1) << ring_bits_) - 1; }
  uint64_t round(uint64_t seq) const { return (seq >> ring_bits_) & 0xffff; }
  dns::Expectation expect_;
  uint16_t qtype_;
  uint32_t nonce_;
  uint64_t nonce_hex_;     // its digits (dns::hex_digits), for the case flips
  uint64_t zone_letters_;  // dns::Zone::first_word_letters
  uint64_t names_from_;    // a dns64perf++ zone's first name (DnsFlow::names_from)
  dns::QueryKeys keys_;
  uint16_t lane_, lanes_;
  uint16_t first_port_;
  dns::RepeatSchedule repeat_;
  uint8_t ip_version_;
  std::array<uint8_t, 32> reply_addresses_{};  // a reply's source then destination (IPv4: 8 bytes)
  uint32_t ring_bits_ = 10;
  std::vector<std::atomic<uint64_t>> sent_at_;
  std::atomic<uint64_t> newest_{0};
  PortMac queries_from_;
};

// One lane's frames of one of the flow's streams: a sequence space of its own.
struct Stream {
  uint8_t index;  // in the flow's streams
  FrameTemplate tmpl;
  std::vector<FieldGenerator> fields;  // varying fields, empty for fixed frames
  std::unique_ptr<TupleEnumerator> enumerator;  // stateful phase 1: fields varied jointly
  std::vector<size_t> enumerated;               // their indices in `fields`, fastest first
  // The enumeration's frames computed before the trial, when they fit kPrecomputeBytes (else
  // the enumerator runs while sending, a block of frames at a time).
  std::unique_ptr<FramePatches> patches;
  std::unique_ptr<CeGenerator> ce;  // the sender's emulated CEs
  std::unique_ptr<FieldLayout> layout;  // where the fields' and the CE's words go (when any vary)
  // The next frames' varying words (when any vary and are not precomputed `patches`); it
  // refers to the members above, so it is declared (and destroyed) after them.
  std::unique_ptr<FieldBlock> block;
  std::optional<CePlan> rx_ce;      // the CE fields the receiver checks (CePlan::rx)
  std::optional<HeaderCheck> rx_check;  // what the DUT must have written (StreamPlan::rx)
  static constexpr uint64_t kPrecomputeBytes = uint64_t(1) << 28;  // 256 MiB
  uint32_t rx_len;   // expected received length (frame without FCS, with the tags of rx_vlan)
  // TCP: the header's length as sent (options included); a DUT may add options (an MSS clamp),
  // which the length check allows for. 0: no TCP.
  uint32_t rx_tcp_header = 0;
  VlanStack rx_vlan;  // the VLAN IDs it is expected with
  uint32_t frame_size = 0, rx_frame_size = 0;  // as requested: FCS included, VLAN tags not
  uint64_t planned;
  // TCP (docs/tcp.md): the flow's handshake step; the stream whose frames answer this one's
  // (each written in place by the receiver of this one's frame), and the stream this one
  // answers, whose template then has zero addresses (SegmentTemplate).
  const TcpFlow* tcp = nullptr;
  Stream* reply = nullptr;
  Stream* cause = nullptr;
  std::unique_ptr<SegmentTemplate> segment;
  std::unique_ptr<DnsClient> dns;  // a stream of DNS queries
  // An answering stream: per RX queue of its cause's port (RSS spreads the causes over them),
  // the replies that queue's receiver built and those of them its TX queue never took, each
  // written by that queue's worker alone (`sent` is the difference once the trial ended).
  struct alignas(64) Replies {  // a cache line each: the queues' workers write them side by side
    Counter built;
    uint64_t unsent = 0;
  };
  std::vector<Replies> replies;  // empty unless the stream answers
  uint64_t replies_built() const {
    uint64_t n = 0;
    for (const Replies& r : replies) n += r.built.get();
    return n;
  }
  uint64_t replies_unsent() const {
    uint64_t n = 0;
    for (const Replies& r : replies) n += r.unsent;
    return n;
  }
  // TX side
  uint64_t next_seq = 0;
  // Written only by the lane's TX task. An RX task, on another worker, reads it only after
  // it has seen TrialControl::senders_running reach 0 with an acquire load: every sender's
  // fetch_sub releases its final count, so that read is ordered after the last write (a
  // hand-over, no per-frame atomic on the sending path).
  uint64_t sent = 0;
  // RX side: per RX queue of the receiving port.
  std::vector<std::unique_ptr<Receiver>> receivers;

  Stream(uint8_t k, FrameTemplate t, const StreamPlan& sp, uint64_t n)
      : index(k), tmpl(std::move(t)), rx_len(uint32_t(sp.rx_frame_size - kFcs + sp.rx_vlan.bytes())),
        rx_vlan(sp.rx_vlan), frame_size(sp.spec.frame_size), rx_frame_size(sp.rx_frame_size), planned(n) {
    if (sp.spec.l4 == kProtoTcp) rx_tcp_header = uint32_t(tcp_header_size(sp.spec.tcp_flags));
    if (sp.ce && sp.ce->rx) rx_ce = sp.ce;
    if (sp.rx) rx_check.emplace(sp.spec, *sp.rx, sp.rx_frame_size, sp.rx_vlan, ce_owned_fields(sp));
  }
  ~Stream() { rte_pktmbuf_free(tmpl.tail); }  // frames still in flight keep their reference
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  uint64_t arrived() const {  // received, late or a failed DNS reply, on any queue
    uint64_t n = 0;
    for (const auto& r : receivers) n += r->received.get() + r->late.get() + r->dns_failed.get();
    return n;
  }
};

// The part of a flow one TX queue sends.
struct Lane {
  uint16_t queue = 0;
  uint64_t planned = 0;
  std::vector<std::unique_ptr<Stream>> streams;  // as the flow's streams
  std::vector<uint8_t> pattern;                  // stream index of the lane's frame j % pattern.size()
  Counter sent;
  std::unique_ptr<EntrySelector> selector;       // stateful phase 2
  uint64_t send_end_tsc = 0;
  uint64_t max_lag_tsc = 0;  // how far sending fell behind the schedule at worst
  uint64_t lagged = 0;       // frames sent more than TrialControl::max_lag_tsc behind schedule
  bool cut_off = false;      // the tester could not send everything in time
};

struct Flow {
  FlowPlan plan;
  uint64_t planned = 0;
  std::vector<RateSegment> segments;  // its rates over time (one unless rate_steps)
  std::vector<std::unique_ptr<Lane>> lanes;
  StateTable* table = nullptr;  // stateful phase 2: frames from this table
};

struct TrialControl {
  uint64_t tsc_hz = 0;
  uint64_t start_tsc = 0;
  uint64_t cutoff_tsc = 0;     // sending must end before this (the validity rule's limit)
  uint64_t max_lag_tsc = UINT64_MAX;  // the schedule rule's tolerance (TrialPlan::max_lag); none
  uint64_t timeout_tsc = 0;    // RFC 2544 §23 d, in ticks
  uint64_t frame_timeout_tsc = 0;  // per-frame timeout in ticks, 0 = none
  bool finish_early = true;
  // Senders still sending. Each TX task decrements it once when it stops (acq_rel): a reader
  // that loads 0 with acquire sees every sender's final counts (Stream::sent).
  std::atomic<uint32_t> senders_running{0};
  std::atomic<uint64_t> rx_deadline{UINT64_MAX};
  std::atomic<bool> abort{false};
};

class Task {
 public:
  virtual ~Task() = default;
  // Does a little work; returns false once the task has finished for this trial.
  virtual bool poll(uint64_t now) = 0;
  virtual uint16_t port() const = 0;
  virtual uint16_t queue() const = 0;
  virtual void begin() {}  // the trial's start time is set: last preparations
};

struct Worker {
  unsigned lcore = 0;
  std::vector<Task*> tasks;
  std::atomic<bool> finished{false};
  void run();
};

class RxTask;

// One receiving port's capture sample (TrialPlan::capture), shared by its RX queues: each
// sampled frame claims a place first, so the port keeps its first `limit` sampled frames
// whatever queue they came in on. A claim is one atomic operation per sampled frame (at most
// limit + queues per trial), none once the sample is full.
struct PortCapture {
  std::atomic<uint32_t> claimed{0};
  uint32_t limit = 0;
};

// The mbuf pool each port's frames come from (one per NUMA node, on the node of the ports that
// use it); one pool for every port where a test or a benchmark has one.
class PortPools {
 public:
  PortPools(rte_mempool* pool) : per_port_{pool} {}  // NOLINT: one pool for all is the common case
  PortPools(std::vector<rte_mempool*> per_port) : per_port_(std::move(per_port)) {}  // NOLINT
  rte_mempool* of(uint16_t port) const { return per_port_.size() == 1 ? per_port_[0] : per_port_.at(port); }

 private:
  std::vector<rte_mempool*> per_port_;
};

class Trial {
 public:
  // `trial_tag` distinguishes this trial's frames from late frames of earlier ones.
  // `tables`: the Responder state tables per port, which phase 1 fills (plan.learn) and phase
  // 2 reads (from_table); they outlive the trial. `io` carries every burst. `queues`: TX/RX
  // queue pairs per port. Throws ExecutionFailure when a flow asks for a state table that is
  // not there, or the plan needs more stream ids than the tag has.
  Trial(const TrialPlan& plan, uint8_t trial_tag, BurstIo& io, const PortPools& pools, uint64_t tsc_hz,
        const std::vector<PortIdentity>& ports, std::vector<std::unique_ptr<StateTable>>& tables,
        uint16_t queues = 1);
  ~Trial();
  // Hardware receive timestamps on `port` (docs/delay.md, "Hardware timestamps"): frames whose
  // mbufs carry one (the dynamic flag `flag`, the stamp at dynamic field `offset`) are
  // received at it, placed on the TSC by `clock` (which outlives the trial). Before run().
  void use_rx_timestamps(uint16_t port, int offset, uint64_t flag, const DeviceClockMap& clock);
  // Runs on the given worker lcores (none: on the calling thread). `on_tick` is called about
  // every millisecond on the calling thread while workers run; it may request an abort.
  void run(const std::vector<unsigned>& worker_lcores, const std::function<void()>& on_tick);
  void request_abort() { control_.abort.store(true); }
  // Counts so far, readable while the workers run.
  std::vector<FlowProgress> progress() const;
  // The trial's report, once run() returned; elapsed_s: the whole trial as the caller saw it.
  TrialReport result(double elapsed_s) const;

 private:
  TrialPlan plan_;
  TrialControl control_;
  std::vector<std::unique_ptr<Flow>> flows_;
  std::vector<std::unique_ptr<Task>> tasks_;
  std::vector<RxTask*> receivers_;  // by port, then queue
  std::vector<std::unique_ptr<Worker>> workers_;
  std::map<uint16_t, StateTable*> learning_;  // the tables this trial fills, by port
  std::optional<uint16_t> initiator_table_port_;  // over TCP: the Initiator's table
  // Capture: the copies' pool, per receiving port the shared claim counter and, once the
  // workers are done, the pcapng file (written on the calling thread, not in the RX loop).
  rte_mempool* capture_pool_ = nullptr;
  std::map<uint16_t, std::unique_ptr<PortCapture>> capture_ports_;
  std::map<uint16_t, CaptureReport> captures_;
  uint64_t wall_ns0_ = 0, wall_tsc0_ = 0;  // a realtime clock reading and the TSC at that moment
  void write_captures();

  // The set-up steps of the constructor besides each stream's own (runtime.cpp).
  struct Learning {  // a table this trial fills: on a port, from a flow's frames
    uint16_t port;
    size_t flow;
    int ip_version;
  };
  std::vector<Learning> set_up_learning(std::vector<std::unique_ptr<StateTable>>& tables);
  void link_answers();
  void set_up_dns(const std::function<std::vector<RxTask*>&(uint16_t)>& receivers_of);
  void set_up_capture(const std::map<uint16_t, std::vector<RxTask*>>& receivers);
};

}  // namespace xlp
