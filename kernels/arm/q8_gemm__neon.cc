// INT8 IGEMM microkernels, ARMv8.0 Advanced SIMD without the dot product (Cortex-A53/A72,
// Raspberry Pi 3/4): exact widening multiply-accumulates, the Arm counterpart of the AVX2
// int16 path. Weights are packed c1 as int16 ([K][NR] per tap, w_bytes 2); activations are
// read as s8 (u8 ones flipped on load, x ^ 0x80 = x - 128, folded by the packing) and widened
// to int16, four k at a time. SMLAL by lane multiplies 4 weights by one activation into 4
// int32 lanes: |w * x| <= 128 * 128, so nothing saturates. Layout and zero-point fold in
// kernels/gemm/q8_gemm_list.h; the epilogue is kernels/gemm/q8_igemm_store.inc.
#include "kernels/ref/fp_contract_off.h"  // first: no multiply-add contracted into an FMA

#include <arm_neon.h>

#include <cstring>

#include "kernels/gemm/q8_gemm_list.h"

namespace octet::kernels::arm::neon {
namespace {

#include "kernels/arm/x86_minmax.inc"
#include "kernels/arm/q8_neon_epilogue.inc"

struct Ops : NeonEpilogue {};

#include "kernels/gemm/q8_igemm_store.inc"

// Four activation bytes of a row, sign-flipped when kFlip, as int16 lanes 0..3.
template <bool kFlip>
int16x4_t four_activations(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  if constexpr (kFlip) v ^= 0x80808080u;
  return vget_low_s16(vmovl_s8(vreinterpret_s8_u32(vdup_n_u32(v))));
}

template <bool kFlip>
int16_t one_activation(const uint8_t* p) {
  return static_cast<int16_t>(static_cast<int8_t>(kFlip ? p[0] ^ 0x80u : p[0]));
}

// MR rows x 8 columns: two int32x4 accumulators per row.
template <int MR, bool kFlip, Q8Out kOut = Q8Out::requantized>
void igemm_c1(const Q8IgemmArgs& g) {
  constexpr int NR = 8;
  const int32_t* bias = static_cast<const int32_t*>(g.w);
  const int16_t* w = reinterpret_cast<const int16_t*>(bias + 2 * NR);  // after bias' and multipliers
  const int32_t* acc_init = kOut == Q8Out::dequantized ? g.acc_init : bias;
  int32x4_t acc[MR][2];
  const int32x4_t init_lo = vld1q_s32(acc_init), init_hi = vld1q_s32(acc_init + 4);
  for (int i = 0; i < MR; ++i) {
    acc[i][0] = init_lo;
    acc[i][1] = init_hi;
  }
  const size_t kc4 = g.kc / 4 * 4;
  const uint8_t* const* a = g.a;
  for (size_t t = 0; t < g.ks; ++t) {
    const uint8_t* row[MR];
    for (int i = 0; i < MR; ++i) row[i] = a[i] != g.zero ? a[i] + g.a_offset : a[i];
    a += MR;
    size_t k = 0;
    for (; k < kc4; k += 4) {
      const int16x8_t w0 = vld1q_s16(w), w1 = vld1q_s16(w + 8), w2 = vld1q_s16(w + 16), w3 = vld1q_s16(w + 24);
      w += 4 * NR;
      for (int i = 0; i < MR; ++i) {
        const int16x4_t x = four_activations<kFlip>(row[i] + k);
        acc[i][0] = vmlal_lane_s16(acc[i][0], vget_low_s16(w0), x, 0);
        acc[i][1] = vmlal_high_lane_s16(acc[i][1], w0, x, 0);
        acc[i][0] = vmlal_lane_s16(acc[i][0], vget_low_s16(w1), x, 1);
        acc[i][1] = vmlal_high_lane_s16(acc[i][1], w1, x, 1);
        acc[i][0] = vmlal_lane_s16(acc[i][0], vget_low_s16(w2), x, 2);
        acc[i][1] = vmlal_high_lane_s16(acc[i][1], w2, x, 2);
        acc[i][0] = vmlal_lane_s16(acc[i][0], vget_low_s16(w3), x, 3);
        acc[i][1] = vmlal_high_lane_s16(acc[i][1], w3, x, 3);
      }
    }
    for (; k < g.kc; ++k) {
      const int16x8_t wk = vld1q_s16(w);
      w += NR;
      for (int i = 0; i < MR; ++i) {
        const int16_t x = one_activation<kFlip>(row[i] + k);
        acc[i][0] = vmlal_n_s16(acc[i][0], vget_low_s16(wk), x);
        acc[i][1] = vmlal_high_n_s16(acc[i][1], wk, x);
      }
    }
  }
  igemm_tile_store<MR, 2, kOut>(g, acc);
}

// The list's tiles (kernels/gemm/q8_gemm_define.inc): MR rows x 8 columns.
template <int MR, int NR, bool kFlip, Q8Out kOut>
void q8_tile(const Q8IgemmArgs& g) {
  static_assert(NR == 8, "the widening-multiply kernels are 8 columns wide");
  igemm_c1<MR, kFlip, kOut>(g);
}

}  // namespace

#undef OCTET_ROW_IF_neon
#define OCTET_ROW_IF_neon(...) __VA_ARGS__
#include "kernels/gemm/q8_gemm_define.inc"

}  // namespace octet::kernels::arm::neon
