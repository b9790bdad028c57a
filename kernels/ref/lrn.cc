#include "kernels/ref/fp_contract_off.h"  // first: ORT's products and sums round one by one

#include "kernels/ref/lrn.h"

#include <cmath>

namespace octet::kernels {

void f32_lrn_nhwc__ref(const LrnParams& p, size_t pixels, size_t channels, const float* x, float* y) {
  const float aos = p.alpha / static_cast<float>(p.size);
  const long pre = (p.size - 1) / 2, c_count = static_cast<long>(channels);
  for (size_t i = 0; i < pixels; ++i, x += channels, y += channels) {
    auto sq = [&](long c) { return c >= 0 && c < c_count ? x[c] * x[c] : 0.0f; };
    float s = p.bias;
    for (long j = 0; j < p.size; ++j) s = s + aos * sq(j - pre);
    for (long c = 0; c < c_count; ++c) {
      if (c > 0) {
        s = s + aos * sq(c + p.size - 1 - pre);
        s = s - aos * sq(c - 1 - pre);
      }
      y[c] = x[c] * std::pow(s, -p.beta);
    }
  }
}

}  // namespace octet::kernels
