// Internet checksum arithmetic (RFC 1071) and incremental update (RFC 1624).
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>

namespace xlp {

// One's complement sum of big-endian 16-bit words, not yet folded. An odd trailing byte is
// padded with zero, as RFC 1071 prescribes.
inline uint64_t sum_words(const uint8_t* data, size_t len, uint64_t acc = 0) {
  size_t i = 0;
  for (; i + 1 < len; i += 2) acc += (uint32_t(data[i]) << 8) | data[i + 1];
  if (i < len) acc += uint32_t(data[i]) << 8;
  return acc;
}

// One's complement sum of `len` bytes taken as 16-bit words in the machine's byte order, not
// yet folded (a receiver's checksum verification), plus `acc`: below 2^34 whatever `acc` is,
// so that a handful of such sums add without overflow. The sum is byte-order independent
// (RFC 1071 §2 (B)): a sum that must fold to 0xffff needs no swapping. 64-bit words added
// with their carries counted (an add and an add-with-carry per 8 bytes, RFC 1071 §4's
// "deferred carries" on a 64-bit machine: plain C++, no vector ISA), 16 bytes per turn; the
// last 1 to 7 bytes from one load of the 8 bytes that end the data, shifted down past those
// already summed (they start 8-aligned, so each byte keeps its half of a 16-bit word, and an
// odd last byte is padded with zero as RFC 1071 prescribes). Shorter data a byte pair at a time.
[[gnu::always_inline]] inline uint64_t sum_native(const uint8_t* data, size_t len, uint64_t acc = 0) {
  uint64_t s = acc, t = 0, carries = 0;
  if (len < 8) {
    size_t i = 0;
    for (; i + 1 < len; i += 2) {
      uint16_t x;
      __builtin_memcpy(&x, data + i, 2);
      t += x;
    }
    if (i < len) {
      const uint8_t last[2] = {data[i], 0};
      uint16_t x;
      __builtin_memcpy(&x, last, 2);
      t += x;
    }
  } else {
    size_t i = 0;
    for (; i + 16 <= len; i += 16) {  // two chains, so the adds need not wait for each other
      uint64_t x, y;
      __builtin_memcpy(&x, data + i, 8);
      __builtin_memcpy(&y, data + i + 8, 8);
      carries += __builtin_add_overflow(s, x, &s);
      carries += __builtin_add_overflow(t, y, &t);
    }
    if (i + 8 <= len) {
      uint64_t x;
      __builtin_memcpy(&x, data + i, 8);
      carries += __builtin_add_overflow(s, x, &s);
      i += 8;
    }
    if (const size_t rest = len - i) {
      uint64_t x;
      __builtin_memcpy(&x, data + len - 8, 8);
      if constexpr (std::endian::native == std::endian::little) x >>= 8 * (8 - rest);
      else x <<= 8 * (8 - rest);
      carries += __builtin_add_overflow(t, x, &t);
    }
  }
  carries += __builtin_add_overflow(s, t, &s);
  // 2^64 and 2^32 are 1 modulo 0xffff: the carries add back in, the halves fold together.
  return (s & 0xffffffff) + (s >> 32) + carries;
}

// Folds carries back into the low 16 bits (end-around carry). A fixed number of steps, no
// loop: the per-frame checksum update must not branch on the data. 64 -> 33 bits -> at most
// 0x2fffe -> at most 0x10001 -> at most 0xffff.
inline uint16_t fold(uint64_t sum) {
  sum = (sum & 0xffffffff) + (sum >> 32);
  sum = (sum & 0xffff) + (sum >> 16);
  sum = (sum & 0xffff) + (sum >> 16);
  sum = (sum & 0xffff) + (sum >> 16);
  return uint16_t(sum);
}

// Whether an unfolded sum folds to 0xffff, as the sum over a datagram with its checksum field
// must (a receiver's verification): fold keeps the sum's value modulo 0xffff (2^16 = 1 modulo
// 0xffff) and gives 0 only for 0, so this is "a multiple of 0xffff, not 0". The multiple is
// tested with a multiplication by 0xffff's inverse modulo 2^64 (an odd divisor's multiples are
// exactly the numbers it maps to at most (2^64 - 1) / divisor; Granlund and Montgomery 1994):
// a third of fold's instructions, where every frame is checked, and no division (GCC makes a
// 64-bit `% 0xffff` a DIV for some CPUs, tens of cycles).
inline bool sums_to_ones(uint64_t sum) {
  constexpr uint64_t kDivisor = 0xffff;
  constexpr uint64_t kInverse = [] {
    uint64_t x = kDivisor;  // right in its low 3 bits; each Newton step doubles that
    for (int i = 0; i < 5; ++i) x *= 2 - kDivisor * x;
    return x;
  }();
  static_assert(kDivisor * kInverse == 1);
  return sum != 0 && sum * kInverse <= ~uint64_t(0) / kDivisor;
}

inline uint16_t internet_checksum(const uint8_t* data, size_t len) {
  return uint16_t(~fold(sum_words(data, len)));
}

// The UDP checksum field value for a folded sum: its complement, except that a computed 0
// is sent as 0xffff, because 0 means "no checksum" (RFC 768).
inline uint16_t udp_checksum_field(uint64_t sum) {
  uint16_t c = uint16_t(~fold(sum));
  return c == 0 ? 0xffff : c;
}

// The checksum field of transport protocol `l4` (IP protocol number): UDP's rule above; TCP
// sends the complement as it is (RFC 9293 §3.1), 0 included: 0xffff would verify as well, but
// is not the value a receiver computes, and decoders report it as wrong.
inline uint16_t transport_checksum_field(uint64_t sum, uint8_t l4) {
  return l4 == 17 ? udp_checksum_field(sum) : uint16_t(~fold(sum));
}

}  // namespace xlp
