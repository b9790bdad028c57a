#include "kernels/ref/maxpool_indices.h"

#include <limits>

namespace octet::kernels {

void f32_maxpool_indices_nhwc__ref(const Pool2dShape& s, int spatial_rank, bool column_major, const float* x,
                                   float* y, int64_t* indices) {
  const int64_t C = s.channels, plane = int64_t(s.in_d) * s.in_h * s.in_w;
  auto offset = [&](int64_t d, int64_t h, int64_t w) {
    return column_major ? d + h * s.in_d + w * s.in_d * s.in_h : (d * s.in_h + h) * s.in_w + w;
  };
  const int64_t none = offset(spatial_rank == 3 ? -1 : 0, spatial_rank >= 2 ? -1 : 0, -1);
  for (int64_t n = 0; n < s.batch; ++n)
    for (int oz = 0; oz < s.out_d; ++oz)
      for (int oy = 0; oy < s.out_h; ++oy)
        for (int ox = 0; ox < s.out_w; ++ox) {
          for (int64_t c = 0; c < C; ++c) {
            y[c] = std::numeric_limits<float>::lowest();
            indices[c] = (n * C + c) * plane + none;
          }
          for (int kd = 0; kd < s.kernel_d; ++kd) {
            const int iz = oz * s.stride_d - s.pad_front + kd * s.dilation_d;
            if (iz < 0 || iz >= s.in_d) continue;
            for (int kh = 0; kh < s.kernel_h; ++kh) {
              const int iy = oy * s.stride_h - s.pad_top + kh * s.dilation_h;
              if (iy < 0 || iy >= s.in_h) continue;
              for (int kw = 0; kw < s.kernel_w; ++kw) {
                const int ix = ox * s.stride_w - s.pad_left + kw * s.dilation_w;
                if (ix < 0 || ix >= s.in_w) continue;
                const float* v = x + (((n * s.in_d + iz) * s.in_h + iy) * s.in_w + ix) * C;
                const int64_t at = offset(iz, iy, ix);
                for (int64_t c = 0; c < C; ++c)
                  if (v[c] > y[c]) {
                    y[c] = v[c];
                    indices[c] = (n * C + c) * plane + at;
                  }
              }
            }
          }
          y += C;
          indices += C;
        }
}

}  // namespace octet::kernels
