// INT8 IGEMM microkernels, EVEX VNNI at 256 bits: ymm vpdpbusd (u8 x s8, 4 products summed
// into each int32 lane, no saturation), weights packed c4 ([K/4][NR][4] per tap). The EVEX form
// (AVX512-VNNI + VL, ymm only; kernels/isa.h) has 32 ymm registers and masked stores;
// q8_gemm__avxvnni.cc is the VEX form, for CPUs with AVX-VNNI and no AVX-512.
// The tile loop is kernels/q8_igemm_tile.inc; layout and zero-point fold in
// kernels/q8_gemm_list.h.
#include "kernels/ref/fp_contract_off.h"  // first: no multiply-add contracted into an FMA

#include <immintrin.h>

#include <cstring>

#include "kernels/q8_gemm_list.h"

namespace octet::kernels::x86::avx256vnni {
namespace {

#include "kernels/q8_activation_quad.inc"

struct Ops {
  using Vec = __m256i;
  using VecF = __m256;
  static constexpr int kLanes = 8;
  static constexpr int kKr = 4;

  static Vec load(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
  static VecF loadf(const float* p) { return _mm256_loadu_ps(p); }
  static VecF set1f(float v) { return _mm256_set1_ps(v); }
  static Vec set1i(int32_t v) { return _mm256_set1_epi32(v); }
  static Vec add(Vec a, Vec b) { return _mm256_add_epi32(a, b); }

  template <bool kFlip>
  static Vec broadcast_a(const uint8_t* p) {
    return _mm256_set1_epi32(static_cast<int32_t>(activation_quad<kFlip>(p)));
  }
  template <bool kFlip>
  static Vec broadcast_a_tail(const uint8_t* p, size_t n) {
    return _mm256_set1_epi32(static_cast<int32_t>(activation_quad_tail<kFlip>(p, n)));
  }
  static Vec madd(Vec acc, Vec a, Vec w) { return _mm256_dpbusd_epi32(acc, a, w); }

  static VecF to_float(Vec acc) { return _mm256_cvtepi32_ps(acc); }
  static VecF mulf(VecF a, VecF b) { return _mm256_mul_ps(a, b); }
  static VecF addf(VecF a, VecF b) { return _mm256_add_ps(a, b); }
  static VecF clampf(VecF f, VecF lo, VecF hi) { return _mm256_min_ps(_mm256_max_ps(f, lo), hi); }
  static void storef(float* y, VecF f, size_t valid) {
    _mm256_mask_storeu_ps(y, static_cast<__mmask8>((1u << valid) - 1u), f);
  }
  static Vec requantize(Vec acc, VecF m, VecF lo, VecF hi) {
    const VecF f = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), m);
    return _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(f, lo), hi));
  }
  static void store(uint8_t* y, Vec q, size_t valid) {
    _mm256_mask_cvtepi32_storeu_epi8(y, static_cast<__mmask8>((1u << valid) - 1u), q);
  }
};

#include "kernels/q8_igemm_tile.inc"

}  // namespace

#undef OCTET_ROW_IF_avx256vnni
#define OCTET_ROW_IF_avx256vnni(...) __VA_ARGS__
#include "kernels/q8_gemm_define.inc"

}  // namespace octet::kernels::x86::avx256vnni
