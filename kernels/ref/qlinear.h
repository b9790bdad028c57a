#pragma once
// Scalar QuantizeLinear, DequantizeLinear, requantization and DynamicQuantizeLinear: the
// conversions between float and the quantized types, following ONNX / ONNX Runtime
// bit for bit. The math (rounding, division, saturation) is in docs/requantization.md.
//
// T is uint8_t or int8_t for quantized outputs; DequantizeLinear also takes int32_t
// (the encoding of a bias, whose zero point must be 0). Zero points are passed as int32
// and must lie in T's range.
#include <cstdint>
#include <limits>
#include <span>

#include "kernels/ref/qmath.h"

namespace octet::kernels {

// QuantizeLinear, per tensor: y = saturate(round_half_even(x / scale) + zero_point).
template <typename T>
void q8_quantize_linear__ref(int64_t count, const float* x, float scale, int32_t zero_point, T* y);

// QuantizeLinear, per axis: x has shape dims[0..rank); scale (and zero_point, unless it is
// empty, meaning 0) hold dims[axis] values. axis may be negative (counts from the back,
// ONNX's rule); an axis outside [-rank, rank) throws std::invalid_argument.
template <typename T>
void q8_quantize_linear_per_axis__ref(int rank, const int64_t* dims, int axis, const float* x,
                                      std::span<const float> scale,
                                      std::span<const int32_t> zero_point, T* y);

// DequantizeLinear, per tensor: y = float(x - zero_point) * scale, the subtraction in integers.
template <typename T>
void q8_dequantize_linear__ref(int64_t count, const T* x, float scale, int32_t zero_point,
                               float* y);

// DequantizeLinear, per axis (same shape rules as the per-axis quantize).
template <typename T>
void q8_dequantize_linear_per_axis__ref(int rank, const int64_t* dims, int axis, const T* x,
                                        std::span<const float> scale,
                                        std::span<const int32_t> zero_point, float* y);

// Requantization of int32 accumulators laid out [rows][channels] (NHWC pixels or GEMM rows
// by output channels): y = clamp(round_half_even(float(acc + bias[c]) * m[c]) + zp, qmin, qmax).
// bias may be nullptr; the bias add wraps in 32 bits like the SIMD integer add it models.
template <typename TY>
void q8_requantize__ref(int64_t rows, int channels, const int32_t* acc, const int32_t* bias,
                        const Requantization& rq, TY* y);

// DynamicQuantizeLinear (uint8 only, per tensor):
//   rmin = min(0, min x), rmax = max(0, max x)
//   scale = (rmax - rmin) / 255, or 1 when rmax == rmin (all-zero input; ONNX Runtime's
//           value, see docs/requantization.md for how the ONNX artifacts disagree)
//   zero_point = round_half_even(clamp(0 - rmin / scale, 0, 255))
//   y = saturate(round_half_even(x / scale) + zero_point)
// An empty input gives scale 1, zero point 0. NaN / infinite inputs have no defined range:
// the engine refuses them before quantizing (see qu8_dynamic_params).
struct DynamicQuantization {
  float scale = 1.0f;
  uint8_t zero_point = 0;
};
DynamicQuantization qu8_dynamic_quantize_linear__ref(int64_t count, const float* x, uint8_t* y);

// The smallest and largest element; NaN for both when any element is NaN; +inf / -inf when
// count is 0. The range pass of DynamicQuantizeLinear (callers refuse a non-finite range).
struct F32Range {
  float min = std::numeric_limits<float>::infinity();
  float max = -std::numeric_limits<float>::infinity();
};
F32Range f32_range__ref(int64_t count, const float* x);
// DynamicQuantizeLinear's scale and zero point for data in [data_min, data_max] (widened to
// contain 0 first; an empty range gives scale 1, zero point 0).
DynamicQuantization qu8_dynamic_params(float data_min, float data_max);

// The float side of dynamic quantization, ConvInteger / MatMulInteger -> Cast -> Mul -> Add
// (-> activation) as ONNX Runtime's quantize_dynamic writes it, for rows x n accumulators:
//   y[r][c] = clamp(float(acc[r][c]) * (x_scale * w_scale[c]) + bias[c], lo, hi)
// the scale product first (the graph's own Mul of the two scales), then a plain multiply and
// a plain add, never fused. w_scale has 1 or n values, bias none or n; clamp is max then min.
void dequantize_accumulators__ref(int64_t rows, int64_t n, const int32_t* acc, float x_scale,
                                  std::span<const float> w_scale, std::span<const float> bias,
                                  float lo, float hi, float* y);

// QuantizeLinear then DequantizeLinear with the same per-tensor scale and zero point (a QDQ
// model's fake-quantized float output): y = float(q - zero_point) * scale, q the saturated code.
void f32_fake_quantize__ref(int64_t count, const float* x, float scale, int32_t zero_point, int32_t qmin,
                            int32_t qmax, float* y);

// A float chain a QDQ model leaves between a DequantizeLinear and a QuantizeLinear, element by
// element: y[i] = quantize(clamp(dequantize(x[i]) * a[i] + b[i], lo, hi)), the multiply and the
// add rounded apart (the Mul and Add steps, or an inference BatchNormalization's two), the clamp
// a fused Relu or Clip as kernels/ref/activation.h computes it (NaN passes; lo = -inf and hi =
// +inf for none). x is int8 when x_signed, y int8 when qmin < 0.
struct Q8AffineQuantize {
  bool x_signed = false;
  float x_scale = 1.0f;
  int32_t x_zero_point = 0;
  float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  float y_scale = 1.0f;
  int32_t y_zero_point = 0, qmin = 0, qmax = 255;
};
void q8_affine_quantize__ref(int64_t count, const void* x, const float* a, const float* b,
                             const Q8AffineQuantize& p, void* y);

// The (outer, axis extent, inner) split of a shape around an axis; throws on a bad axis.
struct AxisSplit {
  int64_t outer = 1, extent = 1, inner = 1;
};
AxisSplit split_at_axis(int rank, const int64_t* dims, int axis);

}  // namespace octet::kernels
