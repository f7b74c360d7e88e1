// The field kernels compiled with the engine's own target flags: plain C++, and on x86 the
// SSE2 kernels (128-bit registers), which every x86-64 CPU runs.
#include "core/field_kernels_impl.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace xlp {

const FieldKernels kScalarKernels = {Isa::kScalar, "scalar", fill_random<Scalar>, finish<Scalar>,
                                     Scalar::stamp_checksums, Scalar::place_ce, Scalar::map};

#if defined(__x86_64__)
namespace {

// SSE2: 2 generator lanes per register; a step's words 0-7, 8-15, 16-23, 24-31 are
// registers 0-3, so draws 0-7 pair registers 0 and 2, draws 8-15 registers 1 and 3.
struct Sse {
  using R = __m128i;
  using Count = __m128i;
  static constexpr int kRegs = 4, kSteps = 1, kPairs = 2, kWords = 8;
  static R loadu(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }
  static void storeu(void* p, R v) { _mm_storeu_si128(static_cast<__m128i*>(p), v); }
  static R xor_(R a, R b) { return _mm_xor_si128(a, b); }
  static R or_(R a, R b) { return _mm_or_si128(a, b); }
  static R add64(R a, R b) { return _mm_add_epi64(a, b); }
  template <int k> static R shl64(R a) { return _mm_slli_epi64(a, k); }
  template <int k> static R rotl64(R a) { return _mm_or_si128(_mm_slli_epi64(a, k), _mm_srli_epi64(a, 64 - k)); }
  static R set16(uint16_t v) { return _mm_set1_epi16(short(v)); }
  static Count count(int n) { return _mm_cvtsi32_si128(n); }
  static R mulhi16(R a, R b) { return _mm_mulhi_epu16(a, b); }
  static R mullo16(R a, R b) { return _mm_mullo_epi16(a, b); }
  static R add16(R a, R b) { return _mm_add_epi16(a, b); }
  static R adds16(R a, R b) { return _mm_adds_epu16(a, b); }
  static R cmpeq16(R a, R b) { return _mm_cmpeq_epi16(a, b); }
  static R sll16(R a, Count n) { return _mm_sll_epi16(a, n); }
  static R srl16(R a, Count n) { return _mm_srl_epi16(a, n); }
  static R and_(R a, R b) { return _mm_and_si128(a, b); }
  static R sub16(R a, R b) { return _mm_sub_epi16(a, b); }
  static R bswap16(R a) { return _mm_or_si128(_mm_slli_epi16(a, 8), _mm_srli_epi16(a, 8)); }  // (no pshufb in SSE2)
  static R unpacklo16(R a, R b) { return _mm_unpacklo_epi16(a, b); }
  static R unpackhi16(R a, R b) { return _mm_unpackhi_epi16(a, b); }
  static R unpacklo32(R a, R b) { return _mm_unpacklo_epi32(a, b); }
  static R unpackhi32(R a, R b) { return _mm_unpackhi_epi32(a, b); }
  static R unpacklo64(R a, R b) { return _mm_unpacklo_epi64(a, b); }
  static R unpackhi64(R a, R b) { return _mm_unpackhi_epi64(a, b); }
  // Records in order (8-byte ones: frames 0-1, 2-3, 4-5, 6-7; 16-byte ones: frames 0, 1, 2,
  // 3); one 128-bit quarter, so no stride to the next.
  static void store4(uint64_t* dst, R a, R b, R c, R d, uint32_t) {
    storeu(dst, a), storeu(dst + 2, b), storeu(dst + 4, c), storeu(dst + 6, d);
  }
  static bool any(R m) { return _mm_movemask_epi8(m) != 0; }
  static void pair(const R* out, int i, R& xl, R& xh) { xl = out[i], xh = out[i + 2]; }
};

}  // namespace

const FieldKernels kSseKernels = {Isa::kSse, "sse", fill_random<Simd<Sse>>, finish<Simd<Sse>>,
                                  Simd<Sse>::stamp_checksums, Simd<Sse>::place_ce, Simd<Sse>::map};
#endif

}  // namespace xlp
