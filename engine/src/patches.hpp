// Stateful phase 1 at the fixed-frame rate: the frames of an enumeration are computed before
// the trial, so that the sender only copies a few words into each frame.
#pragma once
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "checksum.hpp"
#include "enumerate.hpp"
#include "fields.hpp"
#include "frame.hpp"
#include "pacing.hpp"

namespace xlp {

// Per frame of one period of the enumeration (min(frames, combinations)), a record of the
// 16-bit words to store at fixed offsets (every enumerated field and, for IPv4 with address
// fields, the finished header checksum) followed by what the record adds to the UDP checksum
// sum. Frame-major, so the sender reads one contiguous record per frame (what the hardware
// prefetcher streams best) and does no checksum folding of its own beyond the UDP one it
// always does.
class FramePatches {
 public:
  static constexpr size_t kMaxWords = kMaxFields + 1;

  // Null when precomputing does not apply: some varying field is not enumerated (it would
  // change the sums after the fact), or the records would exceed `max_words` words.
  // Words per record: the stored words and the UDP sum, padded to a power of two so that a
  // record is one aligned load.
  static constexpr uint32_t stride_for(size_t words) { return std::bit_ceil(uint32_t(words) + 1); }

  static std::unique_ptr<FramePatches> precompute(const std::vector<FieldGenerator>& fields,
                                                  TupleEnumerator& enumerator, const FrameTemplate& t,
                                                  uint64_t frames, uint64_t max_words) {
    if (fields.empty() || fields.size() > kMaxFields) return nullptr;
    bool in_ipv4_header = false;
    for (const auto& f : fields) {
      if (f.spec().mode != VaryMode::kEnumerate) return nullptr;
      in_ipv4_header = in_ipv4_header || f.spec().in_ipv4_header;
    }
    auto p = std::unique_ptr<FramePatches>(new FramePatches);
    for (const auto& f : fields) p->offsets_.push_back(f.spec().word_offset);
    if (in_ipv4_header) p->offsets_.push_back(uint16_t(t.ip_offset + 10));
    p->stride_ = stride_for(p->offsets_.size());
    p->period_ = std::min(frames, enumerator.space());
    if (p->period_ * p->stride_ > max_words) return nullptr;
    p->records_.resize(p->period_ * p->stride_);

    uint32_t digits[kMaxFields][kMaxBurst];
    uint16_t* record = p->records_.data();
    for (uint64_t k = 0; k < p->period_; k += kMaxBurst) {
      const uint32_t n = uint32_t(std::min<uint64_t>(kMaxBurst, p->period_ - k));
      enumerator.generate(digits, n);
      for (uint32_t j = 0; j < n; ++j, record += p->stride_) {
        uint64_t udp_sum = 0, ip_sum = 0;
        for (size_t e = 0; e < fields.size(); ++e) {
          const FieldGenerator& g = fields[e];
          const uint16_t value = g.word_at(digits[e][j]);
          record[e] = __builtin_bswap16(value);  // stored as it appears in the frame
          udp_sum += uint64_t(value) + g.not_template();  // RFC 1624 eqn. 3
          if (g.spec().in_ipv4_header) ip_sum += uint64_t(value) + g.not_template();
        }
        if (in_ipv4_header)
          record[fields.size()] = __builtin_bswap16(uint16_t(~fold(t.ipv4_header_sum + ip_sum)));
        record[p->stride_ - 1] = fold(udp_sum);
      }
    }
    return p;
  }

  // Reads the records in order and writes them into frames. A local object, so that its
  // position stays in registers while the sender's byte stores (which may alias anything)
  // go into the frames; `save()` hands the position back to the FramePatches.
  template <size_t kWords>
  class Cursor {
   public:
    static constexpr size_t kStride = stride_for(kWords);
    explicit Cursor(const FramePatches& p)
        : begin_(p.records_.data()), end_(begin_ + p.period_ * kStride), at_(begin_ + p.next_ * kStride) {
      std::memcpy(offsets_, p.offsets_.data(), sizeof offsets_);
      // The records of the burst after next, one prefetch per cache line: the period is
      // larger than the caches, and the hardware prefetcher alone left the sender waiting.
      const size_t size = size_t(end_ - begin_);
      size_t ahead = size_t(at_ - begin_) + 2 * kMaxBurst * kStride;
      if (ahead >= size) ahead %= size;
      for (size_t b = 0; b < kMaxBurst * kStride * 2; b += 64)
        __builtin_prefetch(reinterpret_cast<const uint8_t*>(begin_ + ahead) + b);
    }
    // Writes the next record into `frame`; returns what it adds to the UDP checksum sum.
    uint16_t write(uint8_t* frame) {
      uint16_t words[kStride];  // loaded before the stores, which may alias anything
      std::memcpy(words, at_, sizeof words);
      for (size_t w = 0; w < kWords; ++w) std::memcpy(frame + offsets_[w], words + w, 2);
      at_ += kStride;
      if (at_ == end_) at_ = begin_;  // more frames than combinations: start over
      return words[kStride - 1];
    }
    void save(FramePatches& p) const { p.next_ = uint64_t(at_ - begin_) / kStride; }

   private:
    const uint16_t *begin_, *end_, *at_;
    uint16_t offsets_[kWords];
  };

  // Calls f(std::integral_constant<size_t, words>) for this enumeration's number of stored
  // words: one switch per burst, and the per-frame code is unrolled for the width.
  template <class F>
  void with_width(F&& f) {
    switch (offsets_.size()) {
      case 1: return f(std::integral_constant<size_t, 1>{});
      case 2: return f(std::integral_constant<size_t, 2>{});
      case 3: return f(std::integral_constant<size_t, 3>{});
      case 4: return f(std::integral_constant<size_t, 4>{});
      case 5: return f(std::integral_constant<size_t, 5>{});
      case 6: return f(std::integral_constant<size_t, 6>{});
      case 7: return f(std::integral_constant<size_t, 7>{});
      case 8: return f(std::integral_constant<size_t, 8>{});
      default: return f(std::integral_constant<size_t, 9>{});
    }
  }

  // Writes the next `count` records into the frames at(0..count) and adds their UDP sums to
  // udp_delta[at(k)] (flows that mix two streams; single streams use a Cursor directly).
  template <class Position>
  void apply(uint32_t count, uint8_t* const* frames, Position at, uint64_t* __restrict udp_delta) {
    with_width([&](auto words) {
      Cursor<words> cursor(*this);
      for (uint32_t k = 0; k < count; ++k) udp_delta[at(k)] += cursor.write(frames[at(k)]);
      cursor.save(*this);
    });
  }
  // The records set the IPv4 header checksum: the sender must not recompute it.
  bool sets_ipv4_checksum(size_t fields) const { return offsets_.size() > fields; }
  uint64_t period() const { return period_; }

 private:
  FramePatches() = default;
  static_assert(kMaxWords == 9, "with_width() dispatches on 1..9 words");

  std::vector<uint16_t> offsets_;  // where each stored word goes in the frame
  std::vector<uint16_t> records_;  // period_ x stride_
  uint32_t stride_ = 0;            // words per record: offsets_.size() + the UDP sum
  uint64_t period_ = 0, next_ = 0;
};

}  // namespace xlp
