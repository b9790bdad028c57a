#pragma once
// Scalar quantized average pooling over NHWC activations, matching ONNX Runtime's
// contrib ops QLinearGlobalAveragePool and QLinearAveragePool (per-tensor parameters,
// T is uint8_t or int8_t). The formulas are in docs/requantization.md.
#include <cstdint>

#include "kernels/ref/pool2d.h"
#include "kernels/ref/qmath.h"

namespace octet::kernels {

// QLinearGlobalAveragePool (MLAS's x86 formula): an integer sum, then one requantization
//   acc = sum_p x[n][p][c] - hw * x.zero_point                       (int32)
//   y   = saturate(round_half_even(float(acc) * m) + y.zero_point)
//   m   = x.scale / (y.scale * float(hw))                             (float32, this order)
// input [batch][hw][channels] -> output [batch][channels]. ORT rejects hw >= 2^24 and
// m outside [2^-32, 256); this reference computes those cases anyway.
template <typename T>
void q8_global_avgpool_nhwc__ref(int batch, int hw, int channels, const T* x, QuantParams x_q,
                                 QuantParams y_q, T* y);

// QLinearAveragePool as ORT computes it: in float, not in integers.
//   fx = x.scale * float(q - x.zero_point)                  (dequantize each input)
//   s  = sum of fx over the window positions inside the input, in float, row by row
//   a  = s / float(count)
//   y  = saturate(round_half_even(a / y.scale + float(y.zero_point)))
// count is kernel_h * kernel_w with count_include_pad, else the number of positions
// inside the input. Note the zero point is added in float before rounding (ORT's
// quantize_value), unlike QuantizeLinear. A window with no position inside the input
// gives y.zero_point. When the kernel covers the whole input and every pad is 0, ORT
// switches to QLinearGlobalAveragePool's integer formula, and so does this kernel.
template <typename T>
void q8_avgpool2d_nhwc__ref(const Pool2dShape& s, bool count_include_pad, const T* x,
                            QuantParams x_q, QuantParams y_q, T* y);

}  // namespace octet::kernels
