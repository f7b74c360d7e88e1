// Fields that vary from frame to frame (RFC 4814 ports, the multiple-IP draft's 16-bit
// address part, RFC 2544 §12 destination networks): one generic mechanism. A field is a
// big-endian 16-bit word of the frame, or one byte of it, whose value is drawn per frame as
// increasing, decreasing or pseudorandom within [min, max]. Values are generated a burst at a
// time (the mode is looked at once per burst, not per frame), and the checksums are updated
// incrementally (RFC 1624) from the template's value, never recomputed.
#pragma once
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

enum class VaryMode { kIncreasing, kDecreasing, kRandom };

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
// happen to be grouped into bursts (RFC 4814 §4.2.1 repeatability).
class FieldGenerator {
 public:
  FieldGenerator(const FieldSpec& spec, uint16_t template_word, uint64_t seed)
      : spec_(spec), rng_(seed), mapper_(spec.max - spec.min + 1),
        other_(spec.byte_only ? uint16_t(template_word & (spec.shift ? 0x00ff : 0xff00)) : 0),
        not_template_(uint16_t(~template_word)),
        next_(spec.mode == VaryMode::kDecreasing ? spec.max : spec.min) {}

  // Fills out[0..count) with the words to write; one switch per burst.
  void generate(uint16_t* out, uint32_t count) {
    switch (spec_.mode) {
      case VaryMode::kIncreasing:
        for (uint32_t i = 0; i < count; ++i) {
          out[i] = word(next_);
          next_ = next_ == spec_.max ? spec_.min : next_ + 1;
        }
        break;
      case VaryMode::kDecreasing:
        for (uint32_t i = 0; i < count; ++i) {
          out[i] = word(next_);
          next_ = next_ == spec_.min ? spec_.max : next_ - 1;
        }
        break;
      case VaryMode::kRandom: {
        uint32_t i = 0;
        while (i < count) {
          uint32_t v;
          if (mapper_.map(next32(), v)) out[i++] = word(spec_.min + v);
        }
        break;
      }
    }
  }
  const FieldSpec& spec() const { return spec_; }
  // One's complement of the template's word: adding value + this to a sum replaces the
  // template's contribution by the new value (RFC 1624, eqn. 3).
  uint16_t not_template() const { return not_template_; }

 private:
  uint16_t word(uint32_t v) const { return uint16_t(other_ | (v << spec_.shift)); }
  // Both halves of every 64-bit draw are used, in order, across burst boundaries.
  uint32_t next32() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const uint64_t r = rng_.next();
    spare_ = uint32_t(r >> 32);
    has_spare_ = true;
    return uint32_t(r);
  }
  FieldSpec spec_;
  Rng rng_;
  RangeMapper mapper_;
  uint16_t other_, not_template_;
  uint32_t next_;
  uint32_t spare_ = 0;
  bool has_spare_ = false;
};

// Writes field j of each generator's burst values (values[f * stride + j]) into the frame,
// fixes the IPv4 header checksum when a field lies in it, and returns what the fields add
// to the UDP checksum sum (to be passed to stamp_frame).
inline uint64_t apply_fields(uint8_t* frame, const FrameTemplate& t, const FieldGenerator* gens,
                             size_t count, const uint16_t* values, size_t stride, size_t j,
                             bool ipv4_fields) {
  uint64_t udp_delta = 0, ip_delta = 0;
  for (size_t f = 0; f < count; ++f) {
    const uint16_t v = values[f * stride + j];
    const uint16_t be = __builtin_bswap16(v);
    std::memcpy(frame + gens[f].spec().word_offset, &be, 2);
    const uint64_t delta = uint64_t(v) + gens[f].not_template();
    udp_delta += delta;  // ports and addresses are all covered by the UDP checksum
    if (gens[f].spec().in_ipv4_header) ip_delta += delta;
  }
  if (ipv4_fields) {
    const uint16_t csum = __builtin_bswap16(uint16_t(~fold(t.ipv4_header_sum + ip_delta)));
    std::memcpy(frame + t.ip_offset + 10, &csum, 2);
  }
  return udp_delta;
}

}  // namespace xlp
