// INT8 IGEMM microkernels, VEX AVX-VNNI (Alder Lake and later Intel cores, Zen 5): ymm
// vpdpbusd (u8 x s8, 4 products summed into each int32 lane, no saturation) on CPUs that may
// lack AVX-512, so only 16 ymm registers and no mask registers: tiles keep <= 12 accumulators
// and stores of a partial column block use the AVX2 epilogue. Weights packed c4 like the EVEX
// kernels (q8_gemm__avx256vnni.cc). The tile loop is kernels/gemm/q8_igemm_tile.inc; layout and
// zero-point fold in kernels/gemm/q8_gemm_list.h.
#include "kernels/ref/fp_contract_off.h"  // first: no multiply-add contracted into an FMA

#include <immintrin.h>

#include <cstring>

#include "kernels/gemm/q8_gemm_list.h"

namespace octet::kernels::x86::avxvnni {
namespace {

#include "kernels/x86/q8_ymm_epilogue.inc"
#include "kernels/gemm/q8_activations.inc"

struct Ops : QuadActivations<YmmEpilogue> {
  static Vec madd(Vec acc, Vec a, Vec w) { return _mm256_dpbusd_avx_epi32(acc, a, w); }
};

#include "kernels/gemm/q8_igemm_tile.inc"

}  // namespace

#undef OCTET_ROW_IF_avxvnni
#define OCTET_ROW_IF_avxvnni(...) __VA_ARGS__
#include "kernels/gemm/q8_gemm_define.inc"

}  // namespace octet::kernels::x86::avxvnni
