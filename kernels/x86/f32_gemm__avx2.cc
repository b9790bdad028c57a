// FP32 GEMM / IGEMM microkernels on ymm (AVX2 + FMA). The tile loops are
// kernels/x86/f32_gemm_tile.inc; layouts and contracts: kernels/gemm/f32_gemm_list.h.
//
// 6x16 keeps 12 ymm accumulators and 4x24 keeps 12 too: FMA latency 4 cycles x 2 FMA/cycle
// needs >= 8 independent chains, and 12 leave room to hide the loads; with 2-3 weight
// vectors and one broadcast that is 15-16 of the 16 ymm registers.
#include <immintrin.h>

#include "kernels/gemm/f32_gemm_list.h"
#include "kernels/x86/avx2_ops.h"

namespace octet::kernels::avx2 {
namespace {

#include "kernels/x86/f32_gemm_tile.inc"

}  // namespace

#define OCTET_F32_GEMM_TILE(isa, mr, nr) OCTET_F32_GEMM_TILE_##isa(mr, nr)
#define OCTET_F32_GEMM_TILE_avx2(mr, nr) OCTET_F32_GEMM_DEFINE(mr, nr)
#define OCTET_F32_GEMM_TILE_avx512(mr, nr)
#include "kernels/gemm/f32_gemm_list.inc"
#undef OCTET_F32_GEMM_TILE
#undef OCTET_F32_GEMM_TILE_avx2
#undef OCTET_F32_GEMM_TILE_avx512

}  // namespace octet::kernels::avx2
