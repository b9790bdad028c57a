#pragma once
// Scalar references of kernels/elementwise/reduce_more_list.h (ReduceL1, ReduceL2,
// ReduceSumSquare, ReduceLogSum, ReduceLogSumExp, ReduceProd, LpNormalization): ONNX Runtime's
// aggregators (reduction_ops.h) step for step, std::exp / std::sqrt / std::log included.
#include <cstddef>
#include <cstdint>

namespace octet::kernels {

// Which reduction (kernels/elementwise/reduce_more_list.h says what each computes).
enum class MapReduce : uint8_t { l1, l2, sum_square, log_sum, log_sum_exp, prod, sum };

// The oracle of f32_map_reduce (same arguments).
void f32_map_reduce__ref(MapReduce kind, size_t count, size_t lane_stride, const float* x, size_t terms,
                         const int64_t* offsets, float* y);

// The oracle of f32_eigen_fold.
float f32_eigen_fold__ref(MapReduce kind, size_t n, const float* x);

// The oracle of f32_sub_div.
void f32_sub_div__ref(size_t n, const float* x, const float* a, const float* b, size_t inc, float* y,
                      bool zero_where_b_zero);

// CumSum of len rows of `count` columns, row k at x + k * stride (y alike): y[k] = y[k - 1] + x[k]
// from row 0 (reverse: y[k] = y[k + 1] + x[k] from row len - 1), the first row x's own; exclusive:
// the first row 0, then y[k] = y[k - 1] + x[k - 1]. ONNX Runtime's order: each column one chain
// of adds. The oracle of f32_cumsum.
void f32_cumsum__ref(size_t len, size_t count, size_t stride, const float* x, float* y, bool exclusive, bool reverse);

// The value of an empty reduction (a reduced extent 0): 0, 1 for prod, -inf for the logs.
float map_reduce_empty_value(MapReduce kind);

}  // namespace octet::kernels
