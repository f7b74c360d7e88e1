// Streaming delay statistics in bounded memory (RFC 8219 §7.3 PDV at any rate and duration).
// A log-linear histogram in the manner of HdrHistogram: values below 2^kSubBits are counted
// exactly; above, each power-of-two range [2^e, 2^(e+1)) is split into 2^kSubBits equal
// buckets, so a bucket is at most 2^-kSubBits of its values wide. Percentiles report the
// bucket's midpoint (clamped to the exact min and max): relative error at most 2^-(kSubBits+1)
// = 0.049 % for kSubBits = 10, and 0 below 2^kSubBits. Memory is fixed (56,320 counters,
// 440 KiB), whatever the number of values.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

namespace xlp {

class Histogram {
 public:
  static constexpr int kSubBits = 10;
  static constexpr uint64_t kSub = uint64_t(1) << kSubBits;
  static constexpr size_t kBuckets = (64 - kSubBits + 1) * kSub;

  Histogram() : counts_(static_cast<uint64_t*>(std::calloc(kBuckets, sizeof(uint64_t)))) {
    if (!counts_) throw std::bad_alloc();
  }

  static size_t index(uint64_t v) {
    if (v < kSub) return size_t(v);
    const int e = 63 - __builtin_clzll(v);  // v in [2^e, 2^(e+1)), e >= kSubBits
    const uint64_t sub = (v >> (e - kSubBits)) & (kSub - 1);
    return size_t(e - kSubBits + 1) * kSub + size_t(sub);
  }
  // The smallest and largest value that fall into bucket i.
  static uint64_t lowest(size_t i) {
    if (i < kSub) return i;
    const int e = int(i / kSub) + kSubBits - 1;
    return (kSub | (i % kSub)) << (e - kSubBits);
  }
  static uint64_t highest(size_t i) {
    if (i < kSub) return i;
    const int e = int(i / kSub) + kSubBits - 1;
    return lowest(i) + (uint64_t(1) << (e - kSubBits)) - 1;
  }

  void add(uint64_t v) {
    ++counts_.get()[index(v)];
    ++count_;
    sum_ += v;
    min_ = std::min(min_, v);
    max_ = std::max(max_, v);
  }

  // Adds every value `other` counted (the receive queues' histograms of one stream, merged).
  void merge(const Histogram& other) {
    if (other.count_ == 0) return;
    for (size_t i = 0; i < kBuckets; ++i) counts_.get()[i] += other.counts_.get()[i];
    count_ += other.count_;
    sum_ += other.sum_;
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
  }

  uint64_t count() const { return count_; }
  uint64_t min() const { return count_ ? min_ : 0; }
  uint64_t max() const { return max_; }
  double mean() const { return count_ ? double(sum_) / double(count_) : 0; }

  // The p-th percentile (0 < p <= 100) as RFC 2330 §11.3 defines it for a sample: the value
  // of rank ceil(p/100 * N) in sorted order, here known to the bucket's resolution.
  uint64_t percentile(double p) const {
    if (count_ == 0) return 0;
    const uint64_t rank = std::max<uint64_t>(1, uint64_t(std::ceil(p / 100.0 * double(count_) - 1e-9)));
    uint64_t seen = 0;
    for (size_t i = 0; i < kBuckets; ++i) {
      seen += counts_.get()[i];
      if (seen >= rank) {
        const uint64_t mid = lowest(i) + (highest(i) - lowest(i)) / 2;
        return std::clamp(mid, min_, max_);
      }
    }
    return max_;
  }

  // Non-empty buckets as (lowest value, highest value, count), for distribution plots.
  std::vector<std::array<uint64_t, 3>> buckets() const {
    std::vector<std::array<uint64_t, 3>> out;
    for (size_t i = 0; i < kBuckets; ++i)
      if (counts_.get()[i]) out.push_back({lowest(i), highest(i), counts_.get()[i]});
    return out;
  }

 private:
  struct Free { void operator()(uint64_t* p) const { std::free(p); } };
  std::unique_ptr<uint64_t, Free> counts_;
  uint64_t count_ = 0, min_ = UINT64_MAX, max_ = 0;
  unsigned __int128 sum_ = 0;  // exact: 2^40 frames of 2^48-tick delays fit
};

// Signed values (IPDV: D(i) - D(i-1) may be negative): negatives and non-negatives kept in two
// histograms of magnitudes.
class SignedHistogram {
 public:
  void add(int64_t v) {
    if (v < 0) negative_.add(uint64_t(-v));
    else positive_.add(uint64_t(v));
  }
  void merge(const SignedHistogram& other) {
    negative_.merge(other.negative_);
    positive_.merge(other.positive_);
  }
  uint64_t count() const { return negative_.count() + positive_.count(); }
  int64_t min() const { return negative_.count() ? -int64_t(negative_.max()) : int64_t(positive_.min()); }
  int64_t max() const { return positive_.count() ? int64_t(positive_.max()) : -int64_t(negative_.min()); }
  // Same rank rule as Histogram::percentile, over the signed values.
  int64_t percentile(double p) const {
    const uint64_t n = count();
    if (n == 0) return 0;
    const uint64_t rank = std::max<uint64_t>(1, uint64_t(std::ceil(p / 100.0 * double(n) - 1e-9)));
    const uint64_t neg = negative_.count();
    if (rank <= neg) {  // the rank-th smallest is the (neg - rank + 1)-th largest magnitude
      const double q = 100.0 * double(neg - rank + 1) / double(neg);
      return -int64_t(negative_.percentile(q));
    }
    const double q = 100.0 * double(rank - neg) / double(positive_.count());
    return int64_t(positive_.percentile(q));
  }

 private:
  Histogram negative_, positive_;
};

}  // namespace xlp
