// Constant-rate schedule: frame k is due at start + k / rate. Frames are handed to the port
// in small bursts of frames that are already due; the burst never covers more than about
// one microsecond of the schedule at high rates, so the rate stays constant at the
// microsecond scale while the cost of a tx_burst call is shared by up to kMaxBurst frames.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace xlp {

constexpr uint32_t kMaxBurst = 32;

// The maximum frame rate of Ethernet (RFC 2544 §20, RFC 5180 App. A.1): line rate over the
// frame plus 8 bytes preamble/SFD and 12 bytes inter-frame gap, plus any overhead.
inline uint64_t max_frame_rate(uint64_t line_rate_bps, uint32_t frame_size, uint32_t overhead = 0) {
  return line_rate_bps / (8ull * (frame_size + overhead + 20));
}

// A stretch of a flow at one rate: from `start_s` seconds after the start, frames from
// `first_frame` on are sent at `rate` (RFC 2544 §26.5: overload, then a lower rate).
struct RateSegment {
  uint64_t first_frame = 0;
  double start_s = 0;
  uint64_t rate = 0;
};

// The schedule of one lane of a flow: with `lanes` TX queues sharing a flow, frame k of the
// flow (due at start + k / rate, or by its rate segment) is sent by lane k % lanes, so lane
// q's j-th frame is the flow's frame j * lanes + q. Each lane follows its share of the one
// schedule, and together they send at exactly the flow's rate (one lane: the flow's own
// schedule).
class Schedule {
 public:
  Schedule(uint64_t tsc_hz, uint64_t rate, uint64_t frames, uint64_t start_tsc, uint32_t lane = 0,
           uint32_t lanes = 1)
      : Schedule(tsc_hz, std::vector<RateSegment>{{0, 0.0, rate}}, frames, start_tsc, lane, lanes) {}
  Schedule(uint64_t tsc_hz, const std::vector<RateSegment>& segments, uint64_t frames, uint64_t start_tsc,
           uint32_t lane = 0, uint32_t lanes = 1)
      : hz_(tsc_hz), frames_(frames), start_(start_tsc), lane_(lane), lanes_(lanes) {
    uint64_t fastest = 0;
    for (const RateSegment& s : segments) {
      segments_.push_back({s.first_frame, uint64_t(std::llround(s.start_s * double(tsc_hz))), s.rate});
      fastest = std::max(fastest, s.rate);
    }
    min_burst_ = uint32_t(std::clamp<uint64_t>(fastest / lanes / 1000000, 1, kMaxBurst));
  }

  // First TSC tick at or after the exact due time of the lane's frame j (never early). A
  // stretch at rate 0 (a delayed start: only the first, before a rate step) has no frames: the
  // next stretch starts at the same frame, so it is the one found here and nothing divides by 0;
  // due_count caps the 0-rate stretch's count at that same first frame.
  uint64_t due_tsc(uint64_t j) const {
    const uint64_t k = j * lanes_ + lane_;
    size_t i = segments_.size() - 1;
    while (i > 0 && segments_[i].first_frame > k) --i;
    const Segment& s = segments_[i];
    return start_ + s.start_tsc + uint64_t(((unsigned __int128)(k - s.first_frame) * hz_ + s.rate - 1) / s.rate);
  }
  // Number of the lane's frames due at `now` (frame j is due when now >= due_tsc(j)), capped
  // at the lane's total.
  uint64_t due_count(uint64_t now) const {
    if (now < start_) return 0;
    const uint64_t elapsed = now - start_;
    size_t i = segments_.size() - 1;
    while (i > 0 && segments_[i].start_tsc > elapsed) --i;
    const Segment& s = segments_[i];
    uint64_t flow_due = s.first_frame + uint64_t((unsigned __int128)(elapsed - s.start_tsc) * s.rate / hz_) + 1;
    if (i + 1 < segments_.size()) flow_due = std::min(flow_due, segments_[i + 1].first_frame);
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
  struct Segment {
    uint64_t first_frame, start_tsc, rate;
  };
  uint64_t hz_, frames_, start_;
  uint32_t lane_, lanes_;
  std::vector<Segment> segments_;
  uint32_t min_burst_ = 1;
};

}  // namespace xlp
