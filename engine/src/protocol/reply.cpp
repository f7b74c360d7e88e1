// Replies: the engine's limits and its plain reports (report.hpp) serialised.
#include "protocol/protocol.hpp"

#include <algorithm>
#include <optional>

#include "core/frame.hpp"

namespace xlp::protocol {

using nlohmann::json;

std::string version() { return std::to_string(kMajor) + "." + std::to_string(kMinor); }

json limits() {
  auto field = [](size_t offset, size_t size) { return json{{"offset", offset}, {"size", size}}; };
  json ip_headers = json::array();  // the IP header kinds as core/layers/ declares them
  for_each_ip_kind([&](auto kind) {
    using Kind = decltype(kind);
    ip_headers.push_back({{"name", Kind::kName}, {"version", Kind::kLayout.version}, {"bytes", Kind::kLayout.size}});
  });
  return {{"min_frame_size", {{"ipv4", min_frame_size(4)}, {"ipv6", min_frame_size(6)}}},
          {"max_frame_size", kMaxFrameSize},
          {"max_queues", kMaxQueues},
          {"max_tunnels", kMaxTunnels},
          {"ip_headers", ip_headers},
          {"max_flows", kMaxFlows},
          {"max_duration", kMaxDuration},
          {"stream_ids", kStreamIds},
          {"max_pattern", kMaxPattern},
          {"max_capture_frames", CapturePlan::kMaxFrames},
          {"tag", {{"magic", std::string(std::begin(kMagic), std::end(kMagic))},
                   {"size", kTagSize},
                   {"ce", field(kTagCe, 2)},
                   {"stream_id", field(kTagStream, 1)},
                   {"trial_tag", field(kTagTrial, 1)},
                   {"sequence", field(kTagSeq, kTagSeqSize)},
                   {"timestamp", field(kTagTimestamp, kTagTimestampSize)}}}};
}

json serialise(const HelloReport& r) {
  json ports = json::array();
  bool hw = false;
  for (const PortInfo& p : r.ports) {
    json port = {{"index", p.index}, {"name", p.name}, {"driver", p.driver}, {"bus", p.bus}, {"socket", p.socket},
                 {"mac", format_mac(p.mac.data())}, {"link_speed_mbps", p.link_speed_mbps},
                 {"link_up", p.link_up}, {"rx_queues", p.rx_queues}, {"tx_queues", p.tx_queues},
                 {"max_queues", p.max_queues}, {"rx_spread", p.rx_spread}, {"hw_timestamp", p.hw_timestamp}};
    port["link"] = {{"up", p.link_up}, {"speed_mbps", p.link_speed_mbps}, {"full_duplex", p.link_full_duplex},
                    {"autoneg", p.link_autoneg}, {"wait", p.link_wait}};
    port["descriptors"] = {{"rx", p.rx_descriptors}, {"tx", p.tx_descriptors}};
    port["mtu"] = p.mtu;
    port["max_frame"] = p.max_frame;
    port["rss"] = {{"offered", p.rss_offered}, {"reta_size", p.reta_size}, {"reta_share", p.reta_share}};
    port["flow_control"] = {{"found", p.flow_control_found}, {"now", p.flow_control}};
    if (!p.flow_control_error.empty()) port["flow_control"]["error"] = p.flow_control_error;
    port["promiscuous"] = p.promiscuous;
    port["allmulticast"] = p.allmulticast;
    port["xstats"] = {{"offered", p.xstats_offered}, {"drops", p.drop_counters}, {"pause", p.pause_counters}};
    port["timestamps"] = {{"rx_offload", p.hw_timestamp}, {"timesync", p.timesync}, {"read_clock", p.read_clock}};
    ports.push_back(port);
    hw = hw || p.hw_timestamp;
  }
  return {{"ok", true}, {"protocol", version()}, {"limits", limits()}, {"engine", r.engine}, {"dpdk", r.dpdk},
          {"tsc_hz", r.tsc_hz},
          {"lcores", {{"main", r.main_lcore}, {"workers", r.workers}}},
          {"timestamps", {{"software", "tsc"}, {"resolution_ns", 1e9 / double(r.tsc_hz)}, {"hardware", hw}}},
          {"ports", ports}};
}

namespace {

json counter_object(const std::vector<std::pair<std::string, uint64_t>>& counters) {
  json out = json::object();
  for (const auto& [name, count] : counters) out[name] = count;
  return out;
}

json serialise(const StreamReport& s) {
  json out = {{"kind", s.kind}, {"sent", s.sent}, {"received", s.received},
              {"duplicates", s.duplicates}, {"reordered", s.reordered},
              {"bad_length", s.bad_length}, {"bad_vlan", s.bad_vlan}, {"out_of_range", s.out_of_range},
              {"frame_size", s.frame_size}, {"rx_frame_size", s.rx_frame_size}};
  if (s.delay_ns) out["delay_ns"] = {{"min", s.delay_ns->min}, {"mean", s.delay_ns->mean}, {"max", s.delay_ns->max}};
  if (s.late) out["late"] = *s.late;
  if (s.wrong_ce) out["wrong_ce"] = *s.wrong_ce;
  if (s.tcp_unexpected) out["tcp_unexpected"] = *s.tcp_unexpected;
  if (s.mss_min) out["mss_min"] = *s.mss_min;
  if (s.header_faults)
    for (size_t v = 1; v < kVerdicts; ++v) out[kVerdictNames[v]] = (*s.header_faults)[v];
  if (s.df) {
    out["df_set"] = s.df->set;
    out["df_clear"] = s.df->clear;
  }
  if (s.tunnel_ecn) {
    out["tunnel_ecn_copied"] = s.tunnel_ecn->copied;
    out["tunnel_ecn_not_ect"] = s.tunnel_ecn->not_ect;
  }
  if (s.dns_faults) {
    json faults;
    for (size_t v = 1; v < dns::kReplyVerdicts; ++v) faults[dns::kReplyVerdictNames[v]] = (*s.dns_faults)[v];
    faults["upstream_due"] = s.dns_upstream_due;
    out["dns"] = faults;
  }
  if (s.delay) {
    const DelayDistribution& d = *s.delay;
    json buckets = json::array();
    for (const auto& b : d.buckets) buckets.push_back({b.low_ns, b.high_ns, b.count});
    out["delay"] = {{"count", d.count}, {"min_ns", d.min_ns}, {"max_ns", d.max_ns}, {"mean_ns", d.mean_ns},
                    {"p50_ns", d.p50_ns}, {"p99_ns", d.p99_ns}, {"p999_ns", d.p999_ns},
                    {"relative_error", d.relative_error}, {"buckets", buckets}};
  }
  if (s.ipdv)
    out["ipdv"] = {{"count", s.ipdv->count}, {"min_ns", s.ipdv->min_ns}, {"median_ns", s.ipdv->median_ns},
                   {"max_ns", s.ipdv->max_ns}};
  if (!s.sizes.empty()) {
    json sizes = json::array();
    for (const SizeReport& z : s.sizes)
      sizes.push_back({{"frame_size", z.frame_size}, {"rx_frame_size", z.rx_frame_size}, {"sent", z.sent},
                       {"received", z.received}, {"bad_length", z.bad_length}});
    out["sizes"] = sizes;
  }
  if (s.tagged) {
    json delays = json::array();
    for (const auto& d : s.tagged->delays_ns) delays.push_back(d ? json(*d) : json());
    out["tagged"] = {{"count", s.tagged->delays_ns.size()}, {"lost", s.tagged->lost}, {"delays_ns", delays}};
  }
  return out;
}

}  // namespace

json serialise(const TrialReport& r) {
  json flows = json::array();
  for (const FlowReport& f : r.flows) {
    json streams = json::array();
    for (const StreamReport& s : f.streams) streams.push_back(serialise(s));
    json queues = json::array();
    for (const QueueSendReport& q : f.queues)
    {
      queues.push_back({{"queue", q.queue}, {"planned", q.planned}, {"sent", q.sent}, {"send_time", q.send_time},
                        {"max_lag_us", q.max_lag_us}});
      if (q.lagged) queues.back()["lagged"] = *q.lagged;
    }
    flows.push_back({{"name", f.name}, {"rate", f.rate}, {"planned", f.planned}, {"sent", f.sent},
                     {"received", f.received}, {"send_time", f.send_time}, {"max_lag_us", f.max_lag_us},
                     {"streams", streams}, {"queues", queues}});
    if (f.lagged) flows.back()["lagged"] = *f.lagged;
    if (f.losses) {
      const auto period = [](const LossPeriod& p) {
        const auto optional = [](const std::optional<double>& v) { return v ? json(*v) : json(); };
        return json{{"first_lost_s", p.first_lost_s}, {"last_lost_s", p.last_lost_s}, {"frames", p.frames},
                    {"last_before_s", optional(p.last_before_s)}, {"first_after_s", optional(p.first_after_s)}};
      };
      json first = json::array(), last = json::array();
      for (const LossPeriod& p : f.losses->first) first.push_back(period(p));
      for (const LossPeriod& p : f.losses->last) last.push_back(period(p));
      flows.back()["losses"] = {{"periods", f.losses->periods}, {"lost", f.losses->lost}, {"first", first},
                                {"last", last}, {"longest", f.losses->longest ? period(*f.losses->longest) : json()}};
    }
  }
  json ports = json::array();
  for (const PortReport& p : r.ports) {
    json queues = json::array();
    for (const QueueReceiveReport& q : p.queues)
      queues.push_back({{"queue", q.queue}, {"test_frames", q.test_frames}, {"foreign", q.foreign}});
    ports.push_back({{"index", p.index}, {"foreign", p.foreign}, {"fragmented", p.fragmented},
                     {"neighbor_replies", p.neighbor_replies},
                     {"queues", queues},
                     {"drops", {{"imissed", p.drops.imissed}, {"rx_nombuf", p.drops.rx_nombuf},
                                {"ierrors", p.drops.ierrors}, {"oerrors", p.drops.oerrors}, {"tx_lost", p.drops.tx_lost},
                                {"queue_errors", p.drops.queue_errors}}}});
    if (!p.drops.kernel_interface.empty())
      ports.back()["drops"]["kernel"] = {{"interface", p.drops.kernel_interface},
                                         {"rx_dropped", p.drops.kernel_rx_dropped}};
    if (p.drops.xsk)
      ports.back()["drops"]["xsk"] = {{"rx_dropped", p.drops.xsk->rx_dropped}, {"rx_full", p.drops.xsk->rx_full},
                                      {"rx_invalid", p.drops.xsk->rx_invalid},
                                      {"fill_ring_empty", p.drops.xsk->fill_ring_empty}};
    // Only counters that grew: a NIC has dozens, and a trial report lists what happened.
    if (!p.drops.xstats.empty()) ports.back()["drops"]["xstats"] = counter_object(p.drops.xstats);
    if (!p.pause_received.empty()) ports.back()["pause_received"] = counter_object(p.pause_received);
    if (p.link_down) ports.back()["link_down"] = p.link_down;
    if (p.dns)
      ports.back()["dns"] = {{"answered", p.dns->answered}, {"unanswered", p.dns->unanswered}, {"unsent", p.dns->unsent}};
    if (p.capture)
      ports.back()["capture"] = {{"frames", p.capture->frames}, {"missed", p.capture->missed},
                                 {"bytes", p.capture->pcapng.size()}, {"pcapng", base64(p.capture->pcapng)}};
  }
  json out = {{"ok", true}, {"valid", r.valid},
              {"invalid_reason", r.valid ? json() : json(r.invalid_reason)},
              {"elapsed", r.elapsed}, {"flows", flows}, {"ports", ports}};
  for (const auto& [key, table] : {std::pair{"state_table", &r.state_table}, {"initiator_table", &r.initiator_table}})
    if (*table)
      out[key] = {{"port", (*table)->port}, {"entries", (*table)->entries}, {"capacity", (*table)->capacity},
                  {"ip_version", (*table)->ip_version}};
  return out;
}

std::string base64(const std::string& bytes) {
  static constexpr char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t v = 0;
    for (size_t k = 0; k < 3; ++k) v = v << 8 | (k < n ? uint8_t(bytes[i + k]) : 0);
    for (size_t k = 0; k < 4; ++k) out += k <= n ? kDigits[(v >> (18 - 6 * k)) & 63] : '=';
  }
  return out;
}

json serialise(const ProgressReport& r) {
  json flows = json::array();
  for (const FlowProgress& f : r.flows)
    flows.push_back({{"name", f.name}, {"sent", f.sent}, {"received", f.received}});
  return {{"event", "progress"}, {"elapsed", r.elapsed}, {"flows", flows}};
}

}  // namespace xlp::protocol
