#pragma once
// Scalar FP32 min / max (reductions and broadcasting element-wise) and round-half-to-even:
// the ops ONNX's DynamicQuantizeLinear function body is written with.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/ref/index_walk.h"

namespace octet::kernels {

enum class Extremum { min, max };

namespace minmax_detail {

inline float pick(Extremum kind, float a, float b) {
  // A NaN operand wins, as in numpy's minimum / maximum.
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<float>::quiet_NaN();
  return kind == Extremum::min ? (b < a ? b : a) : (b > a ? b : a);
}

inline int64_t offset(int rank, const int64_t* idx, const int64_t* strides) {
  int64_t o = 0;
  for (int d = 0; d < rank; ++d) o += idx[d] * strides[d];
  return o;
}

}  // namespace minmax_detail

// Min or max over the dimensions marked in `reduced` of x (read through x_strides, in
// elements). y is dense over the kept dimensions in `dims` order. An empty reduction gives
// +inf for min and -inf for max (ONNX's identity elements).
inline void f32_reduce_extremum_strided__ref(Extremum kind, int rank, const int64_t* dims, const bool* reduced,
                                             const float* x, const int64_t* x_strides, float* y) {
  const ReducedOutput out = reduced_output(rank, dims, reduced);
  const std::vector<int64_t>& y_strides = out.strides;
  const int64_t y_count = out.count;
  const float identity = kind == Extremum::min ? std::numeric_limits<float>::infinity()
                                               : -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < y_count; ++i) y[i] = identity;
  for_each_index(rank, dims, [&](const int64_t* idx) {
    float& out = y[minmax_detail::offset(rank, idx, y_strides.data())];
    out = minmax_detail::pick(kind, out, x[minmax_detail::offset(rank, idx, x_strides)]);
  });
}

// y = min(a, b) or max(a, b) element-wise over the box `dims`, y dense in that order; a and b
// are read through their strides (0 along a broadcast dimension). y may alias a or b when
// that operand is dense over the box.
inline void f32_extremum_strided__ref(Extremum kind, int rank, const int64_t* dims, const float* a,
                                      const int64_t* a_strides, const float* b, const int64_t* b_strides,
                                      float* y) {
  int64_t out = 0;
  for_each_index(rank, dims, [&](const int64_t* idx) {
    const float av = a[minmax_detail::offset(rank, idx, a_strides)];
    const float bv = b[minmax_detail::offset(rank, idx, b_strides)];
    y[out++] = minmax_detail::pick(kind, av, bv);
  });
}

}  // namespace octet::kernels
