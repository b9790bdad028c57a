// INT8 IGEMM microkernels, EVEX VNNI at 256 bits: ymm vpdpbusd (u8 x s8, 4 products summed
// into each int32 lane, no saturation), weights packed c4 ([K/4][NR][4] per tap). The EVEX form
// (AVX512-VNNI + VL, ymm only; kernels/isa.h) has 32 ymm registers and masked stores;
// q8_gemm__avxvnni.cc is the VEX form, for CPUs with AVX-VNNI and no AVX-512.
// The tile loop is kernels/gemm/q8_igemm_tile.inc; layout and zero-point fold in
// kernels/gemm/q8_gemm_list.h.
#include "kernels/ref/fp_contract_off.h"  // first: no multiply-add contracted into an FMA

#include <immintrin.h>

#include <cstring>

#include "kernels/gemm/q8_gemm_list.h"

namespace octet::kernels::x86::avx256vnni {
namespace {

#include "kernels/x86/q8_ymm_epilogue.inc"
#include "kernels/x86/q8_evex_epilogue.inc"
#include "kernels/gemm/q8_activations.inc"

struct Ops : QuadActivations<EvexYmmEpilogue> {
  static Vec madd(Vec acc, Vec a, Vec w) { return _mm256_dpbusd_epi32(acc, a, w); }
};

#include "kernels/gemm/q8_igemm_tile.inc"

}  // namespace

#undef OCTET_ROW_IF_avx256vnni
#define OCTET_ROW_IF_avx256vnni(...) __VA_ARGS__
#include "kernels/gemm/q8_gemm_define.inc"

}  // namespace octet::kernels::x86::avx256vnni
