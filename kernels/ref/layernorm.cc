// Every step must round as ONNX Runtime's loop does.
#include "kernels/ref/fp_contract_off.h"

#include "kernels/ref/layernorm.h"

#include <cmath>

namespace octet::kernels {

void f32_layernorm__ref(size_t rows, size_t n, const float* x, const float* scale, const float* bias, float epsilon,
                        float* y, float* mean, float* inv_std) {
  const float count = static_cast<float>(n);
  for (size_t r = 0; r < rows; ++r, x += n, y += n) {
    float sum = 0.0f, sum_sq = 0.0f;
    for (size_t h = 0; h < n; ++h) {
      sum += x[h];
      sum_sq += x[h] * x[h];
    }
    const float m = sum / count;
    const float s = std::sqrt(sum_sq / count - m * m + epsilon);
    for (size_t h = 0; h < n; ++h) {
      const float v = (x[h] - m) / s * scale[h];
      y[h] = bias ? v + bias[h] : v;
    }
    if (mean) mean[r] = m;
    if (inv_std) inv_std[r] = 1.0f / s;
  }
}

}  // namespace octet::kernels
