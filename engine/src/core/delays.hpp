// Per-stream delay bookkeeping on the receive side: the histogram of every frame's one-way
// delay (PDV), inter-packet delay variation in send order (IPDV), and the individual delays
// of the frames tagged for a latency measurement (RFC 8219 §7.2, §7.3). Pure: no DPDK.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "core/histogram.hpp"

namespace xlp {

// IPDV(i) = D(i) - D(i-1) for consecutive sequence numbers (RFC 8219 §7.3.2, RFC 5481): a
// window of the last kWindow delays by sequence number pairs each frame with its predecessor,
// even when the two arrive in the opposite order; a pair with a lost frame has no IPDV.
class IpdvTracker {
 public:
  static constexpr size_t kWindow = 4096;
  void add(uint64_t seq, int64_t delay) {
    const Slot& prev = window_[(seq - 1) % kWindow];
    if (seq > 0 && prev.valid && prev.seq == seq - 1) values_.add(delay - prev.delay);
    const Slot& next = window_[(seq + 1) % kWindow];
    if (next.valid && next.seq == seq + 1) values_.add(next.delay - delay);  // arrived first
    window_[seq % kWindow] = {seq, delay, true};
  }
  const SignedHistogram& values() const { return values_; }

 private:
  struct Slot {
    uint64_t seq = 0;
    int64_t delay = 0;
    bool valid = false;
  };
  std::array<Slot, kWindow> window_{};
  SignedHistogram values_;
};

// The frames tagged for latency: `count` sequence numbers spread evenly over [first, total),
// seq_j = first + floor(j * (total - first) / count). Membership is arithmetic, O(1).
class TaggedFrames {
 public:
  TaggedFrames(uint64_t first, uint64_t total, uint64_t count)
      : first_(first), span_(total - first), delays_(count, -1) {}
  uint64_t seq_of(uint64_t j) const {
    return first_ + uint64_t((unsigned __int128)j * span_ / delays_.size());
  }
  // Records the delay if `seq` is a tagged frame.
  void record(uint64_t seq, int64_t delay) {
    if (seq < first_) return;
    const uint64_t n = delays_.size();
    const uint64_t j = uint64_t(((unsigned __int128)(seq - first_) * n + span_ - 1) / span_);
    if (j < n && seq_of(j) == seq) delays_[j] = delay;
  }
  const std::vector<int64_t>& delays() const { return delays_; }  // -1: not received

 private:
  uint64_t first_, span_;
  std::vector<int64_t> delays_;
};

}  // namespace xlp
