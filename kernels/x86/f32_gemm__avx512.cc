// FP32 GEMM / IGEMM microkernels on zmm (AVX-512F). The tile loops are
// kernels/x86/f32_gemm_tile.inc; layouts and contracts: kernels/gemm/f32_gemm_list.h.
//
// Each tile keeps MR x NR/16 zmm accumulators (12 for 12x16, 16 for 8x32): the FMA latency is
// 4 cycles at 2 FMA/cycle, so at least 8 independent chains are needed and 12+ hide the
// loads as well. Per k step: NR/16 weight loads, MR broadcasts of A, MR*NR/16 FMAs.
#include <immintrin.h>

#include "kernels/gemm/f32_gemm_list.h"
#include "kernels/x86/avx512_ops.h"

namespace octet::kernels::avx512 {
namespace {

#include "kernels/x86/f32_gemm_tile.inc"

}  // namespace

#define OCTET_F32_GEMM_TILE(isa, mr, nr) OCTET_F32_GEMM_TILE_##isa(mr, nr)
#define OCTET_F32_GEMM_TILE_avx2(mr, nr)
#define OCTET_F32_GEMM_TILE_avx512(mr, nr) OCTET_F32_GEMM_DEFINE(mr, nr)
#include "kernels/gemm/f32_gemm_list.inc"
#undef OCTET_F32_GEMM_TILE
#undef OCTET_F32_GEMM_TILE_avx2
#undef OCTET_F32_GEMM_TILE_avx512

}  // namespace octet::kernels::avx512
