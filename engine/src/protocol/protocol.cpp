// Dispatch: a request line parsed (parse_request by its op; the small requests, addresses and
// resolve, here; a trial in trial.cpp), carried out by the Executor, and its final reply.
#include "protocol/protocol.hpp"

#include "core/errors.hpp"
#include "core/frame.hpp"
#include "protocol/json_read.hpp"
#include "protocol/parsers.hpp"

namespace xlp::protocol {

using nlohmann::json;
using namespace detail;

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
