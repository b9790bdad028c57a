#include "kernels/quantize/quantize.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "kernels/elementwise/parallel_pieces.h"

namespace octet::kernels {

const Q8QuantizeKernel* choose_q8_quantize(Isa isa) {
  return first_runnable(kQ8QuantizeKernels, isa);
}

void q8_quantize(const Q8QuantizeKernel& k, Q8 type, size_t n, const float* x, float scale, int32_t zero_point,
                 void* y) {
  k.fn(n, x, scale, zero_point, q8_min(type), q8_max(type), y);
}

F32Range f32_range(const Q8QuantizeKernel* k, size_t n, const float* x) {
  if (k == nullptr) return f32_range__ref(static_cast<int64_t>(n), x);
  F32Range r;
  k->range(n, x, &r.min, &r.max);
  return r;
}

void q8_quantize(const Q8QuantizeKernel& k, Q8 type, size_t n, const float* x, float scale, int32_t zero_point,
                 void* y, pthreadpool_t pool) {
  const int32_t lo = q8_min(type), hi = q8_max(type);
  auto* bytes = static_cast<uint8_t*>(y);  // one byte per element, u8 or s8
  parallel_elements(pool, n, [&](size_t start, size_t count) {
    k.fn(count, x + start, scale, zero_point, lo, hi, bytes + start);
  });
}

void q8_dequantize(const Q8QuantizeKernel& k, size_t n, const void* x, bool is_signed, float scale,
                   int32_t zero_point, float* y, pthreadpool_t pool) {
  const auto* bytes = static_cast<const uint8_t*>(x);
  parallel_elements(pool, n, [&](size_t start, size_t count) {
    k.dequantize(count, bytes + start, is_signed, scale, zero_point, y + start);
  });
}

void q8_quantize(const Q8QuantizeKernel* k, Q8 type, size_t n, const float* x, float scale, int32_t zero_point,
                 void* y, pthreadpool_t pool) {
  if (k != nullptr) return q8_quantize(*k, type, n, x, scale, zero_point, y, pool);
  if (type == Q8::s8) return q8_quantize_linear__ref(int64_t(n), x, scale, zero_point, static_cast<int8_t*>(y));
  q8_quantize_linear__ref(int64_t(n), x, scale, zero_point, static_cast<uint8_t*>(y));
}

void q8_dequantize(const Q8QuantizeKernel* k, size_t n, const void* x, bool is_signed, float scale,
                   int32_t zero_point, float* y, pthreadpool_t pool) {
  if (k != nullptr) return q8_dequantize(*k, n, x, is_signed, scale, zero_point, y, pool);
  if (is_signed) return q8_dequantize_linear__ref(int64_t(n), static_cast<const int8_t*>(x), scale, zero_point, y);
  q8_dequantize_linear__ref(int64_t(n), static_cast<const uint8_t*>(x), scale, zero_point, y);
}

void f32_fake_quantize(const Q8QuantizeKernel* k, Q8 type, size_t n, const float* x, float scale, int32_t zero_point,
                       float* y, pthreadpool_t pool) {
  const int32_t lo = q8_min(type), hi = q8_max(type);
  if (k == nullptr) return f32_fake_quantize__ref(int64_t(n), x, scale, zero_point, lo, hi, y);
  parallel_elements(pool, n, [&](size_t start, size_t count) {
    k->fake_quantize(count, x + start, scale, zero_point, lo, hi, y + start);
  });
}

F32Range f32_range(const Q8QuantizeKernel* k, size_t n, const float* x, pthreadpool_t pool) {
  // At most kMaxPieces pieces, so their ranges fit on the stack and fold in a fixed order.
  constexpr size_t kMaxPieces = 64;
  const size_t piece = std::max(kEltwiseMinPiece, (n + kMaxPieces - 1) / kMaxPieces);
  if (pool == nullptr || n <= piece) return f32_range(k, n, x);
  std::array<F32Range, kMaxPieces> ranges;
  parallel_pieces(pool, n, piece, [&](size_t start, size_t count) {
    ranges[start / piece] = f32_range(k, count, x + start);
  });
  F32Range r{std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()};
  for (size_t i = 0; i < (n + piece - 1) / piece; ++i) {
    if (std::isnan(ranges[i].min) || std::isnan(ranges[i].max))
      return {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::quiet_NaN()};
    if (ranges[i].min < r.min) r.min = ranges[i].min;
    if (ranges[i].max > r.max) r.max = ranges[i].max;
  }
  return r;
}

DynamicQuantizeResult qu8_dynamic_quantize(const Q8QuantizeKernel* k, size_t n, const float* x, uint8_t* y) {
  DynamicQuantizeResult r;
  r.range = f32_range(k, n, x);
  if (n == 0) return r;
  r.finite = std::isfinite(r.range.min) && std::isfinite(r.range.max);
  if (!r.finite) return r;
  r.q = qu8_dynamic_params(r.range.min, r.range.max);
  if (k != nullptr) {
    k->fn(n, x, r.q.scale, r.q.zero_point, 0, 255, y);
  } else {
    q8_quantize_linear__ref<uint8_t>(static_cast<int64_t>(n), x, r.q.scale, r.q.zero_point, y);
  }
  return r;
}

}  // namespace octet::kernels
