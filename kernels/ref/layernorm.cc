// Every step must round as ONNX Runtime's loop does.
#include "kernels/ref/fp_contract_off.h"

#include "kernels/ref/layernorm.h"

#include <cmath>

namespace octet::kernels {

namespace {

// Rows shorter than 8: Welford's update in float (no FMA).
void welford_row(size_t n, const float* x, const float* scale, const float* bias, float epsilon, float* y, float* m_out,
                 float* inv_out) {
  float m = 0.0f, m2 = 0.0f;
  for (size_t h = 0; h < n; ++h) {
    const float delta = x[h] - m;
    m += delta / static_cast<float>(h + 1);
    m2 += delta * (x[h] - m);
  }
  const float sd = std::sqrt(m2 / static_cast<float>(n) + epsilon);
  for (size_t h = 0; h < n; ++h) {
    const float v = (x[h] - m) / sd * scale[h];
    y[h] = bias ? v + bias[h] : v;
  }
  if (m_out) *m_out = m;
  if (inv_out) *inv_out = 1.0f / sd;
}

// Rows of 8 or more: MLAS's AVX2 kernel, lane for lane.
void mlas_row(size_t n, const float* x, const float* scale, const float* bias, float epsilon, float* y, float* m_out,
              float* inv_out) {
  double l[4] = {0, 0, 0, 0};
  size_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (size_t k = 0; k < 4; ++k) l[k] += static_cast<double>(x[i + k]);
  double dsum = (l[0] + l[2]) + (l[1] + l[3]);
  for (; i < n; ++i) dsum += static_cast<double>(x[i]);
  const float m = static_cast<float>(dsum / static_cast<double>(n));

  float v[8] = {};
  for (i = 0; i + 8 <= n; i += 8)
    for (size_t k = 0; k < 8; ++k) {
      const float d = x[i + k] - m;
      v[k] = std::fma(d, d, v[k]);
    }
  float r[4];
  for (size_t k = 0; k < 4; ++k) r[k] = v[k] + v[k + 4];
  float var = (r[0] + r[2]) + (r[1] + r[3]);
  if (n - i >= 4)
    for (const size_t end = i + 4; i < end; ++i) {
      const float d = x[i] - m;
      var += d * d;
    }
  for (; i < n; ++i) {
    const float d = x[i] - m;
    var = std::fma(d, d, var);
  }
  const float inv = 1.0f / std::sqrt(var / static_cast<float>(n) + epsilon);
  for (size_t h = 0; h < n; ++h) {
    const float t = (x[h] - m) * inv;
    y[h] = bias ? std::fma(t, scale[h], bias[h]) : t * scale[h];
  }
  if (m_out) *m_out = m;
  if (inv_out) *inv_out = inv;
}

}  // namespace

void f32_layernorm__ref(size_t rows, size_t n, const float* x, const float* scale, const float* bias, float epsilon,
                        float* y, float* mean, float* inv_std) {
  for (size_t r = 0; r < rows; ++r, x += n, y += n) {
    float* m = mean ? mean + r : nullptr;
    float* s = inv_std ? inv_std + r : nullptr;
    if (n < 8) welford_row(n, x, scale, bias, epsilon, y, m, s);
    else mlas_row(n, x, scale, bias, epsilon, y, m, s);
  }
}

}  // namespace octet::kernels
