// A flow's streams: each stream's headers, varying fields, VLAN tags and receiving checks, and
// the flow's frame pattern (docs/protocol.md).
#include "protocol/parsers.hpp"

#include <algorithm>
#include <optional>

#include "protocol/json_read.hpp"

namespace xlp::protocol::detail {

namespace {

// A varying field of a stream's `vary` (how it varies: `mode`), or of its `rx.vary` (only where
// and in which range: `mode` not needed).
VarySpec parse_vary(const json& j, const std::string& path, int ip_version, bool sent = true) {
  known_keys(j, path, {"field", "mode", "min", "max", "offset", "bits"});
  VarySpec v;
  const std::string field = text(j, path, "field");
  static const std::pair<const char*, VarySpec::Field> kFields[] = {
      {"src_port", VarySpec::Field::kSrcPort}, {"dst_port", VarySpec::Field::kDstPort},
      {"src_ip", VarySpec::Field::kSrcIp}, {"dst_ip", VarySpec::Field::kDstIp}};
  bool known = false;
  for (auto& [name, f] : kFields)
    if (field == name) { v.field = f; known = true; }
  if (!known) bad(path + "field", field, "must be one of src_port, dst_port, src_ip, dst_ip");
  const std::string mode = sent || j.contains("mode") ? text(j, path, "mode") : "random";
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

}  // namespace

VlanStack parse_vlan(const json& obj, const std::string& path, const char* key, const VlanStack& dflt) {
  if (!obj.contains(key)) return dflt;
  const json& v = obj.at(key);
  const std::string allowed = "must be a list of at most " + std::to_string(kMaxVlanTags) +
                              " VLAN IDs in 1.." + std::to_string(kMaxVlanId) + ", outermost first";
  if (!v.is_array() || v.size() > kMaxVlanTags) bad(path + key, v, allowed);
  VlanStack out;
  for (const json& id : v) {
    if (!id.is_number_integer() || id.get<int64_t>() < 1 || id.get<int64_t>() > kMaxVlanId) bad(path + key, v, allowed);
    out.ids[out.count++] = uint16_t(id.get<int64_t>());
  }
  return out;
}

namespace {

// A `tunnel` object's header version (stream and rx alike): 6 (RFC 2473) unless it says 4.
int tunnel_version(const json& tunnel, const std::string& path) {
  const int version = int(integer_in(tunnel, path, "version", 4, 6, 6));
  if (version != 4 && version != 6) bad(path + "version", version, "must be 4 or 6");
  return version;
}

// The tunnel headers `j.tunnel` names (stream and rx alike): one object, or a list of them
// nested outermost first, 1..kMaxTunnels; each object with its path ("tunnel." or
// "tunnel[i].") to `each`, which checks its keys (`keys` names them in the message).
template <typename Each>
void for_each_tunnel(const json& j, const std::string& path, const std::string& keys, Each each) {
  const json& tunnel = j["tunnel"];
  const std::string allowed = "must be an object " + keys + ", or a list of 1.." + std::to_string(kMaxTunnels) +
                              " of them (nested tunnels, outermost first)";
  if (tunnel.is_object()) return each(tunnel, path + "tunnel.");
  if (!tunnel.is_array() || tunnel.empty() || tunnel.size() > kMaxTunnels) bad(path + "tunnel", tunnel, allowed);
  for (size_t i = 0; i < tunnel.size(); ++i) {
    if (!tunnel[i].is_object()) bad(path + "tunnel", tunnel, allowed);
    each(tunnel[i], path + "tunnel[" + std::to_string(i) + "].");
  }
}

// A stream's `rx` (docs/protocol.md "Header checks"): what the DUT must have written.
RxSpec parse_rx(const json& j, const std::string& path) {
  if (!j.is_object()) bad(path.substr(0, path.size() - 1), j, "must be an object {ip_version, ...}");
  known_keys(j, path, {"ip_version", "src_ip", "dst_ip", "src_port", "dst_port", "tunnel", "ttl", "tos", "ecn", "df",
                       "count_df", "count_tunnel_ecn", "flow_label", "dst_mac", "src_mac", "checksums", "ipv6_zero_udp_checksum", "vary"});
  RxSpec rx;
  const json& version = require(j, path, "ip_version");
  if (version != 4 && version != 6) bad(path + "ip_version", version, "must be 4 or 6");
  const int v = rx.ip_version = version.get<int>();
  const auto address = [&](const json& obj, const std::string& p, const char* key, int version) {
    return obj.contains(key) ? std::optional(parsed(obj, p, key, [version](const std::string& t) { return parse_ip(t, version); }))
                             : std::nullopt;
  };
  rx.src_ip = address(j, path, "src_ip", v);
  rx.dst_ip = address(j, path, "dst_ip", v);
  if (j.contains("src_port")) rx.src_port = uint16_t(integer_in(j, path, "src_port", 0, 65535));
  if (j.contains("dst_port")) rx.dst_port = uint16_t(integer_in(j, path, "dst_port", 0, 65535));
  if (j.contains("tunnel"))
    for_each_tunnel(j, path, "{version, src_ip, dst_ip, carries_tos} (each optional)",
                    [&](const json& tunnel, const std::string& tpath) {
                      known_keys(tunnel, tpath, {"version", "src_ip", "dst_ip", "carries_tos"});
                      RxTunnel& t = rx.tunnels.emplace_back();
                      t.version = tunnel_version(tunnel, tpath);
                      t.src = address(tunnel, tpath, "src_ip", t.version);
                      t.dst = address(tunnel, tpath, "dst_ip", t.version);
                      t.carries_tos = flag(tunnel, tpath, "carries_tos", false);
                    });
  if (j.contains("ttl")) {
    const json& ttl = j["ttl"];
    const std::string allowed = "must be a TTL 0..255 or a range [low, high] of them";
    const auto one = [&](const json& n) {
      if (!n.is_number_integer() || n.get<int64_t>() < 0 || n.get<int64_t>() > 255) bad(path + "ttl", ttl, allowed);
      return uint8_t(n.get<int64_t>());
    };
    if (ttl.is_array()) {
      if (ttl.size() != 2) bad(path + "ttl", ttl, allowed);
      rx.ttl = {one(ttl[0]), one(ttl[1])};
      if (rx.ttl->first > rx.ttl->second) bad(path + "ttl", ttl, allowed + " (low <= high)");
    } else {
      rx.ttl = {one(ttl), one(ttl)};
    }
  }
  if (j.contains("tos")) rx.tos = uint8_t(integer_in(j, path, "tos", 0, 255));
  if (j.contains("ecn")) {
    const json& ecn = j["ecn"];
    const std::string allowed = "must be a list of ECN codepoints 0..3 (Not-ECT, ECT(1), ECT(0), CE), each once";
    if (!ecn.is_array() || ecn.empty()) bad(path + "ecn", ecn, allowed);
    uint8_t set = 0;
    for (const json& e : ecn) {
      if (!e.is_number_integer() || e.get<int64_t>() < 0 || e.get<int64_t>() > 3 || (set >> e.get<int64_t>() & 1))
        bad(path + "ecn", ecn, allowed);
      set = uint8_t(set | 1u << e.get<int64_t>());
    }
    rx.ecn = set;
  }
  if (j.contains("df")) {
    rx.df = flag(j, path, "df", false);
    if (v != 4) bad(path + "df", j["df"], "only for IPv4 arrivals (ip_version 4)");
  }
  rx.count_tunnel_ecn = flag(j, path, "count_tunnel_ecn", false);
  if (rx.count_tunnel_ecn && rx.tunnels.empty())
    bad(path + "count_tunnel_ecn", j["count_tunnel_ecn"], "only for frames that arrive in a tunnel (rx.tunnel)");
  rx.count_df = flag(j, path, "count_df", false);
  if (rx.count_df && (v != 4 || rx.df))
    bad(path + "count_df", j["count_df"], "only for IPv4 arrivals (ip_version 4) without df");
  if (j.contains("dst_mac")) rx.dst_mac = parsed(j, path, "dst_mac", parse_mac);
  if (j.contains("src_mac")) rx.src_mac = parsed(j, path, "src_mac", parse_mac);
  if (j.contains("flow_label")) {
    rx.flow_label = uint32_t(integer_in(j, path, "flow_label", 0, kMaxFlowLabel));
    if (v != 6) bad(path + "flow_label", j["flow_label"], "only for IPv6 arrivals (ip_version 6)");
  }
  rx.checksums = flag(j, path, "checksums", rx.checksums);
  rx.ipv6_zero_udp_checksum = flag(j, path, "ipv6_zero_udp_checksum", rx.ipv6_zero_udp_checksum);
  if (j.contains("vary")) {
    const json& vary = j["vary"];
    if (!vary.is_array() || vary.size() > kMaxFields)
      bad(path + "vary", vary, "must be a list of at most " + std::to_string(kMaxFields) + " fields");
    for (size_t i = 0; i < vary.size(); ++i) {
      const VarySpec w = parse_vary(vary[i], path + "vary[" + std::to_string(i) + "].", v, false);
      static constexpr FieldRole kRoles[] = {FieldRole::kSrcPort, FieldRole::kDstPort, FieldRole::kSrcAddress,
                                             FieldRole::kDstAddress};  // by VarySpec::Field
      rx.vary.push_back({kRoles[size_t(w.field)], w.offset, w.bits, w.min, w.max});
    }
  }
  return rx;
}

StreamPlan parse_stream(const json& j, const std::string& path) {
  known_keys(j, path, {"ip_version", "src_mac", "dst_mac", "src_ip", "dst_ip", "src_port", "dst_port", "tos", "ttl",
                       "flow_label", "frame_size", "rx_frame_size", "vlan", "rx_vlan", "vary", "enumerate", "tunnel", "ce", "rx"});
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
  s.spec.tos = uint8_t(integer_in(j, path, "tos", 0, 255, 0));
  s.spec.ttl = uint8_t(integer_in(j, path, "ttl", 1, 255, 10));
  s.spec.flow_label = uint32_t(integer_in(j, path, "flow_label", 0, kMaxFlowLabel, 0));
  if (s.spec.flow_label && v != 6) bad(path + "flow_label", j["flow_label"], "only for IPv6 frames (ip_version 6)");
  if (j.contains("tunnel"))
    for_each_tunnel(j, path, "{version, src_ip, dst_ip} (addresses of the version)",
                    [&](const json& tunnel, const std::string& tpath) {
                      known_keys(tunnel, tpath, {"version", "src_ip", "dst_ip"});
                      const int tv = tunnel_version(tunnel, tpath);
                      const auto ip = [tv](const std::string& t) { return parse_ip(t, tv); };
                      s.spec.tunnels.items[s.spec.tunnels.count++] =
                          Tunnel{parsed(tunnel, tpath, "src_ip", ip), parsed(tunnel, tpath, "dst_ip", ip), tv};
                    });
  s.spec.frame_size = uint32_t(integer_in(j, path, "frame_size", min_frame_size(v, s.spec.tunnels),
                                          kMaxFrameSize));
  s.rx_frame_size = uint32_t(integer_in(j, path, "rx_frame_size", 64, kMaxFrameSize, s.spec.frame_size));
  s.spec.vlan = parse_vlan(j, path, "vlan", {});
  s.rx_vlan = parse_vlan(j, path, "rx_vlan", s.spec.vlan);
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
          throw BadParameter("", v.name + " collides with " + s.vary[k].name +
                                     ": both change the same 16 bits of the header");
      words.push_back(word);
      s.vary.push_back(v);
    }
  }
  if (j.contains("ce")) s.ce = parse_ce(j["ce"], path + "ce.", s);
  if (j.contains("rx")) {
    s.rx = parse_rx(j["rx"], path + "rx.");
    try {  // the frame the DUT should deliver must exist: its headers fit rx_frame_size
      HeaderCheck(s.spec, *s.rx, s.rx_frame_size, s.rx_vlan);
    } catch (const std::invalid_argument& e) {
      bad(path + "rx", j["rx"], std::string("no such frame of rx_frame_size ") + std::to_string(s.rx_frame_size) +
                                    " bytes: " + e.what());
    }
  }
  if (s.ce) {  // the tunnel the CEs' frames arrive in: rx's innermost, else the one they are sent in
    const int arrives_in = s.rx && !s.rx->tunnels.empty() ? s.rx->tunnels.back().version
                           : !s.spec.tunnels.empty()      ? s.spec.tunnels.innermost().version
                                                          : 6;
    check_ce_tunnel(s.ce->rx, arrives_in, path + "ce.rx_fields", j["ce"].value("rx_fields", json::array()));
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
    throw BadParameter(path + "enumerate",
                       path + "enumerate: missing (the order of the fields with mode \"enumerate\")");
  }
  return s;
}

}  // namespace

void parse_streams(const json& f, const std::string& path, FlowPlan& flow) {
  if (f.contains("streams")) {
    for (const char* key : {"foreground", "background", "mix"})
      if (f.contains(key))
        throw BadParameter(path + key, path + key + ": not together with " + path + "streams (the streams and "
                                       "their pattern describe the whole flow)");
    const json& streams = f["streams"];
    if (!streams.is_array() || streams.empty() || streams.size() > kMaxStreams)
      bad(path + "streams", streams.is_array() ? json(streams.size()) : streams,
          "must be a list of 1.." + std::to_string(kMaxStreams) + " streams");
    for (size_t s = 0; s < streams.size(); ++s) {
      const std::string spath = path + "streams[" + std::to_string(s) + "].";
      json spec = streams[s];
      std::string kind = "foreground";
      if (spec.is_object() && spec.contains("kind")) {
        kind = text(spec, spath, "kind");
        spec.erase("kind");
      }
      StreamPlan sp = parse_stream(spec, spath);
      if (kind == "background") sp.kind = StreamPlan::Kind::kBackground;
      else if (kind != "foreground") bad(spath + "kind", kind, "must be foreground or background");
      flow.streams.push_back(std::move(sp));
    }
    if (flow.streams[0].kind != StreamPlan::Kind::kForeground)
      bad(path + "streams[0].kind", "background", "must be foreground: the first stream carries the tagged frames");
    const json& pattern = require(f, path, "pattern");
    if (!pattern.is_array() || pattern.empty() || pattern.size() > kMaxPattern)
      bad(path + "pattern", pattern.is_array() ? json(pattern.size()) : pattern,
          "must be a list of 1.." + std::to_string(kMaxPattern) + " stream indices");
    for (size_t k = 0; k < pattern.size(); ++k) {
      const json& index = pattern[k];
      if (!index.is_number_integer() || index.get<int64_t>() < 0 || index.get<int64_t>() >= int64_t(flow.streams.size()))
        bad(path + "pattern[" + std::to_string(k) + "]", index,
            "must be a stream index in 0.." + std::to_string(flow.streams.size() - 1));
      flow.pattern.push_back(uint8_t(index.get<int64_t>()));
    }
    return;
  }
  if (f.contains("pattern")) throw BadParameter(path + "pattern", path + "pattern: only with " + path + "streams");
  uint32_t n = 1, m = 1;
  if (f.contains("mix")) {
    known_keys(f["mix"], path + "mix.", {"n", "m"});
    n = uint32_t(integer_in(f["mix"], path + "mix.", "n", 1, 1000));
    m = uint32_t(integer_in(f["mix"], path + "mix.", "m", 0, n));
  }
  flow.streams.push_back(parse_stream(require(f, path, "foreground"), path + "foreground."));
  if (m < n) {
    flow.streams.push_back(parse_stream(require(f, path, "background"), path + "background."));
    flow.streams.back().kind = StreamPlan::Kind::kBackground;
  }
  for (uint32_t k = 0; k < n; ++k) flow.pattern.push_back(k < m ? 0 : 1);
}

}  // namespace xlp::protocol::detail
