// Receive-side bookkeeping of one stream: which sequence numbers arrived (a bitmap of the
// planned frames, so duplicates cannot hide losses), how many arrived out of order, and the
// one-way delay range of the frames.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>

namespace xlp {

class SequenceTracker {
 public:
  explicit SequenceTracker(uint64_t planned) : planned_(planned) {
    // calloc maps zero pages lazily: a 60 s trial at line rate costs no up-front memset.
    bits_.reset(static_cast<uint64_t*>(std::calloc((planned + 63) / 64 + 1, sizeof(uint64_t))));
    if (!bits_) throw std::bad_alloc();
  }

  enum class Result { kNew, kDuplicate, kOutOfRange };

  // The frame carries only the low 32 bits of the sequence number; the full number is the
  // one closest to the highest seen so far (streams longer than 2^32 frames stay exact as
  // long as reordering is shorter than 2^31 frames).
  Result record(uint32_t seq32) {
    uint64_t seq;
    return record(seq32, seq);
  }
  // The same, also giving the full sequence number.
  Result record(uint32_t seq32, uint64_t& seq) {
    uint64_t base = highest_ & ~uint64_t(0xffffffff);
    seq = base | seq32;
    if (seq > highest_ + (uint64_t(1) << 31) && seq >= (uint64_t(1) << 32)) seq -= uint64_t(1) << 32;
    else if (seq + (uint64_t(1) << 31) < highest_) seq += uint64_t(1) << 32;
    return record_full(seq);
  }
  // The same for a full sequence number (a DNS reply's, from its port and ID: dns::QueryKeys::seq_of).
  Result record_full(uint64_t seq) {
    if (seq >= planned_) return Result::kOutOfRange;
    uint64_t& word = bits_.get()[seq >> 6];
    const uint64_t bit = uint64_t(1) << (seq & 63);
    if (word & bit) return Result::kDuplicate;
    word |= bit;
    if (received_ > 0 && seq < highest_) ++reordered_;
    if (seq > highest_ || received_ == 0) highest_ = seq;
    ++received_;
    return Result::kNew;
  }

  // Whether sequence number `seq` (< planned) arrived.
  bool has(uint64_t seq) const { return (bits_.get()[seq >> 6] >> (seq & 63)) & 1; }
  // The 64 sequence numbers from 64 * w on, one bit each (set: arrived).
  uint64_t word(uint64_t w) const { return bits_.get()[w]; }

  uint64_t received() const { return received_; }
  uint64_t highest() const { return highest_; }
  uint64_t reordered() const { return reordered_; }
  uint64_t planned() const { return planned_; }

 private:
  struct Free { void operator()(uint64_t* p) const { std::free(p); } };
  std::unique_ptr<uint64_t, Free> bits_;
  uint64_t planned_;
  uint64_t highest_ = 0, received_ = 0, reordered_ = 0;
};

}  // namespace xlp
