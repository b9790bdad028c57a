#include "kernels/ref/gemm.h"

#include <cstddef>

namespace octet::kernels {

void f32_gemm__ref(const GemmShape& s, float alpha, const float* a, const float* b, float beta,
                   const float* c, int64_t c_stride_m, int64_t c_stride_n, const Activation& act,
                   float* y) {
  const int64_t lda = s.lda != 0 ? s.lda : (s.trans_a ? s.m : s.k);
  const int64_t ldb = s.ldb != 0 ? s.ldb : (s.trans_b ? s.k : s.n);
  for (int i = 0; i < s.m; ++i) {
    for (int j = 0; j < s.n; ++j) {
      double acc = 0.0;
      for (int p = 0; p < s.k; ++p) {
        const float av = s.trans_a ? a[p * lda + i] : a[i * lda + p];
        const float bv = s.trans_b ? b[j * ldb + p] : b[p * ldb + j];
        acc += static_cast<double>(av) * bv;
      }
      double v = static_cast<double>(alpha) * acc;
      if (c != nullptr) v += static_cast<double>(beta) * c[i * c_stride_m + j * c_stride_n];
      y[static_cast<size_t>(i) * s.n + j] = apply(act, static_cast<float>(v));
    }
  }
}

}  // namespace octet::kernels
