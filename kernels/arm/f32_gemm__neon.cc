// FP32 GEMM / IGEMM microkernels, AArch64 Advanced SIMD. Layouts and contracts:
// kernels/gemm/f32_gemm_list.h.
//
// 8x8: 16 accumulators (8 rows x 2 float32x4), two weight vectors per k, and A read four k
// at a time per row so each FMLA-by-element takes its multiplier from a lane: 64 FMAs per
// 8 row loads + 8 weight loads. 32 vector registers hold it all.
#include <arm_neon.h>

#include "kernels/gemm/f32_gemm_list.h"

namespace octet::kernels::neon {
namespace {

#include "kernels/arm/x86_minmax.inc"

template <int MR>
struct Acc {
  float32x4_t v[MR][2];
};

template <int MR>
[[gnu::always_inline]] inline void init_from_bias(Acc<MR>& acc, const float* bias) {
  const float32x4_t b0 = vld1q_f32(bias), b1 = vld1q_f32(bias + 4);
  for (int r = 0; r < MR; ++r) {
    acc.v[r][0] = b0;
    acc.v[r][1] = b1;
  }
}

// acc += A[MR][kc] * W[kc][8]; w advances past the kc rows it used.
template <int MR>
[[gnu::always_inline]] inline void accumulate(Acc<MR>& acc, const float* const (&a)[MR], size_t kc,
                                               const float*& w) {
  const float* wp = w;
  size_t k = 0;
  for (; k + 4 <= kc; k += 4) {
    float32x4_t wv[4][2];
    for (int q = 0; q < 4; ++q) {
      wv[q][0] = vld1q_f32(wp + 8 * q);
      wv[q][1] = vld1q_f32(wp + 8 * q + 4);
    }
    wp += 32;
    for (int r = 0; r < MR; ++r) {
      const float32x4_t av = vld1q_f32(a[r] + k);
      acc.v[r][0] = vfmaq_laneq_f32(acc.v[r][0], wv[0][0], av, 0);
      acc.v[r][1] = vfmaq_laneq_f32(acc.v[r][1], wv[0][1], av, 0);
      acc.v[r][0] = vfmaq_laneq_f32(acc.v[r][0], wv[1][0], av, 1);
      acc.v[r][1] = vfmaq_laneq_f32(acc.v[r][1], wv[1][1], av, 1);
      acc.v[r][0] = vfmaq_laneq_f32(acc.v[r][0], wv[2][0], av, 2);
      acc.v[r][1] = vfmaq_laneq_f32(acc.v[r][1], wv[2][1], av, 2);
      acc.v[r][0] = vfmaq_laneq_f32(acc.v[r][0], wv[3][0], av, 3);
      acc.v[r][1] = vfmaq_laneq_f32(acc.v[r][1], wv[3][1], av, 3);
    }
  }
  for (; k < kc; ++k) {
    const float32x4_t w0 = vld1q_f32(wp), w1 = vld1q_f32(wp + 4);
    wp += 8;
    for (int r = 0; r < MR; ++r) {
      const float32x4_t av = vld1q_dup_f32(a[r] + k);
      acc.v[r][0] = vfmaq_f32(acc.v[r][0], w0, av);
      acc.v[r][1] = vfmaq_f32(acc.v[r][1], w1, av);
    }
  }
  w = wp;
}

// y = min(max(acc, lo), hi) with the x86 kernels' NaN rule: a NaN accumulator passes through
// (each bound replaces acc only when a comparison with it is true, never for NaN).
[[gnu::always_inline]] inline float32x4_t clamp(float32x4_t acc, float32x4_t lo, float32x4_t hi) {
  return min_ps(hi, max_ps(lo, acc));
}

// Clamp and store rows < mr, columns < nc (nc may exceed 8: only 8 are stored).
template <int MR>
[[gnu::always_inline]] inline void clamp_and_store(const Acc<MR>& acc, size_t mr, size_t nc, float* c,
                                                    size_t c_stride, const F32MinMax& bounds) {
  const float32x4_t lo = vdupq_n_f32(bounds.min), hi = vdupq_n_f32(bounds.max);
  for (int r = 0; r < MR; ++r) {
    if (size_t(r) >= mr) break;
    float* cr = c + r * c_stride;
    const float32x4_t y0 = clamp(acc.v[r][0], lo, hi), y1 = clamp(acc.v[r][1], lo, hi);
    if (nc >= 8) {
      vst1q_f32(cr, y0);
      vst1q_f32(cr + 4, y1);
    } else {
      float lanes[8];
      vst1q_f32(lanes, y0);
      vst1q_f32(lanes + 4, y1);
      for (size_t j = 0; j < nc; ++j) cr[j] = lanes[j];
    }
  }
}

// One row (a batch-1 classifier): the 8-row tile would spend 8 FMAs per useful one, and one
// block of 8 columns alone is 2 dependency chains of FMAs, latency-bound. So f32_gemv_blocks(8)
// blocks (four: 8 chains) are walked side by side, as on x86 (f32_gemm_list.h), every output
// summed over k in the tile's order: the same bits. Leaves nc, w and c at the columns left
// (fewer than a group's worth; nc == 0 when none are).
void gemv_block_groups(size_t& nc, size_t kc, const float* a, const float*& w, float*& c, const F32MinMax& bounds) {
  constexpr int kNB = int{f32_gemv_blocks(8)};
  const size_t block_stride = 8 * (kc + 1);
  while (nc > (kNB - 1) * 8) {
    Acc<1> acc[kNB];
    const float* wp[kNB];
#pragma GCC unroll 4
    for (int b = 0; b < kNB; ++b) {
      init_from_bias(acc[b], w + b * block_stride);
      wp[b] = w + b * block_stride + 8;
    }
    for (size_t k = 0; k < kc; ++k) {
      const float32x4_t av = vld1q_dup_f32(a + k);
#pragma GCC unroll 4
      for (int b = 0; b < kNB; ++b) {
        acc[b].v[0][0] = vfmaq_f32(acc[b].v[0][0], vld1q_f32(wp[b]), av);
        acc[b].v[0][1] = vfmaq_f32(acc[b].v[0][1], vld1q_f32(wp[b] + 4), av);
        wp[b] += 8;
      }
    }
#pragma GCC unroll 4
    for (int b = 0; b < kNB; ++b) clamp_and_store(acc[b], 1, nc - b * 8, c + b * 8, 0, bounds);
    nc = nc > kNB * 8 ? nc - kNB * 8 : 0;
    c += kNB * 8;
    w += kNB * block_stride;
  }
}

template <int MR>
void gemm(size_t mr, size_t nc, size_t kc, const float* a, size_t a_stride, const float* w, float* c,
          size_t c_stride, const F32MinMax& bounds) {
  if (mr == 1) {
    gemv_block_groups(nc, kc, a, w, c, bounds);
    if (nc == 0) return;
  }
  const float* rows[MR];
  rows[0] = a;
  for (int r = 1; r < MR; ++r) rows[r] = size_t(r) < mr ? rows[r - 1] + a_stride : rows[r - 1];
  for (;;) {
    Acc<MR> acc;
    init_from_bias(acc, w);
    w += 8;
    accumulate(acc, rows, kc, w);
    clamp_and_store(acc, mr, nc, c, c_stride, bounds);
    if (nc <= 8) return;
    nc -= 8;
    c += 8;
  }
}

template <int MR>
void igemm(size_t mr, size_t nc, size_t kc, size_t ks, const float* const* a, size_t a_offset,
           const float* zero, const float* w, float* c, size_t c_stride, const F32MinMax& bounds) {
  for (;;) {
    Acc<MR> acc;
    init_from_bias(acc, w);
    w += 8;
    const float* const* ap = a;
    for (size_t p = 0; p < ks; ++p) {
      const float* rows[MR];
      for (int r = 0; r < MR; ++r) rows[r] = ap[r] == zero ? zero : ap[r] + a_offset;
      ap += MR;
      accumulate(acc, rows, kc, w);
    }
    clamp_and_store(acc, mr, nc, c, c_stride, bounds);
    if (nc <= 8) return;
    nc -= 8;
    c += 8;
  }
}

}  // namespace

void f32_gemm_8x8(size_t mr, size_t nc, size_t kc, const float* a, size_t a_stride, const float* w, float* c,
                  size_t c_stride, const F32MinMax& bounds) {
  gemm<8>(mr, nc, kc, a, a_stride, w, c, c_stride, bounds);
}
void f32_igemm_8x8(size_t mr, size_t nc, size_t kc, size_t ks, const float* const* a, size_t a_offset,
                   const float* zero, const float* w, float* c, size_t c_stride, const F32MinMax& bounds) {
  igemm<8>(mr, nc, kc, ks, a, a_offset, zero, w, c, c_stride, bounds);
}
void f32_gemm_4x8(size_t mr, size_t nc, size_t kc, const float* a, size_t a_stride, const float* w, float* c,
                  size_t c_stride, const F32MinMax& bounds) {
  gemm<4>(mr, nc, kc, a, a_stride, w, c, c_stride, bounds);
}
void f32_igemm_4x8(size_t mr, size_t nc, size_t kc, size_t ks, const float* const* a, size_t a_offset,
                   const float* zero, const float* w, float* c, size_t c_stride, const F32MinMax& bounds) {
  igemm<4>(mr, nc, kc, ks, a, a_offset, zero, w, c, c_stride, bounds);
}

}  // namespace octet::kernels::neon
