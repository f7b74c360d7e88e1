#include <gtest/gtest.h>

#include "protocol/plan.hpp"
#include "protocol/protocol.hpp"

using namespace xlp;
using nlohmann::json;

namespace {

json valid_request() {
  return json::parse(R"({"id":1,"op":"trial","duration":2.0,"timeout":1.0,
    "flows":[{"name":"forward","tx_port":0,"rx_port":1,"rate":1000,"mix":{"n":10,"m":9},
      "foreground":{"ip_version":6,"src_mac":"02:00:00:00:00:01","dst_mac":"02:00:00:00:00:02",
        "src_ip":"2001:2::2","dst_ip":"2001:2:0:1::2","frame_size":84,"rx_frame_size":64},
      "background":{"ip_version":6,"src_mac":"02:00:00:00:00:01","dst_mac":"02:00:00:00:00:02",
        "src_ip":"2001:2::2","dst_ip":"2001:2:0:8000::2","frame_size":84}}]})");
}

std::string error_of(const json& req) {
  try {
    protocol::parse_trial(req, 2);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Plan, ParsesAValidRequest) {
  TrialPlan p = protocol::parse_trial(valid_request(), 2);
  ASSERT_EQ(p.flows.size(), 1u);
  const FlowPlan& f = p.flows[0];
  EXPECT_EQ(f.planned_frames(p.duration), 2000u);
  ASSERT_EQ(f.streams.size(), 2u);  // mix {n, m}: the foreground and background streams
  EXPECT_EQ(f.streams[0].kind, StreamPlan::Kind::kForeground);
  EXPECT_EQ(f.streams[0].rx_frame_size, 64u);
  EXPECT_EQ(f.streams[1].kind, StreamPlan::Kind::kBackground);
  EXPECT_EQ(f.streams[1].rx_frame_size, 84u);  // defaults to the sent size
  EXPECT_EQ(f.pattern, (std::vector<uint8_t>{0, 0, 0, 0, 0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(f.frames_of(0, 2000), 1800u);   // exactly 90 %
  EXPECT_EQ(f.frames_of(0, 15), 9u + 5u);   // k % 10 < 9 for k = 0..14
  EXPECT_EQ(f.frames_of(1, 15), 1u);
}

TEST(Plan, ErrorsNameKeyValueAndRange) {
  json r = valid_request();
  r["flows"][0]["rate"] = 0;
  EXPECT_EQ(error_of(r), "flows[0].rate = 0: must be an integer in 1..1000000000");
  r = valid_request();
  r["flows"][0]["foreground"]["frame_size"] = 64;
  EXPECT_EQ(error_of(r), "flows[0].foreground.frame_size = 64: must be an integer in 84..9216");
  r = valid_request();
  r["flows"][0]["rx_port"] = 2;
  EXPECT_EQ(error_of(r), "flows[0].rx_port = 2: must be an integer in 0..1");
  r = valid_request();
  r["flows"][0]["foreground"]["src_ip"] = "198.18.0.2";
  EXPECT_NE(error_of(r).find("flows[0].foreground.src_ip = \"198.18.0.2\""), std::string::npos);
  r = valid_request();
  r["flows"][0]["foreground"]["ip_version"] = 5;
  EXPECT_EQ(error_of(r), "flows[0].foreground.ip_version = 5: must be 4 or 6");
  r = valid_request();
  r["flows"][0].erase("background");
  EXPECT_EQ(error_of(r), "flows[0].background: missing");
  r = valid_request();
  r["duration"] = -1;
  EXPECT_EQ(error_of(r), "duration = -1: must be a number in 0.001..1000000.0");
}
