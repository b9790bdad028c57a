#pragma once
// Scalar pooling over NHWC activations: FP32, and max pooling of 8-bit quantized values.
#include <cstdint>

namespace octet::kernels {

struct Pool2dShape {
  int batch = 1;
  int in_h = 1, in_w = 1, channels = 1;
  int out_h = 1, out_w = 1;
  int kernel_h = 1, kernel_w = 1;
  int stride_h = 1, stride_w = 1;
  int dilation_h = 1, dilation_w = 1;
  int pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
};

// Max over the window positions that fall inside the input (padding never wins).
// With ceil_mode the last window may run past pad_bottom / pad_right; those
// positions are ignored too.
void f32_maxpool2d_nhwc__ref(const Pool2dShape& s, const float* input, float* output);

// The same max over 8-bit quantized activations (T = uint8_t or int8_t). With a positive scale,
// dequantization is increasing, so the max of the integers is the integer of the max: no
// requantization, the output keeps the input's scale and zero point (ONNX Runtime drops the
// Q/DQ pair around a MaxPool for this reason). A window with no position inside the input
// yields the type's lowest value.
template <typename T>
void q8_maxpool2d_nhwc__ref(const Pool2dShape& s, const T* input, T* output);

// Average over the window. count_include_pad = false divides by the number of
// positions inside the input. count_include_pad = true divides by the number of
// positions inside the padded input (input plus the explicit pads), so a window that
// runs past the pads in ceil_mode is still not counted beyond them (ONNX Runtime's rule).
void f32_avgpool2d_nhwc__ref(const Pool2dShape& s, bool count_include_pad, const float* input,
                             float* output);

// Mean over H*W for each (n, c): input [batch][hw][channels] -> output [batch][channels].
// Sums in float, pixel by pixel, then divides by float(hw): the arithmetic every SIMD level's
// f32_gap does lane by lane, so every level gives the same bits (dynamic INT8 quantizes this
// output, and one ulp would flip a code on one level only).
void f32_global_avgpool_nhwc__ref(int batch, int hw, int channels, const float* input,
                                  float* output);

}  // namespace octet::kernels
