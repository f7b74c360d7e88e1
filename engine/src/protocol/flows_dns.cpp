// DNS: the trial's test zone and a flow of DNS queries (docs/dns.md).
#include "protocol/parsers.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "protocol/json_read.hpp"

namespace xlp::protocol::detail {

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

namespace {

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

}  // namespace

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
  if (!q.spec.tunnels.empty() || q.ce || !q.vary.empty() || q.rx)
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

}  // namespace xlp::protocol::detail
