#pragma once
// The scalar arithmetic every INT8 reference kernel is built from: rounding, saturation,
// the requantization multiplier and the epilogue. The math and the reasons behind each
// choice are written down once, in docs/requantization.md; keep the two in step.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>

namespace octet::kernels {

// Full range of an 8-bit (or 32-bit) quantized type as int32: u8 [0, 255], s8 [-128, 127].
template <typename T>
constexpr int32_t qmin_of() {
  return static_cast<int32_t>(std::numeric_limits<T>::min());
}
template <typename T>
constexpr int32_t qmax_of() {
  return static_cast<int32_t>(std::numeric_limits<T>::max());
}

// Per-tensor quantization of one operand: real = scale * (q - zero_point).
struct QuantParams {
  float scale = 1.0f;
  int32_t zero_point = 0;
};

// Round half to even (Rule R). std::nearbyint rounds in the current rounding mode, which
// is round-to-nearest-even unless someone changed it; std::round / lround round ties away
// from zero and are never used on a quantization path.
inline float round_half_even(float v) { return std::nearbyint(v); }

// v (already divided by the scale) -> integer in [qmin, qmax]. Clamping to
// [qmin - zp, qmax - zp] in float before rounding is what MLAS does; it gives the same
// result as rounding first (the bounds are integers and rounding is monotone) but keeps
// the float->int conversion in range. A NaN lands on qmin, like MLAS's maxps on x86.
inline int32_t round_add_zero_point_clamp(float v, int32_t zero_point, int32_t qmin, int32_t qmax) {
  const float lo = static_cast<float>(qmin - zero_point);
  const float hi = static_cast<float>(qmax - zero_point);
  if (!(v >= lo)) v = lo;
  if (v > hi) v = hi;
  return static_cast<int32_t>(round_half_even(v)) + zero_point;
}

// QuantizeLinear for one value: saturate(round_half_even(x / scale) + zero_point).
// Divides by the scale (Rule D): x * (1 / scale) rounds differently on some inputs.
inline int32_t quantize_value(float x, float scale, int32_t zero_point, int32_t qmin,
                              int32_t qmax) {
  return round_add_zero_point_clamp(x / scale, zero_point, qmin, qmax);
}
template <typename T>
T quantize_one(float x, float scale, int32_t zero_point) {
  return static_cast<T>(quantize_value(x, scale, zero_point, qmin_of<T>(), qmax_of<T>()));
}

// An int32 bias the way ONNX Runtime's quantizer writes one: round_half_even(b / scale) with
// the division in float32 and scale = x_scale * w_scale[c]. Values beyond int32 saturate (at
// the largest float below 2^31) and set *saturated.
inline int32_t quantize_bias_value(float b, float scale, bool* saturated = nullptr) {
  constexpr float limit = 2147483520.0f;
  const float v = round_half_even(b / scale);
  if (saturated) *saturated = !(std::fabs(v) <= limit);
  return static_cast<int32_t>(v > limit ? limit : (v < -limit ? -limit : v));
}

// DequantizeLinear for one value: (q - zero_point) in integers, then one float multiply.
inline float dequantize_value(int32_t q, float scale, int32_t zero_point) {
  return static_cast<float>(static_cast<int64_t>(q) - zero_point) * scale;
}

// A code of `from` as the code of `to` that QuantizeLinear(DequantizeLinear(v)) gives (a
// QLinearConcat input's requantization, ONNX Runtime's float steps).
template <typename T>
T requantize_code(T v, const QuantParams& from, const QuantParams& to) {
  return quantize_one<T>(dequantize_value(v, from.scale, from.zero_point), to.scale, to.zero_point);
}

// Requantization multiplier of output channel c, exactly as ONNX Runtime computes it for
// QLinearConv / QLinearMatMul / QGemm: float32, this order of operations.
inline float requant_multiplier(float input_scale, float weight_scale, float output_scale) {
  return (input_scale * weight_scale) / output_scale;
}

// The requantizing epilogue (MLAS's MlasRequantizeOutput): the int32 accumulator is
// converted to float (exact below 2^24, rounded to nearest even above), multiplied by the
// float32 multiplier, rounded half to even, offset by the zero point and clamped.
inline int32_t requantize_value(int32_t acc, float multiplier, int32_t zero_point, int32_t qmin,
                                int32_t qmax) {
  return round_add_zero_point_clamp(static_cast<float>(acc) * multiplier, zero_point, qmin, qmax);
}

// Where int32 accumulators go. multiplier holds one value per output channel, or a single
// value for the whole tensor. [qmin, qmax] is the output clamp in the output's integer
// domain: the type's full range, or narrower when a ReLU / ReLU6 / Clip is folded in
// (see output_range()).
struct Requantization {
  std::span<const float> multiplier;
  int32_t zero_point = 0;
  int32_t qmin = 0;
  int32_t qmax = 255;

  float multiplier_of(size_t channel) const {
    return multiplier.size() == 1 ? multiplier[0] : multiplier[channel];
  }
};

// A Requantization that saturates to the full range of TY.
template <typename TY>
Requantization full_range_requantization(std::span<const float> multiplier, int32_t zero_point) {
  return {multiplier, zero_point, qmin_of<TY>(), qmax_of<TY>()};
}

// The output clamp of an activation clip [lo, hi] (real units) folded into the epilogue:
// both ends quantized with the output's scale and zero point (QuantizeLinear semantics).
// ReLU is [0, +inf), ReLU6 [0, 6]. Exact: quantization is monotone, so quantizing a
// clipped value equals clamping the quantized value to the quantized ends.
template <typename TY>
void output_range(float lo, float hi, QuantParams y, int32_t* qmin, int32_t* qmax) {
  *qmin = quantize_value(lo, y.scale, y.zero_point, qmin_of<TY>(), qmax_of<TY>());
  *qmax = quantize_value(hi, y.scale, y.zero_point, qmin_of<TY>(), qmax_of<TY>());
}

// Checks shared by the kernels: a per-channel array has 1 or `channels` entries.
inline void check_per_channel(const char* kernel, const char* what, size_t size, size_t channels) {
  if (size != 1 && size != channels) {
    throw std::invalid_argument(std::string(kernel) + ": " + what + " has " + std::to_string(size) +
                                " values; expected 1 (per tensor) or " + std::to_string(channels) +
                                " (per channel)");
  }
}

template <typename TY>
void check_requantization(const char* kernel, const Requantization& rq, size_t channels) {
  check_per_channel(kernel, "the requantization multiplier", rq.multiplier.size(), channels);
  if (rq.qmin < qmin_of<TY>() || rq.qmax > qmax_of<TY>() || rq.qmin > rq.qmax) {
    throw std::invalid_argument(
        std::string(kernel) + ": output clamp [" + std::to_string(rq.qmin) + ", " +
        std::to_string(rq.qmax) + "] is not inside the output type's range [" +
        std::to_string(qmin_of<TY>()) + ", " + std::to_string(qmax_of<TY>()) + "]");
  }
}

}  // namespace octet::kernels
