#pragma once
// Scalar quantized GEMM / MatMul: MatMulInteger, QLinearMatMul and ORT's QGemm (the
// fully connected layer with int32 bias and per-output-channel weight scales). Layouts
// follow the FP32 ref's GemmShape (row-major, optional transposes and row strides).
// The math is in docs/requantization.md.
//
// TA is uint8_t or int8_t, TB int8_t or uint8_t, TY uint8_t or int8_t. Accumulation is
// exact (int64) and stored modulo 2^32 like the int32 SIMD adds it models; no wrap can
// happen while k <= 33025 (|(a - za)(b - zb)| <= 255 * 255, see the doc).
#include <cstdint>
#include <span>

#include "kernels/ref/gemm.h"
#include "kernels/ref/qmath.h"

namespace octet::kernels {

// MatMulInteger (and the integer core of every kernel below):
//   y[i][j] = sum_p (A[i][p] - a_zp[i]) * (B[p][j] - b_zp[j])  (+ c[i][j] when c != nullptr)
// a_zero_point has 1 value (per tensor) or m (per row); b_zero_point 1 or n (per column).
// c, if given, is int32 and read at c[i * c_stride_m + j * c_stride_n] (stride 0
// broadcasts, as in f32_gemm__ref). y is dense [m][n] int32.
template <typename TA, typename TB>
void q8_gemm_int32__ref(const GemmShape& s, const TA* a, std::span<const int32_t> a_zero_point,
                        const TB* b, std::span<const int32_t> b_zero_point, const int32_t* c,
                        int64_t c_stride_m, int64_t c_stride_n, int32_t* y);

// QLinearMatMul (2-D; the caller loops over broadcast batch dimensions):
//   y[i][j] = saturate(round_half_even(float(acc[i][j]) * m[i][j]) + y_zero_point)
//   m[i][j] = (a_scale[i] * b_scale[j]) / y_scale, in float32
// a_scale / a_zero_point: 1 or m values (per row); b_scale / b_zero_point: 1 or n (per column).
// No bias (the op has none).
template <typename TA, typename TB, typename TY>
void q8_qlinear_matmul__ref(const GemmShape& s, const TA* a, std::span<const float> a_scale,
                            std::span<const int32_t> a_zero_point, const TB* b,
                            std::span<const float> b_scale, std::span<const int32_t> b_zero_point,
                            float y_scale, int32_t y_zero_point, TY* y);

// ORT's QGemm with a quantized output, i.e. the INT8 fully connected layer:
//   y[i][j] = clamp(round_half_even(float(acc[i][j] + c[i][j]) * rq.multiplier[j]) + rq.zero_point,
//                   rq.qmin, rq.qmax)
// with one activation zero point, per-column weight zero points (1 or n values), int32
// bias c (scale a_scale * b_scale[j], zero point 0; nullptr for none; strides as above)
// and rq.multiplier[j] = (a_scale * b_scale[j]) / y_scale (1 or n values). For a
// PyTorch-style Linear layer the weights are stored [n][k]: set s.trans_b.
// QGemm's alpha folds into the multiplier: ORT computes (alpha * a_scale * b_scale[j]) / y_scale.
template <typename TA, typename TB, typename TY>
void q8_gemm__ref(const GemmShape& s, const TA* a, int32_t a_zero_point, const TB* b,
                  std::span<const int32_t> b_zero_point, const int32_t* c, int64_t c_stride_m,
                  int64_t c_stride_n, const Requantization& rq, TY* y);

}  // namespace octet::kernels
