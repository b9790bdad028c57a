#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/ref/minmax.h"

namespace octet::kernels {

// Mean over the dimensions marked in `reduced` of x, read through x_strides (elements).
// y is dense over the kept dimensions in `dims` order (reduced dimensions have extent 1
// in y). Accumulates in double.
void f32_reduce_mean_strided__ref(int rank, const int64_t* dims, const bool* reduced,
                                  const float* x, const int64_t* x_strides, float* y);

// The same walk without the division (ReduceSum).
void f32_reduce_sum_strided__ref(int rank, const int64_t* dims, const bool* reduced,
                                 const float* x, const int64_t* x_strides, float* y);

// y[r] = the sum of row r of x [rows][n] in GapOrder::eigen_packets4, row r being ORT's row
// first_row + r (kernels/ref/pool2d.h), divided by `divisor`: the oracle of f32_row_sums.
void f32_row_sums_eigen__ref(size_t rows, size_t n, const float* x, float* y, size_t first_row, float divisor);
// kernels/elementwise/eltwise_list.h's F32EigenSumsUkernel, any number of rows: sum_eigen_packets4
// (kernels/ref/eigen_sum.h) of each row's values, x[r][i] or (x[r][i] - center[r])².
void f32_eigen_sums__ref(size_t rows, size_t n, const float* const* x, const size_t* lead, const float* center,
                         float* sums);
// Q8EigenSumsUkernel's reference: the values float(q - zero_point) * scale.
void q8_eigen_sums__ref(size_t rows, size_t n, const void* const* x, bool is_signed, float scale, int32_t zero_point,
                        const size_t* lead, const float* center, float* sums);

// Pixels whose float sums f32_channel_moments adds to its double sums at a time: a long map loses
// no more than a block's float rounding.
inline constexpr size_t kChannelMomentsBlock = 64;

// The oracle of f32_channel_moments (kernels/elementwise/eltwise_list.h): per channel, float sums
// of d = x - center[c] and of d * d (one fma) over blocks of kChannelMomentsBlock pixels, pixel
// after pixel, each block's added to the double sums, which it overwrites.
void f32_channel_moments__ref(size_t pixels, size_t channels, const float* x, const float* center, double* sum,
                              double* sum_sq);

// y[j] = (0 + x[j * lane_stride + offsets[0]] + ... + x[j * lane_stride + offsets[terms - 1]]) /
// divisor for j < count, one float add at a time in the offsets' order: ONNX Runtime's generic
// ReduceSum / ReduceMean loop (an accumulator from 0, the reduced elements in the row-major order
// of the reduced axes, then / N); the oracle of f32_strided_sums.
void f32_strided_sums__ref(size_t count, size_t lane_stride, const float* x, size_t terms, const int64_t* offsets,
                           float* y, float divisor);

// y[j] = the min (max) of x[j * lane_stride + offsets[t]] over t, picked one element at a time in
// the offsets' order by minmax.h's rule (a NaN wins; on a tie, -0 against +0 included, the kept
// value stays); +inf (-inf) when terms is 0: the oracle of f32_strided_min / f32_strided_max
// and, walked over every output, f32_reduce_extremum_strided__ref's result.
void f32_strided_extremum__ref(Extremum kind, size_t count, size_t lane_stride, const float* x, size_t terms,
                               const int64_t* offsets, float* y);

}  // namespace octet::kernels
