#include "kernels/ref/conv2d.h"

#include <cstddef>

namespace octet::kernels {

void f32_conv2d_nhwc__ref(const Conv2dShape& s, const float* input, const float* weights,
                          const float* bias, const Activation& act, float* output) {
  const int group_in_c = s.in_c / s.groups;
  const int group_out_c = s.out_c / s.groups;
  for (int n = 0; n < s.batch; ++n) {
    for (int oz = 0; oz < s.out_d; ++oz) {
      for (int oy = 0; oy < s.out_h; ++oy) {
        for (int ox = 0; ox < s.out_w; ++ox) {
          float* out_px =
              output + (((static_cast<size_t>(n) * s.out_d + oz) * s.out_h + oy) * s.out_w + ox) * s.out_c;
          for (int oc = 0; oc < s.out_c; ++oc) {
            const int first_ic = (oc / group_out_c) * group_in_c;
            double acc = bias != nullptr ? bias[oc] : 0.0;
            for (int kz = 0; kz < s.kernel_d; ++kz) {
              const int iz = oz * s.stride_d - s.pad_front + kz * s.dilation_d;
              if (iz < 0 || iz >= s.in_d) continue;
              for (int ky = 0; ky < s.kernel_h; ++ky) {
                const int iy = oy * s.stride_h - s.pad_top + ky * s.dilation_h;
                if (iy < 0 || iy >= s.in_h) continue;
                for (int kx = 0; kx < s.kernel_w; ++kx) {
                  const int ix = ox * s.stride_w - s.pad_left + kx * s.dilation_w;
                  if (ix < 0 || ix >= s.in_w) continue;
                  const float* in_px =
                      input + (((static_cast<size_t>(n) * s.in_d + iz) * s.in_h + iy) * s.in_w + ix) * s.in_c +
                      first_ic;
                  for (int ic = 0; ic < group_in_c; ++ic) {
                    const size_t w_index =
                        (((static_cast<size_t>(oc) * group_in_c + ic) * s.kernel_d + kz) * s.kernel_h + ky) *
                            s.kernel_w +
                        kx;
                    acc += static_cast<double>(in_px[ic]) * weights[w_index];
                  }
                }
              }
            }
            out_px[oc] = apply(act, static_cast<float>(acc));
          }
        }
      }
    }
  }
}

}  // namespace octet::kernels
