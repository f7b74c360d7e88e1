// The receiving task of an RX queue (RxTask): classifies and counts what arrives, answers
// ARP/ND, learns stateful tuples, samples captures. The trial (runtime.cpp) gives it streams and
// reads its results (trial_report.cpp, capture.cpp).
#pragma once
#include "runtime.hpp"

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_memcpy.h>
#include <rte_pcapng.h>
#include <rte_version.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <ctime>
#include <algorithm>
#include <cstring>
#include <map>
#include <type_traits>

#include "errors.hpp"
#include <rte_errno.h>

namespace xlp {

// Receives on one RX queue of a port: recognises this trial's test frames, counts them per
// sub-stream in the queue's own Receiver, and counts everything else as foreign. Ends at the
// global timeout after the last sender stopped, or earlier when every frame sent to this
// port has arrived on one of its queues (finish_early).
class RxTask final : public Task {
 public:
  RxTask(uint16_t port, uint16_t queue, uint8_t trial_tag, TrialControl& ctl, BurstIo& io,
         const PortIdentity& id, rte_mempool* pool)
      : port_(port), queue_(queue), tag_(trial_tag), ctl_(ctl), io_(io), identity_(id), pool_(pool) {
    sinks_.fill({});
  }
  void add_stream(uint8_t id, Stream* s) {
    sinks_[id] = {s, s->receivers.at(queue_).get()};
    streams_.push_back(s);
  }
  // Stateful phase 1: the four-tuples of sub-stream `id` go into this queue's own table
  // (merged into the port's table after the trial: no table shared between workers).
  void learn_from(uint8_t id, int ip_version, uint64_t table_size) {
    if (!learned_) learned_ = std::make_unique<StateTable>(ip_version, table_size);
    learn_[id] = true;
  }
  // Capture: sample this queue's test frames (and foreign frames when `foreign`) into copies
  // from `pool`, sharing the port's claims; every `stride`-th candidate of this queue.
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
  uint64_t answered() const { return answered_; }
  uint64_t test_frames() const { return test_frames_; }
  uint16_t port() const override { return port_; }
  uint16_t queue() const override { return queue_; }

  bool poll(uint64_t now) override {
    rte_mbuf* bufs[kMaxBurst];
    const uint16_t n = io_.receive(port_, queue_, bufs, kMaxBurst);
    if (n > 0) {
      const uint64_t rx_tsc = rte_rdtsc();
      for (uint16_t i = 0; i < n; ++i) classify(bufs[i], rx_tsc);
      rte_pktmbuf_free_bulk(bufs, n);
    }
    if (now >= ctl_.rx_deadline.load(std::memory_order_relaxed)) return false;
    if (ctl_.abort.load(std::memory_order_relaxed)) return false;
    // Acquire: all_arrived() reads the senders' Stream::sent (see TrialControl).
    if (n == 0 && ctl_.finish_early && ctl_.senders_running.load(std::memory_order_acquire) == 0 &&
        all_arrived())
      return false;
    return true;
  }

 private:
  struct Sink {
    Stream* stream = nullptr;
    Receiver* rx = nullptr;
  };

  void classify(rte_mbuf* m, uint64_t rx_tsc) {
    TestTag tag;
    const uint8_t* data = rte_pktmbuf_mtod(m, const uint8_t*);
    const Sink* sink = nullptr;
    // A frame of several segments (a jumbo frame from a ring port or a NIC's scatter RX) has
    // its headers and tag in the first one; its length is pkt_len.
    if (!parse_test_frame(data, m->data_len, tag) || tag.trial_tag != tag_ ||
        !(sink = &sinks_[tag.stream])->stream) {
      ++foreign_;
      if (capture_ && capture_foreign_) sample(m, rx_tsc);
      if (answer_neighbor(io_, port_, queue_, m, identity_, pool_)) ++answered_;
      return;
    }
    ++test_frames_;
    if (capture_) sample(m, rx_tsc);  // whatever its fate below: a bad length is worth seeing
    Receiver& r = *sink->rx;
    if (m->pkt_len != sink->stream->rx_len) {
      ++r.bad_length;
      return;
    }
    if (!(tag.vlan == sink->stream->rx_vlan)) {  // the DUT sent it out on another VLAN
      ++r.bad_vlan;
      return;
    }
    if (const auto& ce = sink->stream->rx_ce; ce && !ce_received_consistent(*ce, tag, data)) {
      ++r.wrong_ce;  // delivered to another CE than its fields name, or mapped wrongly
      return;
    }
    uint64_t seq;
    switch (r.seq.record(tag.seq, seq)) {
      case SequenceTracker::Result::kNew: {
        const uint64_t delay = (rx_tsc - tag.timestamp) & kTimestampMask;
        if (ctl_.frame_timeout_tsc && delay > ctl_.frame_timeout_tsc) {
          r.late.add(1);  // too late to count: lost, as with RFC 2544's global timeout
          break;
        }
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
        if (learn_[tag.stream] && !learned_->full()) learned_->learn(data + tag.l3_offset);
        break;
      }
      case SequenceTracker::Result::kDuplicate: ++r.duplicates; break;
      case SequenceTracker::Result::kOutOfRange: ++r.out_of_range; break;
    }
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
      if (s->arrived() < s->sent) return false;
    return true;
  }

  uint16_t port_, queue_;
  uint8_t tag_;
  TrialControl& ctl_;
  BurstIo& io_;
  const PortIdentity& identity_;
  rte_mempool* pool_;
  std::array<Sink, 256> sinks_;
  std::vector<Stream*> streams_;
  uint64_t foreign_ = 0, answered_ = 0, test_frames_ = 0;
  std::array<bool, 256> learn_{};
  std::unique_ptr<StateTable> learned_;  // stateful phase 1: this queue's part of the table
  PortCapture* capture_ = nullptr;       // none: no capture in this trial
  bool capture_foreign_ = false, capture_full_ = false;
  uint32_t capture_stride_ = 1, capture_snaplen_ = 0;
  uint64_t capture_seen_ = 0, capture_missed_ = 0;
  rte_mempool* capture_pool_ = nullptr;
  std::vector<std::pair<uint64_t, rte_mbuf*>> copies_;
};

}  // namespace xlp
