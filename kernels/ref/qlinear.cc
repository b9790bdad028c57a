#include "kernels/ref/fp_contract_off.h"  // every float step rounds as written

#include "kernels/ref/qlinear.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace octet::kernels {

AxisSplit split_at_axis(int rank, const int64_t* dims, int axis) {
  if (axis < -rank || axis >= rank) {
    throw std::invalid_argument("per-axis quantization: axis " + std::to_string(axis) +
                                " is out of range for a rank-" + std::to_string(rank) +
                                " tensor (expected [" + std::to_string(-rank) + ", " +
                                std::to_string(rank - 1) + "])");
  }
  if (axis < 0) axis += rank;
  AxisSplit s;
  for (int d = 0; d < axis; ++d) s.outer *= dims[d];
  s.extent = dims[axis];
  for (int d = axis + 1; d < rank; ++d) s.inner *= dims[d];
  return s;
}

namespace {

void check_axis_params(const char* kernel, const AxisSplit& s, size_t scales, size_t zero_points) {
  if (static_cast<int64_t>(scales) != s.extent ||
      (zero_points != 0 && static_cast<int64_t>(zero_points) != s.extent)) {
    throw std::invalid_argument(std::string(kernel) + ": " + std::to_string(scales) +
                                " scales and " + std::to_string(zero_points) +
                                " zero points for an axis of extent " + std::to_string(s.extent) +
                                " (zero points may also be absent)");
  }
}

}  // namespace

// Calls f(element index, scale, zero point) for every element of a per-axis tensor, in order.
template <typename F>
void for_each_per_axis(const char* who, int rank, const int64_t* dims, int axis, std::span<const float> scale,
                       std::span<const int32_t> zero_point, F&& f) {
  const AxisSplit s = split_at_axis(rank, dims, axis);
  check_axis_params(who, s, scale.size(), zero_point.size());
  size_t i = 0;
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t a = 0; a < s.extent; ++a) {
      const int32_t zp = zero_point.empty() ? 0 : zero_point[size_t(a)];
      for (int64_t in = 0; in < s.inner; ++in, ++i) f(i, scale[size_t(a)], zp);
    }
}

template <typename T>
void q8_quantize_linear__ref(int64_t count, const float* x, float scale, int32_t zero_point, T* y) {
  for (int64_t i = 0; i < count; ++i) y[i] = quantize_one<T>(x[i], scale, zero_point);
}

template <typename T>
void q8_quantize_linear_per_axis__ref(int rank, const int64_t* dims, int axis, const float* x,
                                      std::span<const float> scale,
                                      std::span<const int32_t> zero_point, T* y) {
  for_each_per_axis("q8_quantize_linear_per_axis__ref", rank, dims, axis, scale, zero_point,
                    [&](size_t i, float sc, int32_t zp) { y[i] = quantize_one<T>(x[i], sc, zp); });
}

template <typename T>
void q8_dequantize_linear__ref(int64_t count, const T* x, float scale, int32_t zero_point,
                               float* y) {
  for (int64_t i = 0; i < count; ++i) y[i] = dequantize_value(x[i], scale, zero_point);
}

template <typename T>
void q8_dequantize_linear_per_axis__ref(int rank, const int64_t* dims, int axis, const T* x,
                                        std::span<const float> scale,
                                        std::span<const int32_t> zero_point, float* y) {
  for_each_per_axis("q8_dequantize_linear_per_axis__ref", rank, dims, axis, scale, zero_point,
                    [&](size_t i, float sc, int32_t zp) { y[i] = dequantize_value(x[i], sc, zp); });
}

template <typename TY>
void q8_requantize__ref(int64_t rows, int channels, const int32_t* acc, const int32_t* bias,
                        const Requantization& rq, TY* y) {
  check_requantization<TY>("q8_requantize__ref", rq, static_cast<size_t>(channels));
  for (int64_t r = 0; r < rows; ++r) {
    for (int c = 0; c < channels; ++c) {
      const size_t i = static_cast<size_t>(r) * channels + c;
      // int32 wrap-around, computed without signed overflow.
      const int32_t a = bias == nullptr ? acc[i]
                                        : static_cast<int32_t>(static_cast<uint32_t>(acc[i]) +
                                                               static_cast<uint32_t>(bias[c]));
      y[i] = static_cast<TY>(
          requantize_value(a, rq.multiplier_of(c), rq.zero_point, rq.qmin, rq.qmax));
    }
  }
}

F32Range f32_range__ref(int64_t count, const float* x) {
  F32Range r;
  for (int64_t i = 0; i < count; ++i) {
    if (std::isnan(x[i])) return {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::quiet_NaN()};
    r.min = std::min(r.min, x[i]);
    r.max = std::max(r.max, x[i]);
  }
  return r;
}

DynamicQuantization qu8_dynamic_params(float data_min, float data_max) {
  const float rmin = std::min(data_min, 0.0f);
  const float rmax = std::max(data_max, 0.0f);
  DynamicQuantization q;
  // All-zero input: an empty range would make scale 0 and the zero point 0/0.
  q.scale = rmax == rmin ? 1.0f : (rmax - rmin) / 255.0f;
  const float initial_zero_point = 0.0f - rmin / q.scale;
  q.zero_point =
      static_cast<uint8_t>(round_half_even(std::clamp(initial_zero_point, 0.0f, 255.0f)));
  return q;
}

DynamicQuantization qu8_dynamic_quantize_linear__ref(int64_t count, const float* x, uint8_t* y) {
  const F32Range r = f32_range__ref(count, x);
  const DynamicQuantization q = count == 0 ? DynamicQuantization{} : qu8_dynamic_params(r.min, r.max);
  q8_quantize_linear__ref<uint8_t>(count, x, q.scale, q.zero_point, y);
  return q;
}

void dequantize_accumulators__ref(int64_t rows, int64_t n, const int32_t* acc, float x_scale,
                                  std::span<const float> w_scale, std::span<const float> bias,
                                  float lo, float hi, float* y) {
  check_per_channel("dequantize_accumulators__ref", "w_scale", w_scale.size(), static_cast<size_t>(n));
  if (!bias.empty() && bias.size() != static_cast<size_t>(n))
    throw std::invalid_argument("dequantize_accumulators__ref: bias has " + std::to_string(bias.size()) +
                                " values for " + std::to_string(n) + " columns");
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < n; ++c) {
      const float scale = x_scale * w_scale[w_scale.size() == 1 ? 0 : c];
      float v = static_cast<float>(acc[r * n + c]) * scale;
      if (!bias.empty()) v = v + bias[c];
      y[r * n + c] = std::min(std::max(v, lo), hi);
    }
  }
}

template void q8_quantize_linear__ref<uint8_t>(int64_t, const float*, float, int32_t, uint8_t*);
template void q8_quantize_linear__ref<int8_t>(int64_t, const float*, float, int32_t, int8_t*);
template void q8_quantize_linear_per_axis__ref<uint8_t>(int, const int64_t*, int, const float*,
                                                        std::span<const float>,
                                                        std::span<const int32_t>, uint8_t*);
template void q8_quantize_linear_per_axis__ref<int8_t>(int, const int64_t*, int, const float*,
                                                       std::span<const float>,
                                                       std::span<const int32_t>, int8_t*);
void f32_fake_quantize__ref(int64_t count, const float* x, float scale, int32_t zero_point, int32_t qmin,
                            int32_t qmax, float* y) {
  for (int64_t i = 0; i < count; ++i)
    y[i] = dequantize_value(quantize_value(x[i], scale, zero_point, qmin, qmax), scale, zero_point);
}

void q8_affine_quantize__ref(int64_t count, const void* x, const float* a, const float* b,
                             const Q8AffineQuantize& p, void* y) {
  for (int64_t i = 0; i < count; ++i) {
    const int32_t code = p.x_signed ? int32_t(static_cast<const int8_t*>(x)[i]) : int32_t(static_cast<const uint8_t*>(x)[i]);
    float v = dequantize_value(code, p.x_scale, p.x_zero_point) * a[i];
    v = v + b[i];
    v = v < p.lo ? p.lo : (v > p.hi ? p.hi : v);
    const int32_t q = quantize_value(v, p.y_scale, p.y_zero_point, p.qmin, p.qmax);
    if (p.qmin < 0) static_cast<int8_t*>(y)[i] = static_cast<int8_t>(q);
    else static_cast<uint8_t*>(y)[i] = static_cast<uint8_t>(q);
  }
}

template void q8_dequantize_linear__ref<uint8_t>(int64_t, const uint8_t*, float, int32_t, float*);
template void q8_dequantize_linear__ref<int8_t>(int64_t, const int8_t*, float, int32_t, float*);
template void q8_dequantize_linear__ref<int32_t>(int64_t, const int32_t*, float, int32_t, float*);
template void q8_dequantize_linear_per_axis__ref<uint8_t>(int, const int64_t*, int, const uint8_t*,
                                                          std::span<const float>,
                                                          std::span<const int32_t>, float*);
template void q8_dequantize_linear_per_axis__ref<int8_t>(int, const int64_t*, int, const int8_t*,
                                                         std::span<const float>,
                                                         std::span<const int32_t>, float*);
template void q8_dequantize_linear_per_axis__ref<int32_t>(int, const int64_t*, int, const int32_t*,
                                                          std::span<const float>,
                                                          std::span<const int32_t>, float*);
template void q8_requantize__ref<uint8_t>(int64_t, int, const int32_t*, const int32_t*,
                                          const Requantization&, uint8_t*);
template void q8_requantize__ref<int8_t>(int64_t, int, const int32_t*, const int32_t*,
                                         const Requantization&, int8_t*);

}  // namespace octet::kernels
