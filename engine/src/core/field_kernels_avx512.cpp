// The AVX-512 field kernels (512-bit registers); compiled with -mavx512f -mavx512bw, run
// only where the CPU has both (isa.cpp).
// GCC 12 warns that the intrinsics' own _mm512_undefined_* placeholders "may be used
// uninitialized" (a false positive, GCC bug 105593, fixed in GCC 13).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "core/field_kernels_impl.hpp"

#include <immintrin.h>

namespace xlp {
namespace {

// All 8 generator lanes in one register; a block is two steps, whose low halves (words
// 0-15) and high halves (16-31) two shuffles pair up: draws 0-15 of the first step in lanes
// 0-15, those of the second in lanes 16-31.
struct Avx512 {
  using R = __m512i;
  using Count = __m128i;
  static constexpr int kRegs = 1, kSteps = 2, kPairs = 1, kWords = 32;
  static R loadu(const void* p) { return _mm512_loadu_si512(p); }
  static void storeu(void* p, R v) { _mm512_storeu_si512(p, v); }
  static R xor_(R a, R b) { return _mm512_xor_si512(a, b); }
  static R or_(R a, R b) { return _mm512_or_si512(a, b); }
  static R add64(R a, R b) { return _mm512_add_epi64(a, b); }
  template <int k> static R shl64(R a) { return _mm512_slli_epi64(a, k); }
  template <int k> static R rotl64(R a) { return _mm512_rol_epi64(a, k); }
  static R set16(uint16_t v) { return _mm512_set1_epi16(short(v)); }
  static Count count(int n) { return _mm_cvtsi32_si128(n); }
  static R mulhi16(R a, R b) { return _mm512_mulhi_epu16(a, b); }
  static R mullo16(R a, R b) { return _mm512_mullo_epi16(a, b); }
  static R add16(R a, R b) { return _mm512_add_epi16(a, b); }
  static R adds16(R a, R b) { return _mm512_adds_epu16(a, b); }
  static R cmpeq16(R a, R b) { return _mm512_movm_epi16(_mm512_cmpeq_epi16_mask(a, b)); }
  static R sll16(R a, Count n) { return _mm512_sll_epi16(a, n); }
  static R srl16(R a, Count n) { return _mm512_srl_epi16(a, n); }
  static R and_(R a, R b) { return _mm512_and_si512(a, b); }
  static R sub16(R a, R b) { return _mm512_sub_epi16(a, b); }
  // a + b with the carry out of bit 15 added back in (Simd::add_ones): the sum wrapped where it
  // is below a; a masked add there.
  static R add_carry16(R a, R b) {
    const R sum = _mm512_add_epi16(a, b);
    return _mm512_mask_add_epi16(sum, _mm512_cmplt_epu16_mask(sum, a), sum, _mm512_set1_epi16(1));
  }
  static R bswap16(R a) {  // one byte shuffle (within 128-bit quarters)
    const __m128i swap = _mm_setr_epi8(1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14);
    return _mm512_shuffle_epi8(a, _mm512_broadcast_i32x4(swap));
  }
  static R unpacklo16(R a, R b) { return _mm512_unpacklo_epi16(a, b); }
  static R unpackhi16(R a, R b) { return _mm512_unpackhi_epi16(a, b); }
  static R unpacklo32(R a, R b) { return _mm512_unpacklo_epi32(a, b); }
  static R unpackhi32(R a, R b) { return _mm512_unpackhi_epi32(a, b); }
  static R unpacklo64(R a, R b) { return _mm512_unpacklo_epi64(a, b); }
  static R unpackhi64(R a, R b) { return _mm512_unpackhi_epi64(a, b); }
  // Unpacking works within 128-bit quarters: quarter q of a = frames 8q, 8q+1; of b 8q+2,
  // 8q+3; ... (16-byte records: a = frame 8q, b = 8q+1, ...). A 4 x 4 transposition of the
  // quarters puts them in frame order, quarter q's records `stride` uint64s after q-1's.
  static void store4(uint64_t* dst, R a, R b, R c, R d, uint32_t stride) {
    const R ab_lo = _mm512_shuffle_i64x2(a, b, 0x44), cd_lo = _mm512_shuffle_i64x2(c, d, 0x44);
    const R ab_hi = _mm512_shuffle_i64x2(a, b, 0xee), cd_hi = _mm512_shuffle_i64x2(c, d, 0xee);
    storeu(dst, _mm512_shuffle_i64x2(ab_lo, cd_lo, 0x88));                // quarters 0 of a, b, c, d
    storeu(dst + stride, _mm512_shuffle_i64x2(ab_lo, cd_lo, 0xdd));       // quarters 1
    storeu(dst + 2 * stride, _mm512_shuffle_i64x2(ab_hi, cd_hi, 0x88));   // quarters 2
    storeu(dst + 3 * stride, _mm512_shuffle_i64x2(ab_hi, cd_hi, 0xdd));   // quarters 3
  }
  static bool any(R m) { return _mm512_test_epi64_mask(m, m) != 0; }
  static void pair(const R* out, int, R& xl, R& xh) {
    xl = _mm512_shuffle_i64x2(out[0], out[1], 0x44);  // 128-bit chunks 0, 1 of each
    xh = _mm512_shuffle_i64x2(out[0], out[1], 0xee);  // chunks 2, 3 of each
  }
};

}  // namespace

const FieldKernels kAvx512Kernels = {Isa::kAvx512, "avx512", fill_random<Simd<Avx512>>, finish<Simd<Avx512>>,
                                     Simd<Avx512>::stamp_checksums, Simd<Avx512>::place_ce, Simd<Avx512>::map};

}  // namespace xlp
