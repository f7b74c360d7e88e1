#include "dataplane/tx_task.hpp"

#include <rte_cycles.h>
#include <rte_memcpy.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "emulation/fields.hpp"

namespace xlp {

namespace {

// How a lane's frames are built, chosen once per lane (make_tx_task), each mode its own task
// class as testpmd gives each forwarding mode its own engine: a burst's building is one call
// resolved at compile time, not a chain of tests per burst.
enum class TxMode : uint8_t {
  kFixed,         // one stream, every frame the template's (but its tag)
  kDns,           // one stream of DNS queries (DnsQueries)
  kEnumerated,    // one stream whose enumerated fields are precomputed (FramePatches)
  kVarying,       // one stream with varying fields or CEs, or a state table's tuples
  kMixed,         // several streams in a pattern (foreground and background), fixed
  kMixedVarying,  // ... and varying
};

// Whether any frame of the lane varies (fields, CEs, a state table's tuples).
bool lane_varies(const Flow& flow, const Lane& lane) {
  bool varying = flow.table != nullptr;
  for (const auto& st : lane.streams) varying = varying || !st->fields.empty() || st->ce;
  return varying;
}

TxMode tx_mode_of(const Flow& flow, const Lane& lane) {
  const bool varying = lane_varies(flow, lane);
  if (lane.pattern.size() > 1) return varying ? TxMode::kMixedVarying : TxMode::kMixed;
  if (!flow.table && lane.streams[0]->patches) return TxMode::kEnumerated;
  if (varying) return TxMode::kVarying;
  return lane.streams[0]->dns ? TxMode::kDns : TxMode::kFixed;
}

// Sends one lane of a flow at its share of the flow's constant rate: every poll hands the
// frames that are due (at least a minimum burst, at most kMaxBurst) to the lane's TX queue.
// Frames the port does not accept are kept and offered again first, so none is skipped and
// the sequence stays in order.
template <TxMode kMode>
class TxTask final : public Task {
  static constexpr bool kMixedStreams = kMode == TxMode::kMixed || kMode == TxMode::kMixedVarying;

 public:
  TxTask(Flow& flow, Lane& lane, TrialControl& ctl, BurstIo& io, rte_mempool* pool)
      : flow_(flow), lane_(lane), ctl_(ctl), io_(io), pool_(pool), port_(flow.plan.tx_port), queue_(lane.queue),
        schedule_(ctl.tsc_hz, flow.segments, lane.planned, 0), varying_(lane_varies(flow, lane)),
        dns_(lane.streams[0]->dns.get()) {
    // The Initiator's SYNs, FINs and RSTs get their numbers from their tuples; data segments
    // (phase 2) from the state table.
    if (flow.plan.tcp && !flow.table) isn_key_ = &flow.plan.tcp->key, step_ = flow.plan.tcp->step;
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
    uint32_t count = uint32_t(std::min<uint64_t>(schedule_.due_count(now) - built_, kMaxBurst));
    // A burst takes its varying words from one block of each stream's (the rest of a block
    // goes out first; at full speed every burst is kMaxBurst and a block four of them).
    if (varying_)
      for (const auto& st : lane_.streams)
        if (st->block) count = st->block->fit(count);
    // Frames this burst sends more than the schedule rule's tolerance after their time: the
    // DUT receives them bunched up, not at the trial's constant rate.
    if (lag > ctl_.max_lag_tsc)
      lane_.lagged += std::min<uint64_t>(schedule_.due_count(now - ctl_.max_lag_tsc) - built_, count);
    if (rte_pktmbuf_alloc_bulk(pool_, burst_, count) != 0) return true;  // pool empty: retry
    const uint64_t tsc = rte_rdtsc();
    if constexpr (kMode == TxMode::kEnumerated) {
      Stream& st = *lane_.streams[0];
      st.patches->with_length([&](auto length) { build_single(count, tsc, FramePatches::Cursor<length>(*st.patches)); });
    } else if constexpr (kMode == TxMode::kMixedVarying) {
      build<true, true>(count, tsc);
    } else if constexpr (kMode == TxMode::kMixed) {
      build<false, true>(count, tsc);
    } else if constexpr (kMode == TxMode::kVarying) {
      build<true, false>(count, tsc);
    } else if constexpr (kMode == TxMode::kDns) {
      build_single(count, tsc, DnsQueries{dns_});
    } else {
      build_single(count, tsc, FixedFrames{});
    }
    if (isn_key_)  // TCP: the Initiator's numbers for each frame's tuple
      for (uint32_t i = 0; i < count; ++i)
        stamp_initiator(rte_pktmbuf_mtod(burst_[i], uint8_t*), lane_.streams[0]->tmpl, *isn_key_, step_);
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
        const BurstStamp stamp{&st.tmpl, uint32_t(st.next_seq), tsc};
        st.block->write_burst(count, &stamp, [&](auto&& writer) { build_single(count, tsc, writer); });
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
        burst_stream_[i] = s;
      }
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
        } else if (st.block) {
          st.block->write_burst(per_stream[s], nullptr, [&](auto writer) {
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
      uint8_t* frame = copy(burst_[i]);
      if constexpr (requires { patch.stamp(frame, st.tmpl, 0u, tsc); })  // FieldBlock::Writer, DnsQueries
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
      // Vector stores of the held parts (a memcpy here became a copy loop from memory where
      // there are 16 vector registers, AVX2: the parts stayed on the stack).
      using Store = uint8_t __attribute__((vector_size(32), aligned(1), may_alias));
      for (int i = 0; i < kParts; ++i) *reinterpret_cast<Store*>(frame + 32 * i) = part[i];
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
  // A stream of DNS queries: each query's name, port and ID from its sequence number, and its
  // send time kept for the receiver (DnsClient). Consecutive queries' keys a step apart.
  struct DnsQueries {
    explicit DnsQueries(DnsClient* c) : client(c), next(c->next_key) {}
    DnsClient* client;
    DnsClient::NextKey next;
    void stamp(uint8_t* frame, const FrameTemplate& t, uint64_t seq, uint64_t tsc) {
      const dns::QueryKey key = seq == next.seq ? next.key : client->keys().key_of(seq);
      next = {seq + 1, client->keys().next(key)};
      stamp_dns(frame, t, client->on_wire(key), client->stamp(seq));
      client->sent(seq, tsc);
    }
    void save() const { client->next_key = next; }
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
        --lane_.streams[kMixedStreams ? burst_stream_[i] : 0]->sent;
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
  const bool varying_;      // some frame varies: a burst fits the streams' blocks of varying words
  DnsClient* const dns_;    // kDns
  const TcpKey* isn_key_ = nullptr;
  TcpStep step_ = TcpStep::kSyn;
  rte_mbuf* burst_[kMaxBurst];
  uint8_t burst_stream_[kMaxBurst];  // the stream of each frame of the burst, in mixed flows
  uint32_t pending_ = 0, first_pending_ = 0;
};

}  // namespace

std::unique_ptr<Task> make_tx_task(Flow& flow, Lane& lane, TrialControl& ctl, BurstIo& io, rte_mempool* pool) {
  switch (tx_mode_of(flow, lane)) {
    case TxMode::kFixed: return std::make_unique<TxTask<TxMode::kFixed>>(flow, lane, ctl, io, pool);
    case TxMode::kDns: return std::make_unique<TxTask<TxMode::kDns>>(flow, lane, ctl, io, pool);
    case TxMode::kEnumerated: return std::make_unique<TxTask<TxMode::kEnumerated>>(flow, lane, ctl, io, pool);
    case TxMode::kVarying: return std::make_unique<TxTask<TxMode::kVarying>>(flow, lane, ctl, io, pool);
    case TxMode::kMixed: return std::make_unique<TxTask<TxMode::kMixed>>(flow, lane, ctl, io, pool);
    case TxMode::kMixedVarying: return std::make_unique<TxTask<TxMode::kMixedVarying>>(flow, lane, ctl, io, pool);
  }
  throw std::logic_error("make_tx_task: no such TX mode");
}

}  // namespace xlp
