#pragma once
// The statistics of InstanceNormalization over one row of n values, summed the way ONNX
// Runtime's CPU kernel sums them (onnxruntime/core/providers/cpu/nn/instance_norm.cc: Eigen's
// mean() and squaredNorm() on 4-float SSE packets), so that a float InstanceNormalization
// between QDQ units, or before a DynamicQuantizeLinear, gives ORT's codes:
//
//   sum(v): packets of 4 from the first 16-byte aligned element `start`; two packet
//     accumulators over pairs of packets, added together, then one more packet if left over;
//     the 4 lanes reduced as (l0 + l2) + (l1 + l3); then the elements before `start` and those
//     after the last whole packet, in index order. Under 4 elements past `start`: every element
//     in index order.
//   mean = sum(x) / n with `start` from the row's address (rows of an aligned buffer: (row · n)
//     mod 4 elements past a 16-byte boundary), var_sum = sum((x - mean)²) with start 0 (the
//     expression has no address), inv_std = 1 / sqrt(var_sum / n + epsilon).
//
// The lane loops are plain C++ over 8 independent float accumulators (two 4-lane packets), a
// fixed order the compiler vectorizes at every level without changing a bit (floating-point
// contraction is off project-wide).
#include <cstddef>

namespace octet::kernels {

// Eigen's 4-lane packet sum of v[0 .. n) with its first aligned element at `start`.
float f32_sum_eigen4(const float* v, size_t n, size_t start);

// mean and 1 / sqrt(var + epsilon) of one row x[0 .. n) whose first element sits `start`
// elements before a 16-byte boundary's next aligned element (0 when aligned).
void f32_instance_norm_stats(const float* x, size_t n, size_t start, float epsilon, float* mean, float* inv_std);

}  // namespace octet::kernels
