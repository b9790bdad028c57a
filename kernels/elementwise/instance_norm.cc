#include "kernels/elementwise/instance_norm.h"

#include <cmath>

#include "kernels/ref/eigen_sum.h"

namespace octet::kernels {
void f32_instance_norm_stats(const float* x, size_t n, size_t start, float epsilon, float* mean, float* inv_std) {
  const float m = sum_eigen_packets4(n, start, [x](size_t i) { return x[i]; }) / static_cast<float>(n);
  const float var_sum = sum_eigen_packets4(n, 0, [x, m](size_t i) {
    const float d = x[i] - m;
    return d * d;
  });
  *mean = m;
  *inv_std = 1.0f / std::sqrt(var_sum / static_cast<float>(n) + epsilon);
}

}  // namespace octet::kernels
