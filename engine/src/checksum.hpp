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
// yet folded, 4 bytes at a time (a receiver's checksum verification). The sum is byte-order
// independent (RFC 1071 §2 (B)): a sum that must fold to 0xffff needs no swapping. An odd
// trailing byte is padded with zero, as in sum_words.
inline uint64_t sum_native(const uint8_t* data, size_t len, uint64_t acc = 0) {
  size_t i = 0;
  for (; i + 4 <= len; i += 4) {
    uint32_t w;
    __builtin_memcpy(&w, data + i, 4);
    acc += w;
  }
  for (; i + 2 <= len; i += 2) {
    uint16_t w;
    __builtin_memcpy(&w, data + i, 2);
    acc += w;
  }
  if (i < len) {
    const uint8_t last[2] = {data[i], 0};
    uint16_t w;
    __builtin_memcpy(&w, last, 2);
    acc += w;
  }
  return acc;
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
