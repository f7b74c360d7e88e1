// A stream's emulated CEs ("ce", docs/protocol.md): their source, what they write and check.
#include "protocol/parsers.hpp"

#include <memory>
#include <optional>

#include "protocol/json_read.hpp"

namespace xlp::protocol::detail {

namespace {

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
  return bits;
}

}  // namespace

void check_ce_tunnel(uint8_t fields, int tunnel_version, const std::string& key, const json& value) {
  if (!(fields & CePlan::kTunnel)) return;
  if (tunnel_version == 6 && (fields & CePlan::kIpv6))
    bad(key, value, "tunnel and ipv6 both name the CE's IPv6 address (an IPv6 tunnel's): one of them");
  if (tunnel_version == 4 && (fields & CePlan::kIpv4))
    bad(key, value, "tunnel and ipv4 both name the CE's IPv4 address (an IPv4 tunnel's): one of them");
}

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
  const bool tunnelled = !s.spec.tunnels.empty();
  if ((ce.tx & CePlan::kTunnel) && !tunnelled) bad(path + "fields", j["fields"], "tunnel: the stream has none");
  check_ce_tunnel(ce.tx, tunnelled ? s.spec.tunnels.innermost().version : 6, path + "fields",
                  j.value("fields", json::array()));
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
  if (ce.tx & CePlan::kTunnel) {
    Tunnel& tunnel = s.spec.tunnels.innermost();
    auto& address = ce.src ? tunnel.src : tunnel.dst;
    if (tunnel.version == 6) address = v6;
    else
      for (int b = 0; b < 4; ++b) address[size_t(b)] = uint8_t(one.ipv4 >> (24 - 8 * b));
  }
  if (ce.tx & CePlan::kIpv6) (ce.src ? s.spec.src_ip : s.spec.dst_ip) = v6;
  if (ce.tx & CePlan::kIpv4)
    for (int b = 0; b < 4; ++b) (ce.src ? s.spec.src_ip : s.spec.dst_ip)[size_t(b)] = uint8_t(one.ipv4 >> (24 - 8 * b));
  if ((ce.tx & CePlan::kPort)) (ce.src ? s.spec.src_port : s.spec.dst_port) = ce.source->ports()->port(one.psid, 0);
  return ce;
}

}  // namespace xlp::protocol::detail
