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

namespace {

// Sends one lane of a flow at its share of the flow's constant rate: every poll hands the
// frames that are due (at least a minimum burst, at most kMaxBurst) to the lane's TX queue.
// Frames the port does not accept are kept and offered again first, so none is skipped and
// the sequence stays in order.
class TxTask final : public Task {
 public:
  TxTask(Flow& flow, Lane& lane, TrialControl& ctl, BurstIo& io, rte_mempool* pool)
      : flow_(flow), lane_(lane), ctl_(ctl), io_(io), pool_(pool), port_(flow.plan.tx_port), queue_(lane.queue),
        schedule_(ctl.tsc_hz, flow.segments, lane.planned, 0) {
    for (const auto& st : lane.streams) varying_ = varying_ || !st->fields.empty() || st->ce;
    varying_ = varying_ || flow.table != nullptr;
    mixed_ = lane.pattern.size() > 1;
    enumerated_ = !mixed_ && !flow.table && lane.streams[0]->patches;
  }

  bool poll(uint64_t now) override {
    if (pending_ > 0 && !flush()) {
      if (now > ctl_.cutoff_tsc || ctl_.abort.load(std::memory_order_relaxed)) return stop(now, true);
      return true;
    }
    if (built_ == lane_.planned) return stop(now, false);
    if (now < next_tsc_) return true;
    if (now > ctl_.cutoff_tsc || ctl_.abort.load(std::memory_order_relaxed)) return stop(now, true);

    const uint64_t lag = now - schedule_.due_tsc(built_);
    if (lag > lane_.max_lag_tsc) lane_.max_lag_tsc = lag;
    const uint32_t count = uint32_t(std::min<uint64_t>(schedule_.due_count(now) - built_, kMaxBurst));
    // Frames this burst sends more than the schedule rule's tolerance after their time: the
    // DUT receives them bunched up, not at the trial's constant rate.
    if (lag > ctl_.max_lag_tsc)
      lane_.lagged += std::min<uint64_t>(schedule_.due_count(now - ctl_.max_lag_tsc) - built_, count);
    if (rte_pktmbuf_alloc_bulk(pool_, burst_, count) != 0) return true;  // pool empty: retry
    const uint64_t tsc = rte_rdtsc();
    if (enumerated_) {
      Stream& st = *lane_.streams[0];
      st.patches->with_length([&](auto length) { build_single(count, tsc, FramePatches::Cursor<length>(*st.patches)); });
    } else if (mixed_) {
      varying_ ? build<true, true>(count, tsc) : build<false, true>(count, tsc);
    } else if (varying_) {
      build<true, false>(count, tsc);
    } else {
      build_single(count, tsc, FixedFrames{});
    }
    built_ += count;
    pending_ = count;
    first_pending_ = 0;
    flush();
    next_tsc_ = schedule_.next_send_tsc(built_);
    return true;
  }

 private:
  // Fills burst_[0..count) with the next frames of the flow. Specialised on whether any field
  // varies and whether the flow mixes two streams, so fixed frames pay nothing for the
  // variation and single-stream flows nothing for the mix. A single stream's varying fields
  // (all but a state table's tuples) are generated for the burst first and written while each
  // frame is built, in one pass (build_single); otherwise the frames are copied, then patched
  // stream by stream, then stamped. (Fixed frames and precomputed enumerations of a single
  // stream take build_single from poll().)
  template <bool kVarying, bool kMixed>
  void build(uint32_t count, uint64_t tsc) {
    if constexpr (kVarying && !kMixed) {
      Stream& st = *lane_.streams[0];
      if (!flow_.table) {
        const BurstStamp stamp{&st.tmpl, st.next_seq, tsc};
        const FieldBurst fields(*st.layout, st.fields, count, st.enumerator.get(), st.enumerated, st.ce.get(), &stamp);
        fields.with_chunks([&](auto&& writer) { build_single(count, tsc, writer); });
        return;
      }
    }
    const uint32_t n = uint32_t(lane_.pattern.size());
    uint8_t* frames[kMaxBurst];
    uint8_t positions[kMaxStreams][kMaxBurst];  // burst positions of each stream's frames (mixed flows)
    uint32_t per_stream[kMaxStreams] = {kMixed ? 0 : count};
    for (uint32_t i = 0; i < count; ++i) {
      uint8_t s = 0;
      if constexpr (kMixed) {
        s = lane_.pattern[cycle_];
        if (++cycle_ == n) cycle_ = 0;
        positions[s][per_stream[s]++] = uint8_t(i);
      }
      burst_stream_[i] = s;
      frames[i] = copy_template(burst_[i], lane_.streams[s]->tmpl);
    }
    uint64_t udp_delta[kMaxBurst] = {};
    if constexpr (kVarying) {
      for (size_t s = 0; s < lane_.streams.size(); ++s) {
        Stream& st = *lane_.streams[s];
        const uint8_t* pos = positions[s];
        const auto at = [pos](uint32_t k) -> uint32_t { return kMixed ? pos[k] : k; };
        if (st.patches) {
          st.patches->apply(per_stream[s], frames, at, udp_delta);
        } else if (!st.fields.empty() || st.ce) {
          const FieldBurst fields(*st.layout, st.fields, per_stream[s], st.enumerator.get(), st.enumerated,
                                  st.ce.get());
          fields.with_chunks([&](auto writer) {
            for (uint32_t k = 0; k < per_stream[s]; ++k) udp_delta[at(k)] += writer.write(frames[at(k)]);
          });
        }
      }
      if (flow_.table)  // phase 2: the whole four-tuple from the state table (foreground only)
        for (uint32_t i = 0; i < count; ++i)
          udp_delta[i] += flow_.table->write(lane_.selector->next(), frames[i], lane_.streams[0]->tmpl);
    }
    for (uint32_t i = 0; i < count; ++i) {
      Stream& st = *lane_.streams[kMixed ? burst_stream_[i] : 0];
      stamp_frame(frames[i], st.tmpl, st.next_seq++, tsc, udp_delta[i]);
      ++st.sent;
    }
  }

  // A single stream whose frames differ only by what `patch` writes (fixed frames: nothing;
  // stateful phase 1: a precomputed record, FramePatches::Cursor): each frame is copied,
  // patched and stamped in one pass, while it is in the L1 cache.
  template <class Patch>
  void build_single(uint32_t count, uint64_t tsc, Patch&& given) {
    const FrameTemplate& t = lane_.streams[0]->tmpl;
    switch (t.tail ? 0 : (t.head + 31) / 32) {  // the 32-byte parts a held template needs
      case 1:
      case 2:  // up to 64 bytes: 64-byte frames
        return build_single(count, tsc, std::forward<Patch>(given), HeldTemplate<2>(t));
      case 3:
      case 4:  // up to 128 bytes: 84-byte IPv6, 104-byte encapsulated frames
        return build_single(count, tsc, std::forward<Patch>(given), HeldTemplate<4>(t));
      default:
        return build_single(count, tsc, std::forward<Patch>(given), [&t](rte_mbuf* m) { return copy_template(m, t); });
    }
  }
  template <class Patch, class Copy>
  void build_single(uint32_t count, uint64_t tsc, Patch&& given, const Copy& copy) {
    Stream& st = *lane_.streams[0];
    // A local copy, whose members the frames' byte stores cannot alias: they stay in registers
    // (through `given` they were reloaded after every store).
    std::remove_cvref_t<Patch> patch = given;
    for (uint32_t i = 0; i < count; ++i) {
      burst_stream_[i] = 0;
      uint8_t* frame = copy(burst_[i]);
      if constexpr (requires { patch.stamp(frame, st.tmpl, 0u, tsc); })  // a stamped FieldBurst's
        patch.stamp(frame, st.tmpl, st.next_seq + i, tsc);
      else
        stamp_frame(frame, st.tmpl, st.next_seq + i, tsc, patch.write(frame));
    }
    patch.save();
    st.next_seq += count;
    st.sent += count;
  }
  // A short template (no jumbo tail) held in vector registers for a burst: each frame's copy
  // is kParts 32-byte stores and no loads (copy_template loads the template again for every
  // frame, since the frames' byte stores may alias it). It writes kBytes, past the frame's
  // end when the frame is shorter, into the mbuf's data room (2 KiB). Two parts for short
  // frames: four had cost a build for SSE more registers than it has.
  template <int kParts>
  struct HeldTemplate {
    static constexpr uint32_t kBytes = 32 * kParts;
    using Part = uint8_t __attribute__((vector_size(32)));
    explicit HeldTemplate(const FrameTemplate& t) : data_len(uint16_t(t.head)), pkt_len(t.size()) {
      uint8_t bytes[kBytes] = {};
      std::memcpy(bytes, t.bytes.data(), t.head);
      std::memcpy(part, bytes, kBytes);
    }
    uint8_t* operator()(rte_mbuf* m) const {
      uint8_t* frame = rte_pktmbuf_mtod(m, uint8_t*);
      for (int i = 0; i < kParts; ++i) std::memcpy(frame + 32 * i, &part[i], 32);
      m->data_len = data_len;
      m->pkt_len = pkt_len;
      return frame;
    }
    Part part[kParts];
    uint16_t data_len;
    uint32_t pkt_len;
  };
  struct FixedFrames {
    static uint16_t write(uint8_t*) { return 0; }
    static void save() {}
  };

  [[gnu::always_inline]] static uint8_t* copy_template(rte_mbuf* m, const FrameTemplate& t) {
    uint8_t* frame = rte_pktmbuf_mtod(m, uint8_t*);
    rte_memcpy(frame, t.bytes.data(), t.head);
    m->data_len = uint16_t(t.head);
    m->pkt_len = t.size();
    if (t.tail) {  // a jumbo frame: the stream's shared tail segment follows the head
      rte_mbuf_refcnt_update(t.tail, 1);
      m->next = t.tail;
      m->nb_segs = 2;
    }
    return frame;
  }

  // Offers the pending frames to the port; true when all were accepted.
  bool flush() {
    uint16_t n = io_.send(port_, queue_, burst_ + first_pending_, uint16_t(pending_));
    first_pending_ += n;
    pending_ -= n;
    lane_.sent.add(n);
    return pending_ == 0;
  }

  uint16_t port() const override { return port_; }
  uint16_t queue() const override { return queue_; }

  void begin() override {
    schedule_ = Schedule(ctl_.tsc_hz, flow_.segments, lane_.planned, ctl_.start_tsc, lane_.queue,
                         uint32_t(flow_.lanes.size()));
    next_tsc_ = schedule_.next_send_tsc(0);
  }

  bool stop(uint64_t now, bool cut_off) {
    if (cut_off) {
      // Frames built but never accepted were not sent: take them back from the counts.
      for (uint32_t i = first_pending_; i < first_pending_ + pending_; ++i)
        --lane_.streams[burst_stream_[i]]->sent;
      rte_pktmbuf_free_bulk(burst_ + first_pending_, pending_);
      pending_ = 0;
      lane_.cut_off = true;
    }
    lane_.send_end_tsc = now;
    const uint64_t deadline = now + ctl_.timeout_tsc;
    if (ctl_.senders_running.fetch_sub(1) == 1) ctl_.rx_deadline.store(deadline);
    return false;
  }

  Flow& flow_;
  Lane& lane_;
  TrialControl& ctl_;
  BurstIo& io_;
  rte_mempool* pool_;
  uint16_t port_, queue_;
  Schedule schedule_;
  uint64_t next_tsc_ = 0;
  uint64_t built_ = 0;
  uint32_t cycle_ = 0;
  bool varying_ = false, mixed_ = false, enumerated_ = false;
  rte_mbuf* burst_[kMaxBurst];
  uint8_t burst_stream_[kMaxBurst];
  uint32_t pending_ = 0, first_pending_ = 0;
};

}  // namespace

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

bool answer_neighbor(BurstIo& io, uint16_t port, uint16_t queue, const rte_mbuf* m, const PortIdentity& id,
                     rte_mempool* pool) {
  if (id.owned.size() == 0 || m->nb_segs != 1) return false;
  uint8_t reply[kNeighborFrameMax];
  const size_t len = answer_neighbor_request(rte_pktmbuf_mtod(m, const uint8_t*), m->data_len, id.owned,
                                             id.mac.data(), reply);
  if (len == 0) return false;
  rte_mbuf* r = rte_pktmbuf_alloc(pool);
  if (!r) return false;
  std::memcpy(rte_pktmbuf_mtod(r, uint8_t*), reply, len);
  r->data_len = uint16_t(len);
  r->pkt_len = uint32_t(len);
  if (io.send(port, queue, &r, 1) == 1) return true;
  rte_pktmbuf_free(r);
  return false;
}

namespace {

int worker_entry(void* arg) {
  static_cast<Worker*>(arg)->run();
  return 0;
}

void sleep_ms(long ms) {
  timespec ts{0, ms * 1000000};
  nanosleep(&ts, nullptr);
}

}  // namespace

void Worker::run() {
  std::vector<Task*> active = tasks;
  while (!active.empty()) {
    const uint64_t now = rte_rdtsc();
    for (size_t i = 0; i < active.size();) {
      if (active[i]->poll(now)) {
        ++i;
      } else {
        active[i] = active.back();
        active.pop_back();
      }
    }
  }
  finished.store(true, std::memory_order_release);
}

namespace {

// Reproducible per seed; independent per flow, lane, stream and field. Lane 0 keeps the
// seeds of a single-queue trial, so one queue gives the frames it always gave.
uint64_t field_seed(uint64_t seed, size_t flow, uint32_t lane, size_t stream, size_t field) {
  // Streams 0-3 keep the seeds they always had; further streams (IMIX) are mixed in apart.
  return seed ^ (0x9e3779b97f4a7c15ull * (1 + flow * 64 + stream % 4 * 16 + field)) ^ (0xd1b54a32d192ed03ull * lane) ^
         (0xbf58476d1ce4e5b9ull * (stream / 4));
}

// The pool of jumbo frames' shared tail segments (FrameTemplate::tail): one per sub-stream
// with frames longer than a segment of the trial's pool, created when first needed.
rte_mempool* tail_pool() {
  static rte_mempool* pool = [] {
    const uint32_t room = uint32_t(kMaxFrameSize + kMaxVlanTags * kVlanTag + RTE_PKTMBUF_HEADROOM);
    return rte_pktmbuf_pool_create("xlp_tails", 1023, 0, 0, uint16_t(room), SOCKET_ID_ANY);
  }();
  if (!pool) throw ExecutionFailure(std::string("cannot create the pool of jumbo frame tails: ") + rte_strerror(rte_errno));
  return pool;
}

// Splits a template longer than one segment of `pool` into its per-frame head and a shared
// tail segment (FrameTemplate::head/tail). The tail is read-only from here on: a segment in
// flight is referenced by each frame that carries it, at most the frames that the rings
// between sender and receiver hold (a few thousand, far below the 16-bit reference count).
void split_jumbo(FrameTemplate& t, rte_mempool* pool) {
  if (t.size() <= uint32_t(rte_pktmbuf_data_room_size(pool) - RTE_PKTMBUF_HEADROOM)) return;
  rte_mbuf* tail = rte_pktmbuf_alloc(tail_pool());
  if (!tail) throw ExecutionFailure("no free jumbo frame tail segment (more than 1023 jumbo sub-streams)");
  const uint32_t rest = t.size() - kJumboHead;
  std::memcpy(rte_pktmbuf_append(tail, uint16_t(rest)), t.bytes.data() + kJumboHead, rest);
  t.head = kJumboHead;
  t.tail = tail;
}

}  // namespace

Trial::Trial(const TrialPlan& plan, uint8_t trial_tag, BurstIo& io, rte_mempool* pool, uint64_t tsc_hz,
             const std::vector<PortIdentity>& ports, std::vector<std::unique_ptr<StateTable>>& tables,
             uint16_t queues)
    : plan_(plan) {
  // Stream id of lane q's stream s of flow i: (q * flows + i) * S + s with S the most streams
  // a flow has, at least 2 (one queue, foreground and background: 2i + s).
  size_t stride = 2;
  for (const FlowPlan& f : plan.flows) stride = std::max(stride, f.streams.size());
  const size_t ids = plan.flows.size() * stride * queues;
  if (queues == 0 || ids > kStreamIds)
    throw ExecutionFailure(std::to_string(plan.flows.size()) + " flows x " + std::to_string(stride) + " streams x " +
                           std::to_string(queues) + " queues need " + std::to_string(ids) +
                           " stream ids; the test tag has " + std::to_string(kStreamIds));
  if (plan.learn) {  // a new table replaces the port's old one
    tables.at(plan.learn->port) = std::make_unique<StateTable>(plan.learn->ip_version, plan.learn->table_size);
    learning_ = tables[plan.learn->port].get();
  }
  control_.tsc_hz = tsc_hz;
  control_.timeout_tsc = uint64_t(plan.timeout * double(tsc_hz));
  control_.finish_early = plan.finish_early;
  control_.frame_timeout_tsc = uint64_t(plan.delay.frame_timeout * double(tsc_hz));
  if (plan.max_lag) control_.max_lag_tsc = uint64_t(*plan.max_lag * double(tsc_hz));

  std::map<uint16_t, std::vector<RxTask*>> receivers;  // per RX port, one per queue
  for (size_t i = 0; i < plan.flows.size(); ++i) {
    auto flow = std::make_unique<Flow>();
    flow->plan = plan.flows[i];
    const FlowPlan& fp = flow->plan;
    flow->planned = fp.planned_frames(plan.duration);
    flow->segments = fp.segments();
    const std::string where = "flows[" + std::to_string(i) + "]";
    if (fp.from_table) {
      StateTable* table = tables.at(fp.from_table->port).get();
      if (!table || table->size() == 0)
        throw ExecutionFailure(where + ".from_table.port = " + std::to_string(fp.from_table->port) +
                               ": no state table there (run a phase-1 trial with learn first)");
      if (table->ip_version() != fp.streams[0].spec.ip_version)
        throw ExecutionFailure(where + ".foreground.ip_version = " + std::to_string(fp.streams[0].spec.ip_version) +
                               ": the state table holds IPv" + std::to_string(table->ip_version()) + " tuples");
      flow->table = table;
    }
    std::vector<RxTask*>& rx = receivers[fp.rx_port];
    for (uint16_t q = uint16_t(rx.size()); q < queues; ++q) {
      auto task = std::make_unique<RxTask>(fp.rx_port, q, trial_tag, control_, io, ports.at(fp.rx_port), pool);
      rx.push_back(task.get());
      tasks_.push_back(std::move(task));
    }
    // A lane enumerates the tuples after those of the lanes before it, per stream.
    std::vector<uint64_t> enumerated_before(fp.streams.size(), 0);
    for (uint16_t q = 0; q < queues; ++q) {
      auto lane = std::make_unique<Lane>();
      lane->queue = q;
      lane->planned = Schedule::lane_frames(flow->planned, q, queues);
      // The lane's frame j is the flow's frame j * queues + q: of the stream the flow's pattern
      // gives that frame (a period of pattern.size() frames for the lane too).
      const size_t period = fp.pattern.size();
      for (size_t j = 0; j < period; ++j) lane->pattern.push_back(fp.pattern[(j * queues + q) % period]);
      for (uint8_t s = 0; s < fp.streams.size(); ++s) {
        const StreamPlan& sp = fp.streams[s];
        const uint8_t id = uint8_t((size_t(q) * plan.flows.size() + i) * stride + s);
        auto st = std::make_unique<Stream>(s, build_template(sp.spec, id, trial_tag), sp,
                                           frames_in_pattern(lane->pattern, s, lane->planned));
        split_jumbo(st->tmpl, pool);
        const std::vector<FieldSpec> fields = resolve_fields(sp, st->tmpl);
        for (const FieldSpec& f : fields) {
          const uint8_t* w = st->tmpl.bytes.data() + f.word_offset;
          st->fields.emplace_back(f, uint16_t(w[0] << 8 | w[1]), field_seed(plan.seed, i, q, s, st->fields.size()), q,
                                  queues);
        }
        if (sp.ce && sp.ce->tx) {
          const CeLayout layout = ce_layout(*sp.ce, sp.ce->tx, st->tmpl.outer_offset, st->tmpl.ip_offset,
                                            sp.spec.ip_version, st->tmpl.udp_offset);
          st->ce = std::make_unique<CeGenerator>(*sp.ce->source, layout, sp.ce->random,
                                                 field_seed(plan.seed, i, q, s, kMaxFields), q, queues);
        }
        check_span(fields, st->ce ? st->ce->rows() : std::vector<CeRow>{}, st->tmpl,
                   "flows[" + std::to_string(i) + "] (" + fp.name + ")");
        if (!st->fields.empty() || st->ce) st->layout = std::make_unique<FieldLayout>(st->fields, st->tmpl, st->ce.get());
        if (sp.enumerate) {
          std::vector<uint64_t> radices;
          for (size_t f = 0; f < st->fields.size(); ++f)
            if (st->fields[f].spec().mode == VaryMode::kEnumerate) {
              st->enumerated.push_back(f);
              radices.push_back(uint64_t(st->fields[f].spec().max - st->fields[f].spec().min) + 1);
            }
          st->enumerator = std::make_unique<TupleEnumerator>(radices, *sp.enumerate, plan.seed + i);
          // Together the lanes visit exactly the tuples one lane would: contiguous shares.
          st->enumerator->seek(enumerated_before[s]);
          enumerated_before[s] += st->planned;
          if (!st->ce)  // the records hold the enumerated fields only
            st->patches = FramePatches::precompute(st->fields, *st->enumerator, st->tmpl, st->planned,
                                                 Stream::kPrecomputeBytes);
        }
        for (uint16_t r = 0; r < queues; ++r) {
          auto receiver = std::make_unique<Receiver>(st->planned);
          if (plan.delay.histogram) receiver->delays = std::make_unique<Histogram>();
          if (plan.delay.ipdv) receiver->ipdv = std::make_unique<IpdvTracker>();
          st->receivers.push_back(std::move(receiver));
        }
        if (s == 0 && plan.delay.tagged > 0) {  // latency frames: foreground only, shared out over the lanes
          const uint64_t tagged = plan.delay.tagged / queues + (q < plan.delay.tagged % queues);
          const uint64_t first = tagged_first(st->planned, plan);
          if (tagged > st->planned - std::min(first, st->planned))
            throw ExecutionFailure("delay.tagged = " + std::to_string(plan.delay.tagged) + ": TX queue " +
                                   std::to_string(q) + " of flow " + fp.name + " sends only " +
                                   std::to_string(st->planned - std::min(first, st->planned)) +
                                   " foreground frames after delay.tagged_start, too few for its " +
                                   std::to_string(tagged) + " tagged frames");
          for (auto& r : st->receivers) r->tagged = std::make_unique<TaggedFrames>(first, st->planned, tagged);
        }
        for (RxTask* task : rx) task->add_stream(id, st.get());
        if (sp.kind == StreamPlan::Kind::kForeground && learning_ && plan.learn->flow == i)
          for (RxTask* task : rx) task->learn_from(id, plan.learn->ip_version, plan.learn->table_size);
        lane->streams.push_back(std::move(st));
      }
      if (flow->table) {
        flow->table->prepare(lane->streams[0]->tmpl);  // the same for every lane: headers only
        lane->selector = std::make_unique<EntrySelector>(fp.from_table->selection, flow->table->size(),
                                                         plan.seed + i + 0x9e3779b97f4a7c15ull * q, q, queues);
      }
      tasks_.push_back(std::make_unique<TxTask>(*flow, *lane, control_, io, pool));
      flow->lanes.push_back(std::move(lane));
    }
    flows_.push_back(std::move(flow));
  }
  for (const auto& [port, tasks] : receivers) receivers_.insert(receivers_.end(), tasks.begin(), tasks.end());
  if (plan.capture) {
    // Copies are cut at the snap length, and at the longest frame the trial expects (or a
    // standard 1518-byte frame with two tags, if longer): the pool's buffers are that big
    // and each copy fits one, whatever the segments of the received frame.
    uint32_t longest = 1518 - kFcs + 2 * kVlanTag;
    for (const auto& f : flows_)
      for (const auto& lane : f->lanes)
        for (const auto& st : lane->streams) longest = std::max(longest, st->rx_len);
    const uint32_t snaplen = std::min(plan.capture->snaplen, longest);
    static std::atomic<unsigned> pools{0};  // a pool name is unique while the pool lives
    const std::string name = "xlp_capture" + std::to_string(pools++);
    capture_pool_ = rte_pktmbuf_pool_create(name.c_str(), unsigned(receivers.size()) * plan.capture->frames, 0, 0,
                                            uint16_t(rte_pcapng_mbuf_size(snaplen)), SOCKET_ID_ANY);
    if (!capture_pool_)
      throw ExecutionFailure("capture: cannot allocate " + std::to_string(receivers.size() * plan.capture->frames) +
                             " buffers of " + std::to_string(rte_pcapng_mbuf_size(snaplen)) +
                             " bytes (capture.frames x snap length): " + rte_strerror(rte_errno));
    for (const auto& [port, tasks] : receivers) {
      auto& pc = capture_ports_[port] = std::make_unique<PortCapture>();
      pc->limit = plan.capture->frames;
      for (RxTask* t : tasks) t->capture_into(pc.get(), *plan.capture, snaplen, capture_pool_);
    }
  }
  control_.senders_running = uint32_t(flows_.size() * queues);
}

Trial::~Trial() {
  tasks_.clear();  // the receivers free the copies they still hold before their pool goes
  if (capture_pool_) rte_mempool_free(capture_pool_);
}

void Trial::run(const std::vector<unsigned>& worker_lcores, const std::function<void()>& on_tick) {
  // The schedule starts now, after everything was prepared (templates, enumerations, state
  // tables), a little in the future so that every worker begins on it.
  control_.start_tsc = rte_rdtsc() + control_.tsc_hz / 1000;
  if (capture_pool_) {  // the anchor for the captured frames' wall-clock times
    timespec ts;
    const uint64_t before = rte_rdtsc();
    clock_gettime(CLOCK_REALTIME, &ts);
    wall_tsc0_ = before + (rte_rdtsc() - before) / 2;
    wall_ns0_ = uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
  }
  control_.cutoff_tsc = control_.start_tsc + uint64_t(send_limit(plan_) * double(control_.tsc_hz));
  for (auto& t : tasks_) t->begin();
  if (worker_lcores.empty()) {
    Worker w;
    for (auto& t : tasks_) w.tasks.push_back(t.get());
    w.run();
  } else {
    for (unsigned lcore : worker_lcores) {
      auto w = std::make_unique<Worker>();
      w->lcore = lcore;
      workers_.push_back(std::move(w));
    }
    // A queue pair (port, q) is served by one worker: its senders use TX queue q, its
    // receiver RX queue q, and the receiver's ARP/ND replies TX queue q, so every queue has
    // a single user. The pairs are dealt out in (port, queue) order: with one queue per
    // port each port gets its own worker, with several a port's queues go to different ones.
    std::vector<std::pair<uint16_t, uint16_t>> pairs;
    for (auto& t : tasks_) pairs.emplace_back(t->port(), t->queue());
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    for (auto& t : tasks_) {
      const size_t p = size_t(std::lower_bound(pairs.begin(), pairs.end(), std::make_pair(t->port(), t->queue())) -
                              pairs.begin());
      workers_[p % workers_.size()]->tasks.push_back(t.get());
    }
    for (auto& w : workers_)
      if (!w->tasks.empty()) rte_eal_remote_launch(worker_entry, w.get(), w->lcore);
      else w->finished = true;
    // The control thread sleeps instead of spinning (on a 2-core machine the other core
    // belongs to the DUT), waking every millisecond so that a trial costs little beyond its
    // own duration.
    for (;;) {
      bool done = true;
      for (auto& w : workers_) done = done && w->finished.load(std::memory_order_acquire);
      if (done) break;
      sleep_ms(1);
      on_tick();
    }
    for (auto& w : workers_)
      if (!w->tasks.empty()) rte_eal_wait_lcore(w->lcore);
  }
  if (learning_)  // the queues' parts of the Responder's table, in queue order
    for (RxTask* r : receivers_)
      if (r->learned()) learning_->append(*r->learned());
  if (capture_pool_) write_captures();
}

namespace {

// The copies' Enhanced Packet Blocks (pcapng: block type, length, interface id, timestamp
// high and low 32 bits, in the writer's byte order): the timestamp is set here from the
// receive TSC, with a clock anchor of the trial's own, because DPDK 22.11's conversion in
// rte_pcapng_copy overflows a few seconds after the process started (dates in 2265).
void set_epb_time(rte_mbuf* epb, uint64_t ns) {
  uint32_t* words = rte_pktmbuf_mtod(epb, uint32_t*);
  words[3] = uint32_t(ns >> 32);
  words[4] = uint32_t(ns);
}

}  // namespace

void Trial::write_captures() {
  std::map<uint16_t, std::vector<std::pair<uint64_t, rte_mbuf*>>> per_port;
  for (RxTask* r : receivers_) {
    auto copies = r->take_copies();
    auto& all = per_port[r->port()];
    all.insert(all.end(), copies.begin(), copies.end());
    captures_[r->port()].missed += r->capture_missed();
  }
  const double ns_per_tick = 1e9 / double(control_.tsc_hz);
  for (auto& [port, copies] : per_port) {
    // The queues' samples merged in arrival order (frames of one burst keep their order).
    std::stable_sort(copies.begin(), copies.end(),
                     [](const auto& a, const auto& b) { return int64_t(a.first - b.first) < 0; });
    for (auto& [tsc, m] : copies)
      set_epb_time(m, wall_ns0_ + uint64_t(int64_t(double(int64_t(tsc - wall_tsc0_)) * ns_per_tick)));
    CaptureReport& report = captures_[port];
    report.frames = copies.size();
    // The file is written into memory (a memfd) and travels in the reply, so that a remote
    // engine (tester.ssh) needs no file system shared with the front end.
    const int fd = memfd_create("xlatperf-capture", 0);
    if (fd < 0) throw ExecutionFailure(std::string("capture: memfd_create: ") + std::strerror(errno));
    const std::string comment = "xlatperf trial capture: port " + std::to_string(port) + ", first " +
                                std::to_string(copies.size()) + " sampled frames";
    const std::string app = std::string("xlatperf-engine (") + rte_version() + ")";
    rte_pcapng_t* out = rte_pcapng_fdopen(dup(fd), nullptr, nullptr, app.c_str(), comment.c_str());
    bool ok = out != nullptr;
    for (size_t i = 0; i < copies.size(); i += 256) {
      std::vector<rte_mbuf*> burst;
      for (size_t k = i; k < std::min(copies.size(), i + 256); ++k) burst.push_back(copies[k].second);
      if (ok) ok = rte_pcapng_write_packets(out, burst.data(), uint16_t(burst.size())) >= 0;  // frees them
      else rte_pktmbuf_free_bulk(burst.data(), unsigned(burst.size()));
    }
    if (out) rte_pcapng_close(out);
    std::string bytes;
    char buf[65536];
    for (off_t at = 0;;) {
      const ssize_t n = pread(fd, buf, sizeof buf, at);
      if (n <= 0) break;
      bytes.append(buf, size_t(n));
      at += n;
    }
    close(fd);
    if (!ok) throw ExecutionFailure("capture: cannot write the pcapng file of port " + std::to_string(port));
    report.pcapng = std::move(bytes);
  }
}

std::vector<FlowProgress> Trial::progress() const {
  std::vector<FlowProgress> flows;
  for (const auto& f : flows_) {
    FlowProgress p{f->plan.name, 0, 0};
    for (const auto& lane : f->lanes) {
      p.sent += lane->sent.get();
      for (const auto& s : lane->streams)
        for (const auto& r : s->receivers) p.received += r->received.get();
    }
    flows.push_back(p);
  }
  return flows;
}

namespace {

DelayDistribution distribution(const Histogram& h, double ns_per_tick) {
  DelayDistribution d;
  for (const auto& [low, high, count] : h.buckets())
    d.buckets.push_back({double(low) * ns_per_tick, double(high + 1) * ns_per_tick, count});
  d.count = h.count();
  d.min_ns = double(h.min()) * ns_per_tick;
  d.max_ns = double(h.max()) * ns_per_tick;
  d.mean_ns = h.mean() * ns_per_tick;
  d.p50_ns = double(h.percentile(50)) * ns_per_tick;
  d.p99_ns = double(h.percentile(99)) * ns_per_tick;
  d.p999_ns = double(h.percentile(99.9)) * ns_per_tick;
  d.relative_error = 1.0 / double(2 * Histogram::kSub);
  return d;
}

}  // namespace

namespace {

// The report of one kind of stream (foreground or background): every lane's sub-streams of
// every stream of that kind, from every queue's receiver; with several streams of the kind
// (IMIX), the counts per stream (frame size) as well.
StreamReport stream_report(const Flow& f, StreamPlan::Kind kind, double ns_per_tick, bool with_late) {
  StreamReport st;
  st.kind = kind == StreamPlan::Kind::kForeground ? "foreground" : "background";
  uint64_t delay_min = UINT64_MAX, delay_max = 0;
  unsigned __int128 delay_sum = 0;
  std::unique_ptr<Histogram> delays;
  std::unique_ptr<SignedHistogram> ipdv;
  // Tagged frames in sending order: lane q's j-th tagged frame (sequence number seq) is
  // about the flow's frame seq * lanes + q.
  std::vector<std::pair<uint64_t, int64_t>> tagged;
  bool has_tagged = false;
  const uint64_t lanes = f.lanes.size();
  std::vector<size_t> indices;
  for (size_t i = 0; i < f.plan.streams.size(); ++i)
    if (f.plan.streams[i].kind == kind) indices.push_back(i);
  for (size_t index : indices) {
    SizeReport size;
    size.frame_size = f.plan.streams[index].spec.frame_size;
    size.rx_frame_size = f.plan.streams[index].rx_frame_size;
    for (const auto& lane : f.lanes) {
      const Stream& s = *lane->streams[index];
      size.sent += s.sent;
      std::vector<int64_t> lane_tagged;
      for (const auto& r : s.receivers) {
        size.received += r->received.get();
        size.bad_length += r->bad_length;
        st.late = st.late.value_or(0) + r->late.get();
        st.duplicates += r->duplicates;
        st.reordered += r->seq.reordered();
        st.bad_vlan += r->bad_vlan;
        if (s.rx_ce) st.wrong_ce = st.wrong_ce.value_or(0) + r->wrong_ce;
        st.out_of_range += r->out_of_range;
        if (r->delays) {
          if (!delays) delays = std::make_unique<Histogram>();
          delays->merge(*r->delays);
        } else if (r->received.get() > 0) {
          delay_min = std::min(delay_min, r->delay_min);
          delay_max = std::max(delay_max, r->delay_max);
          delay_sum += r->delay_sum;
        }
        if (r->ipdv) {
          if (!ipdv) ipdv = std::make_unique<SignedHistogram>();
          ipdv->merge(r->ipdv->values());
        }
        if (r->tagged) {  // each tagged frame arrived on at most one queue
          has_tagged = true;
          const auto& d = r->tagged->delays();
          if (lane_tagged.empty()) lane_tagged.assign(d.size(), -1);
          for (size_t j = 0; j < d.size(); ++j)
            if (d[j] >= 0) lane_tagged[j] = d[j];
        }
      }
      if (!lane_tagged.empty()) {
        const TaggedFrames& layout = *s.receivers[0]->tagged;
        for (size_t j = 0; j < lane_tagged.size(); ++j)
          tagged.emplace_back(layout.seq_of(j) * lanes + lane->queue, lane_tagged[j]);
      }
    }
    st.sent += size.sent;
    st.received += size.received;
    st.bad_length += size.bad_length;
    if (st.frame_size == 0) {  // the first stream of the kind names the kind's sizes
      st.frame_size = size.frame_size;
      st.rx_frame_size = size.rx_frame_size;
    }
    if (indices.size() > 1) st.sizes.push_back(size);
  }
  if (!with_late) st.late.reset();
  if (st.received > 0 && delays)
    st.delay_ns = DelayRange{double(delays->min()) * ns_per_tick, delays->mean() * ns_per_tick,
                             double(delays->max()) * ns_per_tick};
  else if (st.received > 0)
    st.delay_ns = DelayRange{double(delay_min) * ns_per_tick, double(delay_sum) / double(st.received) * ns_per_tick,
                             double(delay_max) * ns_per_tick};
  if (delays) st.delay = distribution(*delays, ns_per_tick);
  if (ipdv)
    st.ipdv = IpdvSummary{ipdv->count(), double(ipdv->min()) * ns_per_tick, double(ipdv->percentile(50)) * ns_per_tick,
                          double(ipdv->max()) * ns_per_tick};
  if (has_tagged) {
    std::sort(tagged.begin(), tagged.end());
    TaggedDelays out;
    for (const auto& [order, d] : tagged) {
      if (d < 0) ++out.lost;
      out.delays_ns.push_back(d < 0 ? std::nullopt : std::optional<double>(double(d) * ns_per_tick));
    }
    st.tagged = std::move(out);
  }
  return st;
}

// The flow's loss periods: its frames k = 0, 1, ... in sending order (frame k is lane k % Q's
// frame k / Q, of the stream the lane's pattern gives, with that stream's next sequence
// number), each lost when no RX queue received it. Frames the tester never sent are not
// lost. Late frames arrived: they are not in a loss period (they are counted as lost).
LossReport loss_report(const Flow& f, uint64_t tsc_hz) {
  const uint32_t lanes = uint32_t(f.lanes.size());
  const size_t n = f.lanes[0]->pattern.size();
  const Schedule flow_schedule(tsc_hz, f.segments, f.planned, 0);
  const auto time_of = [&](uint64_t k) { return double(flow_schedule.due_tsc(k)) / double(tsc_hz); };
  const auto arrived = [](const Stream& s, uint64_t seq) {
    for (const auto& r : s.receivers)
      if (r->seq.has(seq)) return true;
    return false;
  };
  // 64 sequence numbers from 64 * w on all arrived on some queue.
  const auto all_arrived = [](const Stream& s, uint64_t w) {
    uint64_t bits = 0;
    for (const auto& r : s.receivers) bits |= r->seq.word(w);
    return bits == ~uint64_t(0);
  };
  LossReport out;
  std::vector<LossPeriod> last(LossReport::kMaxListed);
  std::optional<LossPeriod> open;
  std::optional<uint64_t> last_received;
  const auto close = [&](std::optional<uint64_t> after) {
    if (after) open->first_after_s = time_of(*after);
    ++out.periods;
    out.lost += open->frames;
    if (out.first.size() < LossReport::kMaxListed) out.first.push_back(*open);
    last[out.periods % LossReport::kMaxListed] = *open;  // a ring of the latest periods
    if (!out.longest || open->frames > out.longest->frames) out.longest = open;
    open.reset();
  };
  std::vector<std::vector<uint64_t>> next_seq(lanes, std::vector<uint64_t>(f.plan.streams.size(), 0));
  const bool single = n == 1 && f.lanes[0]->streams.size() == 1;
  for (uint64_t j = 0, k = 0; k < f.planned; ++j) {
    // Fast path: 64 rows of frames of which every lane's single stream received all.
    if (single && j % 64 == 0 && (j + 64) * lanes <= f.planned) {
      bool all = true;
      for (const auto& lane : f.lanes) all = all && j + 64 <= lane->streams[0]->sent && all_arrived(*lane->streams[0], j / 64);
      if (all) {
        k += 64 * lanes;
        last_received = k - 1;
        if (open) close(k - 64 * lanes);
        j += 63;
        for (auto& seqs : next_seq) seqs[0] += 64;
        continue;
      }
    }
    for (uint32_t q = 0; q < lanes && k < f.planned; ++q, ++k) {
      const Lane& lane = *f.lanes[q];
      const uint8_t kind = lane.pattern[j % n];
      const Stream& st = *lane.streams[kind];
      const uint64_t seq = next_seq[q][kind]++;
      if (seq >= st.sent) continue;  // never sent
      if (arrived(st, seq)) {
        if (open) close(k);
        last_received = k;
        continue;
      }
      if (!open) {
        open = LossPeriod{time_of(k), 0, 0, std::nullopt, std::nullopt};
        if (last_received) open->last_before_s = time_of(*last_received);
      }
      open->last_lost_s = time_of(k);
      ++open->frames;
    }
  }
  if (open) close(std::nullopt);
  // The ring's periods oldest first: period p (1-based) sits at p % kMaxListed.
  const uint64_t listed = std::min<uint64_t>(out.periods, LossReport::kMaxListed);
  for (uint64_t p = out.periods - listed + 1; p <= out.periods; ++p) out.last.push_back(last[p % LossReport::kMaxListed]);
  return out;
}

}  // namespace

TrialReport Trial::result(double elapsed_s) const {
  const double hz = double(control_.tsc_hz);
  const double ns_per_tick = 1e9 / hz;
  const double limit = send_limit(plan_);
  TrialReport out;
  out.elapsed = elapsed_s;
  if (control_.abort.load()) {
    out.valid = false;
    out.invalid_reason = "aborted";
  }
  for (const auto& f : flows_) {
    FlowReport flow;
    flow.name = f->plan.name;
    flow.rate = f->plan.rate;
    flow.planned = f->planned;
    const Lane* late_lane = nullptr;  // the first lane that could not send in time
    for (const auto& lane : f->lanes) {
      QueueSendReport q;
      q.queue = lane->queue;
      q.planned = lane->planned;
      q.sent = lane->sent.get();
      q.send_time = double(lane->send_end_tsc - control_.start_tsc) / hz;
      q.max_lag_us = double(lane->max_lag_tsc) / hz * 1e6;
      if (plan_.max_lag) q.lagged = lane->lagged;
      flow.send_time = std::max(flow.send_time, q.send_time);
      flow.max_lag_us = std::max(flow.max_lag_us, q.max_lag_us);
      if (q.lagged) flow.lagged = flow.lagged.value_or(0) + *q.lagged;
      if (!late_lane && (lane->cut_off || q.send_time > limit || lane->max_lag_tsc > control_.max_lag_tsc))
        late_lane = lane.get();
      flow.queues.push_back(q);
    }
    for (const StreamPlan::Kind kind : {StreamPlan::Kind::kForeground, StreamPlan::Kind::kBackground}) {
      const bool present = std::any_of(f->plan.streams.begin(), f->plan.streams.end(),
                                       [kind](const StreamPlan& sp) { return sp.kind == kind; });
      if (!present) continue;
      StreamReport st = stream_report(*f, kind, ns_per_tick, control_.frame_timeout_tsc != 0);
      flow.sent += st.sent;
      flow.received += st.received;
      flow.streams.push_back(std::move(st));
    }
    if (plan_.losses) flow.losses = loss_report(*f, control_.tsc_hz);
    // The validity rule holds per TX queue, and so for the flow: every lane sent all its
    // frames by the limit (and, with the schedule rule, none more than max_lag late).
    if (out.valid && late_lane) {
      uint64_t sent = 0;
      for (const auto& q : flow.queues) sent += q.sent;
      char buf[384];
      int n = late_lane->cut_off || sent < f->planned
                  ? std::snprintf(buf, sizeof buf,
                                  "tester could not keep the rate: flow %s sent %llu of %llu frames in %.6f s "
                                  "(limit %.6f s)",
                                  f->plan.name.c_str(), (unsigned long long)sent, (unsigned long long)f->planned,
                                  flow.send_time, limit)
                  : std::snprintf(buf, sizeof buf,
                                  "tester could not keep the rate: flow %s fell %.3f ms behind its schedule "
                                  "(max_lag %.3f ms): %llu frames left late, in catch-up bursts",
                                  f->plan.name.c_str(), flow.max_lag_us / 1e3, *plan_.max_lag * 1e3,
                                  (unsigned long long)flow.lagged.value_or(0));
      if (f->lanes.size() > 1 && n > 0 && size_t(n) < sizeof buf) {
        const QueueSendReport& q = flow.queues[late_lane->queue];
        std::snprintf(buf + n, sizeof buf - size_t(n), "; TX queue %u sent %llu of %llu in %.6f s", unsigned(q.queue),
                      (unsigned long long)q.sent, (unsigned long long)q.planned, q.send_time);
      }
      out.valid = false;
      out.invalid_reason = buf;
    }
    out.flows.push_back(std::move(flow));
  }
  for (const RxTask* r : receivers_) {
    if (out.ports.empty() || out.ports.back().index != r->port()) {
      out.ports.emplace_back();
      out.ports.back().index = r->port();
    }
    PortReport& port = out.ports.back();
    port.foreign += r->foreign();
    port.neighbor_replies += r->answered();
    port.queues.push_back({r->queue(), r->test_frames(), r->foreign()});
    if (auto c = captures_.find(r->port()); c != captures_.end()) port.capture = c->second;
  }
  if (learning_)
    out.state_table = StateTableReport{plan_.learn->port, learning_->size(), learning_->capacity(),
                                       learning_->ip_version()};
  return out;
}

}  // namespace xlp
