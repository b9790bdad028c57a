#pragma once
// Scalar quantized 2-D convolution (QLinearConv, ConvInteger) over NHWC activations: the
// oracle for every INT8 conv kernel. Geometry is the FP32 ref's Conv2dShape (groups,
// depthwise, strides, dilations, asymmetric pads). The math is in docs/requantization.md.
//
// x:    [batch][in_h][in_w][in_c] of TX (uint8_t or int8_t), zero point x_zero_point
// w:    ONNX order [out_c][in_c / groups][kernel_h][kernel_w] of TW (int8_t or uint8_t),
//       zero points w_zero_point: one for the tensor or one per output channel
// bias: [out_c] int32 with scale x_scale * w_scale[c] and zero point 0, or nullptr
//
// acc[oc] = sum over the window of (x - x_zero_point) * (w - w_zero_point[oc]) + bias[oc],
// where a window position in the padding reads x_zero_point (padding is real 0, so the
// pad byte is the zero point, never 0). The sum is exact in int64 and stored modulo 2^32,
// i.e. with the int32 wrap-around of the SIMD adds it models; no wrap can happen while
// kernel_h * kernel_w * in_c / groups <= 33025 (each term is at most 255 * 255 in magnitude,
// see the doc for the bound).
#include <cstdint>
#include <span>

#include "kernels/ref/conv2d.h"
#include "kernels/ref/qmath.h"

namespace octet::kernels {

// ConvInteger semantics (bias == nullptr) or the raw accumulators of QLinearConv
// (bias given): acc is [batch][out_h][out_w][out_c] int32, no requantization.
template <typename TX, typename TW>
void q8_conv2d_nhwc_acc__ref(const Conv2dShape& s, const TX* x, int32_t x_zero_point, const TW* w,
                             std::span<const int32_t> w_zero_point, const int32_t* bias,
                             int32_t* acc);

// QLinearConv: the accumulators above, requantized per output channel with
// rq.multiplier[oc] = (x_scale * w_scale[oc]) / y_scale (requant_multiplier()), rounded
// half to even, + rq.zero_point, clamped to [rq.qmin, rq.qmax] (a folded ReLU / ReLU6).
// y is [batch][out_h][out_w][out_c] of TY.
template <typename TX, typename TW, typename TY>
void q8_conv2d_nhwc__ref(const Conv2dShape& s, const TX* x, int32_t x_zero_point, const TW* w,
                         std::span<const int32_t> w_zero_point, const int32_t* bias,
                         const Requantization& rq, TY* y);

}  // namespace octet::kernels
