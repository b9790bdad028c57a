#include "kernels/ref/fp_contract_off.h"

#include "kernels/ref/conv_transpose.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace octet::kernels {

int mlas_sgemm_k_chunk(int64_t n, int64_t k, bool a_transposed) {
  int64_t stride_n = 128, stride_k = 128;
  if (n < k && !a_transposed)
    while (stride_n > 16 && stride_n / 2 >= n) {
      stride_k *= 2;
      stride_n /= 2;
    }
  return int(stride_k);
}

void f32_conv_transpose2d_nhwc__ref(const ConvTranspose2dShape& s, const float* input, const float* weights,
                                    const float* bias, const Activation& act, float* output) {
  const int gc_in = s.in_c / s.groups, gc_out = s.out_c / s.groups;
  const int taps = s.kernel_d * s.kernel_h * s.kernel_w;
  const int chunk = std::max(1, s.k_chunk);
  const size_t out_count = size_t(s.batch) * s.out_d * s.out_h * s.out_w * s.out_c;
  std::fill(output, output + out_count, 0.0f);
  for (int kz = 0; kz < s.kernel_d; ++kz)
    for (int ky = 0; ky < s.kernel_h; ++ky)
      for (int kx = 0; kx < s.kernel_w; ++kx)
        for (int n = 0; n < s.batch; ++n)
          for (int iz = 0; iz < s.in_d; ++iz) {
            const int oz = iz * s.stride_d - s.pad_front + kz * s.dilation_d;
            if (oz < 0 || oz >= s.out_d) continue;
            for (int iy = 0; iy < s.in_h; ++iy) {
              const int oy = iy * s.stride_h - s.pad_top + ky * s.dilation_h;
              if (oy < 0 || oy >= s.out_h) continue;
              for (int ix = 0; ix < s.in_w; ++ix) {
                const int ox = ix * s.stride_w - s.pad_left + kx * s.dilation_w;
                if (ox < 0 || ox >= s.out_w) continue;
                const float* x = input + (((size_t(n) * s.in_d + iz) * s.in_h + iy) * s.in_w + ix) * s.in_c;
                float* y = output + (((size_t(n) * s.out_d + oz) * s.out_h + oy) * s.out_w + ox) * s.out_c;
                const int tap = (kz * s.kernel_h + ky) * s.kernel_w + kx;
                for (int oc = 0; oc < s.out_c; ++oc) {
                  const int g = oc / gc_out, m = oc % gc_out;
                  float sum = 0.0f;
                  for (int k0 = 0; k0 < gc_in; k0 += chunk) {
                    float part = 0.0f;
                    for (int ic = k0; ic < std::min(gc_in, k0 + chunk); ++ic) {
                      const int c = g * gc_in + ic;
                      const float w = weights[(size_t(c) * gc_out + m) * taps + tap];
                      part = std::fma(x[c], w, part);
                    }
                    sum = k0 == 0 ? part : sum + part;
                  }
                  y[oc] += sum;
                }
              }
            }
          }
  for (size_t i = 0; i < out_count; ++i) {
    const float b = bias ? bias[i % size_t(s.out_c)] : 0.0f;
    output[i] = apply(act, bias ? output[i] + b : output[i]);
  }
}

}  // namespace octet::kernels
