#pragma once
// Scalar FP32 element-wise kernels. Shapes and strides are in elements and given in the
// order the output is laid out in memory, so one kernel serves NCHW, NHWC and any
// broadcast: a stride of 0 repeats an input along that dimension.
#include <cstddef>
#include <cstdint>

#include "kernels/ref/activation.h"

namespace octet::kernels {

constexpr int kMaxRank = 8;

// prelu: a < 0 ? a * b : a (b the slope), ONNX PRelu.
enum class BinaryOp { add, sub, mul, div, prelu };

void f32_unary__ref(const Activation& act, int64_t count, const float* x, float* y);

// y is dense in `dims` order; a and b are read through their own strides.
void f32_binary_strided__ref(BinaryOp op, int rank, const int64_t* dims, const float* a,
                             const int64_t* a_strides, const float* b, const int64_t* b_strides,
                             const Activation& act, float* y);

// Where over n elements (kernels/elementwise/eltwise_list.h, F32WhereUkernel): y = c ? a : b,
// each pointer advancing by its inc (0 or 1).
void f32_where__ref(size_t n, const uint8_t* c, size_t c_inc, const float* a, size_t a_inc, const float* b,
                    size_t b_inc, float* y);

// Inference-mode BatchNormalization over channels-last data: x is [pixels][channels].
// y = (x - mean) / sqrt(var + epsilon) * scale + bias, computed in double.
void f32_batchnorm_channels_last__ref(int64_t pixels, int channels, const float* x,
                                      const float* scale, const float* bias, const float* mean,
                                      const float* var, float epsilon, float* y);

}  // namespace octet::kernels
