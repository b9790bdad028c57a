#pragma once
// Scalar quantized mean over any set of axes (com.microsoft QLinearReduceMean, and the
// DequantizeLinear -> ReduceMean -> QuantizeLinear unit the QDQ pass fuses into it).
#include <cstdint>

#include "kernels/ref/qmath.h"

namespace octet::kernels {

// The integer formula of QLinearGlobalAveragePool, over the dimensions marked in `reduced`:
//   acc = sum of the n reduced x values - n * x.zero_point            (exact, int64)
//   y   = saturate(round_half_even(float(acc) * m) + y.zero_point)
//   m   = x.scale / (y.scale * float(n))                              (float32, this order)
// so a mean over the spatial axes of NCHW data equals q8_global_avgpool_nhwc__ref bit for bit
// (and the fast path may use that kernel). x is read through x_strides (elements); y is dense
// over the kept dimensions in `dims` order. float(acc) is exact while |acc| < 2^24.
template <typename T>
void q8_reduce_mean_strided__ref(int rank, const int64_t* dims, const bool* reduced, const T* x,
                                 const int64_t* x_strides, QuantParams x_q, QuantParams y_q, T* y);

}  // namespace octet::kernels
