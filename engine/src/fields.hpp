// Fields that vary from frame to frame (RFC 4814 ports, the multiple-IP draft's 16-bit
// address part, RFC 2544 §12 destination networks): one generic mechanism. A field is a
// big-endian 16-bit word of the frame, or one byte of it, whose value is drawn per frame as
// increasing, decreasing or pseudorandom within [min, max]. Values are generated a burst at a
// time (the mode is looked at once per burst, not per frame), and the checksums are updated
// incrementally (RFC 1624) from the template's value, never recomputed.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "frame.hpp"

namespace xlp {

// xoshiro256** (Blackman & Vigna): fast, 2^256 - 1 period, passes BigCrush; seeded through
// splitmix64 so any 64-bit seed gives a good state.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (auto& w : s_) {
      seed += 0x9e3779b97f4a7c15ull;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      w = z ^ (z >> 31);
    }
  }
  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

// Eight independent xoshiro256** generators stepped together with GCC/Clang vector types, so
// each step is a handful of SIMD instructions (the multiplications by 5 and 9 are shifts and
// adds). One step yields 8 x 64 = 16 x 32 random bits.
class LaneRng {
 public:
  static constexpr int kLanes = 8;
  typedef uint64_t Vec __attribute__((vector_size(8 * kLanes)));
  explicit LaneRng(uint64_t seed) {
    Rng seeder(seed);
    for (auto& word : s_)
      for (int l = 0; l < kLanes; ++l) word[l] = seeder.next();
  }
  Vec next() {
    const Vec x5 = (s_[1] << 2) + s_[1];
    const Vec r = (x5 << 7) | (x5 >> 57);
    const Vec result = (r << 3) + r;
    const Vec t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = (s_[3] << 45) | (s_[3] >> 19);
    return result;
  }

 private:
  Vec s_[4];
};

// Unbiased mapping of 32-bit random numbers onto [0, range) (Lemire, "Fast random integer
// generation in an interval", 2019): multiply-shift, rejecting the few products whose low
// half falls below (2^32 - range) % range, so every value has exactly the same probability.
// Word is the width of the random input (uint32_t in the engine; narrower in the tests,
// which check the exact counts over every possible input).
template <class Word, class Wide>
class BasicRangeMapper {
 public:
  explicit BasicRangeMapper(Word range) : range_(range), threshold_(Word(Word(-range) % range)) {}
  // Returns true and sets `out` unless the draw must be rejected.
  bool map(Word x, Word& out) const {
    const Wide m = Wide(x) * range_;
    if (Word(m) < threshold_) return false;
    out = Word(m >> (8 * sizeof(Word)));
    return true;
  }

 private:
  Word range_, threshold_;
};
using RangeMapper = BasicRangeMapper<uint32_t, uint64_t>;

constexpr size_t kMaxFields = 8;  // varying fields per stream

// kEnumerate: the field is one digit of a stream's joint enumeration (enumerate.hpp).
enum class VaryMode { kIncreasing, kDecreasing, kRandom, kEnumerate };

// Where and how one field varies.
struct FieldSpec {
  std::string name;        // for messages: "src_port", "dst_ip[2]", ...
  uint16_t word_offset;    // offset of the big-endian 16-bit word in the frame (even)
  uint8_t shift;           // 0: the whole word, or the low byte; 8: the high byte
  bool byte_only;          // an 8-bit field (the other byte keeps the template's value)
  bool in_ipv4_header;     // also covered by the IPv4 header checksum
  VaryMode mode;
  uint32_t min, max;
};

// Generates the values of one field. For increasing/decreasing the sequence starts at
// min/max and wraps around; for random every value of [min, max] is equally likely. Each
// field has its own generator, so a seed always yields the same frames, however the frames
// happen to be grouped into bursts (RFC 4814 §4.2.1 repeatability). A lane q of several TX
// queues sharing a flow (pacing.hpp) takes every lanes-th value of the sequence from the
// q-th: start = q, stride = lanes.
class FieldGenerator {
 public:
  FieldGenerator(const FieldSpec& spec, uint16_t template_word, uint64_t seed, uint32_t start = 0,
                 uint32_t stride = 1)
      : spec_(spec), rng_(seed), range_(spec.max - spec.min + 1),
        threshold_(uint32_t(-range_) % range_),
        other_(spec.byte_only ? uint16_t(template_word & (spec.shift ? 0x00ff : 0xff00)) : 0),
        not_template_(uint16_t(~template_word)), step_(stride % range_),
        next_(spec.mode == VaryMode::kDecreasing ? spec.max - start % range_ : spec.min + start % range_) {}

  // Fills out[0..count) with the words to write; one switch per burst.
  void generate(uint16_t* out, uint32_t count) {
    switch (spec_.mode) {
      case VaryMode::kIncreasing:
        for (uint32_t i = 0; i < count; ++i) {
          out[i] = word(next_);
          next_ += step_;
          if (next_ > spec_.max) next_ -= range_;  // wraps around
        }
        break;
      case VaryMode::kDecreasing:
        for (uint32_t i = 0; i < count; ++i) {
          out[i] = word(next_);
          next_ = next_ - spec_.min < step_ ? next_ + range_ - step_ : next_ - step_;
        }
        break;
      case VaryMode::kEnumerate:  // values come from the stream's TupleEnumerator
        break;
      case VaryMode::kRandom:
        for (uint32_t i = 0; i < count;) {
          if (ready_ == taken_) refill();
          const uint32_t n = std::min(count - i, ready_ - taken_);
          std::memcpy(out + i, ready_values_ + taken_, n * sizeof *out);
          i += n;
          taken_ += n;
        }
        break;
    }
  }
  const FieldSpec& spec() const { return spec_; }
  // The word written for the value min + offset (enumeration digits).
  uint16_t word_at(uint32_t offset) const { return word(spec_.min + offset); }
  // One's complement of the template's word: adding value + this to a sum replaces the
  // template's contribution by the new value (RFC 1624, eqn. 3).
  uint16_t not_template() const { return not_template_; }

 private:
  uint16_t word(uint32_t v) const { return uint16_t(other_ | (v << spec_.shift)); }

  // Sixteen random words at a time, all lanes at once: Lemire's multiply-shift mapping onto
  // [min, max] (RangeMapper's, on vectors), then the rare rejected draws (probability below
  // 2^-16 per draw) are dropped, keeping the accepted ones in order.
  void refill() {
    using Vec = LaneRng::Vec;
    typedef uint16_t Words __attribute__((vector_size(2 * LaneRng::kLanes)));
    const Vec r = rng_.next();
    const Vec products[2] = {(r & 0xffffffffu) * uint64_t(range_), (r >> 32) * uint64_t(range_)};
    Vec rejected = {};
    for (int h = 0; h < 2; ++h) {
      const Vec v = (((products[h] >> 32) + spec_.min) << spec_.shift) | other_;
      const Words w = __builtin_convertvector(v, Words);
      std::memcpy(ready_values_ + h * LaneRng::kLanes, &w, sizeof w);
      rejected |= (products[h] & 0xffffffffu) < threshold_;
    }
    taken_ = 0;
    ready_ = 2 * LaneRng::kLanes;
    bool any = false;
    for (int l = 0; l < LaneRng::kLanes; ++l) any |= rejected[l] != 0;
    if (any) {  // about once in 4000 refills: redo the compaction one by one
      ready_ = 0;
      for (int h = 0; h < 2; ++h)
        for (int l = 0; l < LaneRng::kLanes; ++l)
          if ((products[h][l] & 0xffffffffu) >= threshold_)
            ready_values_[ready_++] = ready_values_[h * LaneRng::kLanes + l];
    }
  }

  FieldSpec spec_;
  LaneRng rng_;
  uint32_t range_, threshold_;
  uint16_t other_, not_template_;
  uint32_t step_;
  uint32_t next_;
  uint16_t ready_values_[2 * LaneRng::kLanes];
  uint32_t ready_ = 0, taken_ = 0;
};

// Writes one field's values into a burst of frames and adds, per frame, what the new value
// changes in the UDP checksum sum (and in the IPv4 header sum, for address fields of IPv4).
// Field-major order: the loops over the frames have no branch on the field's configuration.
// Frame at(k) receives values[k], for k < count; `at` maps a stream's k-th frame of the burst
// to its position in the burst (the identity when the flow has a single stream).
// The sums are updated in loops of their own: a byte store into a frame may alias anything,
// so mixing the two would make the compiler reload the sums after every store.
template <class Position>
inline void apply_field(const FieldGenerator& g, const uint16_t* __restrict values, uint32_t count,
                        uint8_t* const* __restrict frames, Position at,
                        uint64_t* __restrict udp_delta, uint64_t* __restrict ip_delta) {
  const uint16_t offset = g.spec().word_offset, not_template = g.not_template();
  for (uint32_t k = 0; k < count; ++k)  // ports and addresses: all in the UDP checksum
    udp_delta[at(k)] += uint64_t(values[k]) + not_template;
  if (g.spec().in_ipv4_header)
    for (uint32_t k = 0; k < count; ++k) ip_delta[at(k)] += uint64_t(values[k]) + not_template;
  for (uint32_t k = 0; k < count; ++k) {
    const uint16_t be = __builtin_bswap16(values[k]);
    std::memcpy(frames[at(k)] + offset, &be, 2);
  }
}

// The IPv4 header checksum after address fields changed the header by `ip_delta`.
inline void finish_ipv4_header(uint8_t* frame, const FrameTemplate& t, uint64_t ip_delta) {
  const uint16_t csum = __builtin_bswap16(uint16_t(~fold(t.ipv4_header_sum + ip_delta)));
  std::memcpy(frame + t.ip_offset + 10, &csum, 2);
}

}  // namespace xlp
