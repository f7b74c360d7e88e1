// Replays the protocol transcripts (tests/transcripts/*.jsonl, shared with the front end's
// fake engine: tests/test_protocol_transcripts.py) through the protocol unit and the real
// data plane on ports in memory. Each line: {"name", "request", "reply", "match", "exact"?}.
//   match "exact": the engine's reply equals the transcript's;
//   match "shape": the same keys and JSON types recursively (each list element has the shape
//   of the transcript list's first element), and the values at the JSON pointers listed in
//   "exact" equal (e.g. "/limits": what the front end mirrors).
// The lines of one file run in order on one engine (a phase 1 fills the state table that a
// later line uses).
#include <gtest/gtest.h>
#include <rte_version.h>

#include <filesystem>
#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "harness.hpp"
#include "protocol/protocol.hpp"

using namespace xlp;
using nlohmann::json;

namespace {

// The engine's Executor on ports in memory wired to each other (a cable as "DUT").
class MemoryEngine final : public protocol::Executor {
 public:
  uint16_t port_count() const override { return 2; }
  HelloReport hello() override {
    HelloReport r;
    r.engine = "0.1.0";
    r.dpdk = rte_version();
    r.tsc_hz = test::eal().tsc_hz;
    r.workers = test::eal().workers;
    for (uint16_t i = 0; i < 2; ++i) {
      PortInfo p;
      p.index = i;
      p.name = "net_memory" + std::to_string(i);
      p.driver = "memory";
      p.mac = bench_.identities[i].mac;
      p.link_up = true;
      p.rx_queues = p.tx_queues = 1;
      p.max_queues = 1;
      p.rx_spread = "none";
      r.ports.push_back(p);
    }
    return r;
  }
  void addresses(const protocol::AddressesRequest& request) override {
    for (const auto& [port, set] : request.ports) bench_.identities.at(port).owned = set;
  }
  std::array<uint8_t, 6> resolve(const protocol::ResolveRequest&) override {
    throw ExecutionFailure("no neighbour on ports in memory");
  }
  TrialReport trial(const TrialPlan& plan, const std::function<void(const ProgressReport&)>&) override {
    return bench_.run(plan);
  }

 private:
  test::Bench bench_;
};

std::string type_of(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "boolean";
  if (v.is_number()) return "number";
  if (v.is_string()) return "string";
  if (v.is_array()) return "array";
  return "object";
}

// Empty when `got` has the shape of `want`; else where and how it differs.
std::string shape_difference(const json& want, const json& got, const std::string& path) {
  if (type_of(want) != type_of(got)) return path + ": " + type_of(got) + " instead of " + type_of(want);
  if (want.is_object()) {
    for (const auto& item : want.items())
      if (!got.contains(item.key())) return path + "." + item.key() + ": missing";
    for (const auto& item : got.items()) {
      if (!want.contains(item.key())) return path + "." + item.key() + ": not in the transcript";
      const std::string d = shape_difference(want[item.key()], item.value(), path + "." + item.key());
      if (!d.empty()) return d;
    }
  } else if (want.is_array() && !want.empty()) {
    for (size_t i = 0; i < got.size(); ++i) {
      const std::string d = shape_difference(want[0], got[i], path + "[" + std::to_string(i) + "]");
      if (!d.empty()) return d;
    }
  }
  return "";
}

std::vector<std::filesystem::path> transcript_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(XLP_TRANSCRIPT_DIR))
    if (e.path().extension() == ".jsonl") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST(Transcripts, ShapeComparisonFindsEachKindOfDifference) {
  const json want = json::parse(R"({"a":1,"b":[{"c":"x"}],"d":null})");
  EXPECT_EQ(shape_difference(want, json::parse(R"({"a":2.5,"b":[{"c":"y"},{"c":"z"}],"d":null})"), "reply"), "");
  EXPECT_EQ(shape_difference(want, json::parse(R"({"a":"1","b":[],"d":null})"), "reply"),
            "reply.a: string instead of number");
  EXPECT_EQ(shape_difference(want, json::parse(R"({"a":1,"b":[{"c":"x"},{"c":1}],"d":null})"), "reply"),
            "reply.b[1].c: number instead of string");
  EXPECT_EQ(shape_difference(want, json::parse(R"({"a":1,"b":[],"d":null,"e":0})"), "reply"),
            "reply.e: not in the transcript");
  EXPECT_EQ(shape_difference(want, json::parse(R"({"a":1,"b":[]})"), "reply"), "reply.d: missing");
}

TEST(Transcripts, EveryLineGetsTheTranscriptsReply) {
  XLP_REQUIRE_EAL();
  const auto files = transcript_files();
  ASSERT_GE(files.size(), 4u) << XLP_TRANSCRIPT_DIR;
  size_t lines = 0, exact = 0, names_seen = 0;
  std::set<std::string> names;
  for (const auto& file : files) {
    MemoryEngine engine;
    std::ifstream in(file);
    std::string text;
    while (std::getline(in, text)) {
      if (text.empty()) continue;
      const json line = json::parse(text);
      const std::string name = file.filename().string() + ": " + line.at("name").get<std::string>();
      SCOPED_TRACE(name);
      ASSERT_TRUE(names.insert(name).second) << "two lines named " << name;
      ++names_seen;
      const json request = line.at("request");
      const json want = line.at("reply");
      const json got = protocol::answer(request.dump(), engine, [](const json&) {}).reply;
      const std::string match = line.at("match");
      if (match == "exact") {
        ++exact;
        EXPECT_EQ(got, want) << "engine's reply: " << got.dump();
      } else {
        ASSERT_EQ(match, "shape");
        EXPECT_EQ(shape_difference(want, got, "reply"), "") << "engine's reply: " << got.dump();
        for (const auto& pointer : line.value("exact", json::array())) {
          const json::json_pointer at(pointer.get<std::string>());
          EXPECT_EQ(got.contains(at) ? got.at(at) : json(), want.at(at)) << pointer;
        }
      }
      ++lines;
    }
  }
  EXPECT_GE(exact, 10u);  // the bad requests with their exact error replies
  EXPECT_EQ(names_seen, lines);
}
