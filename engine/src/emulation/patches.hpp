// Stateful phase 1 at the fixed-frame rate: the frames of an enumeration are computed before
// the trial, so that the sender only copies a few bytes into each frame.
#pragma once
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/checksum.hpp"
#include "core/enumerate.hpp"
#include "emulation/fields.hpp"
#include "core/frame.hpp"
#include "core/pacing.hpp"

namespace xlp {

// Per frame of one period of the enumeration (min(frames, combinations)), a record holding
// the frame's bytes of one contiguous span that covers every enumerated field and, for IPv4
// with address fields, the finished header checksum (the bytes between them are the
// template's), followed by the record's change of the UDP checksum sum. Frame-major, so the
// sender reads one contiguous record per frame (what the hardware prefetcher streams best),
// stores the span with one or two wide moves, and folds no checksum beyond the UDP one it
// always does.
class FramePatches {
 public:
  // The widest span: IPv6 addresses' words from byte 8 of the source to the ports, 28 bytes.
  static constexpr size_t kMaxSpan = 32;

  // Null when precomputing does not apply: some varying field is not enumerated (it would
  // change the sums after the fact), the span is wider than kMaxSpan, or the records would
  // exceed `max_bytes`.
  static std::unique_ptr<FramePatches> precompute(const std::vector<FieldGenerator>& fields,
                                                  TupleEnumerator& enumerator, const FrameTemplate& t,
                                                  uint64_t frames, uint64_t max_bytes) {
    if (fields.empty() || fields.size() > kMaxFields) return nullptr;
    bool in_ipv4_header = false;
    uint32_t lo = UINT32_MAX, hi = 0;
    for (const auto& f : fields) {
      if (f.spec().mode != VaryMode::kEnumerate) return nullptr;
      in_ipv4_header = in_ipv4_header || f.spec().in_ipv4_header;
      lo = std::min<uint32_t>(lo, f.spec().word_offset);
      hi = std::max<uint32_t>(hi, f.spec().word_offset + 2u);
    }
    const uint32_t checksum = t.ipv4_checksum_at;
    if (in_ipv4_header) lo = std::min(lo, checksum), hi = std::max(hi, checksum + 2);
    if (hi - lo > kMaxSpan) return nullptr;

    auto p = std::unique_ptr<FramePatches>(new FramePatches);
    p->offset_ = uint16_t(lo);
    p->length_ = uint16_t(hi - lo);
    p->sets_ipv4_checksum_ = in_ipv4_header;
    p->stride_ = stride_for(p->length_);
    p->period_ = std::min(frames, enumerator.space());
    if (p->period_ + kMaxBurst > max_bytes / p->stride_) return nullptr;
    // One burst more than the period, repeating its start: a burst runs past the end without
    // a check per frame, and the cursor wraps around once per burst.
    p->records_.resize((p->period_ + kMaxBurst) * p->stride_);

    uint32_t digits[kMaxFields][kMaxBurst];
    uint8_t* record = p->records_.data();
    for (uint64_t k = 0; k < p->period_; k += kMaxBurst) {
      const uint32_t n = uint32_t(std::min<uint64_t>(kMaxBurst, p->period_ - k));
      enumerator.generate(digits, n);
      for (uint32_t j = 0; j < n; ++j, record += p->stride_) {
        std::memcpy(record, t.bytes.data() + lo, p->length_);
        uint64_t udp_sum = 0, ip_sum = 0;
        for (size_t e = 0; e < fields.size(); ++e) {
          const FieldGenerator& g = fields[e];
          const uint16_t value = g.word_at(digits[e][j]);
          const uint8_t be[2] = {uint8_t(value >> 8), uint8_t(value)};
          std::memcpy(record + g.spec().word_offset - lo, be, 2);
          udp_sum += uint64_t(value) + g.not_template();  // RFC 1624 eqn. 3
          if (g.spec().in_ipv4_header) ip_sum += uint64_t(value) + g.not_template();
        }
        if (in_ipv4_header) {
          const uint16_t c = uint16_t(~fold(t.ipv4_header_sum + ip_sum));
          const uint8_t be[2] = {uint8_t(c >> 8), uint8_t(c)};
          std::memcpy(record + checksum - lo, be, 2);
        }
        const uint16_t sum = fold(udp_sum);
        std::memcpy(record + p->stride_ - 2, &sum, 2);
      }
    }
    for (uint64_t i = 0; i < kMaxBurst; ++i)
      std::memcpy(record + i * p->stride_, p->records_.data() + (i % p->period_) * p->stride_, p->stride_);
    return p;
  }

  // Bytes per record: the span and the UDP sum, padded to a power of two so that records
  // stay aligned.
  static constexpr uint32_t stride_for(size_t length) { return std::bit_ceil(uint32_t(length) + 2); }

  // Reads the records in order and writes them into frames. A local object, so that its
  // position stays in registers while the sender's byte stores (which may alias anything)
  // go into the frames; `save()` hands the position back to the FramePatches.
  template <size_t kLength>
  class Cursor {
   public:
    static constexpr size_t kStride = stride_for(kLength);
    // At most kMaxBurst write() calls per Cursor: the records hold one burst beyond the period.
    explicit Cursor(FramePatches& p)
        : owner_(p), offset_(p.offset_), begin_(p.records_.data()), at_(begin_ + p.next_ * kStride) {
      // The records of the burst after next, one prefetch per cache line: the period is
      // larger than the caches, and the hardware prefetcher alone left the sender waiting.
      uint64_t ahead = p.next_ + 2 * kMaxBurst;
      if (ahead >= p.period_) ahead %= p.period_;
      for (size_t b = 0; b < kMaxBurst * kStride; b += 64) __builtin_prefetch(begin_ + ahead * kStride + b);
    }
    // Writes the next record into `frame`; returns what it adds to the UDP checksum sum.
    uint16_t write(uint8_t* frame) {
      uint16_t sum;
      std::memcpy(&sum, at_ + kStride - 2, 2);
      copy_span(frame + offset_, at_);
      at_ += kStride;
      return sum;
    }
    void save() const {
      uint64_t next = uint64_t(at_ - begin_) / kStride;
      if (next >= owner_.period_) next %= owner_.period_;  // more frames than combinations: start over
      owner_.next_ = next;
    }

   private:
    // kLength bytes in register-sized chunks (the last one overlapping the one before when
    // kLength is not a multiple of the chunk), all loaded before any is stored: through a
    // buffer on the stack, overlapping stores would stall the loads that read them back.
    static void copy_span(uint8_t* __restrict dst, const uint8_t* __restrict src) {
      using Chunk = std::conditional_t<kLength >= 8, uint64_t, std::conditional_t<kLength >= 4, uint32_t, uint16_t>>;
      constexpr size_t kChunk = sizeof(Chunk), kChunks = (kLength + kChunk - 1) / kChunk;
      Chunk chunks[kChunks];
      for (size_t i = 0; i < kChunks; ++i) std::memcpy(&chunks[i], src + std::min(i * kChunk, kLength - kChunk), kChunk);
      for (size_t i = 0; i < kChunks; ++i) std::memcpy(dst + std::min(i * kChunk, kLength - kChunk), &chunks[i], kChunk);
    }

    FramePatches& owner_;
    const uint16_t offset_;
    const uint8_t *begin_, *at_;
  };

  // Calls f(std::integral_constant<size_t, length>) for this enumeration's span length (an
  // even number of bytes): one switch per burst, and the per-frame copy has a fixed size.
  template <class F>
  void with_length(F&& f) {
    with_length(std::forward<F>(f), std::make_index_sequence<kMaxSpan / 2>{});
  }

  // Writes the next `count` records into the frames at(0..count) and adds their UDP sums to
  // udp_delta[at(k)] (flows that mix two streams; single streams use a Cursor directly).
  template <class Position>
  void apply(uint32_t count, uint8_t* const* frames, Position at, uint64_t* __restrict udp_delta) {
    with_length([&](auto length) {
      Cursor<length> cursor(*this);
      for (uint32_t k = 0; k < count; ++k) udp_delta[at(k)] += cursor.write(frames[at(k)]);
      cursor.save();
    });
  }
  // The records set the IPv4 header checksum: the sender must not recompute it.
  bool sets_ipv4_checksum() const { return sets_ipv4_checksum_; }
  uint64_t period() const { return period_; }

 private:
  FramePatches() = default;

  template <class F, size_t... kHalf>
  void with_length(F&& f, std::index_sequence<kHalf...>) {
    // Exactly one length matches: the span has 2 * (kHalf + 1) bytes.
    ((length_ == 2 * (kHalf + 1) ? (f(std::integral_constant<size_t, 2 * (kHalf + 1)>{}), true) : false) || ...);
  }

  uint16_t offset_ = 0, length_ = 0;  // the span in the frame, bytes
  bool sets_ipv4_checksum_ = false;
  uint32_t stride_ = 0;               // bytes per record
  std::vector<uint8_t> records_;      // (period_ + kMaxBurst) x stride_
  uint64_t period_ = 0, next_ = 0;
};

}  // namespace xlp
