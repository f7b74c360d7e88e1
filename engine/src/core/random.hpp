// The engine's pseudorandom numbers: one generator and an unbiased mapping onto a range,
// shared by the varying fields (fields.hpp) and the emulated CEs (ce.hpp).
#pragma once
#include <cstdint>

namespace xlp {

// splitmix64's output function (Steele, Lea and Flood 2014): a 64-bit mix in which every input
// bit flips each output bit with probability close to 1/2. Seeds the generator below; hashes a
// value where a pseudorandom function of it is wanted (the DNS test names' records).
constexpr uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// xoshiro256** (Blackman & Vigna): fast, 2^256 - 1 period, passes BigCrush; seeded through
// splitmix64 so any 64-bit seed gives a good state.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (auto& w : s_) {
      seed += 0x9e3779b97f4a7c15ull;
      w = mix64(seed);
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

}  // namespace xlp
