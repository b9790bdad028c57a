#pragma once
// The statistics of InstanceNormalization over one row of n values, summed the way ONNX
// Runtime's CPU kernel sums them (onnxruntime/core/providers/cpu/nn/instance_norm.cc: Eigen's
// mean() and squaredNorm() on 4-float SSE packets), so that a float InstanceNormalization
// between QDQ units, or before a DynamicQuantizeLinear, gives ORT's codes:
//
//   sum(v): Eigen's packet sum, GapOrder::eigen_packets4 (kernels/ref/eigen_sum.h), from the
//     first 16-byte aligned element `start`.
//   mean = sum(x) / n with `start` from the row's address (rows of an aligned buffer: (row · n)
//     mod 4 elements past a 16-byte boundary), var_sum = sum((x - mean)²) with start 0 (the
//     expression has no address), inv_std = 1 / sqrt(var_sum / n + epsilon).
#include <cstddef>

namespace octet::kernels {

// mean and 1 / sqrt(var + epsilon) of one row x[0 .. n) whose first element sits `start`
// elements before a 16-byte boundary's next aligned element (0 when aligned).
void f32_instance_norm_stats(const float* x, size_t n, size_t start, float epsilon, float* mean, float* inv_std);

}  // namespace octet::kernels
