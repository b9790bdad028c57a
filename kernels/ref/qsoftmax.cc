#include "kernels/ref/fp_contract_off.h"  // every float step rounds as written

#include "kernels/ref/qsoftmax.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace octet::kernels {
namespace {

// ORT's static_cast<int32_t> of the rounded quotient, defined for every float: a one-element row
// with a fine output scale makes e * floor(1 / y_scale) / sum overflow to inf, where C++'s cast
// is undefined and the hardware's answer is what ORT returns: x86's cvttss2si gives INT32_MIN
// for anything outside int32 and NaN, AArch64's fcvtzs saturates (NaN: 0). The SIMD kernels'
// conversions behave the same way, and so does the wrapping add of the zero point after it.
int32_t target_float_to_int32(float v) {
  constexpr float kTwo31 = 2147483648.0f;
  if (v >= -kTwo31 && v < kTwo31) return static_cast<int32_t>(v);
#if defined(__aarch64__)
  if (std::isnan(v)) return 0;
  return v < 0 ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int32_t>::max();
#else
  return std::numeric_limits<int32_t>::min();
#endif
}

}  // namespace

QSoftmaxTable qsoftmax_table(float x_scale, size_t reduce_len, bool is_signed) {
  // The logarithm is taken in float (logf), as ORT's build does: in double, the shift of a
  // 10-class head moves one output of the MLPerf ResNet8's CIFAR subset by 1 LSB.
  const float largest = std::numeric_limits<float>::max() / static_cast<float>(reduce_len);
  const double shift = std::max(0.0, static_cast<double>(std::log(largest)) - 5.0) / static_cast<double>(x_scale);
  QSoftmaxTable table{};
  for (int i = 0; i < 256; ++i) {
    const double e = std::exp((static_cast<double>(i) - 255.0 + shift) * static_cast<double>(x_scale));
    const uint8_t code = static_cast<uint8_t>(is_signed ? i - 128 : i);
    table[code] = static_cast<float>(e);
  }
  return table;
}

template <typename T>
void q8_softmax__ref(size_t outer, size_t d, size_t inner, const T* x, const QSoftmaxTable& table, float y_scale,
                     int32_t y_zero_point, T* y) {
  const float y_steps = std::floor(1.0f / y_scale);
  for (size_t o = 0; o < outer; ++o) {
    for (size_t in = 0; in < inner; ++in) {
      const T* xr = x + o * d * inner + in;
      T* yr = y + o * d * inner + in;
      T xmax = xr[0];
      for (size_t k = 1; k < d; ++k) xmax = std::max(xmax, xr[k * inner]);
      auto entry = [&](T v) {
        if constexpr (std::is_same_v<T, uint8_t>) return table[255 - xmax + v];
        else return table[static_cast<uint8_t>(127 - xmax + v)];
      };
      float sum = 0.0f;
      for (size_t k = 0; k < d; ++k) sum += entry(xr[k * inner]);
      for (size_t k = 0; k < d; ++k) {
        // The zero point is added modulo 2^32, as ORT's int32 addition wraps on the hardware.
        const int32_t q = static_cast<int32_t>(
            static_cast<uint32_t>(target_float_to_int32(std::nearbyint((entry(xr[k * inner]) * y_steps) / sum))) +
            static_cast<uint32_t>(y_zero_point));
        if constexpr (std::is_same_v<T, uint8_t>) {
          yr[k * inner] = static_cast<uint8_t>(std::min(q, 255));
        } else {
          yr[k * inner] = q > 255 ? static_cast<int8_t>(static_cast<uint8_t>(255)) : static_cast<int8_t>(static_cast<uint8_t>(q));
        }
      }
    }
  }
}

template void q8_softmax__ref<uint8_t>(size_t, size_t, size_t, const uint8_t*, const QSoftmaxTable&, float, int32_t,
                                       uint8_t*);
template void q8_softmax__ref<int8_t>(size_t, size_t, size_t, const int8_t*, const QSoftmaxTable&, float, int32_t,
                                      int8_t*);

}  // namespace octet::kernels
