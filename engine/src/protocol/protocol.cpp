#include "protocol/protocol.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "core/errors.hpp"
#include "core/frame.hpp"

namespace xlp::protocol {

using nlohmann::json;

namespace {

// The one shape of a parameter error: `key = value: what is allowed`.
[[noreturn]] void bad(const std::string& key, const json& value, const std::string& allowed) {
  throw BadParameter(key, key + " = " + value.dump() + ": " + allowed);
}

// Rejects keys the protocol does not know, so that a misspelt key fails loudly instead of
// silently leaving its default: `obj` (at `path`, "" or ending in '.') must be an object
// with no key but `keys`.
void known_keys(const json& obj, const std::string& path, std::initializer_list<const char*> keys) {
  if (!obj.is_object()) bad(path.empty() ? "request" : path.substr(0, path.size() - 1), obj, "must be an object");
  for (const auto& item : obj.items()) {
    if (std::any_of(keys.begin(), keys.end(), [&](const char* k) { return item.key() == k; })) continue;
    std::string list;
    for (const char* k : keys) list += (list.empty() ? "" : ", ") + std::string(k);
    throw BadParameter(path + item.key(), path + item.key() + ": unknown key (keys: " + list + ")");
  }
}

const json& require(const json& obj, const std::string& path, const char* key) {
  if (!obj.is_object() || !obj.contains(key))
    throw BadParameter(path + key, path + key + ": missing");
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

// A true/false key; `dflt` when it is absent.
bool flag(const json& obj, const std::string& path, const char* key, bool dflt) {
  if (!obj.contains(key)) return dflt;
  if (!obj[key].is_boolean()) bad(path + key, obj[key], "must be true or false");
  return obj[key].get<bool>();
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
  } catch (const std::invalid_argument& e) {  // parse_ip / parse_mac: what is wrong with s
    bad(path + key, s, e.what());
  }
}

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

// "2001:db8::/40" -> address and prefix length.
template <class Address>
std::pair<Address, unsigned> parse_prefix(const json& obj, const std::string& path, const char* key, int version) {
  return parsed(obj, path, key, [&](const std::string& t) {
    const size_t slash = t.find('/');
    const unsigned max = version == 4 ? 32 : 128;
    if (slash == std::string::npos) throw std::invalid_argument("must be a prefix, address/length");
    const std::string length = t.substr(slash + 1);
    if (length.empty() || length.size() > 3 || length.find_first_not_of("0123456789") != std::string::npos ||
        std::stoul(length) > max)
      throw std::invalid_argument("the prefix length must be in 0.." + std::to_string(max));
    const auto a = parse_ip(t.substr(0, slash), version);
    if constexpr (std::is_same_v<Address, uint32_t>)
      return std::make_pair(uint32_t(a[0]) << 24 | uint32_t(a[1]) << 16 | uint32_t(a[2]) << 8 | a[3],
                            unsigned(std::stoul(length)));
    else
      return std::make_pair(a, unsigned(std::stoul(length)));
  });
}

// A list of prefixes, ["2001:db8::/40", ...] (none when the key is absent), each with no bits set
// after its length.
template <class Address>
std::vector<std::pair<Address, int>> prefix_list(const json& obj, const std::string& path, const char* key,
                                                 int version) {
  std::vector<std::pair<Address, int>> out;
  if (!obj.contains(key)) return out;
  const json& list = obj.at(key);
  if (!list.is_array() || list.size() > 64)
    bad(path + key, list, std::string("must be a list of at most 64 IPv") + (version == 4 ? "4" : "6") + " prefixes");
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string item = std::string(key) + "[" + std::to_string(i) + "]";
    const auto [address, bits] = parse_prefix<Address>(json{{item, list[i]}}, path, item.c_str(), version);
    if constexpr (std::is_same_v<Address, uint32_t>) {
      if (bits < 32 && (address << bits) != 0) bad(path + item, list[i], "must have no bits set after its length");
    } else {
      for (size_t b = bits; b < 128; ++b)
        if (address[b / 8] & (0x80 >> (b % 8))) bad(path + item, list[i], "must have no bits set after its length");
    }
    out.emplace_back(address, int(bits));
  }
  return out;
}

// A list of CE fields: "tunnel", "ipv6", "ipv4", "port" (CePlan::Field bits).
uint8_t parse_ce_fields(const json& obj, const std::string& path, const char* key) {
  if (!obj.contains(key)) return 0;
  const json& v = obj.at(key);
  const std::string allowed = "must be a list of tunnel, ipv6, ipv4, port";
  if (!v.is_array()) bad(path + key, v, allowed);
  uint8_t bits = 0;
  for (const json& f : v) {
    const uint8_t bit = f == "tunnel" ? CePlan::kTunnel : f == "ipv6" ? CePlan::kIpv6 : f == "ipv4" ? CePlan::kIpv4
                        : f == "port" ? CePlan::kPort : 0;
    if (!bit) bad(path + key, v, allowed);
    bits |= bit;
  }
  if ((bits & CePlan::kTunnel) && (bits & CePlan::kIpv6))
    bad(path + key, v, "tunnel and ipv6 both name the CE's IPv6 address: one of them");
  return bits;
}

// "ce": a stream's emulated CEs (docs/protocol.md).
CePlan parse_ce(const json& j, const std::string& path, StreamPlan& s) {
  known_keys(j, path, {"map", "b4", "softwires", "count", "first", "side", "mode", "fields", "rx_fields",
                       "prefix_hosts", "tag"});
  CePlan ce;
  const int sources = int(j.contains("map")) + int(j.contains("b4")) + int(j.contains("softwires"));
  if (sources != 1)
    throw BadParameter(path + "map", path.substr(0, path.size() - 1) +
                                         ": needs exactly one of map, b4, softwires (the CEs' source)");
  std::optional<CeSource::Kind> kind;
  std::optional<uint64_t> count;
  if (j.contains("count")) count = integer_in(j, path, "count", 1, CeSource::kMaxCount);
  const uint64_t first = integer_in(j, path, "first", 0, uint64_t(1) << 48, 0);
  try {
    if (j.contains("map")) {
      const json& m = j["map"];
      const std::string mpath = path + "map.";
      known_keys(m, mpath, {"ipv6_prefix", "ipv4_prefix", "ea_bits", "psid_offset"});
      const auto [prefix6, n] = parse_prefix<std::array<uint8_t, 16>>(m, mpath, "ipv6_prefix", 6);
      const auto [prefix4, r] = parse_prefix<uint32_t>(m, mpath, "ipv4_prefix", 4);
      const unsigned o = unsigned(integer_in(m, mpath, "ea_bits", 0, 48));
      const unsigned a = unsigned(integer_in(m, mpath, "psid_offset", 0, 15, 6));
      try {
        kind = MapRule(prefix6, n, prefix4, r, o, a);
      } catch (const std::invalid_argument& e) {
        bad(path + "map", m, e.what());
      }
    } else if (j.contains("b4")) {
      const json& b = j["b4"];
      const std::string bpath = path + "b4.";
      known_keys(b, bpath, {"ipv6", "ipv4", "ipv4_count"});
      B4Range range;
      range.ipv6 = ipv6_bits(parsed(b, bpath, "ipv6", [](const std::string& t) { return parse_ip(t, 6); }));
      const auto v4 = parsed(b, bpath, "ipv4", [](const std::string& t) { return parse_ip(t, 4); });
      range.ipv4 = uint32_t(v4[0]) << 24 | uint32_t(v4[1]) << 16 | uint32_t(v4[2]) << 8 | v4[3];
      range.ipv4_count = uint32_t(integer_in(b, bpath, "ipv4_count", 1, uint64_t(1) << 24, 1));
      if (!count) throw BadParameter(path + "count", path + "count: missing (how many B4s)");
      range.count = first + *count;  // B4s 0 .. first + count - 1 exist
      kind = range;
    } else {
      const std::string file = text(j, path, "softwires");
      try {
        kind = read_softwires(file);
      } catch (const std::invalid_argument& e) {
        bad(path + "softwires", file, e.what());
      }
    }
    const uint64_t available = CeSource::available_in(*kind);
    if (first >= available)
      bad(path + "first", first, "must be in 0.." + std::to_string(available - 1) + " (the CEs the source has)");
    if (count && *count > available - first)
      bad(path + "count", *count, "must be in 1.." + std::to_string(available - first) +
                                      " (the CEs the source has from `first` on)");
    if (!count && available - first > CeSource::kMaxCount)
      bad(path + "count", nullptr, "missing: the rule has " + std::to_string(available) + " CEs, more than " +
                                       std::to_string(CeSource::kMaxCount) + " can be drawn");
    const bool prefix_hosts = flag(j, path, "prefix_hosts", false);
    ce.source = std::make_shared<const CeSource>(std::move(*kind), count.value_or(available - first), first,
                                                 prefix_hosts);
  } catch (const std::invalid_argument& e) {
    bad(path.substr(0, path.size() - 1), j, e.what());
  }
  const std::string side = j.value("side", std::string("src"));
  if (side != "src" && side != "dst") bad(path + "side", j["side"], "must be src or dst");
  ce.src = side == "src";
  const std::string mode = j.value("mode", std::string("random"));
  if (mode != "random" && mode != "increasing") bad(path + "mode", j["mode"], "must be random or increasing");
  ce.random = mode == "random";
  ce.tag = flag(j, path, "tag", false);
  ce.tx = parse_ce_fields(j, path, "fields");
  ce.rx = parse_ce_fields(j, path, "rx_fields");
  if (!ce.tx && !ce.rx) bad(path + "fields", j.value("fields", json::array()), "the sender or the receiver needs some");
  if ((ce.tx & CePlan::kTunnel) && !s.spec.tunnel) bad(path + "fields", j["fields"], "tunnel: the stream has none");
  if ((ce.tx & CePlan::kIpv6) && s.spec.ip_version != 6) bad(path + "fields", j["fields"], "ipv6: the stream's IP is IPv4");
  if ((ce.tx & CePlan::kIpv4) && s.spec.ip_version != 4) bad(path + "fields", j["fields"], "ipv4: the stream's IP is IPv6");
  if (((ce.tx | ce.rx) & CePlan::kPort) && !ce.source->ports())
    bad(path + "fields", j.value("fields", json::array()), "port: B4s own no port set (vary their ports instead)");
  // A vary field on the same side must not write the CE's words too.
  for (const VarySpec& v : s.vary) {
    const bool src = v.field == VarySpec::Field::kSrcPort || v.field == VarySpec::Field::kSrcIp;
    const bool port = v.field == VarySpec::Field::kSrcPort || v.field == VarySpec::Field::kDstPort;
    const uint8_t writes = port ? CePlan::kPort : CePlan::kIpv6 | CePlan::kIpv4;
    if (src == ce.src && (ce.tx & writes))
      throw BadParameter(v.name, v.name + " collides with " + path + "fields: both write the CE's " +
                                     (port ? "port" : "address"));
  }
  // The template holds the first CE's fields: the words the CEs share stay as they are, the
  // sender writes the others per frame.
  const CeFields one = ce.source->at(0);
  const auto v6 = ipv6_bytes(one.ipv6);
  if (ce.tx & CePlan::kTunnel) (ce.src ? s.spec.tunnel->src : s.spec.tunnel->dst) = v6;
  if (ce.tx & CePlan::kIpv6) (ce.src ? s.spec.src_ip : s.spec.dst_ip) = v6;
  if (ce.tx & CePlan::kIpv4)
    for (int b = 0; b < 4; ++b) (ce.src ? s.spec.src_ip : s.spec.dst_ip)[size_t(b)] = uint8_t(one.ipv4 >> (24 - 8 * b));
  if ((ce.tx & CePlan::kPort)) (ce.src ? s.spec.src_port : s.spec.dst_port) = ce.source->ports()->port(one.psid, 0);
  return ce;
}

// "vlan": [outer, inner]: 0..2 VLAN IDs, outermost first (docs/protocol.md).
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
  if (j.contains("tunnel")) {
    const json& tunnel = j["tunnel"];
    if (!tunnel.is_object())
      bad(path + "tunnel", tunnel, "must be an object {src_ip, dst_ip, carries_tos} (each optional)");
    known_keys(tunnel, path + "tunnel.", {"src_ip", "dst_ip", "carries_tos"});
    rx.tunnel = true;
    rx.tunnel_src = address(tunnel, path + "tunnel.", "src_ip", 6);
    rx.tunnel_dst = address(tunnel, path + "tunnel.", "dst_ip", 6);
    rx.tunnel_carries_tos = flag(tunnel, path + "tunnel.", "carries_tos", false);
  }
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
  if (rx.count_tunnel_ecn && !rx.tunnel)
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
  if (j.contains("tunnel")) {
    const json& tunnel = j["tunnel"];
    const std::string tpath = path + "tunnel.";
    if (!tunnel.is_object()) bad(path + "tunnel", tunnel, "must be an object {src_ip, dst_ip} (IPv6 addresses)");
    known_keys(tunnel, tpath, {"src_ip", "dst_ip"});
    const auto ipv6 = [](const std::string& t) { return parse_ip(t, 6); };
    s.spec.tunnel = Tunnel{parsed(tunnel, tpath, "src_ip", ipv6), parsed(tunnel, tpath, "dst_ip", ipv6)};
  }
  s.spec.frame_size = uint32_t(integer_in(j, path, "frame_size", min_frame_size(v, s.spec.tunnel.has_value()),
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

// A flow's streams and frame pattern (FlowPlan::streams, pattern), from either form:
//   "foreground", "background", "mix": {n, m}: RFC 8219's mix, frame k foreground iff k % n < m;
//   "streams": [...], "pattern": [...]: any streams (each with its "kind"), frame k of stream
//   pattern[k % len] (IMIX: a stream per frame size).
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

}  // namespace

namespace {

// "tcp": {"key", "segments", "mss", "reply"}: the flow sends TCP segments (docs/tcp.md): the
// Initiator's SYNs ("open", the default), FINs ("close") or RSTs ("reset") of the connections of
// its four-tuples, or data segments ("data", with from_table: phase 2, either side). "mss": what
// the SYNs announce (default ethernet_mss). Checks what such a flow may be and makes its
// foreground those segments.
void make_tcp_flow(const json& t, const std::string& path, FlowPlan& flow) {
  const std::string tpath = path + "tcp.";
  if (!t.is_object()) bad(path + "tcp", t, "must be an object {key, segments, reply}");
  known_keys(t, tpath, {"key", "segments", "mss", "reply"});
  if (flow.streams.size() > 1) bad(path + "tcp", t, "a flow of TCP segments has one stream (no background, no IMIX)");
  StreamPlan& first = flow.streams[0];
  TcpFlow tcp;
  const std::string segments = t.contains("segments") ? text(t, tpath, "segments") : "open";
  if (segments == "open") tcp.step = TcpStep::kSyn;
  else if (segments == "close") tcp.step = TcpStep::kFin;
  else if (segments == "reset") tcp.step = TcpStep::kRst;
  else if (segments == "data") tcp.step = TcpStep::kData;
  else bad(tpath + "segments", segments, "must be one of open, close, reset, data");
  // Data continues, and a close or reset from a table ends, the connections a phase 1 learned,
  // with the numbers that side learned (a DUT may have rewritten the sequence numbers, as PF's
  // modulate state does); closes and resets without a table take theirs from the four-tuple.
  if (tcp.step == TcpStep::kData && !flow.from_table)
    bad(tpath + "segments", segments, "data needs from_table: phase 2's segments continue the connections a phase 1 "
                                      "learned");
  if (tcp.step == TcpStep::kSyn && flow.from_table)
    bad(tpath + "segments", segments, "from_table: a table's connections are open already: segments must be data, "
                                      "close or reset");
  // A table holds each entry's tuple (and, learned in a softwire, its B4), so no CE writes any field.
  if (flow.from_table && first.ce && first.ce->tx)
    bad(path + "tcp", t, "segments = " + segments + " from a state table: its foreground's CEs write fields, and "
                         "such segments take theirs from the table");
  first.spec.l4 = kProtoTcp;
  first.spec.tcp_flags = tcp_flags_of(tcp.step);
  if (t.contains("mss")) {
    if (tcp.step != TcpStep::kSyn) bad(tpath + "mss", t["mss"], "only SYNs (segments = open) carry an MSS option");
    first.spec.tcp_mss = uint16_t(integer_in(t, tpath, "mss", 1, 65535));
  }
  const uint32_t size = min_frame_size(first.spec.ip_version, first.spec.tunnel.has_value(), kProtoTcp,
                                      first.spec.tcp_flags);
  if (tcp.step == TcpStep::kData) {
    if (first.spec.frame_size <= size)
      bad(path + "foreground.frame_size", first.spec.frame_size,
          "must be at least " + std::to_string(size + 1) + " for IPv" + std::to_string(first.spec.ip_version) +
              " TCP data: a 40-byte header with the tag option and at least one byte of payload");
  } else if (first.spec.frame_size != size)
    bad(path + "foreground.frame_size", first.spec.frame_size,
        "must be " + std::to_string(size) + " for IPv" + std::to_string(first.spec.ip_version) + " TCP " + segments +
            ": its segments carry no payload");
  const uint64_t key = integer_in(t, tpath, "key", 0, INT64_MAX);
  tcp.key = {key, tcp_detail::mix(key ^ 0x9e3779b97f4a7c15ull)};
  flow.tcp = tcp;
}

// The flows that answer TCP flow `first` (make_tcp_flow): to SYNs the Responder's SYN-ACKs, the
// Initiator's ACKs and the Responder's window ACKs (tcp.hpp); to FINs the Responder's FIN-ACKs
// and the Initiator's last ACKs; RSTs get no answer. "reply": the Responder side's frames {ip_version, src_mac, dst_mac, vlan,
// rx_vlan, rx_frame_size, mss}: its segments as they leave and arrive (their addresses and ports
// come from the segments they answer), and the MSS its SYN-ACKs announce.
void add_answering_flows(const json& t, const std::string& tpath, size_t first, TrialPlan& plan) {
  const FlowPlan& f = plan.flows[first];
  if (f.tcp->step == TcpStep::kRst || f.tcp->step == TcpStep::kData) {
    if (t.contains("reply")) bad(tpath + "reply", t["reply"], "segments = reset or data: nothing answers them");
    return;
  }
  const bool open = f.tcp->step == TcpStep::kSyn;
  const json& r = require(t, tpath, "reply");
  const std::string rpath = tpath + "reply.";
  if (!r.is_object()) bad(tpath + "reply", r, "must be an object {ip_version, src_mac, dst_mac, ...}");
  known_keys(r, rpath, {"ip_version", "src_mac", "dst_mac", "vlan", "rx_vlan", "rx_frame_size", "mss"});
  if (r.contains("mss") && !open) bad(rpath + "mss", r["mss"], "only SYN-ACKs (segments = open) carry an MSS option");
  FlowPlan back = f;
  back.from_table.reset();  // the answers take their tuples from the segments they answer
  back.name = f.name + (open ? ".syn_ack" : ".fin_ack");
  std::swap(back.tx_port, back.rx_port);
  back.tcp->step = open ? TcpStep::kSynAck : TcpStep::kFinAck;
  back.tcp->answers = first;
  StreamPlan b;
  const json& version = require(r, rpath, "ip_version");
  if (version != 4 && version != 6) bad(rpath + "ip_version", version, "must be 4 or 6");
  b.spec.ip_version = version.get<int>();
  b.spec.l4 = kProtoTcp;
  b.spec.tcp_flags = tcp_flags_of(back.tcp->step);
  if (r.contains("mss")) b.spec.tcp_mss = uint16_t(integer_in(r, rpath, "mss", 1, 65535));
  b.spec.src_mac = parsed(r, rpath, "src_mac", parse_mac);
  b.spec.dst_mac = parsed(r, rpath, "dst_mac", parse_mac);
  b.spec.frame_size = min_frame_size(b.spec.ip_version, false, kProtoTcp, b.spec.tcp_flags);
  b.spec.vlan = parse_vlan(r, rpath, "vlan", {});
  b.rx_vlan = parse_vlan(r, rpath, "rx_vlan", b.spec.vlan);
  b.rx_frame_size = uint32_t(integer_in(r, rpath, "rx_frame_size", 64, kMaxFrameSize, b.spec.frame_size));
  back.streams = {b};
  FlowPlan ack = f;
  ack.from_table.reset();
  ack.name = f.name + ".ack";
  ack.tcp->step = open ? TcpStep::kAck : TcpStep::kLastAck;
  ack.tcp->answers = plan.flows.size();  // the Responder's flow, added next
  StreamPlan& a = ack.streams[0];
  a.spec.tcp_flags = tcp_flags_of(ack.tcp->step);  // after a SYN: no window scale option
  const uint32_t shorter =
      a.spec.frame_size - min_frame_size(a.spec.ip_version, a.spec.tunnel.has_value(), kProtoTcp, a.spec.tcp_flags);
  a.spec.frame_size -= shorter;
  a.rx_frame_size -= shorter;
  a.vary.clear();  // the tuple (and the tunnel's addresses) come from the segment it answers
  a.enumerate.reset();
  a.ce.reset();
  // To the handshake's ACK: the Responder's window ACK, the SYN-ACK's frames without the
  // window scale option.
  std::optional<FlowPlan> window;
  if (open) {
    window = back;
    window->name = f.name + ".window";
    window->tcp->step = TcpStep::kWindow;
    window->tcp->answers = plan.flows.size() + 1;  // the Initiator's ACKs, added second
    StreamPlan& w = window->streams[0];
    w.spec.tcp_flags = tcp_flags_of(TcpStep::kWindow);
    const uint32_t shorter = w.spec.frame_size - min_frame_size(w.spec.ip_version, false, kProtoTcp, w.spec.tcp_flags);
    w.spec.frame_size -= shorter;
    w.rx_frame_size -= shorter;
  }
  plan.flows.push_back(std::move(back));
  plan.flows.push_back(std::move(ack));
  if (window) plan.flows.push_back(std::move(*window));
  if (plan.flows.size() > kMaxFlows)
    bad("flows", plan.flows.size(), "at most " + std::to_string(kMaxFlows) + " flows, with 3 more per TCP flow that opens "
        "connections and 2 more per one that closes them");
}

}  // namespace

namespace {

// "dns": {"zone", "names", "a", "aaaa", "aaaa_share", "ttl", "soa_ttl", "soa_minimum",
// "authoritative"}: the trial's test zone, the style of the names the clients ask in it, the
// records of its names (dns::RecordRule) and the ports that answer for it (docs/protocol.md, DNS).
DnsPlan parse_dns(const json& d, uint16_t port_count) {
  known_keys(d, "dns.",
             {"zone", "names", "a", "aaaa", "aaaa_share", "ttl", "soa_ttl", "soa_minimum", "authoritative"});
  DnsPlan plan;
  const std::string zone = d.contains("zone") ? text(d, "dns.", "zone") : "dns64perf.test";
  const std::string names = d.contains("names") ? text(d, "dns.", "names") : "xlatperf";
  if (names != "xlatperf" && names != "dns64perf") bad("dns.names", names, "must be xlatperf or dns64perf");
  const dns::NameStyle style = names == "xlatperf" ? dns::NameStyle::kXlatperf : dns::NameStyle::kDns64perf;
  try {
    plan.zone = std::make_shared<const dns::Zone>(zone, style);
  } catch (const std::invalid_argument& e) {
    bad("dns.zone", zone, e.what());
  }
  if (d.contains("a")) {
    const auto [a, bits] = parse_prefix<uint32_t>(d, "dns.", "a", 4);
    if (bits < 8) bad("dns.a", d["a"], "the prefix length must be in 8..32 (the names' A records lie in it)");
    plan.records.a_base = a;
    plan.records.a_bits = uint8_t(bits);
  }
  if (d.contains("aaaa")) {
    const auto [aaaa, bits] = parse_prefix<std::array<uint8_t, 16>>(d, "dns.", "aaaa", 6);
    if (bits != 96) bad("dns.aaaa", d["aaaa"], "must be a /96 prefix (a name's AAAA record takes the last 32 bits)");
    plan.records.aaaa_base = aaaa;
  }
  plan.records.aaaa_share = uint32_t(std::lround(number_in(d, "dns.", "aaaa_share", 0, 1, 0) * 65536));
  if (style == dns::NameStyle::kDns64perf && plan.records.aaaa_share)
    bad("dns.aaaa_share", d["aaaa_share"], "must be 0 with dns.names = dns64perf (its names have no AAAA record)");
  plan.records.ttl = uint32_t(integer_in(d, "dns.", "ttl", 0, INT32_MAX, plan.records.ttl));
  plan.records.soa_ttl = uint32_t(integer_in(d, "dns.", "soa_ttl", 0, INT32_MAX, plan.records.soa_ttl));
  plan.records.soa_minimum = uint32_t(integer_in(d, "dns.", "soa_minimum", 0, INT32_MAX, plan.records.soa_minimum));
  const json& ports = require(d, "dns.", "authoritative");
  if (!ports.is_array() || ports.size() > port_count)
    bad("dns.authoritative", ports, "must be a list of the ports that answer queries (0.." +
                                        std::to_string(port_count - 1) + ")");
  for (size_t i = 0; i < ports.size(); ++i) {
    const std::string key = "dns.authoritative[" + std::to_string(i) + "]";
    if (!ports[i].is_number_integer() || ports[i].get<int64_t>() < 0 || ports[i].get<int64_t>() >= port_count)
      bad(key, ports[i], "must be a port index in 0.." + std::to_string(port_count - 1));
    const uint16_t port = ports[i].get<uint16_t>();
    if (std::find(plan.authoritative.begin(), plan.authoritative.end(), port) != plan.authoritative.end())
      bad(key, ports[i], "is listed twice");
    plan.authoritative.push_back(port);
  }
  return plan;
}

// A reply check's name in a flow's dns.checks (dns::ReplyCheck).
uint8_t reply_check(const json& name, const std::string& key) {
  static const std::map<std::string, uint8_t> kChecks{{"ttl", dns::kCheckTtl},
                                                      {"edns", dns::kCheckEdns},
                                                      {"ra", dns::kCheckRa},
                                                      {"question", dns::kCheckQuestion},
                                                      {"duplicates", dns::kCheckDuplicates},
                                                      {"ttl_a_record", dns::kCheckTtl | dns::kSynthesisTtlOfA},
                                                      {"upstream", dns::kCheckUpstream},
                                                      {"upstream_expired", dns::kCheckUpstream | dns::kCheckUpstreamExpired}};
  const auto it = name.is_string() ? kChecks.find(name.get<std::string>()) : kChecks.end();
  if (it == kChecks.end())
    bad(key, name, "must be one of ttl, ttl_a_record, edns, ra, question, duplicates, upstream, upstream_expired");
  return it->second;
}

// A flow's "dns": {"qtype", "edns", "ports", "nonce", "names_from", "synthesis", "exclude",
// "mapped", "checks", "repeat", "repeat_after"}: its foreground sends DNS queries of the trial's
// zone to port 53, whose replies come back to its tx_port (docs/dns.md).
void make_dns_flow(const json& d, const std::string& path, const TrialPlan& plan, FlowPlan& flow) {
  const std::string dpath = path + "dns.";
  known_keys(d, dpath,
             {"qtype", "edns", "ports", "nonce", "names_from", "synthesis", "exclude", "mapped", "checks", "repeat",
              "repeat_after"});
  if (!plan.dns) bad(path + "dns", d, "needs the trial's dns (its zone and records)");
  if (flow.streams.size() > 1) bad(path + "dns", d, "a flow of DNS queries has one stream (no background, no IMIX)");
  StreamPlan& q = flow.streams[0];
  if (flow.rx_port != flow.tx_port)
    bad(path + "rx_port", flow.rx_port, "must be tx_port (" + std::to_string(flow.tx_port) +
                                            "): a DNS query's reply comes back to the port that asked");
  if (q.spec.tunnel || q.ce || !q.vary.empty() || q.rx)
    bad(path + "dns", d, "its foreground has no tunnel, ce, vary or rx (not with DNS queries yet)");
  if (q.spec.dst_port != 53) bad(path + "foreground.dst_port", q.spec.dst_port, "must be 53 for DNS queries");
  if (plan.delay.frame_timeout <= 0)
    bad("delay.frame_timeout", plan.delay.frame_timeout,
        "must be > 0 with DNS queries: a query's reply counts only within its timeout (RFC 8219 §9.2: 1 s)");
  FrameSpec::DnsQuery query;
  query.zone = plan.dns->zone;
  const std::string qtype = d.contains("qtype") ? text(d, dpath, "qtype") : "AAAA";
  if (qtype == "AAAA") query.qtype = dns::kTypeAaaa;
  else if (qtype == "A") query.qtype = dns::kTypeA;
  else bad(dpath + "qtype", qtype, "must be AAAA or A");
  query.edns = flag(d, dpath, "edns", query.edns);
  query.nonce = uint32_t(integer_in(d, dpath, "nonce", 0, UINT32_MAX));
  DnsFlow dflow;
  dflow.names_from = uint64_t(integer_in(d, dpath, "names_from", 0, UINT32_MAX, 0));
  dflow.ports = uint32_t(integer_in(d, dpath, "ports", 1, 65536 - q.spec.src_port, dflow.ports));
  // QueryKeys::seq_of is exact while a reply comes before 65536 x ports more queries were sent;
  // those of a reply timeout at the highest rate stay under half of that.
  uint64_t peak = flow.rate;
  for (const FlowPlan::RateStep& step : flow.rate_steps) peak = std::max(peak, step.rate);
  const double outstanding = double(peak) * plan.delay.frame_timeout;
  if (outstanding > 32768.0 * dflow.ports)
    bad(dpath + "ports", dflow.ports, "must be at least rate x delay.frame_timeout / 32768 = " +
                                          std::to_string(uint64_t(std::ceil(outstanding / 32768))) +
                                          " at the highest rate " + std::to_string(peak) +
                                          " (a reply's port and ID name its query among 65536 x ports)");
  const auto [prefix, bits] = d.contains("synthesis") ? parse_prefix<std::array<uint8_t, 16>>(d, dpath, "synthesis", 6)
                                                      : std::make_pair(dns::Expectation{}.prefix, 96u);
  try {
    dns::synthesize(prefix, int(bits), 0);
  } catch (const std::invalid_argument& e) {
    bad(dpath + "synthesis", d["synthesis"], e.what());
  }
  dflow.prefix = prefix;
  dflow.prefix_bits = int(bits);
  dflow.exclude = prefix_list<std::array<uint8_t, 16>>(d, dpath, "exclude", 6);
  dflow.mapped = prefix_list<uint32_t>(d, dpath, "mapped", 4);
  if (d.contains("checks")) {
    const json& checks = d["checks"];
    if (!checks.is_array())
      bad(dpath + "checks", checks,
          "must be a list of ttl, ttl_a_record, edns, ra, question, duplicates, upstream, upstream_expired");
    for (size_t i = 0; i < checks.size(); ++i)
      dflow.checks |= reply_check(checks[i], dpath + "checks[" + std::to_string(i) + "]");
  }
  dflow.repeat = uint32_t(std::lround(number_in(d, dpath, "repeat", 0, 1, 0) * 65536));
  if (dflow.repeat)  // required then: when a name is asked again, within the trial
    dflow.repeat_after = number_in(d, dpath, "repeat_after", 1e-6, plan.duration);
  q.spec.dns = query;
  const uint32_t size = dns_frame_size(q.spec);
  if (q.spec.frame_size != size)
    bad(path + "foreground.frame_size", q.spec.frame_size,
        "must be " + std::to_string(size) + " with DNS queries (the query's size: its zone and EDNS(0))");
  q.rx_frame_size = size;
  flow.dns = dflow;
}

}  // namespace

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

namespace {

uint16_t port_index(const json& obj, const std::string& path, const char* key, uint16_t port_count) {
  if (port_count == 0) throw ExecutionFailure("the engine has no ports");
  return uint16_t(integer_in(obj, path, key, 0, port_count - 1u));
}

int ip_version(const json& obj, const std::string& path, const char* key) {
  const json& version = require(obj, path, key);
  if (version != 4 && version != 6) bad(path + key, version, "must be 4 or 6");
  return version.get<int>();
}

// {"ports":[{"port":0,"ranges":[{"ip_version":4,"address":"198.18.0.2","offset":2,"min":2,
//  "max":65534}]}]}
AddressesRequest parse_addresses(const json& req, uint16_t port_count) {
  AddressesRequest out;
  known_keys(req, "", {"id", "op", "ports"});
  const json& ports = require(req, "", "ports");
  if (!ports.is_array()) bad("ports", ports, "must be a list of {port, ranges}");
  for (size_t i = 0; i < ports.size(); ++i) {
    const json& p = ports[i];
    const std::string path = "ports[" + std::to_string(i) + "].";
    known_keys(p, path, {"port", "ranges"});
    const uint16_t port = port_index(p, path, "port", port_count);
    AddressSet set;
    const json ranges = p.value("ranges", json::array());
    if (!ranges.is_array()) bad(path + "ranges", ranges, "must be a list of address ranges");
    for (size_t k = 0; k < ranges.size(); ++k) {
      const json& r = ranges[k];
      const std::string rpath = path + "ranges[" + std::to_string(k) + "].";
      known_keys(r, rpath, {"ip_version", "address", "offset", "min", "max"});
      AddressRange range;
      range.ip_version = ip_version(r, rpath, "ip_version");
      const int v = range.ip_version;
      range.base = parsed(r, rpath, "address", [v](const std::string& t) { return parse_ip(t, v); });
      const uint32_t len = v == 4 ? 4 : 16;
      range.offset = uint32_t(integer_in(r, rpath, "offset", 0, len - 2, len - 2));
      if (range.offset % 2) bad(rpath + "offset", range.offset, "must be even");
      const uint32_t word = uint32_t(range.base[range.offset] << 8 | range.base[range.offset + 1]);
      range.min = uint32_t(integer_in(r, rpath, "min", 0, 65535, word));
      range.max = uint32_t(integer_in(r, rpath, "max", range.min, 65535, word));
      set.add(range);
    }
    out.ports.emplace_back(port, std::move(set));
  }
  return out;
}

// {"port":0,"ip_version":4,"own_ip":"198.18.0.2","target":"198.18.0.1","timeout":3}
ResolveRequest parse_resolve(const json& req, uint16_t port_count) {
  ResolveRequest out;
  known_keys(req, "", {"id", "op", "port", "ip_version", "own_ip", "target", "timeout", "vlan"});
  out.port = port_index(req, "", "port", port_count);
  const int v = out.ip_version = ip_version(req, "", "ip_version");
  auto ip = [v](const std::string& t) { return parse_ip(t, v); };
  out.own_ip = parsed(req, "", "own_ip", ip);
  out.target = parsed(req, "", "target", ip);
  out.target_text = req["target"].get<std::string>();
  out.timeout = number_in(req, "", "timeout", 0, 3600, 3.0);
  out.vlan = parse_vlan(req, "", "vlan", {});
  return out;
}

}  // namespace

Body parse_request(const json& req, uint16_t port_count) {
  if (!req.is_object()) throw BadParameter("", "a request must be a JSON object");
  const json op = req.value("op", json());
  if (op == "hello" || op == "shutdown") known_keys(req, "", {"id", "op"});
  if (op == "hello") return HelloRequest{};
  if (op == "trial") return parse_trial(req, port_count);
  if (op == "addresses") return parse_addresses(req, port_count);
  if (op == "resolve") return parse_resolve(req, port_count);
  if (op == "shutdown") return ShutdownRequest{};
  bad("op", op, "must be one of hello, trial, addresses, resolve, shutdown");
}

// -- replies ------------------------------------------------------------------------------

std::string version() { return std::to_string(kMajor) + "." + std::to_string(kMinor); }

json limits() {
  auto field = [](size_t offset, size_t size) { return json{{"offset", offset}, {"size", size}}; };
  return {{"min_frame_size", {{"ipv4", min_frame_size(4)}, {"ipv6", min_frame_size(6)}}},
          {"max_frame_size", kMaxFrameSize},
          {"max_queues", kMaxQueues},
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

namespace {

json error_reply(const json& id, const char* type, const std::string& message, const std::string& key = "") {
  json error = {{"type", type}, {"message", message}};
  if (!key.empty()) error["key"] = key;
  return {{"id", id}, {"ok", false}, {"error", error}};
}

}  // namespace

Answer answer(const std::string& line, Executor& executor, const std::function<void(const json&)>& emit) {
  json req;
  try {
    req = json::parse(line);
  } catch (const json::exception& e) {
    return {error_reply(json(), "bad_parameter", std::string("bad JSON: ") + e.what())};
  }
  const json id = req.is_object() ? req.value("id", json()) : json();
  try {
    Body body = parse_request(req, executor.port_count());
    Answer out;
    if (std::holds_alternative<HelloRequest>(body)) {
      out.reply = serialise(executor.hello());
    } else if (auto* plan = std::get_if<TrialPlan>(&body)) {
      out.reply = serialise(executor.trial(*plan, [&](const ProgressReport& p) {
        json event = serialise(p);
        event["id"] = id;
        emit(event);
      }));
    } else if (auto* a = std::get_if<AddressesRequest>(&body)) {
      executor.addresses(*a);
      out.reply = {{"ok", true}};
    } else if (auto* r = std::get_if<ResolveRequest>(&body)) {
      out.reply = {{"ok", true}, {"mac", format_mac(executor.resolve(*r).data())}};
    } else {
      out.reply = {{"ok", true}};
      out.shutdown = true;
    }
    out.reply["id"] = id;
    return out;
  } catch (const BadParameter& e) {
    return {error_reply(id, "bad_parameter", e.what(), e.key())};
  } catch (const std::invalid_argument& e) {  // a value the core refused (e.g. a frame template)
    return {error_reply(id, "bad_parameter", e.what())};
  } catch (const std::exception& e) {  // ExecutionFailure, and whatever else went wrong carrying it out
    return {error_reply(id, "execution_failure", e.what())};
  }
}

}  // namespace xlp::protocol
