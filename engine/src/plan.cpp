#include "plan.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace xlp {

namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& key, const json& value, const std::string& allowed) {
  throw std::invalid_argument(key + " = " + value.dump() + ": " + allowed);
}

const json& require(const json& obj, const std::string& path, const char* key) {
  if (!obj.is_object() || !obj.contains(key))
    throw std::invalid_argument(path + key + ": missing");
  return obj.at(key);
}

double number_in(const json& obj, const std::string& path, const char* key, double lo, double hi,
                 std::optional<double> dflt = std::nullopt) {
  if (dflt && !obj.contains(key)) return *dflt;
  const json& v = require(obj, path, key);
  if (!v.is_number() || v.get<double>() < lo || v.get<double>() > hi)
    bad(path + key, v, "must be a number in " + json(lo).dump() + ".." + json(hi).dump());
  return v.get<double>();
}

uint64_t integer_in(const json& obj, const std::string& path, const char* key, uint64_t lo,
                    uint64_t hi, std::optional<uint64_t> dflt = std::nullopt) {
  if (dflt && !obj.contains(key)) return *dflt;
  const json& v = require(obj, path, key);
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<uint64_t>() < lo ||
      v.get<uint64_t>() > hi)
    bad(path + key, v, "must be an integer in " + std::to_string(lo) + ".." + std::to_string(hi));
  return v.get<uint64_t>();
}

std::string text(const json& obj, const std::string& path, const char* key) {
  const json& v = require(obj, path, key);
  if (!v.is_string()) bad(path + key, v, "must be a string");
  return v.get<std::string>();
}

template <class Parse>
auto parsed(const json& obj, const std::string& path, const char* key, Parse parse) {
  std::string s = text(obj, path, key);
  try {
    return parse(s);
  } catch (const std::invalid_argument& e) {
    bad(path + key, s, e.what());
  }
}

VarySpec parse_vary(const json& j, const std::string& path, int ip_version) {
  VarySpec v;
  const std::string field = text(j, path, "field");
  static const std::pair<const char*, VarySpec::Field> kFields[] = {
      {"src_port", VarySpec::Field::kSrcPort}, {"dst_port", VarySpec::Field::kDstPort},
      {"src_ip", VarySpec::Field::kSrcIp}, {"dst_ip", VarySpec::Field::kDstIp}};
  bool known = false;
  for (auto& [name, f] : kFields)
    if (field == name) { v.field = f; known = true; }
  if (!known) bad(path + "field", field, "must be one of src_port, dst_port, src_ip, dst_ip");
  const std::string mode = text(j, path, "mode");
  if (mode == "increasing") v.mode = VaryMode::kIncreasing;
  else if (mode == "decreasing") v.mode = VaryMode::kDecreasing;
  else if (mode == "random") v.mode = VaryMode::kRandom;
  else if (mode == "enumerate") v.mode = VaryMode::kEnumerate;
  else bad(path + "mode", mode, "must be one of increasing, decreasing, random, enumerate");
  const bool is_ip = v.field == VarySpec::Field::kSrcIp || v.field == VarySpec::Field::kDstIp;
  const uint32_t addr_len = ip_version == 4 ? 4 : 16;
  v.bits = uint32_t(integer_in(j, path, "bits", 8, 16, 16));
  if (v.bits != 8 && v.bits != 16) bad(path + "bits", v.bits, "must be 8 or 16");
  if (!is_ip && v.bits != 16) bad(path + "bits", v.bits, "must be 16 for a port");
  if (is_ip) {
    v.offset = uint32_t(integer_in(j, path, "offset", 0, addr_len - v.bits / 8));
    if (v.bits == 16 && v.offset % 2) bad(path + "offset", v.offset, "must be even for a 16-bit field");
  }
  const uint32_t top = (1u << v.bits) - 1;
  v.min = uint32_t(integer_in(j, path, "min", 0, top));
  v.max = uint32_t(integer_in(j, path, "max", v.min, top));
  v.name = path.substr(0, path.size() - 1);
  return v;
}

StreamPlan parse_stream(const json& j, const std::string& path) {
  StreamPlan s;
  const json& version = require(j, path, "ip_version");
  if (version != 4 && version != 6) bad(path + "ip_version", version, "must be 4 or 6");
  s.spec.ip_version = version.get<int>();
  const int v = s.spec.ip_version;
  s.spec.src_mac = parsed(j, path, "src_mac", parse_mac);
  s.spec.dst_mac = parsed(j, path, "dst_mac", parse_mac);
  s.spec.src_ip = parsed(j, path, "src_ip", [v](const std::string& t) { return parse_ip(t, v); });
  s.spec.dst_ip = parsed(j, path, "dst_ip", [v](const std::string& t) { return parse_ip(t, v); });
  s.spec.src_port = uint16_t(integer_in(j, path, "src_port", 0, 65535, 0xC020));
  s.spec.dst_port = uint16_t(integer_in(j, path, "dst_port", 0, 65535, 7));
  s.spec.frame_size = uint32_t(integer_in(j, path, "frame_size", min_frame_size(v), kMaxFrameSize));
  s.rx_frame_size = uint32_t(integer_in(j, path, "rx_frame_size", 64, kMaxFrameSize, s.spec.frame_size));
  if (j.contains("vary")) {
    const json& vary = j["vary"];
    if (!vary.is_array() || vary.size() > kMaxFields)
      bad(path + "vary", vary, "must be a list of at most " + std::to_string(kMaxFields) + " fields");
    std::vector<std::pair<VarySpec::Field, uint32_t>> words;  // fields must not share a word
    for (size_t i = 0; i < vary.size(); ++i) {
      VarySpec v = parse_vary(vary[i], path + "vary[" + std::to_string(i) + "].", s.spec.ip_version);
      const auto word = std::make_pair(v.field, v.offset & ~1u);
      for (size_t k = 0; k < words.size(); ++k)
        if (words[k] == word)
          throw std::invalid_argument(v.name + " collides with " + s.vary[k].name +
                                      ": both change the same 16 bits of the header");
      words.push_back(word);
      s.vary.push_back(v);
    }
  }
  const bool enumerated = std::any_of(s.vary.begin(), s.vary.end(),
                                      [](const VarySpec& v) { return v.mode == VaryMode::kEnumerate; });
  if (j.contains("enumerate")) {
    const std::string order = text(j, path, "enumerate");
    if (order == "increasing") s.enumerate = TupleEnumerator::Order::kIncreasing;
    else if (order == "decreasing") s.enumerate = TupleEnumerator::Order::kDecreasing;
    else if (order == "random") s.enumerate = TupleEnumerator::Order::kRandom;
    else bad(path + "enumerate", order, "must be one of increasing, decreasing, random");
    if (!enumerated) bad(path + "enumerate", order, "needs vary fields with mode \"enumerate\"");
  } else if (enumerated) {
    throw std::invalid_argument(path + "enumerate: missing (the order of the fields with mode \"enumerate\")");
  }
  return s;
}

}  // namespace

std::vector<FieldSpec> resolve_fields(const StreamPlan& stream, const FrameTemplate& tmpl) {
  std::vector<FieldSpec> out;
  const bool v4 = stream.spec.ip_version == 4;
  for (const VarySpec& v : stream.vary) {
    FieldSpec f{v.name, 0, 0, false, false, v.mode, v.min, v.max};
    switch (v.field) {
      case VarySpec::Field::kSrcPort: f.word_offset = tmpl.udp_offset; break;
      case VarySpec::Field::kDstPort: f.word_offset = uint16_t(tmpl.udp_offset + 2); break;
      case VarySpec::Field::kSrcIp:
      case VarySpec::Field::kDstIp: {
        const bool src = v.field == VarySpec::Field::kSrcIp;
        const uint32_t addr = tmpl.ip_offset + (v4 ? (src ? 12 : 16) : (src ? 8 : 24));
        const uint32_t byte = addr + v.offset;
        f.word_offset = uint16_t(byte & ~1u);
        f.byte_only = v.bits == 8;
        f.shift = uint8_t(f.byte_only && byte % 2 == 0 ? 8 : 0);
        f.in_ipv4_header = v4;
        break;
      }
    }
    out.push_back(f);
  }
  return out;
}

uint64_t tagged_first(uint64_t foreground_frames, const TrialPlan& plan) {
  return uint64_t(std::ceil(double(foreground_frames) * plan.delay.tagged_start / plan.duration));
}

uint64_t FlowPlan::planned_frames(double duration) const {
  return frames ? frames : uint64_t(std::llround(double(rate) * duration));
}

TrialPlan parse_trial(const json& req, uint16_t port_count) {
  TrialPlan plan;
  plan.duration = number_in(req, "", "duration", 1e-3, 1e6);
  plan.timeout = number_in(req, "", "timeout", 0, 3600, 2.0);
  plan.progress_interval = number_in(req, "", "progress_interval", 0, 3600, 1.0);
  plan.seed = integer_in(req, "", "seed", 0, INT64_MAX, 1);
  if (req.contains("finish_early")) {
    if (!req["finish_early"].is_boolean()) bad("finish_early", req["finish_early"], "must be true or false");
    plan.finish_early = req["finish_early"].get<bool>();
  }
  if (req.contains("delay")) {
    const json& d = req["delay"];
    if (!d.is_object()) bad("delay", d, "must be an object {frame_timeout, histogram, ipdv, tagged, tagged_start}");
    plan.delay.frame_timeout = number_in(d, "delay.", "frame_timeout", 0, 3600, 0.0);
    for (auto [key, target] : {std::pair{"histogram", &plan.delay.histogram}, {"ipdv", &plan.delay.ipdv}})
      if (d.contains(key)) {
        if (!d[key].is_boolean()) bad(std::string("delay.") + key, d[key], "must be true or false");
        *target = d[key].get<bool>();
      }
    plan.delay.tagged = integer_in(d, "delay.", "tagged", 0, 10'000'000, 0);
    plan.delay.tagged_start = number_in(d, "delay.", "tagged_start", 0, plan.duration, 0.0);
  }
  const json& flows = require(req, "", "flows");
  if (!flows.is_array() || flows.empty() || flows.size() > 127)
    bad("flows", flows.is_array() ? json(flows.size()) : flows, "must be a list of 1..127 flows");
  if (port_count == 0) throw std::invalid_argument("the engine has no ports");
  for (size_t i = 0; i < flows.size(); ++i) {
    const json& f = flows[i];
    const std::string path = "flows[" + std::to_string(i) + "].";
    FlowPlan flow;
    flow.name = f.contains("name") && f["name"].is_string() ? f["name"].get<std::string>()
                                                            : "flow" + std::to_string(i);
    flow.tx_port = uint16_t(integer_in(f, path, "tx_port", 0, port_count - 1));
    flow.rx_port = uint16_t(integer_in(f, path, "rx_port", 0, port_count - 1));
    flow.rate = integer_in(f, path, "rate", 1, 1'000'000'000);
    if (f.contains("mix")) {
      flow.mix_n = uint32_t(integer_in(f["mix"], path + "mix.", "n", 1, 1000));
      flow.mix_m = uint32_t(integer_in(f["mix"], path + "mix.", "m", 0, flow.mix_n));
    }
    flow.foreground = parse_stream(require(f, path, "foreground"), path + "foreground.");
    if (flow.mix_m < flow.mix_n) {
      flow.background = parse_stream(require(f, path, "background"), path + "background.");
    }
    if (f.contains("frames")) {
      flow.frames = integer_in(f, path, "frames", 1, uint64_t(1) << 40);
      // The last frame is due (frames - 1) / rate after the start: it must fall in the trial.
      if (double(flow.frames - 1) / double(flow.rate) > plan.duration)
        bad(path + "frames", flow.frames, "must be at most duration x rate + 1 = " +
            std::to_string(uint64_t(plan.duration * double(flow.rate)) + 1));
    }
    if (f.contains("from_table")) {
      const json& t = f["from_table"];
      FromTable from;
      from.port = uint16_t(integer_in(t, path + "from_table.", "port", 0, port_count - 1));
      const std::string sel = t.contains("selection") ? text(t, path + "from_table.", "selection") : "random";
      if (sel == "fixed") from.selection = EntrySelector::Mode::kFixed;
      else if (sel == "increasing") from.selection = EntrySelector::Mode::kIncreasing;
      else if (sel == "decreasing") from.selection = EntrySelector::Mode::kDecreasing;
      else if (sel == "random") from.selection = EntrySelector::Mode::kRandom;
      else bad(path + "from_table.selection", sel, "must be one of fixed, increasing, decreasing, random");
      if (flow.background) bad(path + "from_table", t, "a flow built from the state table has no background traffic");
      if (!flow.foreground.vary.empty())
        bad(path + "from_table", t, "its addresses and ports come from the state table: no vary fields");
      flow.from_table = from;
    }
    if (flow.planned_frames(plan.duration) == 0)
      bad(path + "rate", flow.rate, "sends no frame in " + json(plan.duration).dump() + " s");
    if (flow.planned_frames(plan.duration) > (uint64_t(1) << 40))
      bad(path + "rate", flow.rate, "rate x duration must stay below 2^40 frames");
    if (plan.delay.tagged > 0) {
      // RFC 8219 §7.2: the tagged frames are sent after tagged_start; there must be enough.
      const uint64_t fg = flow.foreground_frames(flow.planned_frames(plan.duration));
      const uint64_t after = fg - tagged_first(fg, plan);
      if (plan.delay.tagged > after)
        bad("delay.tagged", plan.delay.tagged,
            "must be at most " + std::to_string(after) + ": flow " + flow.name + " sends only that many "
            "foreground frames after delay.tagged_start (rate x (duration - tagged_start))");
    }
    plan.flows.push_back(std::move(flow));
  }
  if (req.contains("learn")) {
    const json& l = req["learn"];
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

}  // namespace xlp
