// Constant-rate schedule: frame k is due at start + k / rate. Frames are handed to the port
// in small bursts of frames that are already due; the burst never covers more than about
// one microsecond of the schedule at high rates, so the rate stays constant at the
// microsecond scale while the cost of a tx_burst call is shared by up to kMaxBurst frames.
#pragma once
#include <algorithm>
#include <cstdint>

namespace xlp {

constexpr uint32_t kMaxBurst = 32;

// The maximum frame rate of Ethernet (RFC 2544 §20, RFC 5180 App. A.1): line rate over the
// frame plus 8 bytes preamble/SFD and 12 bytes inter-frame gap, plus any overhead.
inline uint64_t max_frame_rate(uint64_t line_rate_bps, uint32_t frame_size, uint32_t overhead = 0) {
  return line_rate_bps / (8ull * (frame_size + overhead + 20));
}

// The schedule of one lane of a flow: with `lanes` TX queues sharing a flow, frame k of the
// flow (due at start + k / rate) is sent by lane k % lanes, so lane q's j-th frame is the
// flow's frame j * lanes + q. Each lane follows its share of the one schedule, and together
// they send at exactly the flow's rate (one lane: the flow's own schedule).
class Schedule {
 public:
  Schedule(uint64_t tsc_hz, uint64_t rate, uint64_t frames, uint64_t start_tsc, uint32_t lane = 0,
           uint32_t lanes = 1)
      : hz_(tsc_hz), rate_(rate), frames_(frames), start_(start_tsc), lane_(lane), lanes_(lanes),
        min_burst_(uint32_t(std::clamp<uint64_t>(rate / lanes / 1000000, 1, kMaxBurst))) {}

  // First TSC tick at or after the exact due time of the lane's frame j (never early).
  uint64_t due_tsc(uint64_t j) const {
    const unsigned __int128 k = (unsigned __int128)j * lanes_ + lane_;
    return start_ + uint64_t((k * hz_ + rate_ - 1) / rate_);
  }
  // Number of the lane's frames due at `now` (frame j is due when now >= due_tsc(j)), capped
  // at the lane's total.
  uint64_t due_count(uint64_t now) const {
    if (now < start_) return 0;
    const uint64_t flow_due = uint64_t((unsigned __int128)(now - start_) * rate_ / hz_) + 1;
    const uint64_t n = flow_due > lane_ ? (flow_due - 1 - lane_) / lanes_ + 1 : 0;
    return std::min(n, frames_);
  }
  // When to send next, given `sent` frames already handed to the port: once a minimum
  // burst is due (or the last frames, at the end of the trial).
  uint64_t next_send_tsc(uint64_t sent) const {
    return due_tsc(std::min(sent + min_burst_, frames_) - 1);
  }
  uint64_t frames() const { return frames_; }
  uint64_t start() const { return start_; }
  uint32_t min_burst() const { return min_burst_; }

  // Frames of a flow of `total` frames that lane `lane` of `lanes` sends.
  static uint64_t lane_frames(uint64_t total, uint32_t lane, uint32_t lanes) {
    return total > lane ? (total - 1 - lane) / lanes + 1 : 0;
  }

 private:
  uint64_t hz_, rate_, frames_, start_;
  uint32_t lane_, lanes_;
  uint32_t min_burst_;
};

}  // namespace xlp
