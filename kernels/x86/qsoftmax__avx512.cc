// QLinearSoftmax microkernels (kernels/qsoftmax_list.h), AVX-512: 16 lanes, table lookups by
// vgatherdps, the low bytes stored by vpmovdb.
#include "kernels/ref/fp_contract_off.h"  // first: every float step rounds as the reference's

#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/qsoftmax_list.h"

namespace octet::kernels::avx512 {
namespace {

struct Ops {
  using VI = __m512i;
  using VF = __m512;
  static constexpr size_t kLanes = 16;
  static __m128i load16(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }
  static VI load(const uint8_t* p) { return _mm512_cvtepu8_epi32(load16(p)); }
  static VI load(const int8_t* p) { return _mm512_cvtepi8_epi32(load16(p)); }
  static VI set1(int32_t v) { return _mm512_set1_epi32(v); }
  static VI max(VI a, VI b) { return _mm512_max_epi32(a, b); }
  static VI min(VI a, VI b) { return _mm512_min_epi32(a, b); }
  static VI add(VI a, VI b) { return _mm512_add_epi32(a, b); }
  static VI sub(VI a, VI b) { return _mm512_sub_epi32(a, b); }
  static VI bitand_(VI a, VI b) { return _mm512_and_si512(a, b); }
  static VF set1f(float v) { return _mm512_set1_ps(v); }
  static VF loadf(const float* p) { return _mm512_loadu_ps(p); }
  static VF add(VF a, VF b) { return _mm512_add_ps(a, b); }
  static VF mul(VF a, VF b) { return _mm512_mul_ps(a, b); }
  static VF div(VF a, VF b) { return _mm512_div_ps(a, b); }
  static VF gather(const float* table, VI i) { return _mm512_i32gather_ps(i, table, 4); }
  // vcvtps2dq under the default rounding mode: half to even, 0x80000000 out of range (cvttss2si's).
  static VI round(VF v) { return _mm512_cvtps_epi32(v); }
  // vpmovdb truncates: the low byte of each lane.
  static void store_bytes(void* p, VI v) { _mm_storeu_si128(static_cast<__m128i*>(p), _mm512_cvtepi32_epi8(v)); }
  static void store(uint8_t* p, VI v) { store_bytes(p, v); }
  static void store(int8_t* p, VI v) { store_bytes(p, v); }
  static void store(float* p, VF v) { _mm512_storeu_ps(p, v); }
  static void store(int32_t* p, VI v) { _mm512_storeu_si512(p, v); }
};

}  // namespace

#include "kernels/qsoftmax_loop.inc"

}  // namespace octet::kernels::avx512
