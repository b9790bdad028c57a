#pragma once
// LRN (local response normalization across channels) over channels-last pixels, in ONNX
// Runtime's arithmetic (its CPU kernel, nn/lrn.cc), which the SIMD kernels
// (kernels/pool/lrn_list.h) repeat step for step but for the power:
//   aos = alpha / size (float), pre = (size - 1) / 2, sq(i) = x[i] * x[i] for 0 <= i < C, else 0;
//   s_0 = bias, then s_0 = s_0 + aos * sq(j - pre) for j = 0 .. size - 1 in order;
//   s_c = (s_{c-1} + aos * sq(c + size - 1 - pre)) - aos * sq(c - 1 - pre): a running sum, each
//   product rounded on its own (ORT's Axpy), so the window is [c - pre, c + size - 1 - pre] as
//   ONNX defines it for odd and even sizes (ORT itself refuses even ones);
//   y_c = x_c * pow(s_c, -beta).
// ORT's power is Eigen's vectorised pow (std::pow on its unaligned ends); this one is std::pow,
// within an ulp or two of it.
#include <cstddef>

namespace octet::kernels {

struct LrnParams {
  int size = 1;
  float alpha = 1e-4f, beta = 0.75f, bias = 1.0f;
};

// x, y: [pixels][channels].
void f32_lrn_nhwc__ref(const LrnParams& p, size_t pixels, size_t channels, const float* x, float* y);

}  // namespace octet::kernels
