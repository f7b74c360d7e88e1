// A NIC's clock on the tester's TSC: hardware receive timestamps (docs/delay.md, "Hardware
// timestamps") are readings of the NIC's own clock, in its own units, often narrower than 64
// bits (a descriptor's 32 bits of nanoseconds, a 40-bit PHC); the receiver compares them with the
// TSC the sender wrote into the frame. Pure arithmetic, no DPDK: exact integers throughout.
#pragma once
#include <cstdint>

namespace xlp {

// The 64-bit value whose low `bits` bits are `raw` that lies nearest `reference` (a recent full
// reading of the same clock): a counter that wrapped since the reference is carried over, one
// that lags it (a timestamp taken before the reference was read) is taken back. Right while
// the true value is within half the counter's period (2^(bits-1)) of the reference.
inline uint64_t unwrap_counter(uint64_t raw, unsigned bits, uint64_t reference) {
  if (bits >= 64) return raw;
  const uint64_t period = uint64_t(1) << bits, mask = period - 1;
  const uint64_t candidate = (reference & ~mask) | (raw & mask);
  // Signed distance from the reference, in (-period/2, period/2].
  if (candidate > reference && candidate - reference > period / 2) return candidate - period;
  if (candidate < reference && reference - candidate >= period / 2) return candidate + period;
  return candidate;
}

// A device clock mapped to the TSC by two simultaneous readings of both (taken around a
// trial: rte_eth_read_clock next to rte_rdtsc): linear between and beyond them, so a NIC clock
// that runs at another rate (mlx5's free-running ticks) or drifts from the TSC is placed
// right. `bits`: the width of the timestamps to convert (64 when the driver extends them).
class DeviceClockMap {
 public:
  DeviceClockMap(uint64_t device0, uint64_t tsc0, uint64_t device1, uint64_t tsc1, unsigned bits = 64)
      : device0_(device0), tsc0_(tsc0), device_span_(device1 - device0), tsc_span_(tsc1 - tsc0), bits_(bits) {}

  // Whether the two readings span any time (else nothing can be converted).
  bool usable() const { return device_span_ > 0 && tsc_span_ > 0; }

  // The TSC at which the device clock read `device` (a full 64-bit reading).
  uint64_t to_tsc(uint64_t device) const {
    const __int128 offset = __int128(int64_t(device - device0_)) * tsc_span_ / device_span_;
    return uint64_t(__int128(tsc0_) + offset);
  }
  // The device clock's reading at TSC `tsc`.
  uint64_t to_device(uint64_t tsc) const {
    const __int128 offset = __int128(int64_t(tsc - tsc0_)) * device_span_ / tsc_span_;
    return uint64_t(__int128(device0_) + offset);
  }
  // A timestamp of `bits` bits taken near TSC `near_tsc` (the receive burst's TSC: a frame's
  // timestamp is at most the burst's age before it), on the TSC.
  uint64_t stamp_to_tsc(uint64_t stamp, uint64_t near_tsc) const {
    return to_tsc(unwrap_counter(stamp, bits_, to_device(near_tsc)));
  }

 private:
  uint64_t device0_, tsc0_, device_span_, tsc_span_;
  unsigned bits_;
};

}  // namespace xlp
