// The field kernels' code (field_kernels.hpp), included by each field_kernels_<isa>.cpp and
// compiled there with that unit's instruction set. Everything here has internal linkage
// (an anonymous namespace), and it includes no header with inline functions that it calls:
// nothing compiled for one instruction set can be linked in place of another unit's code.
// A unit adds its instruction set's primitive operations (a "traits" struct, see Sse in
// field_kernels_base.cpp) and instantiates Simd<Traits> with them.
#pragma once
#include <cstdint>
#include <cstring>

#include "core/field_kernels.hpp"

namespace xlp {
namespace {

// Keeps the accepted ones of n candidates in order; returns how many. Rejections are rare
// (probability below 2^-16 per draw), so this is the exception path.
inline uint32_t keep_accepted(uint32_t rejected, uint16_t* v, uint32_t n) {
  if (__builtin_expect(rejected == 0, 1)) return n;
  uint32_t kept = 0;
  for (uint32_t i = 0; i < n; ++i)
    if (!(rejected >> i & 1)) v[kept++] = v[i];
  return kept;
}

// Folds a 32-bit one's complement sum to 16 bits (RFC 1071 end-around carry): the first fold
// gives at most 0x1fffe, the second at most 0xffff.
inline uint16_t fold32(uint32_t t) {
  t = (t & 0xffff) + (t >> 16);
  return uint16_t((t & 0xffff) + (t >> 16));
}

// Plain C++, one lane at a time: the definition of the values (field_kernels.hpp), and the
// kernels where there is no SIMD kernel.
struct Scalar {
  static constexpr uint32_t kBlock = 16;  // draws per generator step
  struct State {
    uint64_t s[4][8];
  };
  struct Params {
    explicit Params(const RandomFieldState& f)
        : range(f.range), threshold(f.threshold), min(f.min), other(f.other), shift(f.shift) {}
    uint32_t range, threshold;
    uint16_t min, other;
    uint8_t shift;
  };
  static void load(State& st, const RandomFieldState& f) { std::memcpy(st.s, f.s, sizeof st.s); }
  static void store(RandomFieldState& f, const State& st) { std::memcpy(f.s, st.s, sizeof f.s); }
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

  // Writes the words of the next kBlock draws to dst; returns a bit per rejected draw.
  static uint32_t block(State& st, const Params& p, uint16_t* dst) {
    uint16_t w[32];
    for (int l = 0; l < 8; ++l) {
      uint64_t& s0 = st.s[0][l];
      uint64_t& s1 = st.s[1][l];
      uint64_t& s2 = st.s[2][l];
      uint64_t& s3 = st.s[3][l];
      const uint64_t result = rotl(s1 * 5, 7) * 9;
      const uint64_t t = s1 << 17;
      s2 ^= s0;
      s3 ^= s1;
      s1 ^= s2;
      s0 ^= s3;
      s2 ^= t;
      s3 = rotl(s3, 45);
      for (int j = 0; j < 4; ++j) w[4 * l + j] = uint16_t(result >> (16 * j));
    }
    uint32_t rejected = 0;
    for (uint32_t i = 0; i < kBlock; ++i) {
      uint16_t value;
      if (!map_one(uint32_t(w[16 + i]) << 16 | w[i], p.range, p.threshold, value)) rejected |= 1u << i;
      dst[i] = uint16_t(uint32_t(uint16_t(p.min + value)) << p.shift | p.other);
    }
    return rejected;
  }
  static bool map_one(uint32_t x, uint32_t range, uint32_t threshold, uint16_t& out) {
    const uint64_t m = uint64_t(x) * range;
    out = uint16_t(m >> 32);
    return uint32_t(m) >= threshold;
  }
  static void map(const uint32_t* x, uint32_t n, uint32_t range, uint32_t threshold, uint16_t* out,
                  uint8_t* accepted) {
    for (uint32_t i = 0; i < n; ++i) accepted[i] = map_one(x[i], range, threshold, out[i]);
  }
  // The sums and the IPv4 header checksum row: loops over the block's frames (the sums stay
  // below 2^32: at most 20 words of 16 bits and a few folded sums).
  static void sums(BlockWords& b, const BlockSums& s) {
    const uint32_t n = s.count;
    uint32_t udp[kFrameBlock], ip[kFrameBlock];
    for (uint32_t k = 0; k < n; ++k) udp[k] = s.udp_base, ip[k] = s.ipv4_base;
    for (uint32_t r = 0; r < s.rows; ++r) {
      const uint16_t* w = b.words[r];
      if (s.udp_rows >> r & 1)
        for (uint32_t k = 0; k < n; ++k) udp[k] += w[k];
      if (s.ipv4_rows >> r & 1)
        for (uint32_t k = 0; k < n; ++k) ip[k] += w[k];
    }
    for (uint32_t k = 0; k < n; ++k) b.udp_sum[k] = fold32(udp[k]);
    if (s.ipv4_checksum)
      for (uint32_t k = 0; k < n; ++k) b.words[s.rows][k] = uint16_t(~fold32(ip[k]));
  }
  // stamp_frame's checksum: 0 is sent as 0xffff (RFC 768).
  static void stamp_checksums(const uint16_t* udp_sum, uint32_t count, uint32_t first_seq, uint32_t stamp_sum,
                              uint16_t* checksum) {
    for (uint32_t k = 0; k < count; ++k) {
      const uint32_t seq = first_seq + k;
      const uint16_t c = uint16_t(~fold32(udp_sum[k] + stamp_sum + (seq >> 16) + (seq & 0xffff)));
      const uint16_t field = c == 0 ? 0xffff : c;
      checksum[k] = uint16_t(field << 8 | field >> 8);
    }
  }
  // CePlacements (field_kernels.hpp), frame by frame: the definition the vector kernels follow.
  static void place_ce(uint16_t (*index)[kFrameBlock], uint16_t* port, const CePlacements& p,
                       uint16_t (*rows)[kFrameBlock], uint32_t count) {
    if (p.joint)
      for (uint32_t k = 0; k < count; ++k) {
        const uint16_t v = index[p.joint_word][k], t = uint16_t(uint32_t(v) * p.multiplier >> 16);
        const uint16_t q = uint16_t((t + ((v - t) >> 1)) >> p.shift);
        index[p.joint_word][k] = q;
        port[k] = uint16_t(v - q * p.ports);
      }
    for (uint32_t r = 0; r < p.rows; ++r) {
      const CeRowPlan& plan = p.row[r];
      for (uint32_t k = 0; k < count; ++k) {
        uint32_t w = plan.constant;
        for (uint32_t i = 0; i < plan.runs; ++i) {
          const CeRun& run = plan.run[i];
          w |= uint32_t(index[run.word][k] >> run.from & run.mask) << run.to;
        }
        if (plan.port) {
          const uint32_t i = port[k], block = (i >> p.port_shift) + p.port_block;
          w += uint16_t(block << p.port_block_shift) | (i & p.port_low);
        }
        rows[r][k] = uint16_t(w);
      }
    }
  }
  // Each chunk's rows' words, byte-swapped, or-ed into the template's chunk; a pair's two
  // chunks interleaved (BlockWords::chunks).
  static void chunks(BlockWords& b, const BlockSums& s) {
    for (uint32_t c = 0; c < s.chunks; ++c) {
      const bool paired = c < 2 * s.pairs;
      uint64_t* out = paired ? &b.chunks[c & ~1u][c & 1] : b.chunks[c];
      const uint32_t stride = paired ? 2 : 1;
      for (uint32_t k = 0; k < s.count; ++k) out[stride * k] = s.template_chunks[c];
      for (uint32_t j = 0; j < 4; ++j) {
        if (s.lane_row[c][j] < 0) continue;
        const uint16_t* w = b.words[s.lane_row[c][j]];
        for (uint32_t k = 0; k < s.count; ++k)  // network order in memory
          out[stride * k] |= uint64_t(uint16_t(w[k] << 8 | w[k] >> 8)) << (16 * j);
      }
    }
  }
};

// The same with SIMD registers of T::kWords 16-bit lanes. The eight generators' state words
// fill T::kRegs registers each; a block is T::kSteps steps, split by T::pair into kPairs
// pairs of registers holding the draws' low and high 16 bits (x_i's w[i] and w[16 + i]), in
// the order of the draws. The mapping works on 16-bit lanes only: with x = xh * 2^16 + xl and
// a 16-bit range r, x * r = hi(xh*r) * 2^32 + (lo(xh*r) + hi(xl*r)) * 2^16 + lo(xl*r), where
// hi/lo are the halves of a 16 x 16-bit product (one instruction each); the middle sum's carry
// goes into the value. The low 32 bits of the product fall below the threshold (< 2^16) only
// if the middle sum is zero: a rare case, checked exactly lane by lane.
template <class T>
struct Simd {
  using R = typename T::R;
  static constexpr uint32_t kBlock = T::kPairs * T::kWords;
  static_assert(kBlock <= 32, "a block's rejections fit a 32-bit mask and RandomFieldState::left");
  struct State {
    R w[4][T::kRegs];
  };
  struct Params {
    explicit Params(const RandomFieldState& f)
        : range(T::set16(uint16_t(f.range))), min(T::set16(f.min)),
          min_plus_one(T::set16(uint16_t(f.min + 1))), other(T::set16(f.other)),
          shift(T::count(f.shift)), threshold(f.threshold), full(f.range == 65536) {}
    R range, min, min_plus_one, other;
    typename T::Count shift;
    uint32_t threshold;
    bool full;  // range 2^16: the value is xh, never rejected (the 16-bit range register is 0)
  };
  static void load(State& st, const RandomFieldState& f) {
    for (int w = 0; w < 4; ++w)
      for (int j = 0; j < T::kRegs; ++j) st.w[w][j] = T::loadu(&f.s[w][j * (8 / T::kRegs)]);
  }
  static void store(RandomFieldState& f, const State& st) {
    for (int w = 0; w < 4; ++w)
      for (int j = 0; j < T::kRegs; ++j) T::storeu(&f.s[w][j * (8 / T::kRegs)], st.w[w][j]);
  }

  // One xoshiro256** step of all eight generators; out[j]: the results of register j's lanes.
  static void step(State& st, R* out) {
    for (int j = 0; j < T::kRegs; ++j) {
      R s0 = st.w[0][j], s1 = st.w[1][j], s2 = st.w[2][j], s3 = st.w[3][j];
      const R x5 = T::add64(T::template shl64<2>(s1), s1);
      const R r = T::template rotl64<7>(x5);
      out[j] = T::add64(T::template shl64<3>(r), r);
      const R t = T::template shl64<17>(s1);
      s2 = T::xor_(s2, s0);
      s3 = T::xor_(s3, s1);
      s1 = T::xor_(s1, s2);
      s0 = T::xor_(s0, s3);
      s2 = T::xor_(s2, t);
      s3 = T::template rotl64<45>(s3);
      st.w[0][j] = s0, st.w[1][j] = s1, st.w[2][j] = s2, st.w[3][j] = s3;
    }
  }

  // Maps kWords draws (low halves xl, high halves xh) and stores their words; returns a bit
  // per rejected draw.
  static uint32_t map(const Params& p, R xl, R xh, uint16_t* dst) {
    const R hi_a = T::mulhi16(xl, p.range), lo_a = T::mullo16(xl, p.range);
    const R hi_b = T::mulhi16(xh, p.range), lo_b = T::mullo16(xh, p.range);
    const R sum = T::add16(lo_b, hi_a);
    // Saturating and wrapping sums agree exactly when there is no carry: -1 there, else 0.
    const R no_carry = T::cmpeq16(sum, T::adds16(lo_b, hi_a));
    R value = T::add16(T::add16(hi_b, p.min_plus_one), no_carry);
    if (p.full) value = T::add16(xh, p.min);
    T::storeu(dst, T::or_(T::sll16(value, p.shift), p.other));
    if (p.full || !T::any(T::cmpeq16(sum, T::set16(0)))) return 0;
    uint16_t sums[T::kWords], lows[T::kWords];
    T::storeu(sums, sum);
    T::storeu(lows, lo_a);
    uint32_t rejected = 0;
    for (uint32_t i = 0; i < T::kWords; ++i)
      if (sums[i] == 0 && lows[i] < p.threshold) rejected |= 1u << i;
    return rejected;
  }

  static uint32_t block(State& st, const Params& p, uint16_t* dst) {
    R out[T::kSteps * T::kRegs];
    for (int s = 0; s < T::kSteps; ++s) step(st, out + s * T::kRegs);
    uint32_t rejected = 0;
    for (int i = 0; i < T::kPairs; ++i) {
      R xl, xh;
      T::pair(out, i, xl, xh);
      rejected |= map(p, xl, xh, dst + i * T::kWords) << (i * T::kWords);
    }
    return rejected;
  }

  // One's complement addition (RFC 1071) of 16-bit lanes: the carry out of bit 15 is added
  // back in. Of a positive total this gives what a fold of the 32-bit sum gives, the
  // representative in 1..0xffff. (The saturating and the wrapping sum agree, -1, when there
  // is no carry.)
  static R add_ones(R a, R b) {
    if constexpr (requires { T::add_carry16(a, b); }) {
      return T::add_carry16(a, b);  // (an instruction set with a cheaper way)
    } else {
      const R sum = T::add16(a, b);
      return T::add16(T::add16(sum, T::set16(1)), T::cmpeq16(sum, T::adds16(a, b)));
    }
  }
  // Scalar::sums kWords frames at a time, in 16-bit lanes throughout (no widening).
  static void sums(BlockWords& b, const BlockSums& s) {
    const R ones = T::set16(0xffff), udp_base = T::set16(fold32(s.udp_base)), ip_base = T::set16(fold32(s.ipv4_base));
    // The rows of each sum, listed once per block (not tested row by row per register).
    const uint16_t* udp_row[BlockWords::kRows];
    const uint16_t* ip_row[BlockWords::kRows];
    uint32_t udp_count = 0, ip_count = 0;
    for (uint32_t r = 0; r < s.rows; ++r) {
      if (s.udp_rows >> r & 1) udp_row[udp_count++] = b.words[r];
      if (s.ipv4_rows >> r & 1) ip_row[ip_count++] = b.words[r];
    }
    for (uint32_t k = 0; k < s.count; k += T::kWords) {
      R udp = udp_base, ip = ip_base;
      for (uint32_t r = 0; r < udp_count; ++r) udp = add_ones(udp, T::loadu(&udp_row[r][k]));
      for (uint32_t r = 0; r < ip_count; ++r) ip = add_ones(ip, T::loadu(&ip_row[r][k]));
      T::storeu(&b.udp_sum[k], udp);
      if (s.ipv4_checksum) T::storeu(&b.words[s.rows][k], T::xor_(ip, ones));
    }
  }
  // Scalar::stamp_checksums kWords frames at a time. Frame k + j's sequence number adds its
  // two words, which is first_seq + k + j modulo 0xffff (2^16 = 1 there): a fold of first_seq
  // + k, then j; unless the numbers wrap around 2^32 in this register (2^32 = 1 too): then
  // frame by frame.
  static void stamp_checksums(const uint16_t* udp_sum, uint32_t count, uint32_t first_seq, uint32_t stamp_sum,
                              uint16_t* checksum) {
    const R ones = T::set16(0xffff);
    uint16_t lane[T::kWords];
    for (uint32_t j = 0; j < T::kWords; ++j) lane[j] = uint16_t(j);
    const R iota = T::loadu(lane);
    for (uint32_t k = 0; k < count; k += T::kWords) {
      const uint32_t seq = first_seq + k;
      const R udp = T::loadu(&udp_sum[k]);
      R sum;
      if (__builtin_expect(seq <= ~uint32_t(0) - (T::kWords - 1), 1)) {
        sum = add_ones(add_ones(udp, T::set16(fold32(stamp_sum + fold32(seq)))), iota);
      } else {
        uint16_t u[T::kWords];
        T::storeu(u, udp);
        for (uint32_t j = 0; j < T::kWords; ++j)
          u[j] = fold32(u[j] + stamp_sum + ((seq + j) >> 16) + ((seq + j) & 0xffff));
        sum = T::loadu(u);
      }
      const R field = T::or_(T::xor_(sum, ones), T::cmpeq16(sum, ones));  // 0 goes out as 0xffff
      T::storeu(&checksum[k], T::bswap16(field));
    }
  }

  // The chunks of kWords frames at a time: a chunk's four 16-bit lanes (a row's words,
  // byte-swapped, or the template's word) interleaved into 64-bit records by two rounds of
  // unpacking, those of a pair's two chunks into 16-byte records by a third; T::store4 puts
  // the records in frame order.
  static void records(const BlockWords& b, const BlockSums& s, uint32_t c, uint32_t k, R* out) {
    R lane[4];
    for (int j = 0; j < 4; ++j) {
      if (s.lane_row[c][j] < 0) {
        lane[j] = T::set16(uint16_t(s.template_chunks[c] >> (16 * j)));
      } else {
        const R w = T::loadu(&b.words[s.lane_row[c][j]][k]);
        lane[j] = T::bswap16(w);
      }
    }
    const R lo01 = T::unpacklo16(lane[0], lane[1]), hi01 = T::unpackhi16(lane[0], lane[1]);
    const R lo23 = T::unpacklo16(lane[2], lane[3]), hi23 = T::unpackhi16(lane[2], lane[3]);
    out[0] = T::unpacklo32(lo01, lo23), out[1] = T::unpackhi32(lo01, lo23);
    out[2] = T::unpacklo32(hi01, hi23), out[3] = T::unpackhi32(hi01, hi23);
  }
  static void chunks(BlockWords& b, const BlockSums& s) {
    for (uint32_t k = 0; k < s.count; k += T::kWords) {
      for (uint32_t c = 0; c < 2 * s.pairs; c += 2) {
        R first[4], second[4], pair[8];
        records(b, s, c, k, first);
        records(b, s, c + 1, k, second);
        for (int i = 0; i < 4; ++i)
          pair[2 * i] = T::unpacklo64(first[i], second[i]), pair[2 * i + 1] = T::unpackhi64(first[i], second[i]);
        uint64_t* dst = &b.chunks[c][2 * k];
        T::store4(dst, pair[0], pair[1], pair[2], pair[3], 16);
        T::store4(dst + 8, pair[4], pair[5], pair[6], pair[7], 16);
      }
      for (uint32_t c = 2 * s.pairs; c < s.chunks; ++c) {
        R single[4];
        records(b, s, c, k, single);
        T::store4(&b.chunks[c][k], single[0], single[1], single[2], single[3], 8);
      }
    }
  }

  // Scalar::place_ce kWords frames at a time.
  static void place_ce(uint16_t (*index)[kFrameBlock], uint16_t* port, const CePlacements& p,
                       uint16_t (*rows)[kFrameBlock], uint32_t count) {
    const R ports = T::set16(p.ports), multiplier = T::set16(p.multiplier), port_block = T::set16(p.port_block),
            port_low = T::set16(p.port_low);
    const typename T::Count one = T::count(1), shift = T::count(p.shift), port_shift = T::count(p.port_shift),
                            port_block_shift = T::count(p.port_block_shift);
    uint16_t* joint = index[p.joint_word];
    for (uint32_t k = 0; k < count; k += T::kWords) {
      R i;
      if (p.joint) {
        const R v = T::loadu(&joint[k]), t = T::mulhi16(v, multiplier);
        const R q = T::srl16(T::add16(t, T::srl16(T::sub16(v, t), one)), shift);
        i = T::sub16(v, T::mullo16(q, ports));
        T::storeu(&joint[k], q);
        T::storeu(&port[k], i);
      } else {
        i = T::loadu(&port[k]);
      }
      const R port_bits = T::or_(T::sll16(T::add16(T::srl16(i, port_shift), port_block), port_block_shift),
                                 T::and_(i, port_low));
      for (uint32_t r = 0; r < p.rows; ++r) {
        const CeRowPlan& plan = p.row[r];
        R w = T::set16(plan.constant);
        for (uint32_t n = 0; n < plan.runs; ++n) {
          const CeRun& run = plan.run[n];
          const R bits = T::and_(T::srl16(T::loadu(&index[run.word][k]), T::count(run.from)), T::set16(run.mask));
          w = T::or_(w, T::sll16(bits, T::count(run.to)));
        }
        if (plan.port) w = T::add16(w, port_bits);
        T::storeu(&rows[r][k], w);
      }
    }
  }

  static void map(const uint32_t* x, uint32_t n, uint32_t range, uint32_t threshold, uint16_t* out,
                  uint8_t* accepted) {
    RandomFieldState f;
    f.range = range;
    f.threshold = threshold;
    const Params p(f);
    for (uint32_t i = 0; i < n; i += T::kWords) {
      uint16_t lo[T::kWords], hi[T::kWords];
      for (uint32_t j = 0; j < T::kWords; ++j) lo[j] = uint16_t(x[i + j]), hi[j] = uint16_t(x[i + j] >> 16);
      const uint32_t rejected = map(p, T::loadu(lo), T::loadu(hi), out + i);
      for (uint32_t j = 0; j < T::kWords; ++j) accepted[i + j] = !(rejected >> j & 1);
    }
  }
};

template <class K>
void fill_random(RandomFieldState& f, uint16_t* out, uint32_t count) {
  uint32_t n = f.left_end - f.left_begin;
  if (n > 0) {  // after a partial block or a rejection only: not worth a call otherwise
    if (n > count) n = count;
    std::memcpy(out, f.left + f.left_begin, n * sizeof *out);
    f.left_begin += n;
    if (n == count) return;
  }
  typename K::State st;
  K::load(st, f);
  const typename K::Params p(f);
  // Whole blocks straight into `out`; the last, partial one through `left`.
  while (count - n >= K::kBlock) n += keep_accepted(K::block(st, p, out + n), out + n, K::kBlock);
  while (n < count) {
    const uint32_t got = keep_accepted(K::block(st, p, f.left), f.left, K::kBlock);
    const uint32_t take = got < count - n ? got : count - n;
    std::memcpy(out + n, f.left, take * sizeof *out);
    n += take;
    f.left_begin = take;
    f.left_end = got;
  }
  K::store(f, st);
}

// The sums and the IPv4 header checksum row (K::sums), then the chunks (K::chunks). Like
// K::chunks, K::sums may run past `count` to a whole register (its results there are not
// used).
template <class K>
void finish(BlockWords& b, const BlockSums& s) {
  K::sums(b, s);
  K::chunks(b, s);
}

}  // namespace
}  // namespace xlp
