#pragma once
// Scalar quantized element-wise kernels: QLinearAdd, QLinearMul (ONNX Runtime contrib
// ops; per-tensor scales) and table-driven unary activations (QLinearSigmoid and any
// other Activation). The float expressions, and how ORT's own kernels deviate from them,
// are in docs/requantization.md.
//
// Shapes and strides work as in f32_binary_strided__ref: y is dense in `dims` order, a and
// b are read through their own strides (0 broadcasts). T is uint8_t or int8_t. [y_min,
// y_max] is the output clamp in y's integer domain (the type range, or narrower for a
// folded ReLU); see output_range().
#include <cstdint>

#include "kernels/ref/activation.h"
#include "kernels/ref/qmath.h"

namespace octet::kernels {

// QLinearAdd as its Q/DQ graph defines it, every step in float32:
//   fa = a.scale * float(qa - a.zero_point)
//   fb = b.scale * float(qb - b.zero_point)
//   y  = clamp(round_half_even((fa + fb) / y.scale) + y.zero_point, y_min, y_max)
template <typename T>
void q8_add_strided__ref(int rank, const int64_t* dims, const T* a, const int64_t* a_strides,
                         QuantParams a_q, const T* b, const int64_t* b_strides, QuantParams b_q,
                         QuantParams y_q, int32_t y_min, int32_t y_max, T* y);

// QLinearAdd as MLAS's AVX2 kernel computes it (what ONNX Runtime runs on x86-64 with
// AVX2 when neither input is a broadcast scalar), a named variant for bit-exact
// comparison with ORT; can differ from q8_add_strided__ref by 1 on near-ties:
//   ra = a.scale / y.scale, rb = b.scale / y.scale
//   k  = float(y.zero_point) - fma(ra, a.zero_point, rb * b.zero_point)
//        (MLAS's source has ra * za + rb * zb; ORT's build contracts it into that FMA)
//   y  = clamp(round_half_even(fma(qa, ra, fma(qb, rb, k))), y_min, y_max)
template <typename T>
void q8_add_ratio_fma_strided__ref(int rank, const int64_t* dims, const T* a,
                                   const int64_t* a_strides, QuantParams a_q, const T* b,
                                   const int64_t* b_strides, QuantParams b_q, QuantParams y_q,
                                   int32_t y_min, int32_t y_max, T* y);

// QLinearMul as its Q/DQ graph defines it, in float32:
//   y = clamp(round_half_even((fa * fb) / y.scale) + y.zero_point, y_min, y_max)
template <typename T>
void q8_mul_strided__ref(int rank, const int64_t* dims, const T* a, const int64_t* a_strides,
                         QuantParams a_q, const T* b, const int64_t* b_strides, QuantParams b_q,
                         QuantParams y_q, int32_t y_min, int32_t y_max, T* y);

// QLinearMul as MLAS computes it on x86 (SSE2) and AArch64 NEON, a named variant:
//   r = (a.scale * b.scale) / y.scale
//   y = clamp(round_half_even(float((qa - a.zero_point) * (qb - b.zero_point)) * r
//                             + float(y.zero_point)), y_min, y_max)
// Note the zero point is added in float before rounding.
template <typename T>
void q8_mul_ratio_strided__ref(int rank, const int64_t* dims, const T* a, const int64_t* a_strides,
                               QuantParams a_q, const T* b, const int64_t* b_strides,
                               QuantParams b_q, QuantParams y_q, int32_t y_min, int32_t y_max,
                               T* y);

// The 256-entry table of a quantized unary activation, as ORT's QLinearSigmoid /
// QLinearLeakyRelu build it: for every byte value q (as T),
//   table[uint8_t(q)] = QuantizeLinear(act(DequantizeLinear(q, x), y))
// with DequantizeLinear computed as x.scale * float(q - x.zero_point). act is evaluated
// with the FP32 ref's float formula (Activation / apply()); ORT's sigmoid uses MLAS's
// rational approximation instead, which can move an entry by 1 on a near-tie.
template <typename T>
void q8_activation_table__ref(const Activation& act, QuantParams x_q, QuantParams y_q, T* table);

// y[i] = table[uint8_t(x[i])]: the table is indexed by the raw byte, so for int8 the
// entry for x = -1 is table[255].
template <typename T>
void q8_lookup__ref(int64_t count, const T* x, const T* table, T* y);

}  // namespace octet::kernels
