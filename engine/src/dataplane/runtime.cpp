#include "dataplane/runtime.hpp"

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

#include "core/errors.hpp"
#include "dataplane/rx_task.hpp"
#include "dataplane/tx_task.hpp"
#include <rte_errno.h>

namespace xlp {

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

namespace {

// The stream ids' stride: lane q's stream s of flow i has id (q * flows + i) * S + s with S the
// most streams a flow has, at least 2 (one queue, foreground and background: 2i + s).
size_t stream_id_stride(const TrialPlan& plan, uint16_t queues) {
  size_t stride = 2;
  for (const FlowPlan& f : plan.flows) stride = std::max(stride, f.streams.size());
  const size_t ids = plan.flows.size() * stride * queues;
  if (queues == 0 || ids > kStreamIds)
    throw ExecutionFailure(std::to_string(plan.flows.size()) + " flows x " + std::to_string(stride) + " streams x " +
                           std::to_string(queues) + " queues need " + std::to_string(ids) +
                           " stream ids; the test tag has " + std::to_string(kStreamIds));
  return stride;
}

// The state table a from_table flow sends from, checked against what the flow sends.
StateTable* table_of(const FlowPlan& fp, const std::vector<std::unique_ptr<StateTable>>& tables,
                     const std::string& where) {
  StateTable* table = tables.at(fp.from_table->port).get();
  if (!table || table->size() == 0)
    throw ExecutionFailure(where + ".from_table.port = " + std::to_string(fp.from_table->port) +
                           ": no state table there (run a phase-1 trial with learn first)");
  if (table->ip_version() != fp.streams[0].spec.ip_version)
    throw ExecutionFailure(where + ".foreground.ip_version = " + std::to_string(fp.streams[0].spec.ip_version) +
                           ": the state table holds IPv" + std::to_string(table->ip_version()) + " tuples");
  if (table->tcp() && !fp.streams[0].spec.tunnels.empty() && !table->tunnelled())
    throw ExecutionFailure(where + ".foreground.tunnel: the state table on port " + std::to_string(fp.from_table->port) +
                           " learned no tunnel addresses (its segments came in no tunnel)");
  if (table->tcp() != fp.tcp.has_value())
    throw ExecutionFailure(where + ".from_table.port = " + std::to_string(fp.from_table->port) +
                           (table->tcp() ? ": the state table holds TCP connections (send tcp segments data)"
                                         : ": the state table holds no TCP connections (learned from UDP frames)"));
  return table;
}

// A stream's varying fields (its `vary`), each generator seeded apart.
void add_fields(Stream& st, const std::vector<FieldSpec>& fields, uint64_t seed, size_t flow, uint16_t q,
                uint16_t queues) {
  for (const FieldSpec& f : fields) {
    const uint8_t* w = st.tmpl.bytes.data() + f.word_offset;
    st.fields.emplace_back(f, uint16_t(w[0] << 8 | w[1]), field_seed(seed, flow, q, st.index, st.fields.size()), q,
                           queues);
  }
}

// A stream's emulated CEs, as the sender writes them (ce.tx): their words and the tag's CE
// word (UDP only: a TCP segment's tag lies beyond the words a sender varies).
void add_ce(Stream& st, const StreamPlan& sp, uint64_t seed, size_t flow, uint16_t q, uint16_t queues) {
  if (!sp.ce || !sp.ce->tx) return;
  const bool tunnelled = st.tmpl.ip.tunnelled();
  const CeLayout layout = ce_layout(*sp.ce, sp.ce->tx, tunnelled ? st.tmpl.ip.tunnel() : 0,
                                    tunnelled ? sp.spec.tunnels.innermost().version : 0,
                                    st.tmpl.ip_offset, sp.spec.ip_version, st.tmpl.l4_offset,
                                    sp.spec.l4 == kProtoUdp ? st.tmpl.tag_offset : 0);
  st.ce = std::make_unique<CeGenerator>(*sp.ce->source, layout, sp.ce->random,
                                        field_seed(seed, flow, q, st.index, kMaxFields), q, queues);
}

// A stream's joint enumeration of its kEnumerate fields (stateful phase 1): the lanes visit
// exactly the tuples one lane would, in contiguous shares (`before`: the lanes' before this
// one), precomputed into patches where they fit.
void add_enumeration(Stream& st, const StreamPlan& sp, uint64_t seed, uint64_t& before) {
  if (!sp.enumerate) return;
  std::vector<uint64_t> radices;
  for (size_t f = 0; f < st.fields.size(); ++f)
    if (st.fields[f].spec().mode == VaryMode::kEnumerate) {
      st.enumerated.push_back(f);
      radices.push_back(uint64_t(st.fields[f].spec().max - st.fields[f].spec().min) + 1);
    }
  st.enumerator = std::make_unique<TupleEnumerator>(radices, *sp.enumerate, seed);
  st.enumerator->seek(before);
  before += st.planned;
  if (!st.ce)  // the records hold the enumerated fields only
    st.patches = FramePatches::precompute(st.fields, *st.enumerator, st.tmpl, st.planned, Stream::kPrecomputeBytes);
}

// A stream's receivers, one per RX queue, with the delay records the plan asks for; the
// foreground's tagged latency frames, shared out over the lanes.
void add_receivers(Stream& st, const TrialPlan& plan, const FlowPlan& fp, uint16_t q, uint16_t queues) {
  for (uint16_t r = 0; r < queues; ++r) {
    auto receiver = std::make_unique<Receiver>(st.planned);
    if (plan.delay.histogram) receiver->delays = std::make_unique<Histogram>();
    if (plan.delay.ipdv) receiver->ipdv = std::make_unique<IpdvTracker>();
    st.receivers.push_back(std::move(receiver));
  }
  if (st.index != 0 || plan.delay.tagged == 0) return;
  const uint64_t tagged = plan.delay.tagged / queues + (q < plan.delay.tagged % queues);
  const uint64_t first = tagged_first(st.planned, plan);
  if (tagged > st.planned - std::min(first, st.planned))
    throw ExecutionFailure("delay.tagged = " + std::to_string(plan.delay.tagged) + ": TX queue " + std::to_string(q) +
                           " of flow " + fp.name + " sends only " + std::to_string(st.planned - std::min(first, st.planned)) +
                           " foreground frames after delay.tagged_start, too few for its " + std::to_string(tagged) +
                           " tagged frames");
  for (auto& r : st.receivers) r->tagged = std::make_unique<TaggedFrames>(first, st.planned, tagged);
}

// A stream of DNS queries: what its receivers judge replies by, and the ring of its queries'
// send times, long enough for the queries of twice the reply timeout at the flow's highest
// rate (the lane's share of it), and no longer than the stream.
void add_dns_client(Stream& st, const TrialPlan& plan, const FlowPlan& fp, const StreamPlan& sp, uint16_t q,
                    uint16_t queues) {
  uint64_t peak = fp.rate;
  for (const FlowPlan::RateStep& step : fp.rate_steps) peak = std::max(peak, step.rate);
  const double window = double(peak / queues + 1) * plan.delay.frame_timeout * 2 + kMaxBurst;
  const dns::Expectation expect{plan.dns->zone.get(), plan.dns->records, fp.dns->prefix,     fp.dns->prefix_bits,
                                fp.dns->exclude,        fp.dns->mapped,      fp.dns->checks, sp.spec.dns->edns};
  // Names asked again repeat_after seconds later at the lane's (first) rate.
  const dns::RepeatSchedule repeat{fp.dns->repeat,
                                   std::max<uint64_t>(1, uint64_t(fp.dns->repeat_after * double(fp.rate) / queues))};
  if (fp.dns->ports < queues)
    throw ExecutionFailure("flows: " + fp.name + "'s dns.ports = " + std::to_string(fp.dns->ports) +
                           ": must be at least the " + std::to_string(queues) +
                           " queues (each queue's queries leave from source ports of their own)");
  // dns64perf++ names: the lanes' names one apart (DnsClient::name_of), none asked twice but
  // the repeats; the A records' prefix must hold them all.
  const uint64_t names = uint64_t(1) << (32 - plan.dns->records.a_bits);
  if (plan.dns->zone->style() == dns::NameStyle::kDns64perf && st.planned * queues > names)
    throw ExecutionFailure("flows: " + fp.name + " asks up to " + std::to_string(st.planned * queues) +
                           " dns64perf names, more than the " + std::to_string(names) +
                           " addresses of dns.a (/" + std::to_string(plan.dns->records.a_bits) +
                           "): a name would be asked again (use a shorter prefix, or fewer queries)");
  st.dns = std::make_unique<DnsClient>(expect, sp.spec, *fp.dns, std::min<uint64_t>(uint64_t(window), st.planned),
                                       repeat, q, queues);
}

}  // namespace

Trial::Trial(const TrialPlan& plan, uint8_t trial_tag, BurstIo& io, const PortPools& pools, uint64_t tsc_hz,
             const std::vector<PortIdentity>& ports, std::vector<std::unique_ptr<StateTable>>& tables,
             uint16_t queues)
    : plan_(plan) {
  const size_t stride = stream_id_stride(plan, queues);
  const std::vector<Learning> learning = set_up_learning(tables);
  control_.tsc_hz = tsc_hz;
  control_.timeout_tsc = uint64_t(plan.timeout * double(tsc_hz));
  control_.finish_early = plan.finish_early;
  control_.frame_timeout_tsc = uint64_t(plan.delay.frame_timeout * double(tsc_hz));
  if (plan.max_lag) control_.max_lag_tsc = uint64_t(*plan.max_lag * double(tsc_hz));

  std::map<uint16_t, std::vector<RxTask*>> receivers;  // per RX port, one per queue
  const auto receivers_of = [&](uint16_t port) -> std::vector<RxTask*>& {
    std::vector<RxTask*>& rx = receivers[port];
    for (uint16_t q = uint16_t(rx.size()); q < queues; ++q) {
      auto task = std::make_unique<RxTask>(port, q, trial_tag, control_, io, ports.at(port), pools.of(port));
      rx.push_back(task.get());
      tasks_.push_back(std::move(task));
    }
    return rx;
  };
  uint32_t senders = 0;
  for (size_t i = 0; i < plan.flows.size(); ++i) {
    auto flow = std::make_unique<Flow>();
    flow->plan = plan.flows[i];
    const FlowPlan& fp = flow->plan;
    flow->planned = fp.planned_frames(plan.duration);
    flow->segments = fp.segments();
    if (fp.from_table) flow->table = table_of(fp, tables, "flows[" + std::to_string(i) + "]");
    std::vector<RxTask*>& rx = receivers_of(fp.rx_port);
    std::vector<uint64_t> enumerated_before(fp.streams.size(), 0);  // per stream, by the lanes so far
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
        // An answering stream's frames are written over a segment template (tcp.hpp).
        auto segment = fp.answers() ? std::make_unique<SegmentTemplate>(sp.spec, id, trial_tag) : nullptr;
        auto st = std::make_unique<Stream>(s, segment ? segment->tmpl : build_template(sp.spec, id, trial_tag), sp,
                                           frames_in_pattern(lane->pattern, s, lane->planned));
        st->segment = std::move(segment);
        if (st->segment) st->replies = std::vector<Stream::Replies>(queues);
        if (fp.tcp) st->tcp = &*flow->plan.tcp;
        split_jumbo(st->tmpl, pools.of(fp.tx_port));
        const std::vector<FieldSpec> fields = resolve_fields(sp, st->tmpl);
        add_fields(*st, fields, plan.seed, i, q, queues);
        add_ce(*st, sp, plan.seed, i, q, queues);
        check_span(fields, st->ce ? st->ce->rows() : std::vector<CeRow>{}, st->tmpl,
                   "flows[" + std::to_string(i) + "] (" + fp.name + ")");
        if (!st->fields.empty() || st->ce) st->layout = std::make_unique<FieldLayout>(st->fields, st->tmpl, st->ce.get());
        add_enumeration(*st, sp, plan.seed + i, enumerated_before[s]);
        if (st->layout && !st->patches)
          st->block = std::make_unique<FieldBlock>(*st->layout, st->fields, st->enumerator.get(), st->enumerated,
                                                   st->ce.get());
        add_receivers(*st, plan, fp, q, queues);
        if (fp.dns) add_dns_client(*st, plan, fp, sp, q, queues);
        for (RxTask* task : rx) task->add_stream(id, st.get());
        for (const Learning& l : learning)
          if (sp.kind == StreamPlan::Kind::kForeground && l.flow == i)
            for (RxTask* task : rx) task->learn_from(id, *learning_.at(l.port));
        lane->streams.push_back(std::move(st));
      }
      if (flow->table) {
        flow->table->prepare(lane->streams[0]->tmpl);  // the same for every lane: headers only
        const uint64_t seed = plan.seed + i + 0x9e3779b97f4a7c15ull * q;
        const EntrySelector::Mode mode = fp.from_table->selection;
        lane->selector = std::make_unique<EntrySelector>(
            flow->table->tcp() ? EntrySelector::owned(mode, flow->table->size(), seed, q, queues)
                               : EntrySelector(mode, flow->table->size(), seed, q, queues));
        if (lane->selector->entries() == 0)
          throw ExecutionFailure("flows[" + std::to_string(i) + "].from_table: the state table's " +
                                 std::to_string(flow->table->size()) + " TCP connections are fewer than the " +
                                 std::to_string(queues) + " queues (each queue continues connections of its own)");
      }
      if (!fp.answers()) {
        tasks_.push_back(make_tx_task(*flow, *lane, control_, io, pools.of(fp.tx_port)));
        ++senders;
      }
      flow->lanes.push_back(std::move(lane));
    }
    flows_.push_back(std::move(flow));
  }
  link_answers();
  if (plan.dns) set_up_dns(receivers_of);
  for (const auto& [port, tasks] : receivers) receivers_.insert(receivers_.end(), tasks.begin(), tasks.end());
  if (plan.capture) set_up_capture(receivers);
  control_.senders_running = senders;
}

void Trial::use_rx_timestamps(uint16_t port, int offset, uint64_t flag, const DeviceClockMap& clock) {
  for (RxTask* r : receivers_)
    if (r->port() == port) r->use_rx_timestamps(offset, flag, &clock);
}

std::vector<Trial::Learning> Trial::set_up_learning(std::vector<std::unique_ptr<StateTable>>& tables) {
  // The tables this trial fills (plan.learn), and from which flow's frames. Over UDP the
  // Responder learns the Initiator's frames. Over TCP each side learns the segment that
  // completes its side of a handshake, with the connection's sequence numbers (docs/tcp.md):
  // the Responder the ACKs, the Initiator (on the SYN flow's tx_port) the SYN-ACKs.
  std::vector<Learning> learning;
  if (!plan_.learn) return learning;
  const FlowPlan& learned = plan_.flows[plan_.learn->flow];
  if (!learned.tcp) {
    learning.push_back({plan_.learn->port, plan_.learn->flow, plan_.learn->ip_version});
  } else {
    if (learned.tcp->step != TcpStep::kSyn)
      throw ExecutionFailure("learn.flow = " + std::to_string(plan_.learn->flow) +
                             ": a TCP flow is learned from its handshakes (tcp.segments = open)");
    size_t syn_ack = 0, ack = 0;
    for (size_t i = 0; i < plan_.flows.size(); ++i)
      if (plan_.flows[i].tcp && plan_.flows[i].answers() && plan_.flows[i].tcp->answers == plan_.learn->flow) syn_ack = i;
    for (size_t i = 0; i < plan_.flows.size(); ++i)
      if (plan_.flows[i].tcp && plan_.flows[i].answers() && plan_.flows[i].tcp->answers == syn_ack) ack = i;
    if (learned.tx_port == plan_.learn->port)
      throw ExecutionFailure("learn.port = " + std::to_string(plan_.learn->port) +
                             ": the Initiator's port too; over TCP each side has a table of its own");
    learning.push_back({plan_.learn->port, ack, plan_.learn->ip_version});
    learning.push_back({learned.tx_port, syn_ack, learned.streams[0].spec.ip_version});
    initiator_table_port_ = learned.tx_port;
  }
  for (const Learning& l : learning) {  // a new table replaces the port's old one
    tables.at(l.port) = std::make_unique<StateTable>(l.ip_version, plan_.learn->table_size,
                                                     plan_.flows[plan_.learn->flow].tcp.has_value());
    learning_[l.port] = tables[l.port].get();
  }
  return learning;
}

void Trial::set_up_dns(const std::function<std::vector<RxTask*>&(uint16_t)>& receivers_of) {
  // Every DNS stream's replies are read with the trial's zone on its port; an authoritative
  // port answers for the zone and waits for every DNS stream's replies before it stops.
  std::vector<Stream*> queries;
  std::vector<uint16_t> asking;
  for (const auto& f : flows_)
    if (f->plan.dns) {
      asking.push_back(f->plan.rx_port);
      for (const auto& lane : f->lanes) queries.push_back(lane->streams[0].get());
    }
  for (uint16_t port : asking)
    for (RxTask* task : receivers_of(port)) task->serve_dns(*plan_.dns, false, {});
  for (uint16_t port : plan_.dns->authoritative)
    for (RxTask* task : receivers_of(port)) task->serve_dns(*plan_.dns, true, queries);
}

void Trial::link_answers() {
  // Each lane's stream of an answering flow answers the same lane's stream of its cause.
  for (const auto& f : flows_)
    if (f->plan.answers())
      for (size_t q = 0; q < f->lanes.size(); ++q) {
        Stream& reply = *f->lanes[q]->streams[0];
        Stream& cause = *flows_[f->plan.tcp->answers]->lanes[q]->streams[0];
        cause.reply = &reply;
        reply.cause = &cause;
      }
}

void Trial::set_up_capture(const std::map<uint16_t, std::vector<RxTask*>>& receivers) {
  // Copies are cut at the snap length, and at the longest frame the trial expects (or a
  // standard 1518-byte frame with two tags, if longer): the pool's buffers are that big and
  // each copy fits one, whatever the segments of the received frame.
  uint32_t longest = 1518 - kFcs + 2 * kVlanTag;
  for (const auto& f : flows_)
    for (const auto& lane : f->lanes)
      for (const auto& st : lane->streams) longest = std::max(longest, st->rx_len);
  const uint32_t snaplen = std::min(plan_.capture->snaplen, longest);
  static std::atomic<unsigned> pools{0};  // a pool name is unique while the pool lives
  const std::string name = "xlp_capture" + std::to_string(pools++);
  capture_pool_ = rte_pktmbuf_pool_create(name.c_str(), unsigned(receivers.size()) * plan_.capture->frames, 0, 0,
                                          uint16_t(rte_pcapng_mbuf_size(snaplen)), SOCKET_ID_ANY);
  if (!capture_pool_)
    throw ExecutionFailure("capture: cannot allocate " + std::to_string(receivers.size() * plan_.capture->frames) +
                           " buffers of " + std::to_string(rte_pcapng_mbuf_size(snaplen)) +
                           " bytes (capture.frames x snap length): " + rte_strerror(rte_errno));
  for (const auto& [port, tasks] : receivers) {
    auto& pc = capture_ports_[port] = std::make_unique<PortCapture>();
    pc->limit = plan_.capture->frames;
    for (RxTask* t : tasks) t->capture_into(pc.get(), *plan_.capture, snaplen, capture_pool_);
  }
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
  for (auto& f : flows_)  // an answering flow's frames were sent by its cause's receivers
    if (f->plan.answers())
      for (auto& lane : f->lanes) {
        Stream& st = *lane->streams[0];
        st.sent = st.replies_built() - st.replies_unsent();
        lane->sent.add(st.sent);
        lane->send_end_tsc = control_.start_tsc;  // no schedule of its own: send_time 0
      }
  for (RxTask* r : receivers_)  // the queues' parts of each learning port's table, in queue order
    if (r->learned()) learning_.at(r->port())->append(*r->learned());
  if (capture_pool_) write_captures();
}

}  // namespace xlp
