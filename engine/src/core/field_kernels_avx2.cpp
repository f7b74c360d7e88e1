// The AVX2 field kernels (256-bit registers); compiled with -mavx2, run only where the CPU
// has AVX2 (isa.cpp).
#include "core/field_kernels_impl.hpp"

#include <immintrin.h>

namespace xlp {
namespace {

// 4 generator lanes per register: a step's words 0-15 (the draws' low halves) are register
// 0, words 16-31 (the high halves) register 1.
struct Avx2 {
  using R = __m256i;
  using Count = __m128i;
  static constexpr int kRegs = 2, kSteps = 1, kPairs = 1, kWords = 16;
  static R loadu(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
  static void storeu(void* p, R v) { _mm256_storeu_si256(static_cast<__m256i*>(p), v); }
  static R xor_(R a, R b) { return _mm256_xor_si256(a, b); }
  static R or_(R a, R b) { return _mm256_or_si256(a, b); }
  static R add64(R a, R b) { return _mm256_add_epi64(a, b); }
  template <int k> static R shl64(R a) { return _mm256_slli_epi64(a, k); }
  template <int k> static R rotl64(R a) { return _mm256_or_si256(_mm256_slli_epi64(a, k), _mm256_srli_epi64(a, 64 - k)); }
  static R set16(uint16_t v) { return _mm256_set1_epi16(short(v)); }
  static Count count(int n) { return _mm_cvtsi32_si128(n); }
  static R mulhi16(R a, R b) { return _mm256_mulhi_epu16(a, b); }
  static R mullo16(R a, R b) { return _mm256_mullo_epi16(a, b); }
  static R add16(R a, R b) { return _mm256_add_epi16(a, b); }
  static R adds16(R a, R b) { return _mm256_adds_epu16(a, b); }
  static R cmpeq16(R a, R b) { return _mm256_cmpeq_epi16(a, b); }
  static R sll16(R a, Count n) { return _mm256_sll_epi16(a, n); }
  static R srl16(R a, Count n) { return _mm256_srl_epi16(a, n); }
  static R and_(R a, R b) { return _mm256_and_si256(a, b); }
  static R sub16(R a, R b) { return _mm256_sub_epi16(a, b); }
  static R bswap16(R a) {  // one byte shuffle (within 128-bit halves)
    return _mm256_shuffle_epi8(a, _mm256_setr_epi8(1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14, 1, 0, 3, 2, 5,
                                                   4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14));
  }
  static R unpacklo16(R a, R b) { return _mm256_unpacklo_epi16(a, b); }
  static R unpackhi16(R a, R b) { return _mm256_unpackhi_epi16(a, b); }
  static R unpacklo32(R a, R b) { return _mm256_unpacklo_epi32(a, b); }
  static R unpackhi32(R a, R b) { return _mm256_unpackhi_epi32(a, b); }
  static R unpacklo64(R a, R b) { return _mm256_unpacklo_epi64(a, b); }
  static R unpackhi64(R a, R b) { return _mm256_unpackhi_epi64(a, b); }
  // Unpacking works within 128-bit halves: a = frames 0-1 | 8-9, b = 2-3 | 10-11, ... (16-byte
  // records: a = frame 0 | 8, b = 1 | 9, ...); the high halves' records go `stride` uint64s on.
  static void store4(uint64_t* dst, R a, R b, R c, R d, uint32_t stride) {
    storeu(dst, _mm256_permute2x128_si256(a, b, 0x20));
    storeu(dst + 4, _mm256_permute2x128_si256(c, d, 0x20));
    storeu(dst + stride, _mm256_permute2x128_si256(a, b, 0x31));
    storeu(dst + stride + 4, _mm256_permute2x128_si256(c, d, 0x31));
  }
  static bool any(R m) { return _mm256_movemask_epi8(m) != 0; }
  static void pair(const R* out, int, R& xl, R& xh) { xl = out[0], xh = out[1]; }
};

}  // namespace

const FieldKernels kAvx2Kernels = {Isa::kAvx2, "avx2", fill_random<Simd<Avx2>>, finish<Simd<Avx2>>,
                                   Simd<Avx2>::stamp_checksums, Simd<Avx2>::place_ce, Simd<Avx2>::map};

}  // namespace xlp
