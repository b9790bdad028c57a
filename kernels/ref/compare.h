#pragma once
// The scalar references of the comparison, classification and n-ary sum microkernels
// (kernels/elementwise/compare_list.h): the oracle of tests/simd/test_compare.cc and what a step
// runs at Isa::scalar. Each follows ONNX Runtime's CPU kernel element for element: a comparison
// with a NaN operand is false, Sign keeps a NaN (Eigen's sign) and Shrink maps it to 0, and a sum adds its operands left to
// right, ((x0 + x1) + x2) + ..., then multiplies by Mean's 1 / count; Max / Min fold their
// operands left to right as Eigen's max / min<PropagateNaN> packets do.
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace octet::kernels {

enum class CompareKind { equal, greater, greater_equal };

inline void f32_compare__ref(CompareKind kind, size_t n, const float* a, size_t a_inc, const float* b, size_t b_inc,
                             uint8_t* y) {
  for (size_t i = 0; i < n; ++i) {
    const float x = a[i * a_inc], z = b[i * b_inc];
    const bool r = kind == CompareKind::equal ? x == z : kind == CompareKind::greater ? x > z : x >= z;
    y[i] = r ? 1 : 0;
  }
}

// The three with the microkernels' signature (F32CompareUkernel).
inline void f32_equal__ref(size_t n, const float* a, size_t a_inc, const float* b, size_t b_inc, uint8_t* y) {
  f32_compare__ref(CompareKind::equal, n, a, a_inc, b, b_inc, y);
}
inline void f32_greater__ref(size_t n, const float* a, size_t a_inc, const float* b, size_t b_inc, uint8_t* y) {
  f32_compare__ref(CompareKind::greater, n, a, a_inc, b, b_inc, y);
}
inline void f32_greater_equal__ref(size_t n, const float* a, size_t a_inc, const float* b, size_t b_inc, uint8_t* y) {
  f32_compare__ref(CompareKind::greater_equal, n, a, a_inc, b, b_inc, y);
}

inline void f32_isnan__ref(size_t n, const float* x, uint8_t* y, bool, bool) {
  for (size_t i = 0; i < n; ++i) y[i] = std::isnan(x[i]) ? 1 : 0;
}

inline void f32_isinf__ref(size_t n, const float* x, uint8_t* y, bool negative, bool positive) {
  for (size_t i = 0; i < n; ++i)
    y[i] = std::isinf(x[i]) && (x[i] < 0 ? negative : positive) ? 1 : 0;
}

inline void f32_sign__ref(size_t n, const float* x, float* y) {
  for (size_t i = 0; i < n; ++i) y[i] = std::isnan(x[i]) ? x[i] : x[i] > 0.0f ? 1.0f : x[i] < 0.0f ? -1.0f : 0.0f;
}

// Shrink: x + bias below -lambd, x - bias above lambd, 0 between (and for NaN).
inline void f32_shrink__ref(size_t n, const float* x, float* y, float lambd, float bias) {
  for (size_t i = 0; i < n; ++i) y[i] = x[i] < -lambd ? x[i] + bias : x[i] > lambd ? x[i] - bias : 0.0f;
}

// y[i] = (((x[0][i * inc[0]] + x[1][i * inc[1]]) + ...) * scale, without the multiply when
// scale is 1 (Sum); count >= 1.
inline void f32_sum__ref(size_t n, size_t count, const float* const* x, const size_t* inc, float* y, float scale) {
  for (size_t i = 0; i < n; ++i) {
    float s = x[0][i * inc[0]];
    for (size_t k = 1; k < count; ++k) s += x[k][i * inc[k]];
    y[i] = scale == 1.0f ? s : s * scale;
  }
}

// y[i] = the max (min) of x[0][i * inc[0]], x[1][i * inc[1]], ... folded left to right, each
// step r = pick(r, v) as ONNX Runtime's Eigen packets compute it: r if r is NaN, else v if v is
// NaN, else r if r > v (min: r < v), else v; so equal operands (+0 and -0) give the later one.
// While r is one repeated element (every operand so far has inc 0) the step is pick(v, r): ORT
// then runs its "input 0 is a scalar" form, v.max(r). count >= 1.
inline float f32_pick__ref(bool min, float r, float v) {
  if (std::isnan(r)) return r;
  return (min ? r < v : r > v) ? r : v;
}
inline void f32_extremum__ref(bool min, size_t n, size_t count, const float* const* x, const size_t* inc, float* y) {
  for (size_t i = 0; i < n; ++i) {
    float r = x[0][i * inc[0]];
    bool repeated = inc[0] == 0;
    for (size_t k = 1; k < count; ++k) {
      const float v = x[k][i * inc[k]];
      r = repeated ? f32_pick__ref(min, v, r) : f32_pick__ref(min, r, v);
      repeated = repeated && inc[k] == 0;
    }
    y[i] = r;
  }
}
inline void f32_max__ref(size_t n, size_t count, const float* const* x, const size_t* inc, float* y) {
  f32_extremum__ref(false, n, count, x, inc, y);
}
inline void f32_min__ref(size_t n, size_t count, const float* const* x, const size_t* inc, float* y) {
  f32_extremum__ref(true, n, count, x, inc, y);
}

}  // namespace octet::kernels
