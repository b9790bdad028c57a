// INT8 IGEMM microkernels, AArch64 8-bit matrix multiply (ARMv8.6 I8MM SMMLA: Graviton 3,
// Apple M2+, Cortex-A710+). One SMMLA multiplies a 2x8 block of s8 activations (two output
// rows, eight k's) by an 8x2 block of s8 weights (eight k's, two output columns) into a 2x2
// int32 block, exact: twice the products of an SDOT per instruction. Activations are read as
// s8 (u8 ones flipped on load, x ^ 0x80 = x - 128, folded by the packing); weights are packed
// c8 ([K/8][NR][8] per tap), so the 16 bytes of two neighbouring columns are one SMMLA operand.
// Layout and zero-point fold: kernels/gemm/q8_gemm_list.h.
#include "kernels/ref/fp_contract_off.h"  // first: no multiply-add contracted into an FMA

#include <arm_neon.h>

#include <cstring>

#include "kernels/gemm/q8_gemm_list.h"

namespace octet::kernels::arm::neoni8mm {
namespace {

#include "kernels/arm/x86_minmax.inc"
#include "kernels/arm/q8_neon_epilogue.inc"

struct Ops : NeonEpilogue {};

#include "kernels/gemm/q8_igemm_store.inc"

constexpr int kKr = 8;

template <bool kFlip>
inline int8x8_t activation_octet(const uint8_t* p) {
  const uint8x8_t v = vld1_u8(p);
  return vreinterpret_s8_u8(kFlip ? veor_u8(v, vdup_n_u8(0x80)) : v);
}

// The last 1..7 bytes of a row, never reading past them (the bytes above meet zero weights).
template <bool kFlip>
inline int8x8_t activation_octet_tail(const uint8_t* p, size_t n) {
  uint8_t bytes[kKr] = {};
  std::memcpy(bytes, p, n);
  return activation_octet<kFlip>(bytes);
}

// acc[p][q] holds rows 2p, 2p+1 x columns 2q, 2q+1 as {r0c0, r0c1, r1c0, r1c1}. The store
// wants each row's columns in order, four per vector: interleaving the 64-bit halves of two
// neighbouring column pairs gives row 2p (low halves) and row 2p+1 (high halves).
template <int MR, int NR, bool kFlip, Q8Out kOut = Q8Out::requantized>
void q8_tile(const Q8IgemmArgs& g) {
  constexpr int kRowPairs = MR / 2;
  constexpr int kColPairs = NR / 2;
  constexpr int NV = NR / Ops::kLanes;
  constexpr size_t kGroupBytes = static_cast<size_t>(NR) * kKr;
  const int32_t* bias = static_cast<const int32_t*>(g.w);
  const float* mult = reinterpret_cast<const float*>(bias + NR);
  const int8_t* w = reinterpret_cast<const int8_t*>(mult + NR);

  int32x4_t acc[kRowPairs][kColPairs];
#pragma GCC unroll 8
  for (int p = 0; p < kRowPairs; ++p)
#pragma GCC unroll 8
    for (int q = 0; q < kColPairs; ++q) acc[p][q] = vdupq_n_s32(0);

  const size_t kc_main = g.kc / kKr * kKr;
  const size_t tail = g.kc - kc_main;
  const uint8_t* const* a = g.a;
  for (size_t t = 0; t < g.ks; ++t) {
    const uint8_t* row[MR];
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) row[i] = a[i] != g.zero ? a[i] + g.a_offset : a[i];
    a += MR;
    size_t k = 0;
    for (; k < kc_main; k += kKr) {
      int8x16_t wv[kColPairs];
#pragma GCC unroll 8
      for (int q = 0; q < kColPairs; ++q) wv[q] = vld1q_s8(w + q * 2 * kKr);
      w += kGroupBytes;
#pragma GCC unroll 8
      for (int p = 0; p < kRowPairs; ++p) {
        const int8x16_t av =
            vcombine_s8(activation_octet<kFlip>(row[2 * p] + k), activation_octet<kFlip>(row[2 * p + 1] + k));
#pragma GCC unroll 8
        for (int q = 0; q < kColPairs; ++q) acc[p][q] = vmmlaq_s32(acc[p][q], av, wv[q]);
      }
    }
    if (tail != 0) {
      int8x16_t wv[kColPairs];
#pragma GCC unroll 8
      for (int q = 0; q < kColPairs; ++q) wv[q] = vld1q_s8(w + q * 2 * kKr);
      w += kGroupBytes;
      int8x8_t rows[MR];
#pragma GCC unroll 16
      for (int i = 0; i < MR; ++i) {
        // A full load reads up to KR - 1 bytes of the next pixel: they meet zero weights.
        const uint8_t* p = row[i] + k;
        rows[i] = p + kKr <= g.a_end || row[i] == g.zero ? activation_octet<kFlip>(p)
                                                        : activation_octet_tail<kFlip>(p, tail);
      }
#pragma GCC unroll 8
      for (int p = 0; p < kRowPairs; ++p) {
        const int8x16_t av = vcombine_s8(rows[2 * p], rows[2 * p + 1]);
#pragma GCC unroll 8
        for (int q = 0; q < kColPairs; ++q) acc[p][q] = vmmlaq_s32(acc[p][q], av, wv[q]);
      }
    }
  }

  // The initial accumulators (bias', or the run-time fold on the float path) are added after
  // the products: int32 addition wraps, so the order does not change a bit.
  const int32_t* acc_init = kOut == Q8Out::dequantized ? g.acc_init : bias;
  int32x4_t out[MR][NV];
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) {
    const int32x4_t init = vld1q_s32(acc_init + Ops::kLanes * v);
#pragma GCC unroll 8
    for (int p = 0; p < kRowPairs; ++p) {
      const int64x2_t lo = vreinterpretq_s64_s32(acc[p][2 * v]);
      const int64x2_t hi = vreinterpretq_s64_s32(acc[p][2 * v + 1]);
      out[2 * p][v] = vaddq_s32(vreinterpretq_s32_s64(vzip1q_s64(lo, hi)), init);
      out[2 * p + 1][v] = vaddq_s32(vreinterpretq_s32_s64(vzip2q_s64(lo, hi)), init);
    }
  }
  igemm_tile_store<MR, NV, kOut>(g, out);
}

}  // namespace

#undef OCTET_ROW_IF_neoni8mm
#define OCTET_ROW_IF_neoni8mm(...) __VA_ARGS__
#include "kernels/gemm/q8_gemm_define.inc"

}  // namespace octet::kernels::arm::neoni8mm
