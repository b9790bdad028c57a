#include "kernels/ref/fp_contract_off.h"  // every float step rounds as written

#include "kernels/ref/qconv2d.h"

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace octet::kernels {

namespace {

void check_shape(const char* kernel, const Conv2dShape& s) {
  if (s.groups <= 0 || s.in_c % s.groups != 0 || s.out_c % s.groups != 0) {
    throw std::invalid_argument(std::string(kernel) + ": in_c " + std::to_string(s.in_c) +
                                " and out_c " + std::to_string(s.out_c) +
                                " must both be multiples of groups " + std::to_string(s.groups));
  }
}

}  // namespace

template <typename TX, typename TW>
void q8_conv2d_nhwc_acc__ref(const Conv2dShape& s, const TX* x, int32_t x_zero_point, const TW* w,
                             std::span<const int32_t> w_zero_point, const int32_t* bias,
                             int32_t* acc) {
  check_shape("q8_conv2d_nhwc_acc__ref", s);
  check_per_channel("q8_conv2d_nhwc_acc__ref", "w_zero_point", w_zero_point.size(),
                    static_cast<size_t>(s.out_c));
  const int group_in_c = s.in_c / s.groups;
  const int group_out_c = s.out_c / s.groups;
  // A 3-D conv (depth fields) runs its (kd, kh, kw) taps over NDHWC planes; 2-D has one plane.
  for (int n = 0; n < s.batch; ++n) {
    for (int oz = 0; oz < s.out_d; ++oz) {
      for (int oy = 0; oy < s.out_h; ++oy) {
        for (int ox = 0; ox < s.out_w; ++ox) {
          int32_t* out_px =
              acc + (((static_cast<size_t>(n) * s.out_d + oz) * s.out_h + oy) * s.out_w + ox) * s.out_c;
          for (int oc = 0; oc < s.out_c; ++oc) {
            const int first_ic = (oc / group_out_c) * group_in_c;
            const int32_t wzp = w_zero_point.size() == 1 ? w_zero_point[0] : w_zero_point[oc];
            int64_t sum = bias != nullptr ? bias[oc] : 0;
            for (int kz = 0; kz < s.kernel_d; ++kz) {
              const int iz = oz * s.stride_d - s.pad_front + kz * s.dilation_d;
              const bool plane_inside = iz >= 0 && iz < s.in_d;
              for (int ky = 0; ky < s.kernel_h; ++ky) {
                const int iy = oy * s.stride_h - s.pad_top + ky * s.dilation_h;
                const bool row_inside = plane_inside && iy >= 0 && iy < s.in_h;
                for (int kx = 0; kx < s.kernel_w; ++kx) {
                  const int ix = ox * s.stride_w - s.pad_left + kx * s.dilation_w;
                  const bool inside = row_inside && ix >= 0 && ix < s.in_w;
                  const TX* in_px =
                      inside ? x + (((static_cast<size_t>(n) * s.in_d + iz) * s.in_h + iy) * s.in_w + ix) * s.in_c +
                                   first_ic
                             : nullptr;
                  for (int ic = 0; ic < group_in_c; ++ic) {
                    // The padding holds the input zero point: it contributes exactly 0, as
                    // real zero padding does in the float model.
                    const int32_t xv = inside ? static_cast<int32_t>(in_px[ic]) : x_zero_point;
                    const size_t w_index =
                        (((static_cast<size_t>(oc) * group_in_c + ic) * s.kernel_d + kz) * s.kernel_h + ky) *
                            s.kernel_w +
                        kx;
                    sum += static_cast<int64_t>(xv - x_zero_point) * (static_cast<int32_t>(w[w_index]) - wzp);
                  }
                }
              }
            }
            out_px[oc] = static_cast<int32_t>(sum);  // modulo 2^32 (C++20), like vpaddd
          }
        }
      }
    }
  }
}

template <typename TX, typename TW, typename TY>
void q8_conv2d_nhwc__ref(const Conv2dShape& s, const TX* x, int32_t x_zero_point, const TW* w,
                         std::span<const int32_t> w_zero_point, const int32_t* bias,
                         const Requantization& rq, TY* y) {
  check_requantization<TY>("q8_conv2d_nhwc__ref", rq, static_cast<size_t>(s.out_c));
  const size_t pixels = static_cast<size_t>(s.batch) * s.out_d * s.out_h * s.out_w;
  std::vector<int32_t> acc(pixels * s.out_c);
  q8_conv2d_nhwc_acc__ref(s, x, x_zero_point, w, w_zero_point, bias, acc.data());
  for (size_t p = 0; p < pixels; ++p) {
    for (int oc = 0; oc < s.out_c; ++oc) {
      const size_t i = p * s.out_c + oc;
      y[i] = static_cast<TY>(
          requantize_value(acc[i], rq.multiplier_of(oc), rq.zero_point, rq.qmin, rq.qmax));
    }
  }
}

#define OCTET_QCONV_ACC(TX, TW)                                                                    \
  template void q8_conv2d_nhwc_acc__ref<TX, TW>(const Conv2dShape&, const TX*, int32_t, const TW*, \
                                                std::span<const int32_t>, const int32_t*,          \
                                                int32_t*);
#define OCTET_QCONV(TX, TW, TY)                                                                    \
  template void q8_conv2d_nhwc__ref<TX, TW, TY>(const Conv2dShape&, const TX*, int32_t, const TW*, \
                                                std::span<const int32_t>, const int32_t*,          \
                                                const Requantization&, TY*);

#define OCTET_Q8_ACC OCTET_QCONV_ACC
#define OCTET_Q8_REQ OCTET_QCONV
#include "kernels/ref/q8_type_combinations.inc"
#undef OCTET_Q8_ACC
#undef OCTET_Q8_REQ

#undef OCTET_QCONV_ACC
#undef OCTET_QCONV

}  // namespace octet::kernels
