#include "kernels/elementwise/instance_norm.h"

#include <cmath>

namespace octet::kernels {
namespace {

// Eigen's reduction over a value generator: value(i) is element i.
template <class Value>
float sum_eigen4(size_t n, size_t start, Value value) {
  if (n == 0) return 0.0f;
  if (start > n) start = n;
  const size_t whole = (n - start) / 4 * 4, pairs = (n - start) / 8 * 8;
  if (whole == 0) {
    float r = value(0);
    for (size_t i = 1; i < n; ++i) r += value(i);
    return r;
  }
  float acc[8];
  for (int l = 0; l < 4; ++l) acc[l] = value(start + size_t(l));
  if (whole > 4) {
    for (int l = 4; l < 8; ++l) acc[l] = value(start + size_t(l));
    for (size_t i = start + 8; i < start + pairs; i += 8)
      for (int l = 0; l < 8; ++l) acc[l] += value(i + size_t(l));
    for (int l = 0; l < 4; ++l) acc[l] += acc[l + 4];
    if (whole > pairs)
      for (int l = 0; l < 4; ++l) acc[l] += value(start + pairs + size_t(l));
  }
  float r = (acc[0] + acc[2]) + (acc[1] + acc[3]);
  for (size_t i = 0; i < start; ++i) r += value(i);
  for (size_t i = start + whole; i < n; ++i) r += value(i);
  return r;
}

}  // namespace

float f32_sum_eigen4(const float* v, size_t n, size_t start) {
  return sum_eigen4(n, start, [v](size_t i) { return v[i]; });
}

void f32_instance_norm_stats(const float* x, size_t n, size_t start, float epsilon, float* mean, float* inv_std) {
  const float m = f32_sum_eigen4(x, n, start) / static_cast<float>(n);
  const float var_sum = sum_eigen4(n, 0, [x, m](size_t i) {
    const float d = x[i] - m;
    return d * d;
  });
  *mean = m;
  *inv_std = 1.0f / std::sqrt(var_sum / static_cast<float>(n) + epsilon);
}

}  // namespace octet::kernels
