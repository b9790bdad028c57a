// Element-wise and global-pooling microkernels, AArch64 Advanced SIMD, 4 lanes of float32 /
// int32. Tails go through small stack buffers, so no element outside [0, n) is read or written.
//
// Each kernel repeats the x86 kernels' steps (kernels/x86/eltwise__avx2.cc) one for one, so
// every path gives the same bits: contraction is off for this file (a multiply then an add stay
// two roundings; the FMAs of QLinearAdd's recipe are written out), the clamps use the x86
// operand rule on NaN through explicit compares (FMAX / FMIN would propagate a NaN where
// maxps / minps return their second operand), and rounding to integers is to nearest even.
#include "kernels/ref/fp_contract_off.h"

#include <arm_neon.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/elementwise/erf_coefficients.h"
#include "kernels/eltwise_list.h"
#include "kernels/ref/activation.h"  // kOneSixth, GELU's constants

namespace octet::kernels::neon {
namespace {

#include "kernels/arm/x86_minmax.inc"


inline float32x4_t load_tail(const float* p, size_t n) {
  float lanes[4] = {};
  std::memcpy(lanes, p, n * sizeof(float));
  return vld1q_f32(lanes);
}
inline void store_tail(float* p, float32x4_t v, size_t n) {
  float lanes[4];
  vst1q_f32(lanes, v);
  std::memcpy(p, lanes, n * sizeof(float));
}

template <class F>
void f32_map(size_t n, const float* x, float* y, F f) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, f(vld1q_f32(x + i)));
  if (i < n) store_tail(y + i, f(load_tail(x + i, n - i)), n - i);
}

template <class Op>
void f32_binary(size_t rows, size_t cols, const float* a, size_t a_row_stride, const float* b, size_t b_row_stride,
                float* y, Op op) {
  for (size_t r = 0; r < rows; ++r, a += a_row_stride, b += b_row_stride, y += cols) {
    size_t c = 0;
    for (; c + 4 <= cols; c += 4) vst1q_f32(y + c, op(vld1q_f32(a + c), vld1q_f32(b + c)));
    if (c < cols) store_tail(y + c, op(load_tail(a + c, cols - c), load_tail(b + c, cols - c)), cols - c);
  }
}

// exp(z) for z <= 0, NaN passing through: the x86 kernels' method (n = round(z / ln 2), a
// two-part ln 2 reduction, a degree-7 polynomial, 2^n as two exact power-of-two factors).
float32x4_t exp_nonpositive(float32x4_t z) {
  z = max_ps(vdupq_n_f32(-104.0f), z);
  const float32x4_t n = vrndnq_f32(vmulq_f32(z, vdupq_n_f32(1.44269504f)));
  float32x4_t r = vfmaq_f32(z, n, vdupq_n_f32(-0.693145751953125f));
  r = vfmaq_f32(r, n, vdupq_n_f32(-1.428606820e-6f));
  float32x4_t p = vdupq_n_f32(1.0f / 5040.0f);
  p = vfmaq_f32(vdupq_n_f32(1.0f / 720.0f), p, r);
  p = vfmaq_f32(vdupq_n_f32(1.0f / 120.0f), p, r);
  p = vfmaq_f32(vdupq_n_f32(1.0f / 24.0f), p, r);
  p = vfmaq_f32(vdupq_n_f32(1.0f / 6.0f), p, r);
  p = vfmaq_f32(vdupq_n_f32(0.5f), p, r);
  p = vfmaq_f32(vdupq_n_f32(1.0f), p, r);
  p = vfmaq_f32(vdupq_n_f32(1.0f), p, r);
  const int32x4_t ni = vcvtnq_s32_f32(n);  // NaN gives 0 here; the select below returns the NaN
  const int32x4_t n1 = vshrq_n_s32(ni, 1);
  const int32x4_t n2 = vsubq_s32(ni, n1);
  const float32x4_t f1 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n1, vdupq_n_s32(127)), 23));
  const float32x4_t f2 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n2, vdupq_n_s32(127)), 23));
  const float32x4_t e = vmulq_f32(vmulq_f32(p, f1), f2);
  return vbslq_f32(vceqq_f32(z, z), e, z);
}

// sigmoid(x) as ONNX Runtime computes it on x86 (mlas_logistic of kernels/ref/activation.h),
// step for step, with x86's min / max (NaN passes) and fused multiply-adds: bit-identical to
// the reference and to ORT there (ORT's own Arm path rounds differently).
float32x4_t sigmoid(float32x4_t x) {
  namespace c = logistic;
  const float32x4_t v = min_ps(vdupq_n_f32(c::kUpper), max_ps(vdupq_n_f32(c::kLower), x));
  const float32x4_t x2 = vmulq_f32(v, v);
  float32x4_t p = vfmaq_f32(vdupq_n_f32(c::kAlpha7), x2, vdupq_n_f32(c::kAlpha9));
  for (float a : {c::kAlpha5, c::kAlpha3, c::kAlpha1}) p = vfmaq_f32(vdupq_n_f32(a), x2, p);
  float32x4_t q = vfmaq_f32(vdupq_n_f32(c::kBeta8), x2, vdupq_n_f32(c::kBeta10));
  for (float b : {c::kBeta6, c::kBeta4, c::kBeta2, c::kBeta0}) q = vfmaq_f32(vdupq_n_f32(b), x2, q);
  const float32x4_t r = vaddq_f32(vdivq_f32(vmulq_f32(v, p), q), vdupq_n_f32(0.5f));
  return max_ps(vdupq_n_f32(0.0f), r);
}

template <size_t K>
inline float32x4_t horner(float32x4_t t, const float (&c)[K]) {
  float32x4_t p = vdupq_n_f32(c[K - 1]);
  for (size_t i = K - 1; i-- > 0;) p = vfmaq_f32(vdupq_n_f32(c[i]), p, t);
  return p;
}

inline float32x4_t copy_sign(float32x4_t magnitude, float32x4_t sign) {
  return vbslq_f32(vdupq_n_u32(0x80000000u), sign, magnitude);
}

// The x86 kernels' erf and tanh (kernels/x86/eltwise_loops.inc), step for step.
float32x4_t erf_v(float32x4_t x) {
  namespace ep = erf_poly;
  const float32x4_t a = min_ps(vdupq_n_f32(ep::kErfClamp), vabsq_f32(x));
  const float32x4_t small = vmulq_f32(a, horner(vmulq_f32(a, a), ep::kSmall));
  const float32x4_t u = vsubq_f32(max_ps(vdupq_n_f32(ep::kErfSplit), a), vdupq_n_f32(ep::kErfCenter));
  const float32x4_t large = vsubq_f32(vdupq_n_f32(1.0f), exp_nonpositive(horner(u, ep::kLarge)));
  return copy_sign(vbslq_f32(vcltq_f32(a, vdupq_n_f32(ep::kErfSplit)), small, large), x);
}

float32x4_t tanh_v(float32x4_t x) {
  namespace ep = erf_poly;
  const float32x4_t a = vabsq_f32(x);
  const float32x4_t small = vmulq_f32(a, horner(vmulq_f32(a, a), ep::kTanhTaylor));
  const float32x4_t e = exp_nonpositive(vmulq_f32(a, vdupq_n_f32(-2.0f)));
  const float32x4_t one = vdupq_n_f32(1.0f);
  const float32x4_t large = vdivq_f32(vsubq_f32(one, e), vaddq_f32(one, e));
  return copy_sign(vbslq_f32(vcltq_f32(a, vdupq_n_f32(ep::kTanhSplit)), small, large), x);
}

// ---- INT8 ----

template <class T>
constexpr bool is_unsigned() {
  return static_cast<T>(-1) > 0;
}

// 8 bytes -> two int32x4.
template <class T>
inline void widen8(const T* p, int32x4_t& lo, int32x4_t& hi) {
  if constexpr (is_unsigned<T>()) {
    const uint16x8_t w = vmovl_u8(vld1_u8(reinterpret_cast<const uint8_t*>(p)));
    lo = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(w)));
    hi = vreinterpretq_s32_u32(vmovl_u16(vget_high_u16(w)));
  } else {
    const int16x8_t w = vmovl_s8(vld1_s8(reinterpret_cast<const int8_t*>(p)));
    lo = vmovl_s16(vget_low_s16(w));
    hi = vmovl_s16(vget_high_s16(w));
  }
}

// Two int32x4 already inside T's range -> 8 bytes (the low byte of each lane is the value).
inline uint8x8_t narrow8(int32x4_t lo, int32x4_t hi) {
  return vmovn_u16(vcombine_u16(vmovn_u32(vreinterpretq_u32_s32(lo)), vmovn_u32(vreinterpretq_u32_s32(hi))));
}

// cvtps2dq(min(max(v, lo), hi)) in the x86 operand order.
inline int32x4_t clamp_round(float32x4_t v, float32x4_t lo, float32x4_t hi) {
  return vcvtnq_s32_f32(min_ps(max_ps(v, lo), hi));
}

template <class T, class Op>
void q8_binary(size_t rows, size_t cols, const void* a_bytes, size_t a_row_stride, const void* b_bytes,
               size_t b_row_stride, void* y_bytes, Op op) {
  const T* a = static_cast<const T*>(a_bytes);
  const T* b = static_cast<const T*>(b_bytes);
  T* y = static_cast<T*>(y_bytes);
  auto step8 = [&](const T* pa, const T* pb, T* py) {
    int32x4_t a0, a1, b0, b1;
    widen8(pa, a0, a1);
    widen8(pb, b0, b1);
    const int32x4_t y0 = op(vcvtq_f32_s32(a0), vcvtq_f32_s32(b0));
    const int32x4_t y1 = op(vcvtq_f32_s32(a1), vcvtq_f32_s32(b1));
    vst1_u8(reinterpret_cast<uint8_t*>(py), narrow8(y0, y1));
  };
  for (size_t r = 0; r < rows; ++r, a += a_row_stride, b += b_row_stride, y += cols) {
    size_t c = 0;
    for (; c + 8 <= cols; c += 8) step8(a + c, b + c, y + c);
    if (c < cols) {
      T ta[8] = {}, tb[8] = {}, ty[8];
      std::memcpy(ta, a + c, cols - c);
      std::memcpy(tb, b + c, cols - c);
      step8(ta, tb, ty);
      std::memcpy(y + c, ty, cols - c);
    }
  }
}

template <class T>
void q8_add(size_t rows, size_t cols, const void* a, size_t as, const void* b, size_t bs, void* y,
            const Q8AddParams& p) {
  const float32x4_t ra = vdupq_n_f32(p.ra), rb = vdupq_n_f32(p.rb), k = vdupq_n_f32(p.k);
  const float32x4_t lo = vdupq_n_f32(p.lo), hi = vdupq_n_f32(p.hi);
  q8_binary<T>(rows, cols, a, as, b, bs, y, [&](float32x4_t qa, float32x4_t qb) {
    const float32x4_t t = vfmaq_f32(k, qb, rb);
    return clamp_round(vfmaq_f32(t, qa, ra), lo, hi);
  });
}

template <class T>
void q8_mul(size_t rows, size_t cols, const void* a, size_t as, const void* b, size_t bs, void* y,
            const Q8MulParams& p) {
  const float32x4_t za = vdupq_n_f32(static_cast<float>(p.a_zero_point));
  const float32x4_t zb = vdupq_n_f32(static_cast<float>(p.b_zero_point));
  const float32x4_t r = vdupq_n_f32(p.r), zy = vdupq_n_f32(p.y_zero_point);
  const float32x4_t lo = vdupq_n_f32(p.lo), hi = vdupq_n_f32(p.hi);
  q8_binary<T>(rows, cols, a, as, b, bs, y, [&](float32x4_t qa, float32x4_t qb) {
    const float32x4_t product = vmulq_f32(vsubq_f32(qa, za), vsubq_f32(qb, zb));
    return clamp_round(vaddq_f32(vmulq_f32(product, r), zy), lo, hi);
  });
}

template <class T>
void q8_gap(size_t hw, size_t channels, const void* x_bytes, void* y_bytes, const Q8GapParams& p) {
  const T* x = static_cast<const T*>(x_bytes);
  T* y = static_cast<T*>(y_bytes);
  const float32x4_t m = vdupq_n_f32(p.multiplier), lo = vdupq_n_f32(p.lo), hi = vdupq_n_f32(p.hi);
  const int32x4_t zy = vdupq_n_s32(p.y_zero_point);
  for (size_t c = 0; c < channels; c += 8) {
    const size_t width = channels - c >= 8 ? 8 : channels - c;
    int32x4_t s0 = vdupq_n_s32(p.bias), s1 = vdupq_n_s32(p.bias);
    for (size_t q = 0; q < hw; ++q) {
      const T* src = x + q * channels + c;
      T buf[8] = {};
      if (width < 8) {
        std::memcpy(buf, src, width);
        src = buf;
      }
      int32x4_t l, h;
      widen8(src, l, h);
      s0 = vaddq_s32(s0, l);
      s1 = vaddq_s32(s1, h);
    }
    const int32x4_t v0 = vaddq_s32(clamp_round(vmulq_f32(vcvtq_f32_s32(s0), m), lo, hi), zy);
    const int32x4_t v1 = vaddq_s32(clamp_round(vmulq_f32(vcvtq_f32_s32(s1), m), lo, hi), zy);
    uint8_t out[8];
    vst1_u8(out, narrow8(v0, v1));
    std::memcpy(y + c, out, width);
  }
}

}  // namespace

void f32_add(size_t rows, size_t cols, const float* a, size_t as, const float* b, size_t bs, float* y) {
  f32_binary(rows, cols, a, as, b, bs, y, [](float32x4_t u, float32x4_t v) { return vaddq_f32(u, v); });
}

void f32_mul(size_t rows, size_t cols, const float* a, size_t as, const float* b, size_t bs, float* y) {
  f32_binary(rows, cols, a, as, b, bs, y, [](float32x4_t u, float32x4_t v) { return vmulq_f32(u, v); });
}

void f32_sub(size_t rows, size_t cols, const float* a, size_t as, const float* b, size_t bs, float* y) {
  f32_binary(rows, cols, a, as, b, bs, y, [](float32x4_t u, float32x4_t v) { return vsubq_f32(u, v); });
}

void f32_div(size_t rows, size_t cols, const float* a, size_t as, const float* b, size_t bs, float* y) {
  f32_binary(rows, cols, a, as, b, bs, y, [](float32x4_t u, float32x4_t v) { return vdivq_f32(u, v); });
}

// y = min(hi, max(lo, x + r)): a conv's fused residual Add and its Relu / Clip in one pass.
void f32_add_clamp(size_t n, const float* x, const float* r, float* y, float lo_value, float hi_value) {
  const float32x4_t lo = vdupq_n_f32(lo_value), hi = vdupq_n_f32(hi_value);
  f32_binary(1, n, x, 0, r, 0, y, [&](float32x4_t u, float32x4_t v) { return min_ps(hi, max_ps(lo, vaddq_f32(u, v))); });
}

// min_ps(hi, max_ps(lo, x)) returns x when x is NaN, as the ref's `x < lo ? lo : x` does.
void f32_clamp(size_t n, const float* x, float* y, float lo_value, float hi_value) {
  const float32x4_t lo = vdupq_n_f32(lo_value), hi = vdupq_n_f32(hi_value);
  f32_map(n, x, y, [&](float32x4_t v) { return min_ps(hi, max_ps(lo, v)); });
}

// Each step as the ref computes it (kernels/ref/activation.h): hard_swish x * clamp(x * (1/6) +
// 0.5, 0, 1) and hard_sigmoid clamp(alpha * x + beta, 0, 1), each with two roundings (no FMA),
// silu x * sigmoid(x).
void f32_hswish(size_t n, const float* x, float* y, float, float) {
  const float32x4_t sixth = vdupq_n_f32(kOneSixth), half = vdupq_n_f32(0.5f);
  const float32x4_t zero = vdupq_n_f32(0.0f), one = vdupq_n_f32(1.0f);
  f32_map(n, x, y, [&](float32x4_t v) {
    const float32x4_t g = min_ps(one, max_ps(zero, vaddq_f32(vmulq_f32(v, sixth), half)));
    return vmulq_f32(v, g);
  });
}

void f32_hsigmoid(size_t n, const float* x, float* y, float alpha, float beta) {
  const float32x4_t a = vdupq_n_f32(alpha), b = vdupq_n_f32(beta);
  const float32x4_t zero = vdupq_n_f32(0.0f), one = vdupq_n_f32(1.0f);
  f32_map(n, x, y, [&](float32x4_t v) { return min_ps(one, max_ps(zero, vaddq_f32(vmulq_f32(a, v), b))); });
}

void f32_sigmoid(size_t n, const float* x, float* y) { f32_map(n, x, y, [](float32x4_t v) { return sigmoid(v); }); }

void f32_silu(size_t n, const float* x, float* y, float, float) {
  f32_map(n, x, y, [](float32x4_t v) { return vmulq_f32(v, sigmoid(v)); });
}

void f32_erf(size_t n, const float* x, float* y, float, float) { f32_map(n, x, y, erf_v); }

void f32_tanh(size_t n, const float* x, float* y, float, float) { f32_map(n, x, y, tanh_v); }

void f32_gelu(size_t n, const float* x, float* y, float, float) {
  f32_map(n, x, y, [](float32x4_t v) {
    const float32x4_t half_x = vmulq_f32(v, vdupq_n_f32(0.5f));
    return vmulq_f32(half_x, vaddq_f32(vdupq_n_f32(1.0f), erf_v(vmulq_f32(v, vdupq_n_f32(kSqrtHalf)))));
  });
}

void f32_gelu_tanh(size_t n, const float* x, float* y, float, float) {
  f32_map(n, x, y, [](float32x4_t v) {
    const float32x4_t cube = vmulq_f32(vmulq_f32(v, v), v);
    const float32x4_t inner = vaddq_f32(v, vmulq_f32(vdupq_n_f32(kGeluCubic), cube));
    const float32x4_t t = tanh_v(vmulq_f32(vdupq_n_f32(kSqrtTwoOverPi), inner));
    return vmulq_f32(vmulq_f32(v, vdupq_n_f32(0.5f)), vaddq_f32(vdupq_n_f32(1.0f), t));
  });
}

// The x86 kernel's method (kernels/x86/eltwise_loops.inc): four rows at once, one per lane,
// each summed in index order (ORT's order, bit for bit), then each row normalised along itself.
void f32_layernorm(size_t rows, size_t n, const float* x, const float* scale, const float* bias, float epsilon,
                   float* y, float* mean, float* inv_std) {
  const float32x4_t count = vdupq_n_f32(static_cast<float>(n)), eps = vdupq_n_f32(epsilon);
  for (size_t r0 = 0; r0 < rows; r0 += 4) {
    const size_t lanes = rows - r0 < 4 ? rows - r0 : 4;
    const float* xr = x + r0 * n;
    // Rows past the last one read row 0 of the group again (their lanes are dropped).
    const float* p0 = xr;
    const float* p1 = xr + (lanes > 1 ? n : 0);
    const float* p2 = xr + (lanes > 2 ? 2 * n : 0);
    const float* p3 = xr + (lanes > 3 ? 3 * n : 0);
    float32x4_t sum = vdupq_n_f32(0.0f), sum_sq = sum;
    for (size_t h = 0; h < n; ++h) {
      float32x4_t v = vld1q_dup_f32(p0 + h);
      v = vld1q_lane_f32(p1 + h, v, 1);
      v = vld1q_lane_f32(p2 + h, v, 2);
      v = vld1q_lane_f32(p3 + h, v, 3);
      sum = vaddq_f32(sum, v);
      sum_sq = vaddq_f32(sum_sq, vmulq_f32(v, v));
    }
    const float32x4_t mu = vdivq_f32(sum, count);
    const float32x4_t sd = vsqrtq_f32(vaddq_f32(vsubq_f32(vdivq_f32(sum_sq, count), vmulq_f32(mu, mu)), eps));
    float mu_lanes[4], sd_lanes[4], inv_lanes[4];
    vst1q_f32(mu_lanes, mu);
    vst1q_f32(sd_lanes, sd);
    vst1q_f32(inv_lanes, vdivq_f32(vdupq_n_f32(1.0f), sd));
    for (size_t i = 0; i < lanes; ++i) {
      if (mean) mean[r0 + i] = mu_lanes[i];
      if (inv_std) inv_std[r0 + i] = inv_lanes[i];
      const float32x4_t mv = vdupq_n_f32(mu_lanes[i]), sv = vdupq_n_f32(sd_lanes[i]);
      const float* xi = xr + i * n;
      float* yi = y + (r0 + i) * n;
      auto norm = [&](float32x4_t v, float32x4_t g) { return vmulq_f32(vdivq_f32(vsubq_f32(v, mv), sv), g); };
      size_t c = 0;
      for (; c + 4 <= n; c += 4) {
        float32x4_t v = norm(vld1q_f32(xi + c), vld1q_f32(scale + c));
        if (bias) v = vaddq_f32(v, vld1q_f32(bias + c));
        vst1q_f32(yi + c, v);
      }
      if (c < n) {
        float32x4_t v = norm(load_tail(xi + c, n - c), load_tail(scale + c, n - c));
        if (bias) v = vaddq_f32(v, load_tail(bias + c, n - c));
        store_tail(yi + c, v, n - c);
      }
    }
  }
}

// The x86 kernels' summation order: four running sums over rows q = 0, 1, 2, 3 (mod 4), the
// rest on the first, then (s0 + s1) + (s2 + s3), divided by the count.
void f32_gap(size_t hw, size_t channels, const float* x, float* y) {
  const float32x4_t count = vdupq_n_f32(static_cast<float>(hw));
  for (size_t c = 0; c < channels; c += 4) {
    const size_t width = channels - c >= 4 ? 4 : channels - c;
    auto load = [&](size_t q) {
      const float* p = x + q * channels + c;
      return width == 4 ? vld1q_f32(p) : load_tail(p, width);
    };
    float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0, s2 = s0, s3 = s0;
    size_t q = 0;
    for (; q + 4 <= hw; q += 4) {
      s0 = vaddq_f32(s0, load(q));
      s1 = vaddq_f32(s1, load(q + 1));
      s2 = vaddq_f32(s2, load(q + 2));
      s3 = vaddq_f32(s3, load(q + 3));
    }
    for (; q < hw; ++q) s0 = vaddq_f32(s0, load(q));
    const float32x4_t mean = vdivq_f32(vaddq_f32(vaddq_f32(s0, s1), vaddq_f32(s2, s3)), count);
    if (width == 4) vst1q_f32(y + c, mean);
    else store_tail(y + c, mean, width);
  }
}

void qu8_add(size_t rows, size_t cols, const void* a, size_t as, const void* b, size_t bs, void* y,
             const Q8AddParams& p) {
  q8_add<uint8_t>(rows, cols, a, as, b, bs, y, p);
}
void qs8_add(size_t rows, size_t cols, const void* a, size_t as, const void* b, size_t bs, void* y,
             const Q8AddParams& p) {
  q8_add<int8_t>(rows, cols, a, as, b, bs, y, p);
}
void qu8_mul(size_t rows, size_t cols, const void* a, size_t as, const void* b, size_t bs, void* y,
             const Q8MulParams& p) {
  q8_mul<uint8_t>(rows, cols, a, as, b, bs, y, p);
}
void qs8_mul(size_t rows, size_t cols, const void* a, size_t as, const void* b, size_t bs, void* y,
             const Q8MulParams& p) {
  q8_mul<int8_t>(rows, cols, a, as, b, bs, y, p);
}
void qu8_gap(size_t hw, size_t channels, const void* x, void* y, const Q8GapParams& p) {
  q8_gap<uint8_t>(hw, channels, x, y, p);
}
void qs8_gap(size_t hw, size_t channels, const void* x, void* y, const Q8GapParams& p) {
  q8_gap<int8_t>(hw, channels, x, y, p);
}

// The interface kernels/f32_act_softmax_loops.inc asks of an ISA file (the x86 files' Ops).
namespace {
struct Ops {
  using Vec = float32x4_t;
  static constexpr int kLanes = 4;
  static Vec load(const float* p) { return vld1q_f32(p); }
  static void store(float* p, Vec v) { vst1q_f32(p, v); }
  static Vec set1(float v) { return vdupq_n_f32(v); }
  static Vec zero() { return vdupq_n_f32(0.0f); }
  static Vec add(Vec a, Vec b) { return vaddq_f32(a, b); }
  static Vec sub(Vec a, Vec b) { return vsubq_f32(a, b); }
  static Vec mul(Vec a, Vec b) { return vmulq_f32(a, b); }
  static Vec div(Vec a, Vec b) { return vdivq_f32(a, b); }
  static Vec fmadd(Vec a, Vec b, Vec c) { return vfmaq_f32(c, a, b); }
  static Vec min(Vec a, Vec b) { return min_ps(a, b); }
  static Vec max(Vec a, Vec b) { return max_ps(a, b); }
  static Vec neg_abs(Vec v) {
    return vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(v), vdupq_n_u32(0x80000000u)));
  }
  static Vec select_negative(Vec x, Vec a, Vec b) { return vbslq_f32(vcltq_f32(x, vdupq_n_f32(0.0f)), a, b); }
  static Vec select_gt(Vec a, Vec b, Vec x, Vec y) { return vbslq_f32(vcgtq_f32(a, b), x, y); }
  static Vec select_ge(Vec a, Vec b, Vec x, Vec y) { return vbslq_f32(vcgeq_f32(a, b), x, y); }
};

template <int N>
inline void exp_nonpositive(float32x4_t (&z)[N]) {
  for (int i = 0; i < N; ++i) z[i] = exp_nonpositive(z[i]);
}
}  // namespace

#include "kernels/f32_act_softmax_loops.inc"

}  // namespace octet::kernels::neon
