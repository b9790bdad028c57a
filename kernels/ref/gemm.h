#pragma once
// Scalar FP32 GEMM: Y = alpha * op(A) * op(B) + beta * C, then activation.
#include <cstdint>

#include "kernels/ref/activation.h"

namespace octet::kernels {

struct GemmShape {
  int m = 1, n = 1, k = 1;
  bool trans_a = false;  // A stored [k][m] instead of [m][k]
  bool trans_b = false;  // B stored [n][k] instead of [k][n]
  int lda = 0, ldb = 0;  // row strides in elements of A and B as stored (0 = dense)
};

// c may be nullptr. Otherwise element (i, j) of C is c[i * c_stride_m + j * c_stride_n];
// a stride of 0 broadcasts C along that dimension (ONNX Gemm's unidirectional broadcast).
// y is dense [m][n]. Accumulates in double.
void f32_gemm__ref(const GemmShape& s, float alpha, const float* a, const float* b, float beta,
                   const float* c, int64_t c_stride_m, int64_t c_stride_n, const Activation& act,
                   float* y);

}  // namespace octet::kernels
