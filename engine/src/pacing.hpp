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

class Schedule {
 public:
  Schedule(uint64_t tsc_hz, uint64_t rate, uint64_t frames, uint64_t start_tsc)
      : hz_(tsc_hz), rate_(rate), frames_(frames), start_(start_tsc),
        min_burst_(uint32_t(std::clamp<uint64_t>(rate / 1000000, 1, kMaxBurst))) {}

  // First TSC tick at or after the exact due time of frame k (never early).
  uint64_t due_tsc(uint64_t k) const {
    return start_ + uint64_t(((unsigned __int128)k * hz_ + rate_ - 1) / rate_);
  }
  // Number of frames due at `now` (frame k is due when now >= due_tsc(k)), capped at the total.
  uint64_t due_count(uint64_t now) const {
    if (now < start_) return 0;
    uint64_t n = uint64_t((unsigned __int128)(now - start_) * rate_ / hz_) + 1;
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

 private:
  uint64_t hz_, rate_, frames_, start_;
  uint32_t min_burst_;
};

}  // namespace xlp
