// INT8 IGEMM microkernels, AVX-512 VNNI: zmm vpdpbusd (u8 x s8, 4 products summed into each
// int32 lane, no saturation), weights packed c4 ([K/4][NR][4] per tap). The tile loop is
// kernels/gemm/q8_igemm_tile.inc; layout and zero-point fold in kernels/gemm/q8_gemm_list.h.
#include "kernels/ref/fp_contract_off.h"  // first: no multiply-add contracted into an FMA
// GCC 12 flags _mm512_undefined_ps() inside its own conversion intrinsics as "may be used
// uninitialized" in the shorter tiles (q8_igemm_tile.inc), a false positive of the header.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <immintrin.h>

#include <cstring>

#include "kernels/gemm/q8_gemm_list.h"

namespace octet::kernels::x86::avx512vnni {
namespace {

#include "kernels/x86/q8_ymm_epilogue.inc"
#include "kernels/x86/q8_evex_epilogue.inc"
#include "kernels/gemm/q8_activations.inc"

struct Ops : QuadActivations<ZmmEpilogue> {
  static Vec madd(Vec acc, Vec a, Vec w) { return _mm512_dpbusd_epi32(acc, a, w); }
};

#include "kernels/gemm/q8_igemm_tile.inc"

}  // namespace

#undef OCTET_ROW_IF_avx512vnni
#define OCTET_ROW_IF_avx512vnni(...) __VA_ARGS__
#include "kernels/gemm/q8_gemm_define.inc"

}  // namespace octet::kernels::x86::avx512vnni
