#include "kernels/ref/fp_contract_off.h"  // every float step rounds as written

#include "kernels/ref/qpool2d.h"

#include <cstddef>

namespace octet::kernels {

template <typename T>
void q8_global_avgpool_nhwc__ref(int batch, int hw, int channels, const T* x, QuantParams x_q,
                                 QuantParams y_q, T* y) {
  const float yhw = y_q.scale * static_cast<float>(hw);
  const float multiplier = x_q.scale / yhw;
  const int64_t bias = -static_cast<int64_t>(x_q.zero_point) * hw;
  for (int n = 0; n < batch; ++n) {
    for (int c = 0; c < channels; ++c) {
      int64_t sum = bias;
      for (int p = 0; p < hw; ++p) sum += x[(static_cast<size_t>(n) * hw + p) * channels + c];
      y[static_cast<size_t>(n) * channels + c] = static_cast<T>(requantize_value(
          static_cast<int32_t>(sum), multiplier, y_q.zero_point, qmin_of<T>(), qmax_of<T>()));
    }
  }
}

template <typename T>
void q8_avgpool2d_nhwc__ref(const Pool2dShape& s, bool count_include_pad, const T* x,
                            QuantParams x_q, QuantParams y_q, T* y) {
  const bool global = s.kernel_h == s.in_h && s.kernel_w == s.in_w && s.dilation_h == 1 &&
                      s.dilation_w == 1 && s.pad_top == 0 && s.pad_left == 0 && s.pad_bottom == 0 &&
                      s.pad_right == 0 && s.kernel_d == s.in_d && s.dilation_d == 1 && s.pad_front == 0 &&
                      s.pad_back == 0;
  if (global) {
    // The output is 1x1 per channel whatever the strides.
    q8_global_avgpool_nhwc__ref(s.batch, s.in_d * s.in_h * s.in_w, s.channels, x, x_q, y_q, y);
    return;
  }
  // 3-D windows (the depth fields) are summed in (kd, kh, kw) order, as ORT's 3-D task does.
  for (int n = 0; n < s.batch; ++n) {
    for (int oz = 0; oz < s.out_d; ++oz) {
      for (int oy = 0; oy < s.out_h; ++oy) {
        for (int ox = 0; ox < s.out_w; ++ox) {
          for (int c = 0; c < s.channels; ++c) {
            float sum = 0.0f;
            int inside = 0;
            for (int kz = 0; kz < s.kernel_d; ++kz) {
              const int iz = oz * s.stride_d - s.pad_front + kz * s.dilation_d;
              if (iz < 0 || iz >= s.in_d) continue;
              for (int ky = 0; ky < s.kernel_h; ++ky) {
                const int iy = oy * s.stride_h - s.pad_top + ky * s.dilation_h;
                if (iy < 0 || iy >= s.in_h) continue;
                for (int kx = 0; kx < s.kernel_w; ++kx) {
                  const int ix = ox * s.stride_w - s.pad_left + kx * s.dilation_w;
                  if (ix < 0 || ix >= s.in_w) continue;
                  const T q = x[(((static_cast<size_t>(n) * s.in_d + iz) * s.in_h + iy) * s.in_w + ix) * s.channels + c];
                  sum += dequantize_value(q, x_q.scale, x_q.zero_point);
                  ++inside;
                }
              }
            }
            const int count = count_include_pad ? s.kernel_d * s.kernel_h * s.kernel_w : inside;
            T& out = y[(((static_cast<size_t>(n) * s.out_d + oz) * s.out_h + oy) * s.out_w + ox) * s.channels + c];
            if (inside == 0) {
              out = static_cast<T>(y_q.zero_point);
              continue;
            }
            const float average = sum / static_cast<float>(count);
            const float scaled = average / y_q.scale;
            const float shifted = scaled + static_cast<float>(y_q.zero_point);
            out = static_cast<T>(round_add_zero_point_clamp(shifted, 0, qmin_of<T>(), qmax_of<T>()));
          }
        }
      }
    }
  }
}

template void q8_global_avgpool_nhwc__ref<uint8_t>(int, int, int, const uint8_t*, QuantParams,
                                                   QuantParams, uint8_t*);
template void q8_global_avgpool_nhwc__ref<int8_t>(int, int, int, const int8_t*, QuantParams,
                                                  QuantParams, int8_t*);
template void q8_avgpool2d_nhwc__ref<uint8_t>(const Pool2dShape&, bool, const uint8_t*, QuantParams,
                                              QuantParams, uint8_t*);
template void q8_avgpool2d_nhwc__ref<int8_t>(const Pool2dShape&, bool, const int8_t*, QuantParams,
                                             QuantParams, int8_t*);

}  // namespace octet::kernels
