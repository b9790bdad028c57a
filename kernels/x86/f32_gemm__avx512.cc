// FP32 GEMM / IGEMM microkernels on zmm (AVX-512F). The tile loops are
// kernels/x86/f32_gemm_tile.inc; layouts and contracts: kernels/f32_gemm_list.h.
//
// Each tile keeps MR x NR/16 zmm accumulators (12 for 12x16, 16 for 8x32): the FMA latency is
// 4 cycles at 2 FMA/cycle, so at least 8 independent chains are needed and 12+ hide the
// loads as well. Per k step: NR/16 weight loads, MR broadcasts of A, MR*NR/16 FMAs.
// GCC 12 reports _mm512_undefined_ps() inside its own max/min intrinsics as "may be used
// uninitialized" (a false positive of the header); it is silenced for this file only.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "kernels/f32_gemm_list.h"

namespace octet::kernels::avx512 {
namespace {

struct Ops {
  using Vec = __m512;
  using TailCount = size_t;
  using Mask = __mmask16;
  static constexpr int kLanes = 16;
  static constexpr bool kCheapMaskedStore = true;

  static Vec load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
  static Vec broadcast(const float* p) { return _mm512_set1_ps(*p); }
  static Vec set1(float v) { return _mm512_set1_ps(v); }
  static Vec fmadd(Vec a, Vec b, Vec acc) { return _mm512_fmadd_ps(a, b, acc); }
  static Vec min(Vec a, Vec b) { return _mm512_min_ps(a, b); }
  static Vec max(Vec a, Vec b) { return _mm512_max_ps(a, b); }
  static Mask tail_mask(size_t n) { return n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1u); }
  static void store_tail(float* p, Vec v, Mask m) { _mm512_mask_storeu_ps(p, m, v); }
};

#include "kernels/x86/f32_gemm_tile.inc"

}  // namespace

#define OCTET_F32_GEMM_TILE(isa, mr, nr) OCTET_F32_GEMM_TILE_##isa(mr, nr)
#define OCTET_F32_GEMM_TILE_avx2(mr, nr)
#define OCTET_F32_GEMM_TILE_avx512(mr, nr) OCTET_F32_GEMM_DEFINE(mr, nr)
#include "kernels/f32_gemm_list.inc"
#undef OCTET_F32_GEMM_TILE
#undef OCTET_F32_GEMM_TILE_avx2
#undef OCTET_F32_GEMM_TILE_avx512

}  // namespace octet::kernels::avx512
