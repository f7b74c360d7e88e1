// The receiving task of an RX queue (RxTask): classifies and counts what arrives, answers
// ARP/ND, learns stateful tuples, samples captures. The trial (runtime.cpp) gives it streams and
// reads its results (trial_report.cpp, capture.cpp).
#pragma once
#include "dataplane/runtime.hpp"

#include <rte_cycles.h>
#include <rte_mbuf_dyn.h>
#include <rte_ethdev.h>
#include <rte_pcapng.h>
#include <rte_prefetch.h>

#include <algorithm>
#include <cstring>

#include "core/dns_frame.hpp"
#include "core/errors.hpp"
#include "core/header_check.hpp"
#include "core/nic_clock.hpp"

namespace xlp {

// Receives on one RX queue of a port: recognises this trial's test frames, counts them per
// sub-stream in the queue's own Receiver, and counts everything else as foreign. Ends at the
// global timeout after the last sender stopped, or earlier when every frame sent to this
// port has arrived on one of its queues (finish_early).
class RxTask final : public Task {
 public:
  RxTask(uint16_t port, uint16_t queue, uint8_t trial_tag, TrialControl& ctl, BurstIo& io,
         const PortIdentity& id, rte_mempool* pool)
      : port_(port), queue_(queue), tag_(trial_tag), ctl_(ctl), io_(io), identity_(id), own_mac_(id.mac), pool_(pool) {
    sinks_.fill({});
  }
  void add_stream(uint8_t id, Stream* s) {
    sinks_[id] = {s, s->receivers.at(queue_).get()};
    streams_.push_back(s);
    if (s->dns) dns_client_ = true;
  }
  // DNS (docs/dns.md): the trial's zone, which the replies of this port's DNS streams name, and
  // which this port answers for when `authoritative`. An authoritative receiver stays until
  // every stream of `queries` (the trial's DNS streams, wherever they ask from) has its replies.
  void serve_dns(const DnsPlan& dns, bool authoritative, const std::vector<Stream*>& queries) {
    dns_ = &dns;
    if (!authoritative) return;
    authoritative_ = true;
    awaited_ = queries;
  }
  // Stateful phase 1: the four-tuples of sub-stream `id` go into this queue's own table
  // (merged into the port's table after the trial: no table shared between workers).
  void learn_from(uint8_t id, const StateTable& like) {
    if (!learned_) learned_ = std::make_unique<StateTable>(like.ip_version(), like.capacity(), like.tcp());
    learn_[id] = true;
  }
  // Capture: sample this queue's test frames (and foreign frames when `foreign`) into copies
  // from `pool`, sharing the port's claims; every `stride`-th candidate of this queue.
  // Hardware receive timestamps (docs/delay.md): a frame whose mbuf carries one (`flag` in its
  // ol_flags, the stamp in the dynamic field at `offset`) is received at that stamp, converted
  // from the NIC's clock by `clock`; others at the receive burst's TSC.
  void use_rx_timestamps(int offset, uint64_t flag, const DeviceClockMap* clock) {
    nic_stamp_offset_ = offset;
    nic_stamp_flag_ = flag;
    nic_clock_ = clock;
  }

  void capture_into(PortCapture* port, const CapturePlan& plan, uint32_t snaplen, rte_mempool* pool) {
    capture_ = port;
    capture_foreign_ = plan.foreign;
    capture_stride_ = plan.stride;
    capture_snaplen_ = snaplen;
    capture_pool_ = pool;
    copies_.reserve(plan.frames);
  }
  // The copies (rte_pcapng_copy's EPB-formatted mbufs) with their receive TSC; the caller
  // takes ownership.
  std::vector<std::pair<uint64_t, rte_mbuf*>> take_copies() { return std::move(copies_); }
  uint64_t capture_missed() const { return capture_missed_; }
  ~RxTask() override {
    for (auto& c : copies_) rte_pktmbuf_free(c.second);
  }
  const StateTable* learned() const { return learned_.get(); }
  uint64_t foreign() const { return foreign_; }
  uint64_t fragmented() const { return fragmented_; }
  uint64_t answered() const { return answered_; }
  uint64_t test_frames() const { return test_frames_; }
  bool authoritative() const { return authoritative_; }
  uint64_t dns_answered() const { return dns_answered_; }
  uint64_t dns_unanswered() const { return dns_unanswered_; }
  uint64_t dns_unsent() const { return dns_unsent_; }
  uint16_t port() const override { return port_; }
  uint16_t queue() const override { return queue_; }

  bool poll(uint64_t now) override {
    uint16_t n = 0;
    // While replies wait for the TX queue, nothing more is taken from the RX queue: the replies
    // keep their order, and a TX queue that stays full shows as the port's RX drops.
    if (replying_ == 0 || flush_replies()) {
      rte_mbuf* bufs[kMaxBurst];
      n = io_.receive(port_, queue_, bufs, kMaxBurst);
      if (n > 0) {
        // Hardware timestamps or not is decided once a burst: the loop of each kind is its own.
        if (nic_clock_) take<true>(bufs, n);
        else take<false>(bufs, n);
      }
    }
    if (now >= ctl_.rx_deadline.load(std::memory_order_relaxed)) return finish();
    if (ctl_.abort.load(std::memory_order_relaxed)) return finish();
    // Acquire: all_arrived() reads the senders' Stream::sent (see TrialControl).
    if (n == 0 && replying_ == 0 && ctl_.finish_early && ctl_.senders_running.load(std::memory_order_acquire) == 0 &&
        all_arrived())
      return finish();
    return true;
  }

 private:
  static constexpr uint16_t kRxPrefetch = 4;  // frames ahead (DPDK's l3fwd takes 3)

  // Classifies a received burst; frees what is not held as a reply. kNicStamps: each frame is
  // received at its hardware timestamp (use_rx_timestamps), else at the burst's TSC.
  template <bool kNicStamps>
  void take(rte_mbuf** bufs, uint16_t n) {
    const uint64_t rx_tsc = rte_rdtsc();
    uint16_t done = 0;
    // The frames a few places ahead are fetched while this one is judged: each frame's
    // headers and tag come from another core's cache or from the NIC's DMA, misses that
    // would otherwise stall classify at its first loads.
    for (uint16_t i = 0; i < std::min<uint16_t>(n, kRxPrefetch); ++i) prefetch_headers(bufs[i]);
    for (uint16_t i = 0; i < n; ++i) {
      if (i + kRxPrefetch < n) prefetch_headers(bufs[i + kRxPrefetch]);
      Stream* reply = nullptr;
      if (classify(bufs[i], kNicStamps ? nic_rx_tsc(bufs[i], rx_tsc) : rx_tsc, reply)) {
        replies_[replying_] = bufs[i];
        reply_streams_[replying_++] = reply;
      } else {
        bufs[done++] = bufs[i];
      }
    }
    rte_pktmbuf_free_bulk(bufs, done);
    if (replying_ > 0) flush_replies();
  }
  uint64_t nic_rx_tsc(const rte_mbuf* m, uint64_t burst_tsc) const {
    if (!(m->ol_flags & nic_stamp_flag_)) return burst_tsc;
    return nic_clock_->stamp_to_tsc(*RTE_MBUF_DYNFIELD(m, nic_stamp_offset_, const uint64_t*), burst_tsc);
  }
  // A frame's first two cache lines: its headers and test tag (a tunnel's or a TCP segment's
  // tag lies beyond the first 64 bytes).
  static void prefetch_headers(const rte_mbuf* m) {
    const char* data = rte_pktmbuf_mtod(m, const char*);
    rte_prefetch0(data);
    rte_prefetch0(data + RTE_CACHE_LINE_SIZE);
  }
  struct Sink {
    Stream* stream = nullptr;
    Receiver* rx = nullptr;
  };

  // Counts a received frame; true when it now holds a reply written in place (a TCP segment's,
  // of stream `reply`; a DNS answer, `reply` nullptr), false when it is done with.
  bool classify(rte_mbuf* m, uint64_t rx_tsc, Stream*& reply) {
    TestTag tag;
    const uint8_t* data = rte_pktmbuf_mtod(m, const uint8_t*);
    const Sink* sink = nullptr;
    // A frame of several segments (a jumbo frame from a ring port or a NIC's scatter RX) has
    // its headers and tag in the first one; its length is pkt_len.
    const bool headers = parse_headers(data, m->data_len, tag);
    if (!headers || !read_test_tag(data, m->data_len, tag) || tag.trial_tag != tag_ ||
        !(sink = &sinks_[tag.stream])->stream) {
      if (headers && dns_ && tag.l4 == kProtoUdp && !tag.ip.tunnelled())
        switch (classify_dns(m, tag, rx_tsc)) {
          case DnsFate::kCounted: return false;
          case DnsFate::kAnswer: return true;
          case DnsFate::kNotDns: break;
        }
      if (is_ip_fragment(data, m->data_len)) ++fragmented_;
      else ++foreign_;
      if (capture_ && capture_foreign_) sample(m, rx_tsc);
      if (answer_neighbor(io_, port_, queue_, m, identity_, pool_)) ++answered_;
      return false;
    }
    ++test_frames_;
    if (capture_) sample(m, rx_tsc);  // whatever its fate below: a bad length is worth seeing
    Receiver& r = *sink->rx;
    Stream& st = *sink->stream;
    // The length as expected, less what a tunnel entry point may add between its header and
    // the packet (tunnel_extra_bytes) and a DUT may add to a TCP header's options (an MSS
    // clamp's MSS option).
    uint32_t added = tunnel_extra_bytes(tag);
    if (st.rx_tcp_header && tag.l4 == kProtoTcp) {
      const uint32_t header = (data[tag.l4_offset + 12] >> 4) * 4u;
      if (header > st.rx_tcp_header) added += header - st.rx_tcp_header;
    }
    if (m->pkt_len - added != st.rx_len) {
      ++r.bad_length;
      return false;
    }
    if (!(tag.vlan == st.rx_vlan)) {  // the DUT sent it out on another VLAN
      ++r.bad_vlan;
      return false;
    }
    if (const auto& ce = st.rx_ce; ce && !ce_received_consistent(*ce, tag, data)) {
      ++r.wrong_ce;  // delivered to another CE than its fields name, or mapped wrongly
      return false;
    }
    if (const auto& check = st.rx_check) {  // the headers the DUT wrote (header_check.hpp)
      const uint32_t l4_len = m->pkt_len - tag.l4_offset;
      const Verdict v = check->judge(data, tag, l4_len, check->checksums() ? l4_sum(m, tag.l4_offset) : 0, own_mac_);
      if (v != Verdict::kGood) {
        ++r.header_faults[size_t(v)];
        return false;
      }
      if (const std::optional<bool> df = check->counted_df(data, tag)) ++(*df ? r.df_set : r.df_clear);
      if (const std::optional<bool> copied = check->counted_tunnel_ecn(data, tag))
        ++(*copied ? r.tunnel_ecn_copied : r.tunnel_ecn_not_ect);
    }
    if (st.tcp && (tag.l4 != kProtoTcp || !expected_segment(st.tcp->step, st.tcp->key, tcp_view(data, tag)))) {
      ++r.tcp_unexpected;
      return false;
    }
    if (st.tcp && (st.tcp->step == TcpStep::kSyn || st.tcp->step == TcpStep::kSynAck))
      r.mss_min = std::min<uint32_t>(r.mss_min, announced_mss(data, m->data_len, tag.l4_offset, data[tag.l3_offset] >> 4 == 4));
    uint64_t seq;
    switch (r.seq.record(tag.seq, seq)) {
      case SequenceTracker::Result::kNew: {
        const uint64_t delay = (rx_tsc - tag.timestamp) & kTimestampMask;
        if (ctl_.frame_timeout_tsc && delay > ctl_.frame_timeout_tsc) {
          r.late.add(1);  // too late to count: lost, as with RFC 2544's global timeout
          break;
        }
        if (learn_[tag.stream] && !learned_->full())
          learned_->learn(data + tag.l3_offset, ipv6_tunnel_header(data, tag), tag.ce);
        if (st.reply) reply = answer_in_place(m, st, tag);
        count_received(r, seq, delay);
        break;
      }
      case SequenceTracker::Result::kDuplicate: ++r.duplicates; break;
      case SequenceTracker::Result::kOutOfRange: ++r.out_of_range; break;
    }
    return reply != nullptr;
  }

  // A frame (or DNS reply) of sequence number `seq` arrived in time after `delay` ticks.
  [[gnu::always_inline]] static void count_received(Receiver& r, uint64_t seq, uint64_t delay) {
    r.received.add(1);
    if (r.delays) {
      r.delays->add(delay);  // it keeps the exact min, max and mean as well
    } else {
      if (delay < r.delay_min) r.delay_min = delay;
      if (delay > r.delay_max) r.delay_max = delay;
      r.delay_sum += delay;
    }
    if (r.ipdv) r.ipdv->add(seq, int64_t(delay));
    if (r.tagged) r.tagged->record(seq, int64_t(delay));
  }

  // A UDP frame without the test tag, on a port with DNS (docs/dns.md): a query to answer (on
  // an authoritative port) or a reply to one of this port's queries.
  enum class DnsFate : uint8_t { kNotDns, kCounted, kAnswer };
  DnsFate classify_dns(rte_mbuf* m, const TestTag& hdrs, uint64_t rx_tsc) {
    uint8_t* data = rte_pktmbuf_mtod(m, uint8_t*);
    const std::optional<DnsMessage> msg = dns_message(data, m->data_len, hdrs);
    if (!msg) return DnsFate::kNotDns;
    if (authoritative_ && msg->dst_port == kDnsPort) {
      if (capture_) sample(m, rx_tsc);  // the query as it came
      const uint32_t len = m->nb_segs != 1 ? 0
                                           : answer_query_frame(data, m->data_len, m->data_len + rte_pktmbuf_tailroom(m),
                                                                hdrs, identity_.mac.data(), *dns_->zone, dns_->records);
      if (len == 0) {
        ++dns_unanswered_;
        return DnsFate::kCounted;
      }
      m->data_len = uint16_t(len);
      m->pkt_len = len;
      m->ol_flags = 0;
      ++dns_answered_;
      return DnsFate::kAnswer;
    }
    if (dns_client_ && msg->src_port == kDnsPort && take_reply(m, data + msg->offset, *msg, hdrs, rx_tsc))
      return DnsFate::kCounted;
    return DnsFate::kNotDns;
  }

  // A DNS reply: its name gives the stream that asked (and the nonce the trial), its port and
  // ID the query's sequence number, the stream's ring the query's send time; then the client's
  // verdict (dns::judge_reply). A reply without its question (an error a server keeps small),
  // or with a dns64perf++ name (which names no stream), belongs to the stream whose source
  // ports hold the port it came to; the former is judged by its RCODE
  // (dns::judge_headless_reply). False when it names no query of this trial (foreign).
  bool take_reply(const rte_mbuf* m, const uint8_t* msg, const DnsMessage& at, const TestTag& hdrs, uint64_t rx_tsc) {
    size_t end = 0;
    const std::optional<dns::TestName> name = dns::read_name(msg, at.len, dns::kHeader, *dns_->zone, &end);
    const bool named_stream = name && dns_->zone->style() == dns::NameStyle::kXlatperf;
    const Sink sink = named_stream ? sinks_[name->stream] : port_sink(msg, at, name.has_value());
    if (!sink.stream || !sink.stream->dns || (named_stream && name->nonce != sink.stream->dns->nonce())) return false;
    ++test_frames_;
    if (capture_) sample(m, rx_tsc);
    Stream& st = *sink.stream;
    Receiver& r = *sink.rx;
    const DnsClient& client = *st.dns;
    if (!(hdrs.vlan == st.rx_vlan)) {
      ++r.bad_vlan;
      return true;
    }
    const uint8_t* frame = rte_pktmbuf_mtod(m, const uint8_t*);
    if (!datagram_checksums_ok(frame, hdrs, at)) {
      ++r.header_faults[size_t(Verdict::kBadChecksum)];  // the DUT's reply, damaged: nothing in it is trusted
      r.dns_failed.add(1);
      return true;
    }
    // From elsewhere, or to another host: its IP addresses, or an Ethernet destination neither
    // this port's nor the one its queries left from (a DUT that floods it), as a test frame's
    // (HeaderCheck::judge).
    const bool to_us = own_mac_.is_destination_of(frame) || client.queries_from().is_destination_of(frame);
    if (!to_us || !client.addressed_back(frame + hdrs.l3_offset)) {
      ++r.header_faults[size_t(Verdict::kBadAddress)];
      r.dns_failed.add(1);
      return true;
    }
    const std::optional<uint16_t> port = client.lane_port(at.dst_port);
    const uint16_t id = load_be16(msg);
    if (!port) {  // to a port the stream never asked from
      ++r.dns_faults[size_t(dns::ReplyVerdict::kMismatch)];
      return true;
    }
    const uint64_t seq = client.keys().seq_of({*port, id}, client.newest());
    const dns::TestName asked = name ? client.name_of(seq, name->stream) : dns::TestName{};
    const dns::ReplyVerdict v =
        seq >= st.planned ? dns::ReplyVerdict::kMismatch
        : name ? dns::judge_reply(msg, at.len, id, asked, client.qtype(), client.expectation(), *name, end,
                                  client.flips(seq, asked))
               : dns::judge_headless_reply(msg, at.len, id);
    if (v == dns::ReplyVerdict::kMismatch) {  // no reply to query `seq`: it may still come
      ++r.dns_faults[size_t(v)];
      return true;
    }
    switch (r.seq.record_full(seq)) {
      case SequenceTracker::Result::kNew: {
        const std::optional<uint64_t> sent = client.sent_at(seq);
        const uint64_t delay = sent ? (rx_tsc - *sent) & kTimestampMask : UINT64_MAX;
        if (delay > ctl_.frame_timeout_tsc) {
          r.late.add(1);  // RFC 8219 §9.2: a reply after the timeout counts as none
        } else if (v != dns::ReplyVerdict::kGood) {
          ++r.dns_faults[size_t(v)];
          r.dns_failed.add(1);
        } else {
          count_received(r, seq, delay);
          r.dns_upstream_due += client.upstream_due(seq, asked);
        }
        break;
      }
      case SequenceTracker::Result::kDuplicate:
        ++r.duplicates;
        // A query answered twice: a fault of the DUT's where duplicates are checked (it has
        // counted as answered once; the front end fails the trial on these).
        if (client.expectation().checks & dns::kCheckDuplicates) ++r.dns_faults[size_t(dns::ReplyVerdict::kDuplicateReply)];
        break;
      case SequenceTracker::Result::kOutOfRange: ++r.out_of_range; break;
    }
    return true;
  }

  // The stream a reply belongs to by the port it came to: the DNS stream (a lane of a flow)
  // whose source ports hold it. For a reply without a question, or one whose question is a test
  // name that names no stream (`named`: dns64perf++'s). None for a reply with a question that is
  // no test name (another name: foreign), or to no stream's port.
  Sink port_sink(const uint8_t* msg, const DnsMessage& at, bool named) const {
    if (!named && (at.len < dns::kHeader || load_be16(msg + 4) != 0)) return {};
    for (Stream* s : streams_)
      if (s->dns && s->dns->lane_port(at.dst_port)) return {s, s->receivers.at(queue_).get()};
    return {};
  }

  // The one's complement sum (sum_native) of a frame's bytes from `off` to its end, over
  // every segment (a jumbo frame's tail). A segment that starts at an odd byte of the run has
  // its words the other way round: its folded sum is swapped (RFC 1071 §2 (B)).
  [[gnu::always_inline]] static uint64_t l4_sum(const rte_mbuf* m, uint32_t off) {
    if (m->nb_segs == 1) return sum_native(rte_pktmbuf_mtod_offset(m, const uint8_t*, off), m->data_len - off);
    uint64_t sum = 0;
    bool odd = false;
    for (const rte_mbuf* s = m; s; s = s->next) {
      uint32_t len = s->data_len;
      if (off >= len) {
        off -= len;
        continue;
      }
      const uint64_t part = sum_native(rte_pktmbuf_mtod_offset(s, const uint8_t*, off), len - off);
      sum += odd ? __builtin_bswap16(fold(part)) : part;
      odd ^= ((len - off) & 1) != 0;
      off = 0;
    }
    return sum;
  }

  // Writes the TCP reply to `m`'s segment (of stream `st`, expected) over it: returns the
  // answering stream, or nullptr when the buffer cannot hold the reply (counted as unsent: the
  // trial is then invalid). The reply is counted before the frame it answers, so that a
  // receiver that sees the frame counted also sees its reply (settled()).
  Stream* answer_in_place(rte_mbuf* m, const Stream& st, const TestTag& tag) {
    Stream& reply = *st.reply;
    const uint32_t size = reply.segment->tmpl.size();
    Stream::Replies& mine = reply.replies[queue_];
    mine.built.add(1);
    if (m->nb_segs != 1 || uint32_t(m->data_len) + rte_pktmbuf_tailroom(m) < size) {
      ++mine.unsent;
      std::atomic_thread_fence(std::memory_order_release);
      return nullptr;
    }
    uint8_t* data = rte_pktmbuf_mtod(m, uint8_t*);
    write_segment(data, *reply.segment, answer(st.tcp->step, st.tcp->key, tcp_view(data, tag), tag.seq, tag.timestamp));
    m->data_len = uint16_t(size);
    m->pkt_len = size;
    m->ol_flags = 0;
    std::atomic_thread_fence(std::memory_order_release);
    return &reply;
  }

  // Offers the waiting replies to the TX queue; true when all were taken.
  bool flush_replies() {
    const uint16_t sent = io_.send(port_, queue_, replies_ + first_reply_, replying_);
    first_reply_ = uint16_t(first_reply_ + sent);
    replying_ = uint16_t(replying_ - sent);
    if (replying_ == 0) first_reply_ = 0;
    return replying_ == 0;
  }

  // The task ends: replies the TX queue never took are unsent.
  bool finish() {
    for (uint16_t i = first_reply_; i < first_reply_ + replying_; ++i)
      if (reply_streams_[i]) ++reply_streams_[i]->replies[queue_].unsent;
      else ++dns_unsent_;
    rte_pktmbuf_free_bulk(replies_ + first_reply_, replying_);
    replying_ = first_reply_ = 0;
    return false;
  }

  // A bounded copy: at most the port's limit of frames per trial, then not even the claim.
  void sample(const rte_mbuf* m, uint64_t rx_tsc) {
    if (capture_full_ || capture_seen_++ % capture_stride_ != 0) return;
    if (capture_->claimed.fetch_add(1, std::memory_order_relaxed) >= capture_->limit) {
      capture_full_ = true;
      return;
    }
    rte_mbuf* c = rte_pcapng_copy(port_, queue_, m, capture_pool_, capture_snaplen_, rx_tsc, RTE_PCAPNG_DIRECTION_IN);
    if (c) copies_.emplace_back(rx_tsc, c);
    else ++capture_missed_;
  }

  bool all_arrived() const {
    for (const Stream* s : streams_)
      if (!settled(*s)) return false;
    for (const Stream* s : awaited_)
      if (!settled(*s)) return false;
    return true;
  }

  // Every frame of `s` that will arrive has: all its sender sent (the caller saw the senders
  // stop), or for an answering stream, its cause is settled and every reply built arrived.
  static bool settled(const Stream& s) {
    if (!s.cause) return s.arrived() >= s.sent;
    if (!settled(*s.cause)) return false;
    // The cause's frames were counted after their replies (answer_in_place): this acquire
    // fence pairs with that release fence, so the replies read below include them all.
    std::atomic_thread_fence(std::memory_order_acquire);
    return s.arrived() >= s.replies_built();
  }

  uint16_t port_, queue_;
  uint8_t tag_;
  TrialControl& ctl_;
  BurstIo& io_;
  const PortIdentity& identity_;
  const PortMac own_mac_;  // the destination every judged frame must have (the port's MAC)
  rte_mempool* pool_;
  const DeviceClockMap* nic_clock_ = nullptr;  // hardware receive timestamps, when used
  int nic_stamp_offset_ = 0;
  uint64_t nic_stamp_flag_ = 0;
  std::array<Sink, 256> sinks_;
  std::vector<Stream*> streams_;
  std::vector<Stream*> awaited_;  // an authoritative port's: the DNS streams it answers
  const DnsPlan* dns_ = nullptr;  // the trial's DNS zone, when this port asks or answers
  bool dns_client_ = false, authoritative_ = false;
  uint64_t dns_answered_ = 0, dns_unanswered_ = 0, dns_unsent_ = 0;
  uint64_t foreign_ = 0, fragmented_ = 0, answered_ = 0, test_frames_ = 0;
  std::array<bool, 256> learn_{};
  std::unique_ptr<StateTable> learned_;  // stateful phase 1: this queue's part of the table
  PortCapture* capture_ = nullptr;       // none: no capture in this trial
  bool capture_foreign_ = false, capture_full_ = false;
  uint32_t capture_stride_ = 1, capture_snaplen_ = 0;
  uint64_t capture_seen_ = 0, capture_missed_ = 0;
  rte_mempool* capture_pool_ = nullptr;
  std::vector<std::pair<uint64_t, rte_mbuf*>> copies_;
  // Replies waiting for the TX queue, from first_reply_ on, with the streams they belong to
  // (TCP; nullptr: a DNS answer).
  rte_mbuf* replies_[kMaxBurst];
  Stream* reply_streams_[kMaxBurst];
  uint16_t replying_ = 0, first_reply_ = 0;
};

}  // namespace xlp
