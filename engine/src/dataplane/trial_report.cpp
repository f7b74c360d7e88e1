// A trial's report, aggregated from its lanes' and receivers' counts.
#include "dataplane/rx_task.hpp"

namespace xlp {

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
        if (s.tcp) st.tcp_unexpected = st.tcp_unexpected.value_or(0) + r->tcp_unexpected;
        if (r->mss_min != UINT32_MAX) st.mss_min = std::min(st.mss_min.value_or(UINT32_MAX), r->mss_min);
        if (s.rx_check || s.dns) {  // a DNS stream's replies: their checksums
          if (!st.header_faults) st.header_faults.emplace();
          for (size_t v = 1; v < kVerdicts; ++v) (*st.header_faults)[v] += r->header_faults[v];
        }
        if (s.rx_check && s.rx_check->counts_df()) {
          if (!st.df) st.df.emplace();
          st.df->set += r->df_set;
          st.df->clear += r->df_clear;
        }
        if (s.rx_check && s.rx_check->counts_tunnel_ecn()) {
          if (!st.tunnel_ecn) st.tunnel_ecn.emplace();
          st.tunnel_ecn->copied += r->tunnel_ecn_copied;
          st.tunnel_ecn->not_ect += r->tunnel_ecn_not_ect;
        }
        if (s.dns) {
          if (!st.dns_faults) st.dns_faults.emplace();
          for (size_t v = 1; v < dns::kReplyVerdicts; ++v) (*st.dns_faults)[v] += r->dns_faults[v];
          st.dns_upstream_due += r->dns_upstream_due;
        }
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
    uint64_t unsent_replies = 0, built_replies = 0;  // an answering flow's, over its lanes
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
      if (f->plan.answers()) {
        // Sent by receivers as the frames they answer arrived, no schedule: per TX queue, the
        // replies its receiver built for any lane's causes (RSS spreads them) and sent.
        q.planned = q.sent = 0;
        for (const auto& l : f->lanes) {
          const Stream::Replies& r = l->streams[0]->replies[lane->queue];
          q.planned += r.built.get();
          q.sent += r.built.get() - r.unsent;
        }
        unsent_replies += q.planned - q.sent;
        built_replies += q.planned;
      } else if (!late_lane &&
                 (lane->cut_off || q.send_time > limit || lane->max_lag_tsc > control_.max_lag_tsc)) {
        late_lane = lane.get();
      }
      flow.queues.push_back(q);
    }
    if (out.valid && unsent_replies > 0) {
      out.valid = false;
      out.invalid_reason = "tester could not send " + std::to_string(unsent_replies) + " of the " +
                           std::to_string(built_replies) + " TCP replies of flow " + f->plan.name +
                           " (its TX queue stayed full)";
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
      // Without the schedule rule (no max_lag) lateness is only the send time over the limit.
      int n = late_lane->cut_off || sent < f->planned || !plan_.max_lag
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
    port.fragmented += r->fragmented();
    port.neighbor_replies += r->answered();
    port.queues.push_back({r->queue(), r->test_frames(), r->foreign()});
    if (plan_.dns) {  // every port of a DNS trial: 0 where it does not answer
      if (!port.dns) port.dns.emplace();
      port.dns->answered += r->dns_answered() - r->dns_unsent();
      port.dns->unanswered += r->dns_unanswered();
      port.dns->unsent += r->dns_unsent();
    }
    if (auto c = captures_.find(r->port()); c != captures_.end()) port.capture = c->second;
  }
  for (const PortReport& port : out.ports)  // the authoritative side's answers are the tester's to send
    if (out.valid && port.dns && port.dns->unsent > 0) {
      out.valid = false;
      out.invalid_reason = "tester could not send " + std::to_string(port.dns->unsent) + " of the " +
                           std::to_string(port.dns->answered + port.dns->unsent) + " DNS answers of port " +
                           std::to_string(port.index) + " (its TX queue stayed full)";
    }
  const auto report = [&](uint16_t port) {
    const StateTable& t = *learning_.at(port);
    return StateTableReport{port, t.size(), t.capacity(), t.ip_version()};
  };
  if (plan_.learn) out.state_table = report(plan_.learn->port);
  if (initiator_table_port_) out.initiator_table = report(*initiator_table_port_);
  return out;
}

}  // namespace xlp
