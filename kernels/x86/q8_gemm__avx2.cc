// INT8 IGEMM microkernels, AVX2 (ymm) without VNNI, exact: activations widened to int16 and
// multiplied by int16 weights with vpmaddwd (weights packed c2: [K/2][NR][2] int16 per tap).
// Why not vpmaddubsw: it adds its two u8 x s8 products into a SATURATING int16, and
// 255 * 127 * 2 = 64770 > 32767, so full-range weights would clip. vpmaddwd sums its two
// int16 products into int32 (at most 2 * 255 * 127 here: exact). On Zen 5 vpmaddwd has the
// multiply throughput of the vpmaddubsw + vpmaddwd pair (measured-anchors.md), so exactness
// costs only the widening of the activations, done a few hundred bytes of each row at a time
// into a stack buffer (q8_activations.inc, PairActivations): the inner loop splats each pair
// with a plain broadcast load.
// Only 16 ymm registers: tiles keep <= 12 accumulators.
// The tile loop is kernels/gemm/q8_igemm_tile.inc; layout and zero-point fold in
// kernels/gemm/q8_gemm_list.h.
#include "kernels/ref/fp_contract_off.h"  // first: no multiply-add contracted into an FMA

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/gemm/q8_gemm_list.h"

namespace octet::kernels::x86::avx2 {
namespace {

#include "kernels/x86/q8_ymm_epilogue.inc"
#include "kernels/gemm/q8_activations.inc"

struct Ops : PairActivations<YmmEpilogue> {
  static Vec madd(Vec acc, Vec a, Vec w) { return _mm256_add_epi32(acc, _mm256_madd_epi16(a, w)); }
};

#include "kernels/gemm/q8_igemm_tile.inc"

}  // namespace

#undef OCTET_ROW_IF_avx2
#define OCTET_ROW_IF_avx2(...) __VA_ARGS__
#include "kernels/gemm/q8_gemm_define.inc"

}  // namespace octet::kernels::x86::avx2
