// Max- and average-pooling microkernels (kernels/pool_list.h), AArch64 Advanced SIMD: 4 floats
// or 16 bytes per vector, tails through small stack buffers (no read or write past the row).
// Max keeps the x86 kernels' rule best = (v > best) ? v : best, so a NaN never wins and -inf
// gives -FLT_MAX, as f32_maxpool2d_nhwc__ref; average sums in double and divides once, step for
// step the ref's arithmetic.
#include <arm_neon.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/pool_list.h"

namespace octet::kernels::neon {
namespace {

#include "kernels/arm/x86_minmax.inc"

inline float32x4_t load_f32(const float* p, size_t n) {
  if (n == 4) return vld1q_f32(p);
  float lanes[4] = {};
  std::memcpy(lanes, p, n * sizeof(float));
  return vld1q_f32(lanes);
}
inline void store_f32(float* p, float32x4_t v, size_t n) {
  if (n == 4) return vst1q_f32(p, v);
  float lanes[4];
  vst1q_f32(lanes, v);
  std::memcpy(p, lanes, n * sizeof(float));
}

template <class E>
void q8_maxpool(const PoolArgs<uint8_t>& a) {
  const uint8_t* const* taps = a.taps;
  uint8_t* y = a.y;
  const size_t C = a.channels;
  const uint8_t lowest = static_cast<uint8_t>(std::numeric_limits<E>::lowest());
  for (size_t p = 0; p < a.pixels; ++p, taps += a.kernel_size, y += C) {
    for (size_t c = 0; c < C; c += 16) {
      const size_t n = C - c < 16 ? C - c : 16;
      uint8x16_t best = vdupq_n_u8(lowest);
      for (size_t t = 0; t < a.kernel_size; ++t) {
        const uint8_t* x = pool_tap(a, taps[t]) + c;
        uint8x16_t v;
        if (n == 16) {
          v = vld1q_u8(x);
        } else {
          uint8_t lanes[16];
          std::memset(lanes, lowest, sizeof lanes);
          std::memcpy(lanes, x, n);
          v = vld1q_u8(lanes);
        }
        if constexpr (std::is_signed_v<E>)
          best = vreinterpretq_u8_s8(vmaxq_s8(vreinterpretq_s8_u8(v), vreinterpretq_s8_u8(best)));
        else
          best = vmaxq_u8(v, best);
      }
      if (n == 16) {
        vst1q_u8(y + c, best);
      } else {
        uint8_t lanes[16];
        vst1q_u8(lanes, best);
        std::memcpy(y + c, lanes, n);
      }
    }
  }
}

}  // namespace

void f32_maxpool(const PoolArgs<float>& a) {
  const float* const* taps = a.taps;
  float* y = a.y;
  const size_t C = a.channels;
  for (size_t p = 0; p < a.pixels; ++p, taps += a.kernel_size, y += C) {
    for (size_t c = 0; c < C; c += 4) {
      const size_t n = C - c < 4 ? C - c : 4;
      float32x4_t best = vdupq_n_f32(-FLT_MAX);
      for (size_t t = 0; t < a.kernel_size; ++t) {
        const float32x4_t v = load_f32(pool_tap(a, taps[t]) + c, n);
        best = max_ps(v, best);
      }
      store_f32(y + c, best, n);
    }
  }
}

void qu8_maxpool(const PoolArgs<uint8_t>& a) { q8_maxpool<uint8_t>(a); }
void qs8_maxpool(const PoolArgs<uint8_t>& a) { q8_maxpool<int8_t>(a); }

// Sums of the taps in double, widened from float (exact, like the ref's `sum += x`), divided by
// the pixel's divisor and rounded to float once.
void f32_avgpool(const PoolArgs<float>& a) {
  const float* const* taps = a.taps;
  float* y = a.y;
  const size_t C = a.channels;
  for (size_t p = 0; p < a.pixels; ++p, taps += a.kernel_size, y += C) {
    const float64x2_t divisor = vdupq_n_f64(a.divisors[p]);
    for (size_t c = 0; c < C; c += 4) {
      const size_t n = C - c < 4 ? C - c : 4;
      float64x2_t lo = vdupq_n_f64(0.0), hi = vdupq_n_f64(0.0);
      for (size_t t = 0; t < a.kernel_size; ++t) {
        const float32x4_t v = load_f32(pool_tap(a, taps[t]) + c, n);
        lo = vaddq_f64(lo, vcvt_f64_f32(vget_low_f32(v)));
        hi = vaddq_f64(hi, vcvt_high_f64_f32(v));
      }
      const float32x4_t mean =
          vcombine_f32(vcvt_f32_f64(vdivq_f64(lo, divisor)), vcvt_f32_f64(vdivq_f64(hi, divisor)));
      store_f32(y + c, mean, n);
    }
  }
}

#include "kernels/q8_avgpool_loop.inc"

}  // namespace octet::kernels::neon
