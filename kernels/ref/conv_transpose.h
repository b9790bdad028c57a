#pragma once
// Scalar FP32 transposed convolution (ONNX ConvTranspose), NHWC (NDHWC with the depth fields):
// the oracle of the fast driver (kernels/conv/f32_conv_transpose.h), in scatter form.
//
// It follows ONNX Runtime's CPU kernel step for step, so that a QDQ ConvTranspose (which ORT
// runs in float between its DequantizeLinear and QuantizeLinear) quantizes to ORT's codes:
//   1. for each tap (ky, kx), input pixel and output channel, the dot product over the group's
//      input channels as fused multiply-adds in channel order, restarted every k_chunk
//      channels with the partial sums added one after the other (MLAS SGEMM's K blocking);
//   2. each tap's products added into a zero output in (ky, kx) order (ORT's Col2im; in 3-D,
//      (kz, ky, kx) order, as ORT's Col2imNd walks the column rows);
//   3. then the bias, then the activation.
#include <cstdint>

#include "kernels/ref/activation.h"

namespace octet::kernels {

struct ConvTranspose2dShape {
  int batch = 1;
  int in_h = 1, in_w = 1, in_c = 1;
  int out_h = 1, out_w = 1, out_c = 1;
  int kernel_h = 1, kernel_w = 1;
  int stride_h = 1, stride_w = 1;
  int dilation_h = 1, dilation_w = 1;
  // Input pixel (iy, ix) and tap (ky, kx) land on output (iy*stride_h - pad_top + ky*dilation_h,
  // ...); output_padding and output_shape only change out_h / out_w (uncovered rows get the bias).
  int pad_top = 0, pad_left = 0;
  int groups = 1;
  int k_chunk = 128;  // MLAS's K block for this problem (mlas_sgemm_k_chunk)
  // A 3-D ConvTranspose (NDHWC): the depth twins of the fields above; the defaults make it 2-D.
  int in_d = 1, out_d = 1, kernel_d = 1, stride_d = 1, dilation_d = 1, pad_front = 0;
  bool has_depth() const {
    return in_d != 1 || out_d != 1 || kernel_d != 1 || stride_d != 1 || dilation_d != 1 || pad_front != 0;
  }
};

// The K block MLAS's SGEMM uses for a GEMM of `n` columns and depth `k` (sgemm.cpp: 128, doubled
// while the B panel would be narrow, if A is not transposed). ORT's ConvTranspose transposes a
// constant filter at load (A then not transposed) and reads any other (a DequantizeLinear's
// output) transposed.
int mlas_sgemm_k_chunk(int64_t n, int64_t k, bool a_transposed);

// input:   [batch][in_d][in_h][in_w][in_c]
// weights: ONNX order [in_c][out_c / groups][kernel_d][kernel_h][kernel_w]
// bias:    [out_c] or nullptr
// output:  [batch][out_d][out_h][out_w][out_c]
void f32_conv_transpose2d_nhwc__ref(const ConvTranspose2dShape& s, const float* input, const float* weights,
                                    const float* bias, const Activation& act, float* output);

}  // namespace octet::kernels
