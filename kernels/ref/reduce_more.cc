#include "kernels/ref/fp_contract_off.h"  // first: v * v then + stays two roundings, as in ORT

#include "kernels/ref/reduce_more.h"

#include <cmath>
#include <limits>

namespace octet::kernels {

namespace {

float finish(MapReduce kind, float acc, float max) {
  switch (kind) {
    case MapReduce::l2: return std::sqrt(acc);
    case MapReduce::log_sum: return std::log(acc);
    case MapReduce::log_sum_exp: return std::log(acc) + max;
    default: return acc;
  }
}

float step(MapReduce kind, float acc, float v, float max) {
  switch (kind) {
    case MapReduce::l1: return acc + (v > 0 ? v : -v);
    case MapReduce::l2:
    case MapReduce::sum_square: return acc + v * v;
    case MapReduce::log_sum:
    case MapReduce::sum: return acc + v;
    case MapReduce::log_sum_exp: return acc + std::exp(v - max);
    case MapReduce::prod: return acc * v;
  }
  return acc;
}

// Eigen's 4-float packet order from an aligned start (kernels/ref/eigen_sum.h), over any
// associative step: the even packets in one accumulator, the odd in another, combined, a last
// even packet, the lanes as (l0 . l2) . (l1 . l3), then the values after the last packet.
template <class Value, class Op>
float eigen_packets4(size_t n, Value value, Op op) {
  const size_t packets = n / 4;
  if (packets == 0) {
    float r = value(0);
    for (size_t p = 1; p < n; ++p) r = op(r, value(p));
    return r;
  }
  float even[4], odd[4];
  for (size_t j = 0; j < 4; ++j) even[j] = value(j);
  if (packets > 1) {
    for (size_t j = 0; j < 4; ++j) odd[j] = value(4 + j);
    size_t k = 2;
    for (; k + 2 <= packets; k += 2)
      for (size_t j = 0; j < 4; ++j) {
        even[j] = op(even[j], value(4 * k + j));
        odd[j] = op(odd[j], value(4 * k + 4 + j));
      }
    for (size_t j = 0; j < 4; ++j) even[j] = op(even[j], odd[j]);
    if (k < packets)
      for (size_t j = 0; j < 4; ++j) even[j] = op(even[j], value(4 * k + j));
  }
  float r = op(op(even[0], even[2]), op(even[1], even[3]));
  for (size_t p = 4 * packets; p < n; ++p) r = op(r, value(p));
  return r;
}

}  // namespace

float map_reduce_empty_value(MapReduce kind) {
  switch (kind) {
    case MapReduce::prod: return 1.0f;
    case MapReduce::log_sum:
    case MapReduce::log_sum_exp: return -std::numeric_limits<float>::infinity();
    default: return 0.0f;
  }
}

void f32_map_reduce__ref(MapReduce kind, size_t count, size_t lane_stride, const float* x, size_t terms,
                         const int64_t* offsets, float* y) {
  for (size_t j = 0; j < count; ++j) {
    const float* base = x + j * lane_stride;
    float max = 0.0f;
    if (kind == MapReduce::log_sum_exp) {
      // ORT's update0: the first value unless infinite, then every finite value not below it.
      const float first = base[offsets[0]];
      max = std::isinf(first) ? 0.0f : first;
      for (size_t t = 0; t < terms; ++t) {
        const float v = base[offsets[t]];
        max = (std::isinf(v) || std::isnan(v) || v < max) ? max : v;
      }
    }
    float acc = kind == MapReduce::prod ? 1.0f : 0.0f;
    for (size_t t = 0; t < terms; ++t) acc = step(kind, acc, base[offsets[t]], max);
    y[j] = finish(kind, acc, max);
  }
}

float f32_eigen_fold__ref(MapReduce kind, size_t n, const float* x) {
  auto add = [](float a, float b) { return a + b; };
  switch (kind) {
    case MapReduce::l1: return eigen_packets4(n, [&](size_t i) { return std::fabs(x[i]); }, add);
    case MapReduce::l2: return std::sqrt(eigen_packets4(n, [&](size_t i) { return x[i] * x[i]; }, add));
    case MapReduce::sum_square: return eigen_packets4(n, [&](size_t i) { return x[i] * x[i]; }, add);
    case MapReduce::log_sum: return std::log(eigen_packets4(n, [&](size_t i) { return x[i]; }, add));
    case MapReduce::sum: return eigen_packets4(n, [&](size_t i) { return x[i]; }, add);
    case MapReduce::prod:
      return eigen_packets4(n, [&](size_t i) { return x[i]; }, [](float a, float b) { return a * b; });
    case MapReduce::log_sum_exp: {
      float max = x[0];
      for (size_t i = 1; i < n; ++i) max = x[i] > max ? x[i] : max;
      float acc = 0.0f;
      for (size_t i = 0; i < n; ++i) acc += std::exp(x[i] - max);
      return std::log(acc) + max;
    }
  }
  return 0.0f;
}

void f32_sub_div__ref(size_t n, const float* x, const float* a, const float* b, size_t inc, float* y,
                      bool zero_where_b_zero) {
  for (size_t i = 0; i < n; ++i) {
    const float d = b[i * inc];
    const float v = a ? x[i] - a[i * inc] : x[i];
    y[i] = zero_where_b_zero && d == 0.0f ? 0.0f : v / d;
  }
}

void f32_cumsum__ref(size_t len, size_t count, size_t stride, const float* x, float* y, bool exclusive, bool reverse) {
  for (size_t s = 0; s < len; ++s) {
    const size_t k = reverse ? len - 1 - s : s;
    float* yk = y + k * stride;
    if (s == 0) {
      for (size_t i = 0; i < count; ++i) yk[i] = exclusive ? 0.0f : x[k * stride + i];
      continue;
    }
    const size_t prev = reverse ? k + 1 : k - 1;
    const float* add = x + (exclusive ? prev : k) * stride;
    const float* yp = y + prev * stride;
    for (size_t i = 0; i < count; ++i) yk[i] = yp[i] + add[i];
  }
}

}  // namespace octet::kernels
