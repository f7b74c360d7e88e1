#include "runtime.hpp"

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_memcpy.h>

#include <cmath>
#include <ctime>
#include <algorithm>
#include <cstring>
#include <map>

#include "errors.hpp"

namespace xlp {

namespace {

// Sends one flow at its constant rate: every poll hands the frames that are due (at least a
// minimum burst, at most kMaxBurst) to the port. Frames the port does not accept are kept
// and offered again first, so none is skipped and the sequence stays in order.
class TxTask final : public Task {
 public:
  TxTask(Flow& flow, TrialControl& ctl, BurstIo& io, rte_mempool* pool, uint16_t queue)
      : flow_(flow), ctl_(ctl), io_(io), pool_(pool), port_(flow.plan.tx_port), queue_(queue),
        schedule_(ctl.tsc_hz, flow.plan.rate, flow.planned, 0) {
    for (const auto& st : flow.streams) varying_ = varying_ || !st->fields.empty();
    varying_ = varying_ || flow.table != nullptr;
    mixed_ = flow.pattern.size() > 1;
    enumerated_ = !mixed_ && !flow.table && flow.streams[0]->patches;
  }

  bool poll(uint64_t now) override {
    if (pending_ > 0 && !flush()) {
      if (now > ctl_.cutoff_tsc || ctl_.abort.load(std::memory_order_relaxed)) return stop(now, true);
      return true;
    }
    if (built_ == flow_.planned) return stop(now, false);
    if (now < next_tsc_) return true;
    if (now > ctl_.cutoff_tsc || ctl_.abort.load(std::memory_order_relaxed)) return stop(now, true);

    const uint64_t lag = now - schedule_.due_tsc(built_);
    if (lag > flow_.max_lag_tsc) flow_.max_lag_tsc = lag;
    const uint32_t count = uint32_t(std::min<uint64_t>(schedule_.due_count(now) - built_, kMaxBurst));
    if (rte_pktmbuf_alloc_bulk(pool_, burst_, count) != 0) return true;  // pool empty: retry
    const uint64_t tsc = rte_rdtsc();
    if (enumerated_) {
      Stream& st = *flow_.streams[0];
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
      Stream& st = *flow_.streams[0];
      if (!flow_.table) {
        const FieldBurst fields(st.fields, st.tmpl, count, st.enumerator.get(), st.enumerated);
        fields.with_chunks([&](auto writer) { build_single(count, tsc, writer); });
        return;
      }
    }
    const uint32_t n = uint32_t(flow_.pattern.size());
    uint8_t* frames[kMaxBurst];
    uint8_t positions[2][kMaxBurst];  // burst positions of each stream's frames (mixed flows)
    uint32_t per_stream[2] = {kMixed ? 0 : count, 0};
    for (uint32_t i = 0; i < count; ++i) {
      uint8_t s = 0;
      if constexpr (kMixed) {
        s = flow_.pattern[cycle_];
        if (++cycle_ == n) cycle_ = 0;
        positions[s][per_stream[s]++] = uint8_t(i);
      }
      burst_stream_[i] = s;
      frames[i] = copy_template(burst_[i], flow_.streams[s]->tmpl);
    }
    uint64_t udp_delta[kMaxBurst] = {};
    if constexpr (kVarying) {
      for (size_t s = 0; s < flow_.streams.size(); ++s) {
        Stream& st = *flow_.streams[s];
        const uint8_t* pos = positions[s];
        const auto at = [pos](uint32_t k) -> uint32_t { return kMixed ? pos[k] : k; };
        if (st.patches) {
          st.patches->apply(per_stream[s], frames, at, udp_delta);
        } else if (!st.fields.empty()) {
          const FieldBurst fields(st.fields, st.tmpl, per_stream[s], st.enumerator.get(), st.enumerated);
          fields.with_chunks([&](auto writer) {
            for (uint32_t k = 0; k < per_stream[s]; ++k) udp_delta[at(k)] += writer.write(frames[at(k)]);
          });
        }
      }
      if (flow_.table)  // phase 2: the whole four-tuple from the state table (foreground only)
        for (uint32_t i = 0; i < count; ++i)
          udp_delta[i] += flow_.table->write(flow_.selector->next(), frames[i], flow_.streams[0]->tmpl);
    }
    for (uint32_t i = 0; i < count; ++i) {
      Stream& st = *flow_.streams[kMixed ? burst_stream_[i] : 0];
      stamp_frame(frames[i], st.tmpl, st.next_seq++, tsc, udp_delta[i]);
      ++st.sent;
    }
  }

  // A single stream whose frames differ only by what `patch` writes (fixed frames: nothing;
  // stateful phase 1: a precomputed record, FramePatches::Cursor): each frame is copied,
  // patched and stamped in one pass, while it is in the L1 cache.
  template <class Patch>
  void build_single(uint32_t count, uint64_t tsc, Patch patch) {
    Stream& st = *flow_.streams[0];
    for (uint32_t i = 0; i < count; ++i) {
      burst_stream_[i] = 0;
      uint8_t* frame = copy_template(burst_[i], st.tmpl);
      stamp_frame(frame, st.tmpl, st.next_seq + i, tsc, patch.write(frame));
    }
    patch.save();
    st.next_seq += count;
    st.sent += count;
  }
  struct FixedFrames {
    static uint16_t write(uint8_t*) { return 0; }
    static void save() {}
  };

  [[gnu::always_inline]] static uint8_t* copy_template(rte_mbuf* m, const FrameTemplate& t) {
    uint8_t* frame = rte_pktmbuf_mtod(m, uint8_t*);
    rte_memcpy(frame, t.bytes.data(), t.size());
    m->data_len = uint16_t(t.size());
    m->pkt_len = t.size();
    return frame;
  }

  // Offers the pending frames to the port; true when all were accepted.
  bool flush() {
    uint16_t n = io_.send(port_, queue_, burst_ + first_pending_, uint16_t(pending_));
    first_pending_ += n;
    pending_ -= n;
    flow_.sent.add(n);
    return pending_ == 0;
  }

  uint16_t port() const override { return port_; }

  void begin() override {
    schedule_ = Schedule(ctl_.tsc_hz, flow_.plan.rate, flow_.planned, ctl_.start_tsc);
    next_tsc_ = schedule_.next_send_tsc(0);
  }

  bool stop(uint64_t now, bool cut_off) {
    if (cut_off) {
      // Frames built but never accepted were not sent: take them back from the counts.
      for (uint32_t i = first_pending_; i < first_pending_ + pending_; ++i)
        --flow_.streams[burst_stream_[i]]->sent;
      rte_pktmbuf_free_bulk(burst_ + first_pending_, pending_);
      pending_ = 0;
      flow_.cut_off = true;
    }
    flow_.send_end_tsc = now;
    const uint64_t deadline = now + ctl_.timeout_tsc;
    if (ctl_.senders_running.fetch_sub(1) == 1) ctl_.rx_deadline.store(deadline);
    return false;
  }

  Flow& flow_;
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

// Receives on one port: recognises this trial's test frames, counts them per stream, and
// counts everything else as foreign. Ends at the global timeout after the last sender
// stopped, or earlier when every frame sent to this port has arrived (finish_early).
class RxTask final : public Task {
 public:
  RxTask(uint16_t port, uint16_t queue, uint8_t trial_tag, TrialControl& ctl, BurstIo& io,
         const PortIdentity& id, rte_mempool* pool)
      : port_(port), queue_(queue), tag_(trial_tag), ctl_(ctl), io_(io), identity_(id), pool_(pool) {
    sinks_.fill(nullptr);
  }
  void add_stream(uint8_t id, Stream* s) { sinks_[id] = s; streams_.push_back(s); }
  void learn_into(StateTable* table, uint8_t stream_id) {
    learn_table_ = table;
    learn_stream_ = stream_id;
  }
  const uint64_t* foreign() const { return &foreign_; }
  const uint64_t* answered() const { return &answered_; }
  uint16_t port() const override { return port_; }

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
  void classify(rte_mbuf* m, uint64_t rx_tsc) {
    TestTag tag;
    const uint8_t* data = rte_pktmbuf_mtod(m, const uint8_t*);
    Stream* st = nullptr;
    if (m->nb_segs != 1 || !parse_test_frame(data, m->data_len, tag) || tag.trial_tag != tag_ ||
        !(st = sinks_[tag.stream])) {
      ++foreign_;
      if (answer_neighbor(io_, port_, m, identity_, pool_)) ++answered_;
      return;
    }
    if (m->pkt_len != st->rx_len) {
      ++st->bad_length;
      return;
    }
    uint64_t seq;
    switch (st->seq.record(tag.seq, seq)) {
      case SequenceTracker::Result::kNew: {
        const uint64_t delay = (rx_tsc - tag.timestamp) & kTimestampMask;
        if (ctl_.frame_timeout_tsc && delay > ctl_.frame_timeout_tsc) {
          ++st->late;  // too late to count: lost, as with RFC 2544's global timeout
          break;
        }
        st->received.add(1);
        if (st->delays) {
          st->delays->add(delay);  // it keeps the exact min, max and mean as well
        } else {
          if (delay < st->delay_min) st->delay_min = delay;
          if (delay > st->delay_max) st->delay_max = delay;
          st->delay_sum += delay;
        }
        if (st->ipdv) st->ipdv->add(seq, int64_t(delay));
        if (st->tagged) st->tagged->record(seq, int64_t(delay));
        if (learn_table_ && tag.stream == learn_stream_ && !learn_table_->full())
          learn_table_->learn(data + tag.l3_offset);
        break;
      }
      case SequenceTracker::Result::kDuplicate: ++st->duplicates; break;
      case SequenceTracker::Result::kOutOfRange: ++st->out_of_range; break;
    }
  }

  bool all_arrived() const {
    for (const Stream* s : streams_)
      if (s->received.get() + s->late < s->sent) return false;
    return true;
  }

  uint16_t port_, queue_;
  uint8_t tag_;
  TrialControl& ctl_;
  BurstIo& io_;
  const PortIdentity& identity_;
  rte_mempool* pool_;
  std::array<Stream*, 256> sinks_;
  std::vector<Stream*> streams_;
  uint64_t foreign_ = 0, answered_ = 0;
  StateTable* learn_table_ = nullptr;  // stateful phase 1: the Responder's table
  uint8_t learn_stream_ = 0;
};

}  // namespace

bool answer_neighbor(BurstIo& io, uint16_t port, const rte_mbuf* m, const PortIdentity& id, rte_mempool* pool) {
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
  if (io.send(port, 0, &r, 1) == 1) return true;
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

Trial::Trial(const TrialPlan& plan, uint8_t trial_tag, BurstIo& io, rte_mempool* pool, uint64_t tsc_hz,
             const std::vector<PortIdentity>& ports, std::vector<std::unique_ptr<StateTable>>& tables)
    : plan_(plan) {
  if (plan.learn) {  // a new table replaces the port's old one
    tables.at(plan.learn->port) = std::make_unique<StateTable>(plan.learn->ip_version, plan.learn->table_size);
    learning_ = tables[plan.learn->port].get();
  }
  control_.tsc_hz = tsc_hz;
  control_.timeout_tsc = uint64_t(plan.timeout * double(tsc_hz));
  control_.finish_early = plan.finish_early;
  control_.frame_timeout_tsc = uint64_t(plan.delay.frame_timeout * double(tsc_hz));

  std::map<uint16_t, RxTask*> receivers;
  for (size_t i = 0; i < plan.flows.size(); ++i) {
    auto flow = std::make_unique<Flow>();
    flow->plan = plan.flows[i];
    const FlowPlan& fp = flow->plan;
    flow->planned = fp.planned_frames(plan.duration);
    const uint64_t fg = fp.foreground_frames(flow->planned);
    const uint8_t fg_id = uint8_t(2 * i), bg_id = uint8_t(2 * i + 1);
    flow->streams.push_back(std::make_unique<Stream>(
        "foreground", build_template(fp.foreground.spec, fg_id, trial_tag),
        fp.foreground.rx_frame_size - kFcs, fg));
    if (fp.background)
      flow->streams.push_back(std::make_unique<Stream>(
          "background", build_template(fp.background->spec, bg_id, trial_tag),
          fp.background->rx_frame_size - kFcs, flow->planned - fg));
    for (uint32_t k = 0; k < fp.mix_n; ++k) flow->pattern.push_back(k < fp.mix_m ? 0 : 1);
    for (auto& st : flow->streams) {
      if (plan.delay.histogram) st->delays = std::make_unique<Histogram>();
      if (plan.delay.ipdv) st->ipdv = std::make_unique<IpdvTracker>();
    }
    if (plan.delay.tagged > 0)  // latency frames: foreground only
      flow->streams[0]->tagged =
          std::make_unique<TaggedFrames>(tagged_first(fg, plan), fg, plan.delay.tagged);
    const StreamPlan* stream_plans[2] = {&fp.foreground, fp.background ? &*fp.background : nullptr};
    if (fp.from_table) {
      StateTable* table = tables.at(fp.from_table->port).get();
      if (!table || table->size() == 0)
        throw ExecutionFailure("flows[" + std::to_string(i) + "].from_table.port = " +
                                    std::to_string(fp.from_table->port) +
                                    ": no state table there (run a phase-1 trial with learn first)");
      if (table->ip_version() != fp.foreground.spec.ip_version)
        throw ExecutionFailure("flows[" + std::to_string(i) + "].foreground.ip_version = " +
                                    std::to_string(fp.foreground.spec.ip_version) + ": the state table holds IPv" +
                                    std::to_string(table->ip_version()) + " tuples");
      table->prepare(flow->streams[0]->tmpl);
      flow->table = table;
      flow->selector = std::make_unique<EntrySelector>(fp.from_table->selection, table->size(), plan.seed + i);
    }
    for (size_t s = 0; s < flow->streams.size(); ++s) {
      Stream& st = *flow->streams[s];
      for (const FieldSpec& f : resolve_fields(*stream_plans[s], st.tmpl)) {
        const uint8_t* w = st.tmpl.bytes.data() + f.word_offset;
        // Reproducible per seed, independent per flow, stream and field.
        const uint64_t seed = plan.seed ^ (0x9e3779b97f4a7c15ull * (1 + i * 64 + s * 16 + st.fields.size()));
        st.fields.emplace_back(f, uint16_t(w[0] << 8 | w[1]), seed);
        st.recompute_ipv4_checksum = st.recompute_ipv4_checksum || f.in_ipv4_header;
      }
      if (stream_plans[s]->enumerate) {
        std::vector<uint64_t> radices;
        for (size_t f = 0; f < st.fields.size(); ++f)
          if (st.fields[f].spec().mode == VaryMode::kEnumerate) {
            st.enumerated.push_back(f);
            radices.push_back(uint64_t(st.fields[f].spec().max - st.fields[f].spec().min) + 1);
          }
        st.enumerator = std::make_unique<TupleEnumerator>(radices, *stream_plans[s]->enumerate, plan.seed + i);
        st.patches = FramePatches::precompute(st.fields, *st.enumerator, st.tmpl, st.planned, Stream::kPrecomputeBytes);
        if (st.patches && st.patches->sets_ipv4_checksum()) st.recompute_ipv4_checksum = false;
      }
    }

    RxTask*& rx = receivers[fp.rx_port];
    if (!rx) {
      auto task = std::make_unique<RxTask>(fp.rx_port, 0, trial_tag, control_, io, ports.at(fp.rx_port), pool);
      rx = task.get();
      foreign_.emplace_back(fp.rx_port, rx->foreign());
      answered_.emplace_back(fp.rx_port, rx->answered());
      tasks_.push_back(std::move(task));
    }
    rx->add_stream(fg_id, flow->streams[0].get());
    if (fp.background) rx->add_stream(bg_id, flow->streams[1].get());
    if (learning_ && plan.learn->flow == i) rx->learn_into(learning_, fg_id);
    tasks_.push_back(std::make_unique<TxTask>(*flow, control_, io, pool, 0));
    flows_.push_back(std::move(flow));
  }
  control_.senders_running = uint32_t(flows_.size());
}

Trial::~Trial() = default;

void Trial::run(const std::vector<unsigned>& worker_lcores, const std::function<void()>& on_tick) {
  // The schedule starts now, after everything was prepared (templates, enumerations, state
  // tables), a little in the future so that every worker begins on it.
  control_.start_tsc = rte_rdtsc() + control_.tsc_hz / 1000;
  control_.cutoff_tsc = control_.start_tsc + uint64_t(plan_.duration * (1 + 1e-5) * double(control_.tsc_hz));
  for (auto& t : tasks_) t->begin();
  if (worker_lcores.empty()) {
    Worker w;
    for (auto& t : tasks_) w.tasks.push_back(t.get());
    w.run();
    return;
  }
  for (unsigned lcore : worker_lcores) {
    auto w = std::make_unique<Worker>();
    w->lcore = lcore;
    workers_.push_back(std::move(w));
  }
  // All tasks of a port run on one worker, so TX queue 0 of the port has a single user (the
  // port's senders and its ARP/ND replies). With one worker it serves the whole trial.
  std::vector<uint16_t> ports;
  for (auto& t : tasks_)
    if (std::find(ports.begin(), ports.end(), t->port()) == ports.end()) ports.push_back(t->port());
  for (auto& t : tasks_) {
    const size_t p = size_t(std::find(ports.begin(), ports.end(), t->port()) - ports.begin());
    workers_[p % workers_.size()]->tasks.push_back(t.get());
  }
  for (auto& w : workers_) rte_eal_remote_launch(worker_entry, w.get(), w->lcore);
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
  for (auto& w : workers_) rte_eal_wait_lcore(w->lcore);
}

std::vector<FlowProgress> Trial::progress() const {
  std::vector<FlowProgress> flows;
  for (const auto& f : flows_) {
    uint64_t received = 0;
    for (const auto& s : f->streams) received += s->received.get();
    flows.push_back({f->plan.name, f->sent.get(), received});
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

TrialReport Trial::result(double elapsed_s) const {
  const double hz = double(control_.tsc_hz);
  const double ns_per_tick = 1e9 / hz;
  const double limit = plan_.duration * (1 + 1e-5);
  TrialReport out;
  out.elapsed = elapsed_s;
  for (const auto& f : flows_) {
    FlowReport flow;
    flow.name = f->plan.name;
    flow.rate = f->plan.rate;
    flow.planned = f->planned;
    flow.send_time = double(f->send_end_tsc - control_.start_tsc) / hz;
    flow.max_lag_us = double(f->max_lag_tsc) / hz * 1e6;
    for (const auto& s : f->streams) {
      StreamReport st;
      st.kind = s->kind;
      st.sent = s->sent;
      st.received = s->received.get();
      st.duplicates = s->duplicates;
      st.reordered = s->seq.reordered();
      st.bad_length = s->bad_length;
      st.out_of_range = s->out_of_range;
      st.frame_size = uint32_t(s->tmpl.size() + kFcs);
      st.rx_frame_size = uint32_t(s->rx_len + kFcs);
      flow.sent += st.sent;
      flow.received += st.received;
      if (st.received > 0 && s->delays)
        st.delay_ns = DelayRange{double(s->delays->min()) * ns_per_tick, s->delays->mean() * ns_per_tick,
                                 double(s->delays->max()) * ns_per_tick};
      else if (st.received > 0)
        st.delay_ns = DelayRange{double(s->delay_min) * ns_per_tick,
                                 double(s->delay_sum) / double(st.received) * ns_per_tick,
                                 double(s->delay_max) * ns_per_tick};
      if (control_.frame_timeout_tsc) st.late = s->late;
      if (s->delays) st.delay = distribution(*s->delays, ns_per_tick);
      if (s->ipdv) {
        const SignedHistogram& h = s->ipdv->values();
        st.ipdv = IpdvSummary{h.count(), double(h.min()) * ns_per_tick, double(h.percentile(50)) * ns_per_tick,
                              double(h.max()) * ns_per_tick};
      }
      if (s->tagged) {
        TaggedDelays tagged;
        for (int64_t d : s->tagged->delays()) {
          if (d < 0) ++tagged.lost;
          tagged.delays_ns.push_back(d < 0 ? std::nullopt : std::optional<double>(double(d) * ns_per_tick));
        }
        st.tagged = std::move(tagged);
      }
      flow.streams.push_back(std::move(st));
    }
    if (out.valid && control_.abort.load()) {
      out.valid = false;
      out.invalid_reason = "aborted";
    }
    if (out.valid && (f->cut_off || flow.send_time > limit)) {
      char buf[256];
      std::snprintf(buf, sizeof buf,
                    "tester could not keep the rate: flow %s sent %llu of %llu frames in %.6f s "
                    "(limit %.6f s)",
                    f->plan.name.c_str(), (unsigned long long)f->sent.get(),
                    (unsigned long long)f->planned, flow.send_time, limit);
      out.valid = false;
      out.invalid_reason = buf;
    }
    out.flows.push_back(std::move(flow));
  }
  for (size_t i = 0; i < foreign_.size(); ++i)
    out.ports.push_back({foreign_[i].first, *foreign_[i].second, *answered_[i].second});
  if (learning_)
    out.state_table = StateTableReport{plan_.learn->port, learning_->size(), learning_->capacity(),
                                       learning_->ip_version()};
  return out;
}

}  // namespace xlp
