// FP32 GEMM / IGEMM microkernels on ymm (AVX2 + FMA). The tile loops are
// kernels/x86/f32_gemm_tile.inc; layouts and contracts: kernels/f32_gemm_list.h.
//
// 6x16 keeps 12 ymm accumulators and 4x24 keeps 12 too: FMA latency 4 cycles x 2 FMA/cycle
// needs >= 8 independent chains, and 12 leave room to hide the loads; with 2-3 weight
// vectors and one broadcast that is 15-16 of the 16 ymm registers.
#include <immintrin.h>

#include "kernels/f32_gemm_list.h"

namespace octet::kernels::avx2 {
namespace {

struct Ops {
  using Vec = __m256;
  using TailCount = int;
  using Mask = __m256i;
  static constexpr int kLanes = 8;
  static constexpr bool kCheapMaskedStore = false;

  static Vec load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
  static Vec broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static Vec set1(float v) { return _mm256_set1_ps(v); }
  static Vec fmadd(Vec a, Vec b, Vec acc) { return _mm256_fmadd_ps(a, b, acc); }
  static Vec min(Vec a, Vec b) { return _mm256_min_ps(a, b); }
  static Vec max(Vec a, Vec b) { return _mm256_max_ps(a, b); }
  static Mask tail_mask(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static void store_tail(float* p, Vec v, Mask m) { _mm256_maskstore_ps(p, m, v); }
};

#include "kernels/x86/f32_gemm_tile.inc"

}  // namespace

#define OCTET_F32_GEMM_TILE(isa, mr, nr) OCTET_F32_GEMM_TILE_##isa(mr, nr)
#define OCTET_F32_GEMM_TILE_avx2(mr, nr) OCTET_F32_GEMM_DEFINE(mr, nr)
#define OCTET_F32_GEMM_TILE_avx512(mr, nr)
#include "kernels/f32_gemm_list.inc"
#undef OCTET_F32_GEMM_TILE
#undef OCTET_F32_GEMM_TILE_avx2
#undef OCTET_F32_GEMM_TILE_avx512

}  // namespace octet::kernels::avx2
