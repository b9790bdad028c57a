#pragma once
// Scalar FP32 2-D and 3-D convolution: the oracle every fast conv kernel is tested against.
#include <cstdint>

#include "kernels/ref/activation.h"

namespace octet::kernels {

// Geometry of one 2-D convolution. Activations are NHWC. Padding at the bottom and
// right is implied by out_h / out_w (ONNX allows asymmetric pads; the caller computes
// out_h = (in_h + pad_top + pad_bottom - dilation_h*(kernel_h-1) - 1) / stride_h + 1).
// A 3-D convolution (video CNNs) sets the depth fields too: activations are then NDHWC and
// weights [out_c][in_c / groups][kernel_d][kernel_h][kernel_w]. Their defaults make a 2-D conv,
// so only the drivers that read them (has_depth() below) may be given a 3-D shape.
struct Conv2dShape {
  int batch = 1;
  int in_h = 1, in_w = 1, in_c = 1;
  int out_h = 1, out_w = 1, out_c = 1;
  int kernel_h = 1, kernel_w = 1;
  int stride_h = 1, stride_w = 1;
  int dilation_h = 1, dilation_w = 1;
  int pad_top = 0, pad_left = 0;
  int groups = 1;  // in_c and out_c are both multiples of groups; depthwise: groups == in_c
  int in_d = 1, out_d = 1, kernel_d = 1, stride_d = 1, dilation_d = 1, pad_front = 0;

  // True when the depth fields describe more than a 2-D conv.
  bool has_depth() const { return in_d != 1 || out_d != 1 || kernel_d != 1 || pad_front != 0; }
};

// input:   [batch][in_d][in_h][in_w][in_c]
// weights: ONNX order [out_c][in_c / groups][kernel_d][kernel_h][kernel_w]
// bias:    [out_c] or nullptr
// output:  [batch][out_d][out_h][out_w][out_c]; act is applied after the bias.
// Accumulates in double so that fast float kernels can be held to a tight tolerance.
void f32_conv2d_nhwc__ref(const Conv2dShape& s, const float* input, const float* weights,
                          const float* bias, const Activation& act, float* output);

}  // namespace octet::kernels
