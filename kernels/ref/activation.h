#pragma once
// Activation functions that can be fused into the epilogue of a kernel.
// Every kernel that takes an Activation applies it to each output element
// after bias, exactly as the standalone ONNX op would.
#include <algorithm>
#include <cmath>
#include <string_view>

#include "kernels/elementwise/activation_list.h"
#include "kernels/elementwise/erf_coefficients.h"

namespace octet::kernels {

// silu is x * sigmoid(x), the Sigmoid -> Mul pair of SiLU / Swish exports fused into one; gelu is
// x * 0.5 * (1 + erf(x / sqrt 2)) and gelu_tanh its tanh approximation 0.5 * x * (1 + tanh(sqrt(2 /
// pi) * (x + 0.044715 x^3))): ONNX's Gelu (opset 20), or the Div / Erf / Add / Mul / Mul chain torch
// writes before it (passes::fuse_gelu). The kinds after them are the rows of
// kernels/elementwise/activation_list.h, their attributes in alpha and beta as the rows say.
enum class ActKind {
  none, relu, clip, sigmoid, silu, gelu, gelu_tanh,
#define OCTET_ACT_KIND(KIND, ...) KIND,
  OCTET_F32_ACTIVATIONS(OCTET_ACT_KIND)
#undef OCTET_ACT_KIND
};

struct Activation {
  ActKind kind = ActKind::none;
  float min = 0.0f;    // clip lower bound
  float max = 0.0f;    // clip upper bound
  float alpha = 0.2f;  // a kernels/elementwise/activation_list.h row's first attribute (HardSigmoid's slope)
  float beta = 0.5f;   // its second (HardSigmoid's offset)
  // Then y * scale + shift, when scale_shift: a Mul and an Add by scalar constants after a conv
  // (HGNetV2's learnable affine, NF-Net's gains; passes::fuse_scalar_affine), two roundings as
  // the two ops make.
  bool scale_shift = false;
  float scale = 1.0f, shift = 0.0f;

  static Activation relu() { return {ActKind::relu}; }
  // ONNX's Clip is min(max(x, lo), hi): when lo > hi every value becomes hi, so lo is lowered to hi
  // (a kernel that clamps in either order then gives ONNX Runtime's answer).
  static Activation clip(float lo, float hi) { return {ActKind::clip, lo > hi ? hi : lo, hi}; }
  static Activation sigmoid() { return {ActKind::sigmoid}; }
  static Activation silu() { return {ActKind::silu}; }
  // One per row of kernels/elementwise/activation_list.h, its attributes' defaults as the arguments' defaults.
#define OCTET_ACT_FACTORY(KIND, OP, SINCE, KERNEL, A0, D0, A1, D1, ...) \
  static Activation KIND(float p0 = D0, float p1 = D1) { return {ActKind::KIND, 0, 0, p0, p1}; }
  OCTET_F32_ACTIVATIONS(OCTET_ACT_FACTORY)
#undef OCTET_ACT_FACTORY
  static Activation gelu() { return {ActKind::gelu}; }
  static Activation gelu_tanh() { return {ActKind::gelu_tanh}; }
};

// The rows of kernels/elementwise/activation_list.h as data, for the code that looks an activation up by
// its ONNX name or walks them all (the importer, the op registry, the catalogue, the tests).
struct ActivationRow {
  ActKind kind;
  const char* op;      // the ONNX op
  int since;           // its first opset
  const char* kernel;  // the vector kernel, without the __<level> suffix
  const char* attr[2];  // the attributes read into alpha and beta (nullptr: none)
  float dflt[2];        // and their defaults
  float rel, abs;       // the vector kernel's distance from apply(): rel |ref| + abs (0, 0: bit for bit)
};
#define OCTET_ACT_ROW(KIND, OP, SINCE, KERNEL, A0, D0, A1, D1, REL, ABS, FORMULA) \
  ActivationRow{ActKind::KIND, #OP, SINCE, #KERNEL, {A0, A1}, {D0, D1}, REL, ABS},
inline constexpr ActivationRow kActivationRows[] = {OCTET_F32_ACTIVATIONS(OCTET_ACT_ROW)};
#undef OCTET_ACT_ROW

// The row of `kind` or of the ONNX op `op`, or nullptr.
inline const ActivationRow* activation_row(ActKind kind) {
  for (const ActivationRow& r : kActivationRows)
    if (r.kind == kind) return &r;
  return nullptr;
}
inline const ActivationRow* activation_row(std::string_view op) {
  for (const ActivationRow& r : kActivationRows)
    if (op == r.op) return &r;
  return nullptr;
}

inline constexpr float kOneSixth = 1.0f / 6.0f;
inline constexpr float kSqrtHalf = 0.70710678118654752f;     // GELU's 1 / sqrt(2)
inline constexpr float kSqrtTwoOverPi = 0.79788456080286536f;  // GELU tanh form's sqrt(2 / pi)
inline constexpr float kGeluCubic = 0.044715f;

// The logistic function as ONNX Runtime computes Sigmoid on x86 (MLAS's FMA3 kernel, which it
// runs on every CPU with AVX2): x clamped to [-18, 18], a rational approximation p(x) / q(x)
// + 0.5 whose polynomials in x^2 are evaluated by fused multiply-adds, then max(0, .). Matching
// it bit for bit is what keeps a DynamicQuantizeLinear after a SiLU (YOLO, EfficientNet) on
// ORT's codes; within ~2 ulp of 1 / (1 + exp(-x)). NaN passes through.
namespace logistic {
inline constexpr float kLower = -18.0f, kUpper = 18.0f;
inline constexpr float kAlpha9 = 4.37031012579801e-11f, kAlpha7 = 1.15627324459942e-07f,
                       kAlpha5 = 6.08574864600143e-05f, kAlpha3 = 8.51377133304701e-03f,
                       kAlpha1 = 2.48287947061529e-01f;
inline constexpr float kBeta10 = 6.10247389755681e-13f, kBeta8 = 5.76102136993427e-09f,
                       kBeta6 = 6.29106785017040e-06f, kBeta4 = 1.70198817374094e-03f,
                       kBeta2 = 1.16817656904453e-01f, kBeta0 = 9.93151921023180e-01f;
}  // namespace logistic

inline float mlas_logistic(float x) {
  using namespace logistic;
  float v = x < kLower ? kLower : x;  // comparisons that let NaN through
  v = v > kUpper ? kUpper : v;
  const float x2 = v * v;
  float p = std::fma(x2, kAlpha9, kAlpha7);
  p = std::fma(x2, p, kAlpha5);
  p = std::fma(x2, p, kAlpha3);
  p = std::fma(x2, p, kAlpha1);
  float q = std::fma(x2, kBeta10, kBeta8);
  q = std::fma(x2, q, kBeta6);
  q = std::fma(x2, q, kBeta4);
  q = std::fma(x2, q, kBeta2);
  q = std::fma(x2, q, kBeta0);
  const float r = v * p / q + 0.5f;
  return r < 0.0f ? 0.0f : r;
}

// erf as ONNX Runtime computes it on x86, step for step (kernels/elementwise/erf_coefficients.h).
// NaN passes through.
inline float mlas_erf(float x) {
  using namespace erf_poly;
  const float a = std::fabs(x) > kErfClamp ? kErfClamp : std::fabs(x);  // NaN stays
  float y;
  if (!(a > kErfSplit)) {
    const float s = a * a;
    float p = kErfSmall[0];
    for (size_t k = 1; k < std::size(kErfSmall); ++k) p = std::fma(p, s, kErfSmall[k]);
    y = std::fma(p, a, a);
  } else {
    float b = kErfBig[0];
    for (size_t k = 1; k < std::size(kErfBig); ++k) b = std::fma(b, a, kErfBig[k]);
    b = std::fma(b, a, a);
    const float t = std::max(kErfExpLower, -b);
    const float n = std::fma(kErfLog2e, t, kErfRoundShift) - kErfRoundShift;
    float f = std::fma(n, kErfLn2Hi, t);
    f = std::fma(n, kErfLn2Lo, f);
    float e = kErfExp[0];
    for (size_t k = 1; k < std::size(kErfExp); ++k) e = std::fma(e, f, kErfExp[k]);
    y = 1.0f - std::ldexp(e, int(n));
  }
  return std::copysign(y, x);
}

inline float apply_kind(const Activation& act, float x) {
  switch (act.kind) {
    case ActKind::none: return x;
    // max(x, 0) written so that NaN (and -0) propagate like ONNX Runtime's Relu. The bound is
    // act.min (0 for relu), not a literal: clang 14 for AArch64 turns `x < 0.0f ? 0.0f : x` into
    // FMAX, which gives +0 for -0 (docs/arm.md).
    case ActKind::relu: return x < act.min ? act.min : x;
    case ActKind::clip: return x < act.min ? act.min : (x > act.max ? act.max : x);
    case ActKind::sigmoid: return mlas_logistic(x);
    // ORT's Sigmoid, then Mul: two roundings.
    case ActKind::silu: return x * mlas_logistic(x);
#define OCTET_ACT_APPLY(KIND, OP, SINCE, KERNEL, A0, D0, A1, D1, REL, ABS, FORMULA) \
  case ActKind::KIND: {                                                          \
    [[maybe_unused]] const float alpha = act.alpha, beta = act.beta;             \
    return FORMULA;                                                              \
  }
    OCTET_F32_ACTIVATIONS(OCTET_ACT_APPLY)
#undef OCTET_ACT_APPLY
    case ActKind::gelu: return x * 0.5f * (1.0f + mlas_erf(x * kSqrtHalf));
    case ActKind::gelu_tanh: return 0.5f * x * (1.0f + std::tanh(kSqrtTwoOverPi * (x + kGeluCubic * x * x * x)));
  }
  return x;
}

// y * scale + shift when the activation has them (Activation::scale_shift), else y.
inline float apply_scale_shift(const Activation& act, float y) {
  if (!act.scale_shift) return y;
  const float scaled = y * act.scale;  // rounded, as the Mul step rounds it
  return scaled + act.shift;
}

inline float apply(const Activation& act, float x) { return apply_scale_shift(act, apply_kind(act, x)); }

}  // namespace octet::kernels
