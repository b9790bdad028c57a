#include "kernels/ref/elementwise.h"

#include <cmath>
#include <vector>

#include "kernels/ref/index_walk.h"

namespace octet::kernels {

namespace {


int64_t offset(int rank, const int64_t* idx, const int64_t* strides) {
  int64_t off = 0;
  for (int d = 0; d < rank; ++d) off += idx[d] * strides[d];
  return off;
}

float binary(BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::add: return a + b;
    case BinaryOp::sub: return a - b;
    case BinaryOp::mul: return a * b;
    case BinaryOp::div: return a / b;
    case BinaryOp::prelu: return a < 0.0f ? a * b : a;
  }
  return 0.0f;
}

}  // namespace

void f32_unary__ref(const Activation& act, int64_t count, const float* x, float* y) {
  for (int64_t i = 0; i < count; ++i) y[i] = apply(act, x[i]);
}

void f32_binary_strided__ref(BinaryOp op, int rank, const int64_t* dims, const float* a,
                             const int64_t* a_strides, const float* b, const int64_t* b_strides,
                             const Activation& act, float* y) {
  int64_t out = 0;
  for_each_index(rank, dims, [&](const int64_t* idx) {
    const float av = a[offset(rank, idx, a_strides)];
    const float bv = b[offset(rank, idx, b_strides)];
    y[out++] = apply(act, binary(op, av, bv));
  });
}

void f32_batchnorm_channels_last__ref(int64_t pixels, int channels, const float* x,
                                      const float* scale, const float* bias, const float* mean,
                                      const float* var, float epsilon, float* y) {
  for (int64_t p = 0; p < pixels; ++p) {
    for (int c = 0; c < channels; ++c) {
      const int64_t i = p * channels + c;
      const double inv_std = 1.0 / std::sqrt(static_cast<double>(var[c]) + epsilon);
      y[i] = static_cast<float>((static_cast<double>(x[i]) - mean[c]) * inv_std * scale[c] + bias[c]);
    }
  }
}

void f32_where__ref(size_t n, const uint8_t* c, size_t c_inc, const float* a, size_t a_inc, const float* b,
                    size_t b_inc, float* y) {
  for (size_t i = 0; i < n; ++i) y[i] = c[i * c_inc] ? a[i * a_inc] : b[i * b_inc];
}

}  // namespace octet::kernels
