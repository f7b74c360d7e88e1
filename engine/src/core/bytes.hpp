// Big-endian (network order) loads and stores of header fields at any alignment: the one place
// the writers and readers of frames and messages take them from.
#pragma once
#include <bit>
#include <cstdint>
#include <cstring>

namespace xlp {

inline uint16_t load_be16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }
inline uint32_t load_be32(const uint8_t* p) { return uint32_t(load_be16(p)) << 16 | load_be16(p + 2); }
// Eight bytes at once, the first in the top byte (the DNS names' hex digits, 8 at a time).
inline uint64_t load_be64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return std::endian::native == std::endian::little ? __builtin_bswap64(v) : v;
}
inline void store_be64(uint8_t* p, uint64_t v) {
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap64(v);
  std::memcpy(p, &v, 8);
}
inline void store_be16(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v >> 8);
  p[1] = uint8_t(v);
}
inline void store_be32(uint8_t* p, uint32_t v) {
  store_be16(p, uint16_t(v >> 16));
  store_be16(p + 2, uint16_t(v));
}

}  // namespace xlp
