// Internet checksum arithmetic (RFC 1071) and incremental update (RFC 1624).
#pragma once
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
// yet folded (a receiver's checksum verification). The sum is byte-order independent
// (RFC 1071 §2 (B)): a sum that must fold to 0xffff needs no swapping. 32-bit words into two
// 64-bit sums: no carry can leave them below 2^32 words, and the two chains run side by side
// (twice as fast as one 64-bit sum with its carries counted, for a 26-byte datagram). An odd
// trailing byte is padded with zero, as in sum_words.
[[gnu::always_inline]] inline uint64_t sum_native(const uint8_t* data, size_t len, uint64_t acc = 0) {
  uint64_t a = acc, b = 0;
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint32_t x, y;
    __builtin_memcpy(&x, data + i, 4);
    __builtin_memcpy(&y, data + i + 4, 4);
    a += x;
    b += y;
  }
  // The last 0..7 bytes: a 16-bit word lands in either 16-bit half of a 32-bit word alike.
  if (len - i >= 4) {
    uint32_t x;
    __builtin_memcpy(&x, data + i, 4);
    a += x;
    i += 4;
  }
  if (len - i >= 2) {
    uint16_t x;
    __builtin_memcpy(&x, data + i, 2);
    b += x;
    i += 2;
  }
  if (i < len) {
    const uint8_t last[2] = {data[i], 0};
    uint16_t x;
    __builtin_memcpy(&x, last, 2);
    a += x;
  }
  return a + b;
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
