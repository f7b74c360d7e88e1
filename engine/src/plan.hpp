// A trial request, parsed and validated (docs/protocol.md, op "trial"). Pure: no DPDK.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frame.hpp"

namespace xlp {

struct StreamPlan {
  FrameSpec spec;
  uint32_t rx_frame_size = 0;  // size of the frame as it arrives (after translation)
};

struct FlowPlan {
  std::string name;
  uint16_t tx_port = 0, rx_port = 0;
  uint64_t rate = 0;           // frames/s, foreground and background together
  uint32_t mix_n = 1, mix_m = 1;
  StreamPlan foreground;
  std::optional<StreamPlan> background;

  uint64_t planned_frames(double duration) const;
  // Frames of the first `total` that are foreground: frame k is foreground iff k % n < m.
  uint64_t foreground_frames(uint64_t total) const {
    return total / mix_n * mix_m + std::min<uint64_t>(total % mix_n, mix_m);
  }
};

struct TrialPlan {
  double duration = 0, timeout = 2.0, progress_interval = 1.0;
  bool finish_early = true;
  std::vector<FlowPlan> flows;
};

// Throws std::invalid_argument naming the offending key, its value and the allowed range.
TrialPlan parse_trial(const nlohmann::json& request, uint16_t port_count);

}  // namespace xlp
