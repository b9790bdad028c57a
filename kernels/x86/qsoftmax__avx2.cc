// QLinearSoftmax microkernels (kernels/qsoftmax_list.h), AVX2: 8 lanes, table lookups by
// vgatherdps.
#include "kernels/ref/fp_contract_off.h"  // first: every float step rounds as the reference's

#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/qsoftmax_list.h"

namespace octet::kernels::avx2 {
namespace {

struct Ops {
  using VI = __m256i;
  using VF = __m256;
  static constexpr size_t kLanes = 8;
  static __m128i load8(const void* p) { return _mm_loadl_epi64(static_cast<const __m128i*>(p)); }
  static VI load(const uint8_t* p) { return _mm256_cvtepu8_epi32(load8(p)); }
  static VI load(const int8_t* p) { return _mm256_cvtepi8_epi32(load8(p)); }
  static VI set1(int32_t v) { return _mm256_set1_epi32(v); }
  static VI max(VI a, VI b) { return _mm256_max_epi32(a, b); }
  static VI min(VI a, VI b) { return _mm256_min_epi32(a, b); }
  static VI add(VI a, VI b) { return _mm256_add_epi32(a, b); }
  static VI sub(VI a, VI b) { return _mm256_sub_epi32(a, b); }
  static VI bitand_(VI a, VI b) { return _mm256_and_si256(a, b); }
  static VF set1f(float v) { return _mm256_set1_ps(v); }
  static VF loadf(const float* p) { return _mm256_loadu_ps(p); }
  static VF add(VF a, VF b) { return _mm256_add_ps(a, b); }
  static VF mul(VF a, VF b) { return _mm256_mul_ps(a, b); }
  static VF div(VF a, VF b) { return _mm256_div_ps(a, b); }
  static VF gather(const float* table, VI i) { return _mm256_i32gather_ps(table, i, 4); }
  // vcvtps2dq under the default rounding mode: half to even, 0x80000000 out of range (cvttss2si's).
  static VI round(VF v) { return _mm256_cvtps_epi32(v); }
  // The low byte of each lane: masked, then packed without saturation reaching it.
  static void store_bytes(void* p, VI v) {
    const VI b = _mm256_and_si256(v, _mm256_set1_epi32(0xFF));
    const __m128i w = _mm_packus_epi32(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
    _mm_storel_epi64(static_cast<__m128i*>(p), _mm_packus_epi16(w, w));
  }
  static void store(uint8_t* p, VI v) { store_bytes(p, v); }
  static void store(int8_t* p, VI v) { store_bytes(p, v); }
  static void store(float* p, VF v) { _mm256_storeu_ps(p, v); }
  static void store(int32_t* p, VI v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
};

}  // namespace

#include "kernels/qsoftmax_loop.inc"

}  // namespace octet::kernels::avx2
