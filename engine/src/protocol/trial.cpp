// The trial request (op "trial", docs/protocol.md): its settings and flows, each flow's streams,
// TCP segments or DNS queries parsed by the parsers of parsers.hpp.
#include "protocol/protocol.hpp"

#include "core/errors.hpp"
#include "protocol/json_read.hpp"
#include "protocol/parsers.hpp"

namespace xlp::protocol {

using nlohmann::json;
using namespace detail;

TrialPlan parse_trial(const json& req, uint16_t port_count) {
  known_keys(req, "", {"id", "op", "duration", "timeout", "progress_interval", "seed", "finish_early", "delay",
                       "learn", "losses", "capture", "max_lag", "dns", "flows"});
  TrialPlan plan;
  plan.duration = number_in(req, "", "duration", 1e-3, kMaxDuration);
  plan.timeout = number_in(req, "", "timeout", 0, 3600, 2.0);
  plan.progress_interval = number_in(req, "", "progress_interval", 0, 3600, 1.0);
  plan.seed = integer_in(req, "", "seed", 0, INT64_MAX, 1);
  plan.finish_early = flag(req, "", "finish_early", plan.finish_early);
  plan.losses = flag(req, "", "losses", plan.losses);
  if (req.contains("max_lag")) plan.max_lag = number_in(req, "", "max_lag", 0, 60);
  if (req.contains("capture")) {
    const json& c = req["capture"];
    known_keys(c, "capture.", {"frames", "stride", "snaplen", "foreign"});
    CapturePlan cap;
    cap.frames = uint32_t(integer_in(c, "capture.", "frames", 1, CapturePlan::kMaxFrames, cap.frames));
    cap.stride = uint32_t(integer_in(c, "capture.", "stride", 1, 1'000'000, cap.stride));
    cap.snaplen = uint32_t(integer_in(c, "capture.", "snaplen", 64, 65535, cap.snaplen));
    cap.foreign = flag(c, "capture.", "foreign", cap.foreign);
    plan.capture = cap;
  }
  if (req.contains("delay")) {
    const json& d = req["delay"];
    known_keys(d, "delay.", {"frame_timeout", "histogram", "ipdv", "tagged", "tagged_start"});
    plan.delay.frame_timeout = number_in(d, "delay.", "frame_timeout", 0, 3600, 0.0);
    for (auto [key, target] : {std::pair{"histogram", &plan.delay.histogram}, {"ipdv", &plan.delay.ipdv}})
      *target = flag(d, "delay.", key, *target);
    plan.delay.tagged = integer_in(d, "delay.", "tagged", 0, 10'000'000, 0);
    plan.delay.tagged_start = number_in(d, "delay.", "tagged_start", 0, plan.duration, 0.0);
  }
  if (req.contains("dns")) plan.dns = parse_dns(req["dns"], port_count);
  const json& flows = require(req, "", "flows");
  if (!flows.is_array() || flows.empty() || flows.size() > kMaxFlows)
    bad("flows", flows.is_array() ? json(flows.size()) : flows,
        "must be a list of 1.." + std::to_string(kMaxFlows) + " flows");
  if (port_count == 0) throw ExecutionFailure("the engine has no ports");
  for (size_t i = 0; i < flows.size(); ++i) {
    const json& f = flows[i];
    const std::string path = "flows[" + std::to_string(i) + "].";
    known_keys(f, path, {"name", "tx_port", "rx_port", "rate", "rate_steps", "frames", "mix", "foreground",
                         "background", "streams", "pattern", "from_table", "tcp", "dns"});
    FlowPlan flow;
    flow.name = f.contains("name") && f["name"].is_string() ? f["name"].get<std::string>()
                                                            : "flow" + std::to_string(i);
    flow.tx_port = uint16_t(integer_in(f, path, "tx_port", 0, port_count - 1));
    flow.rx_port = uint16_t(integer_in(f, path, "rx_port", 0, port_count - 1));
    // With rate steps the rate before the first step may be 0: a delayed start (RFC 8219
    // §10.2.2, flows started one after another): the flow sends nothing before its first step.
    flow.rate = integer_in(f, path, "rate", f.contains("rate_steps") ? 0 : 1, 1'000'000'000);
    parse_streams(f, path, flow);
    if (f.contains("rate_steps")) {
      const json& steps = f["rate_steps"];
      if (!steps.is_array() || steps.empty() || steps.size() > 16)
        bad(path + "rate_steps", steps, "must be a list of 1..16 {at, rate} steps");
      double after = 0;
      for (size_t k = 0; k < steps.size(); ++k) {
        const std::string spath = path + "rate_steps[" + std::to_string(k) + "].";
        known_keys(steps[k], spath, {"at", "rate"});
        FlowPlan::RateStep step;
        step.at = number_in(steps[k], spath, "at", 0, plan.duration);
        if (step.at <= after)
          bad(spath + "at", step.at, "must be after " + json(after).dump() + " s and before duration = " +
              json(plan.duration).dump() + " s");
        step.rate = integer_in(steps[k], spath, "rate", 1, 1'000'000'000);
        flow.rate_steps.push_back(step);
        after = step.at;
      }
      if (after >= plan.duration)
        bad(path + "rate_steps", steps, "every step must come before duration = " + json(plan.duration).dump() + " s");
    }
    if (f.contains("frames")) {
      flow.frames = integer_in(f, path, "frames", 1, uint64_t(1) << 40);
      // The last frame is due (frames - 1) / rate after the start (or later, by the rate
      // steps): it must fall in the trial.
      const std::vector<RateSegment> segments = flow.segments();
      const RateSegment& last = segments.back();
      const uint64_t most = flow.frames <= last.first_frame
                                ? flow.frames
                                : last.first_frame + uint64_t((plan.duration - last.start_s) * double(last.rate)) + 1;
      if (flow.frames > most)
        bad(path + "frames", flow.frames,
            segments.size() == 1 ? "must be at most duration x rate + 1 = " + std::to_string(most)
                                 : "must be at most " + std::to_string(most) + " (due by duration at the rate steps, + 1)");
    }
    if (f.contains("from_table")) {
      const json& t = f["from_table"];
      known_keys(t, path + "from_table.", {"port", "selection"});
      FromTable from;
      from.port = uint16_t(integer_in(t, path + "from_table.", "port", 0, port_count - 1));
      const std::string sel = t.contains("selection") ? text(t, path + "from_table.", "selection") : "random";
      if (sel == "fixed") from.selection = EntrySelector::Mode::kFixed;
      else if (sel == "increasing") from.selection = EntrySelector::Mode::kIncreasing;
      else if (sel == "decreasing") from.selection = EntrySelector::Mode::kDecreasing;
      else if (sel == "random") from.selection = EntrySelector::Mode::kRandom;
      else bad(path + "from_table.selection", sel, "must be one of fixed, increasing, decreasing, random");
      if (flow.streams.size() > 1)
        bad(path + "from_table", t, "a flow built from the state table has one stream (no background traffic, no IMIX)");
      if (!flow.streams[0].vary.empty())
        bad(path + "from_table", t, "its addresses and ports come from the state table: no vary fields");
      flow.from_table = from;
    }
    if (flow.planned_frames(plan.duration) == 0)
      bad(path + "rate", flow.rate, "sends no frame in " + json(plan.duration).dump() + " s");
    if (flow.planned_frames(plan.duration) > (uint64_t(1) << 40))
      bad(path + "rate", flow.rate, "rate x duration must stay below 2^40 frames");
    if (plan.delay.tagged > 0) {
      // RFC 8219 §7.2: the tagged frames are sent after tagged_start; there must be enough.
      const uint64_t fg = flow.frames_of(0, flow.planned_frames(plan.duration));
      const uint64_t after = fg - tagged_first(fg, plan);
      if (plan.delay.tagged > after)
        bad("delay.tagged", plan.delay.tagged,
            "must be at most " + std::to_string(after) + ": flow " + flow.name + " sends only that many "
            "foreground frames after delay.tagged_start (rate x (duration - tagged_start))");
    }
    if (f.contains("tcp")) make_tcp_flow(f["tcp"], path, flow);
    if (f.contains("dns")) {
      if (flow.tcp || flow.from_table) bad(path + "dns", f["dns"], "not with tcp or from_table");
      make_dns_flow(f["dns"], path, plan, flow);
    }
    plan.flows.push_back(std::move(flow));
  }
  // The flows that answer TCP segments, after the request's (whose indices stay as requested).
  for (size_t i = 0, n = plan.flows.size(); i < n; ++i)
    if (plan.flows[i].tcp) add_answering_flows(flows[i]["tcp"], "flows[" + std::to_string(i) + "].tcp.", i, plan);
  if (req.contains("learn")) {
    const json& l = req["learn"];
    known_keys(l, "learn.", {"port", "flow", "table_size", "ip_version"});
    LearnPlan learn;
    learn.port = uint16_t(integer_in(l, "learn.", "port", 0, port_count - 1));
    learn.flow = size_t(integer_in(l, "learn.", "flow", 0, plan.flows.size() - 1));
    const json& version = require(l, "learn.", "ip_version");
    if (version != 4 && version != 6) bad("learn.ip_version", version, "must be 4 or 6");
    learn.ip_version = version.get<int>();
    learn.table_size = integer_in(l, "learn.", "table_size", 1, uint64_t(1) << 36);
    if (plan.flows[learn.flow].rx_port != learn.port)
      bad("learn.port", learn.port, "must be the rx_port of flow " + plan.flows[learn.flow].name + " (" +
                                        std::to_string(plan.flows[learn.flow].rx_port) + ")");
    plan.learn = learn;
  }
  return plan;
}

}  // namespace xlp::protocol
