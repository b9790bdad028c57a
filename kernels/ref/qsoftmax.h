#pragma once
// com.microsoft.QLinearSoftmax as ONNX Runtime computes it (the op its QDQ fusion turns
// DequantizeLinear -> Softmax -> QuantizeLinear into), for uint8 and int8, bit for bit:
//
// A 256-entry float table of exp values, built once per x_scale and reduction length D:
//   shift = max(0, ln(FLT_MAX / D) - 5) / x_scale   (FLT_MAX / D and ln in float, the rest in double)
//   table[code(i)] = float(exp((i - 255 + shift) * x_scale)),  i = 0..255
// where code(i) = i for uint8 and the byte of i - 128 for int8, so that the largest input of a
// row can be moved to the top entry. The shift keeps D * table[top] below FLT_MAX.
// Per row of D values (x_zero_point plays no part: softmax ignores a common offset):
//   uint8: e(x) = table[255 - max + x];   int8: e(x) = table[byte(127 - max + x)]
//   sum = e(x_0) + e(x_1) + ... in float, in order
//   y = round_half_even((e(x) * floor(1 / y_scale)) / sum) + y_zero_point   (float math)
//   uint8: min(y, 255); int8: y > 255 ? byte 255 : byte of y (ORT's wrap, kept: with its
//   quantizer's y_scale 1/256 and zero point -128 y never leaves [-128, 127])
// The division by y_scale is replaced by a multiply with floor(1 / y_scale), ORT's shortcut:
// exact for the 1/256 its quantizer writes, coarse for other scales (reproduced as is).
#include <array>
#include <cstddef>
#include <cstdint>

namespace octet::kernels {

using QSoftmaxTable = std::array<float, 256>;

QSoftmaxTable qsoftmax_table(float x_scale, size_t reduce_len, bool is_signed);

// rows x D values of T along the reduced axis, element (r, d) at x[r_offset(r) + d * stride]:
// rows are given as [outer][inner] with D between them (x viewed as [outer][D][inner]).
template <typename T>
void q8_softmax__ref(size_t outer, size_t d, size_t inner, const T* x, const QSoftmaxTable& table, float y_scale,
                     int32_t y_zero_point, T* y);

}  // namespace octet::kernels
