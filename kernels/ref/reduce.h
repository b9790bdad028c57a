#pragma once
#include <cstdint>

namespace octet::kernels {

// Mean over the dimensions marked in `reduced` of x, read through x_strides (elements).
// y is dense over the kept dimensions in `dims` order (reduced dimensions have extent 1
// in y). Accumulates in double.
void f32_reduce_mean_strided__ref(int rank, const int64_t* dims, const bool* reduced,
                                  const float* x, const int64_t* x_strides, float* y);

// The same walk without the division (ReduceSum).
void f32_reduce_sum_strided__ref(int rank, const int64_t* dims, const bool* reduced,
                                 const float* x, const int64_t* x_strides, float* y);

}  // namespace octet::kernels
