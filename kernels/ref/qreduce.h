#pragma once
// Scalar quantized mean over any set of axes (com.microsoft QLinearReduceMean, and the
// DequantizeLinear -> ReduceMean -> QuantizeLinear unit the QDQ pass fuses into it).
#include <cstdint>

#include "kernels/ref/pool2d.h"
#include "kernels/ref/qmath.h"

namespace octet::kernels {

// The QDQ unit as ONNX Runtime runs it (it fuses no QLinearReduceMean on the CPU: the unit
// stays DequantizeLinear, float ReduceMean, QuantizeLinear), over the dimensions marked in
// `reduced`:
//   fx  = float(x - x.zero_point) * x.scale                      (DequantizeLinear)
//   s   = the float sum of the n reduced fx in ORT's order, then s / float(n)
//   y   = saturate(round_half_even(mean / y.scale) + y.zero_point) (QuantizeLinear)
// ORT's order follows its logical (row-major) tensor: when every reduced dimension of extent
// above 1 comes after every kept one (its KR case, or all axes), each row of n is one Eigen
// packet sum (f32_row_sums_eigen__ref, rows counted from the tensor's start); any other set
// is its generic loop, an accumulator from 0 adding the reduced elements in row-major order
// (f32_strided_sums__ref). Both are the FP32 ReduceMean's model (engine/ops/misc_ops.cc).
// x is read through x_strides (elements); y is dense over the kept dimensions in `dims` order.
template <typename T>
void q8_reduce_mean_strided__ref(int rank, const int64_t* dims, const bool* reduced, const T* x,
                                 const int64_t* x_strides, QuantParams x_q, QuantParams y_q, T* y);

// The QDQ unit over H and W of a 4-D tensor that ORT runs on NHWC data (ir::kOrtChannelsLastAttr):
// the same dequantize and quantize around a mean of each channel over the pixels in row-major
// order, summed in `order` (GapOrder::sequential for one image, mlas_sgemm_m1 for a batch:
// kernels/ref/pool2d.h), then / float(h * w). dims and x_strides are x's [N, H, W, C] view.
template <typename T>
void q8_reduce_mean_hw_nhwc__ref(const int64_t* dims, const T* x, const int64_t* x_strides, QuantParams x_q,
                                 QuantParams y_q, GapOrder order, T* y);

// True when ORT sums each output as one row (the KR case above): no kept dimension of extent
// above 1 after a reduced one of extent above 1.
bool reduce_mean_rows_case(int rank, const int64_t* dims, const bool* reduced);

}  // namespace octet::kernels
