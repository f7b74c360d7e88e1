// Enumeration of four-tuples for stateful tests (RFC 9693 §4.3: in phase 1 every combination of
// the configured port and address ranges appears exactly once, in pseudorandom order), in
// memory independent of the size of the space.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace xlp {

// A keyed pseudorandom permutation of [0, size): a Feistel network on the smallest domain of
// 2^bits values that holds the space, with cycle walking (re-encrypting a value that falls
// outside [0, size) until it falls inside) so the result is a bijection on [0, size). The
// domain is less than 2 x size, so fewer than 2 encryptions are needed on average.
// Unbalanced for odd bit counts: the value splits into a high part of `high_` bits and a low
// part of `low_` bits, and the rounds alternately xor a keyed hash of one part into the other
// (each round is its own inverse, so the network is a bijection of the domain). The round
// hash is two keyed multiplications whose high bits are taken (multiplicative hashing):
// cheap enough to run per frame when a space is too large to precompute.
class FeistelPermutation {
 public:
  FeistelPermutation(uint64_t size, uint64_t seed) : size_(size) {
    if (size == 0) throw std::invalid_argument("enumeration space is empty");
    int bits = 1;
    while (bits < 64 && (uint64_t(1) << bits) < size) ++bits;
    high_ = bits / 2;
    low_ = bits - high_;
    for (auto& k : keys_) {
      seed += 0x9e3779b97f4a7c15ull;
      k = mix(seed);
    }
  }
  uint64_t operator()(uint64_t x) const {
    do x = encrypt(x);
    while (x >= size_);
    return x;
  }
  uint64_t size() const { return size_; }

 private:
  static uint64_t mix(uint64_t z) {  // splitmix64's finaliser: a good 64-bit mixer (keys)
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // The top `bits` bits of a keyed multiplicative hash of v (0 bits: 0).
  static uint64_t hash(uint64_t v, uint64_t key, int bits) {
    const uint64_t h = ((v ^ key) * 0x9e3779b97f4a7c15ull) ^ key;
    return bits == 0 ? 0 : (h * 0xd6e8feb86659fd93ull) >> (64 - bits);
  }
  uint64_t encrypt(uint64_t x) const {
    const uint64_t low_mask = low_ >= 64 ? ~0ull : (uint64_t(1) << low_) - 1;
    uint64_t high = x >> low_, low = x & low_mask;
    for (int r = 0; r < kRounds; r += 2) {
      high ^= hash(low, keys_[r], high_);
      low ^= hash(high, keys_[r + 1], low_);
    }
    return (high << low_) | low;
  }
  static constexpr int kRounds = 4;
  uint64_t size_;
  int high_, low_;
  uint64_t keys_[kRounds];
};

// Division by a constant through a multiplication (no divide instruction per frame): the
// quotient estimate from the reciprocal floor((2^64 - 1) / d) is at most 2 too small, and the
// remainder check corrects it.
class Divider {
 public:
  explicit Divider(uint64_t d) : d_(d), reciprocal_(~uint64_t(0) / d) {}
  // t / d into quotient, t % d returned.
  uint64_t divide(uint64_t t, uint64_t& quotient) const {
    uint64_t q = uint64_t((__uint128_t(t) * reciprocal_) >> 64);
    uint64_t r = t - q * d_;
    for (int fix = 0; fix < 2; ++fix) {
      const bool over = r >= d_;
      q += over;
      r -= over ? d_ : 0;
    }
    quotient = q;
    return r;
  }

 private:
  uint64_t d_, reciprocal_;
};

// Mixed-radix enumeration of several fields' ranges: index t of [0, space) gives digit_i =
// (t / (r_0 ... r_{i-1})) mod r_i, so the first field varies fastest. The order in which the
// frames visit the indices is increasing, decreasing or a FeistelPermutation.
class TupleEnumerator {
 public:
  enum class Order { kIncreasing, kDecreasing, kRandom };

  TupleEnumerator(std::vector<uint64_t> radices, Order order, uint64_t seed)
      : radices_(std::move(radices)), order_(order), space_(space_of(radices_)),
        permutation_(space_, seed) {
    for (uint64_t r : radices_) dividers_.emplace_back(r);
  }

  static uint64_t space_of(const std::vector<uint64_t>& radices) {
    uint64_t space = 1;
    for (uint64_t r : radices) {
      if (r == 0 || space > UINT64_MAX / r)
        throw std::invalid_argument("the enumerated fields span more than 2^64 - 1 combinations");
      space *= r;
    }
    return space;
  }

  // digits[i][k] for the next `count` frames (i: enumerated field, k: frame).
  template <size_t kStride>
  void generate(uint32_t (*digits)[kStride], uint32_t count) {
    for (uint32_t k = 0; k < count; ++k) {
      const uint64_t n = next_;
      if (++next_ == space_) next_ = 0;  // more frames than combinations: start over
      uint64_t t = order_ == Order::kIncreasing ? n
                   : order_ == Order::kDecreasing ? space_ - 1 - n
                                                  : permutation_(n);
      for (size_t i = 0; i < dividers_.size(); ++i) digits[i][k] = uint32_t(dividers_[i].divide(t, t));
    }
  }
  uint64_t space() const { return space_; }
  // Continues from index `index` of the order (a lane's share of a flow's enumeration).
  void seek(uint64_t index) { next_ = index % space_; }

 private:
  std::vector<uint64_t> radices_;
  std::vector<Divider> dividers_;
  Order order_;
  uint64_t space_;
  FeistelPermutation permutation_;
  uint64_t next_ = 0;
};

}  // namespace xlp
