#pragma once
// Softmax and LogSoftmax as ONNX Runtime computes them on x86 (MLAS), step for step, so that a
// float Softmax feeding a QuantizeLinear or DynamicQuantizeLinear (YOLOv8's DFL head, ResNeSt's
// split attention) gives ORT's codes. Per line of `len` values (an axis that is not the last one
// is transposed to be the last one first, which only moves data):
//   max (exact in any order); e_k = exp(x_k - max) by the exp of MLAS's exp-and-sum kernel
//   (below); the sum in `width` lanes, lane j adding e_j, e_{j+width}, ... in order, then folded
//   as the kernel's horizontal adds do; Softmax y_k = e_k * (1 / sum), LogSoftmax
//   y_k = (x_k - max) - logf(sum).
// `width` is that kernel's: 8 for the AVX2 / FMA3 kernel, 16 for the AVX-512F one, which ORT
// picks wherever the CPU has AVX-512F (ort_softmax_width(), kernels/elementwise/softmax.h). The
// two also differ in exp's underflow: FMA3 clamps the argument at -88.37626 and builds 2^m in
// the exponent field, so m = -127 gives 0; AVX-512F clamps at -103.97208 and scales with
// vscalefps, rounding into the subnormals. For width <= 16 lines (the DFL head's 16 bins) both
// sum alike.
#include <cmath>
#include <cstddef>

namespace octet::kernels::mlas_exp {

inline constexpr float kLowerRange = -103.97208f;        // 0xc2cff1b5 (the AVX-512F clamp)
inline constexpr float kLowerRangeSumExp = -88.37626f;   // 0xc2b0c0a5 (the FMA3 clamp)
inline constexpr float kRoundingBias = 12582912.0f;      // 1.5 * 2^23: b - bias is round(t / ln 2)
inline constexpr float kLog2Reciprocal = 1.44269502f;    // 0x3fb8aa3b
inline constexpr float kLog2High = -6.93145752e-1f;      // 0xbf317200
inline constexpr float kLog2Low = -1.42860677e-6f;       // 0xb5bfbe8e
inline constexpr float kPoly[5] = {0x1.694p-10f, 0x1.125edcp-7f, 0x1.555b5ap-5f, 0x1.55545p-3f, 0x1.fffff6p-2f};

inline float lower_range(int width) { return width == 16 ? kLowerRange : kLowerRangeSumExp; }

// exp(t), t = x - max <= 0 (or NaN), as the exp-and-sum kernel of `width` lanes computes it.
inline float exp_for_sum(float t, int width) {
  if (std::isnan(t)) return t;
  const float lower = lower_range(width);
  t = lower > t ? lower : t;
  const float b = std::fma(t, kLog2Reciprocal, kRoundingBias);
  const float m = b - kRoundingBias;
  float r = std::fma(m, kLog2High, t);
  r = std::fma(m, kLog2Low, r);
  float p = std::fma(kPoly[0], r, kPoly[1]);
  for (int i = 2; i < 5; ++i) p = std::fma(p, r, kPoly[i]);
  p = std::fma(p, r, 1.0f);
  p = std::fma(p, r, 1.0f);
  const int n = static_cast<int>(m);
  if (width != 16 && n < -126) return 0.0f;  // FMA3: a zero exponent field
  return std::ldexp(p, n);                     // p * 2^n rounded once, as vscalefps
}

// The kernel's horizontal adds over its `width` lane sums s[0..width): FMA3
// ((s0+s1)+(s2+s3))+((s4+s5)+(s6+s7)); AVX-512F first b_j = s_{j+8} + s_j, then the same.
inline float fold_lanes(const float* s, int width) {
  float b[8];
  for (int j = 0; j < 8; ++j) b[j] = width == 16 ? s[j + 8] + s[j] : s[j];
  return ((b[0] + b[1]) + (b[2] + b[3])) + ((b[4] + b[5]) + (b[6] + b[7]));
}

}  // namespace octet::kernels::mlas_exp

namespace octet::kernels {

// One line of `len` values `stride` floats apart, Softmax (log false) or LogSoftmax, in ORT's
// arithmetic for a kernel of `width` lanes (8 or 16). y may be x.
void f32_softmax_mlas__ref(size_t len, size_t stride, const float* x, float* y, bool log, int width);

}  // namespace octet::kernels
