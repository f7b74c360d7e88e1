// Enumeration of four-tuples for stateful tests (RFC 9693 §4.3: in phase 1 every combination of
// the configured port and address ranges appears exactly once, in pseudorandom order), in
// memory independent of the size of the space.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace xlp {

// A keyed pseudorandom permutation of [0, size): a four-round Feistel network on the smallest
// domain of 2^(2h) values that holds the space, with cycle walking (re-encrypting a value that
// falls outside [0, size) until it falls inside) so the result is a bijection on [0, size).
// The domain is less than 4 x size, so the expected number of walks is below 4.
class FeistelPermutation {
 public:
  FeistelPermutation(uint64_t size, uint64_t seed) : size_(size) {
    if (size == 0) throw std::invalid_argument("enumeration space is empty");
    int bits = 1;
    while (bits < 64 && (uint64_t(1) << bits) < size) ++bits;
    half_ = (bits + 1) / 2;
    mask_ = half_ >= 32 ? 0xffffffffull : (uint64_t(1) << half_) - 1;
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
  static uint64_t mix(uint64_t z) {  // splitmix64's finaliser: a good 64-bit mixer
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t encrypt(uint64_t x) const {
    uint64_t left = x >> half_, right = x & mask_;
    for (uint64_t key : keys_) {
      const uint64_t next = left ^ (mix(right ^ key) & mask_);
      left = right;
      right = next;
    }
    return (left << half_) | right;
  }
  uint64_t size_, mask_;
  int half_;
  uint64_t keys_[4];
};

// Mixed-radix enumeration of several fields' ranges: index t of [0, space) gives digit_i =
// (t / (r_0 ... r_{i-1})) mod r_i, so the first field varies fastest. The order in which the
// frames visit the indices is increasing, decreasing or a FeistelPermutation.
class TupleEnumerator {
 public:
  enum class Order { kIncreasing, kDecreasing, kRandom };

  TupleEnumerator(std::vector<uint64_t> radices, Order order, uint64_t seed)
      : radices_(std::move(radices)), order_(order), space_(space_of(radices_)),
        permutation_(space_, seed) {}

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
      const uint64_t n = next_++ % space_;  // more frames than combinations: start over
      uint64_t t = order_ == Order::kIncreasing ? n
                   : order_ == Order::kDecreasing ? space_ - 1 - n
                                                  : permutation_(n);
      for (size_t i = 0; i < radices_.size(); ++i) {
        digits[i][k] = uint32_t(t % radices_[i]);
        t /= radices_[i];
      }
    }
  }
  uint64_t space() const { return space_; }

 private:
  std::vector<uint64_t> radices_;
  Order order_;
  uint64_t space_;
  FeistelPermutation permutation_;
  uint64_t next_ = 0;
};

}  // namespace xlp
