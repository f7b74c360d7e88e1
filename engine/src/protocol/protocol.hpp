// The engine's side of the JSON-lines protocol (docs/protocol.md, the one place that
// documents it): parsing and validating requests into plain structs, dispatching them to an
// Executor, and serialising its plain reports into replies. No DPDK here, so every request
// and reply can be tested without ports.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/neighbor.hpp"
#include "protocol/plan.hpp"
#include "protocol/report.hpp"

namespace xlp::protocol {

// Protocol version MAJOR.MINOR (docs/protocol.md, "Versions"): a new optional key or reply
// field bumps the minor, anything a peer of the same major could misread bumps the major.
constexpr int kMajor = 2, kMinor = 21;
std::string version();  // "2.20"
// The engine's limits that the front end mirrors (hello's "limits"), from the engine's own
// constants.
nlohmann::json limits();

struct HelloRequest {};
struct ShutdownRequest {};
struct AddressesRequest {
  std::vector<std::pair<uint16_t, AddressSet>> ports;  // the addresses each port answers for
};
struct ResolveRequest {
  uint16_t port = 0;
  int ip_version = 4;
  std::array<uint8_t, 16> own_ip{}, target{};
  std::string target_text;  // as requested, for messages
  double timeout = 3.0;     // s
  VlanStack vlan;           // the tags of the port's VLAN (the request carries them)
};
using Body = std::variant<HelloRequest, TrialPlan, AddressesRequest, ResolveRequest, ShutdownRequest>;

// Parses and validates one request object for an engine with `port_count` ports. Throws
// BadParameter naming the key path, the value and what is allowed.
Body parse_request(const nlohmann::json& request, uint16_t port_count);
TrialPlan parse_trial(const nlohmann::json& request, uint16_t port_count);

// What carries requests out: the DPDK engine, or a test double.
class Executor {
 public:
  virtual ~Executor() = default;
  virtual uint16_t port_count() const = 0;
  virtual HelloReport hello() = 0;
  virtual void addresses(const AddressesRequest& request) = 0;
  // The target's MAC address; throws ExecutionFailure without a reply in time.
  virtual std::array<uint8_t, 6> resolve(const ResolveRequest& request) = 0;
  // Runs the trial; `progress` may be called on the calling thread while it runs.
  virtual TrialReport trial(const TrialPlan& plan,
                            const std::function<void(const ProgressReport&)>& progress) = 0;
};

nlohmann::json serialise(const HelloReport& report);
nlohmann::json serialise(const TrialReport& report);
nlohmann::json serialise(const ProgressReport& report);
// RFC 4648 base64 with padding: how a capture's pcapng bytes travel in a JSON reply.
std::string base64(const std::string& bytes);

struct Answer {
  nlohmann::json reply;  // the final reply, with the request's id
  bool shutdown = false; // the request was shutdown: stop after sending the reply
};

// One request line in, its final reply out; events (progress) go to `emit` before it.
// Every failure becomes an error reply: nothing escapes.
Answer answer(const std::string& line, Executor& executor,
              const std::function<void(const nlohmann::json&)>& emit);

}  // namespace xlp::protocol
