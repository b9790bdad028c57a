#pragma once
// Activation functions that can be fused into the epilogue of a kernel.
// Every kernel that takes an Activation applies it to each output element
// after bias, exactly as the standalone ONNX op would.
#include <algorithm>
#include <cmath>

namespace octet::kernels {

// silu is x * sigmoid(x), the Sigmoid -> Mul pair of SiLU / Swish exports fused into one.
// The kinds after silu are ONNX's parametric activations, alpha (and Selu's gamma in beta) as
// their attributes say; gelu is x * 0.5 * (1 + erf(x / sqrt 2)) and gelu_tanh its tanh
// approximation 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))): ONNX's Gelu (opset 20),
// or the Div / Erf / Add / Mul / Mul chain torch writes before it (passes::fuse_gelu).
enum class ActKind {
  none, relu, clip, sigmoid, hard_sigmoid, hard_swish, silu,
  leaky_relu, elu, selu, celu, softplus, thresholded_relu,
  erf, tanh, gelu, gelu_tanh
};

struct Activation {
  ActKind kind = ActKind::none;
  float min = 0.0f;    // clip lower bound
  float max = 0.0f;    // clip upper bound
  float alpha = 0.2f;  // hard_sigmoid slope
  float beta = 0.5f;   // hard_sigmoid offset

  static Activation relu() { return {ActKind::relu}; }
  // ONNX's Clip is min(max(x, lo), hi): when lo > hi every value becomes hi, so lo is lowered to hi
  // (a kernel that clamps in either order then gives ONNX Runtime's answer).
  static Activation clip(float lo, float hi) { return {ActKind::clip, lo > hi ? hi : lo, hi}; }
  static Activation sigmoid() { return {ActKind::sigmoid}; }
  static Activation hard_sigmoid(float a, float b) { return {ActKind::hard_sigmoid, 0, 0, a, b}; }
  static Activation hard_swish() { return {ActKind::hard_swish}; }
  static Activation silu() { return {ActKind::silu}; }
  static Activation leaky_relu(float a) { return {ActKind::leaky_relu, 0, 0, a, 0}; }
  static Activation elu(float a) { return {ActKind::elu, 0, 0, a, 0}; }
  static Activation selu(float a, float gamma) { return {ActKind::selu, 0, 0, a, gamma}; }
  static Activation celu(float a) { return {ActKind::celu, 0, 0, a, 0}; }
  static Activation softplus() { return {ActKind::softplus, 0, 0, 0, 0}; }
  static Activation thresholded_relu(float a) { return {ActKind::thresholded_relu, 0, 0, a, 0}; }
  static Activation erf() { return {ActKind::erf}; }
  static Activation tanh() { return {ActKind::tanh}; }
  static Activation gelu() { return {ActKind::gelu}; }
  static Activation gelu_tanh() { return {ActKind::gelu_tanh}; }
};

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

inline float apply(const Activation& act, float x) {
  switch (act.kind) {
    case ActKind::none: return x;
    // max(x, 0) written so that NaN (and -0) propagate like ONNX Runtime's Relu. The bound is
    // act.min (0 for relu), not a literal: clang 14 for AArch64 turns `x < 0.0f ? 0.0f : x` into
    // FMAX, which gives +0 for -0 (docs/arm.md).
    case ActKind::relu: return x < act.min ? act.min : x;
    case ActKind::clip: return x < act.min ? act.min : (x > act.max ? act.max : x);
    case ActKind::sigmoid: return mlas_logistic(x);
    case ActKind::hard_sigmoid: return std::clamp(act.alpha * x + act.beta, 0.0f, 1.0f);
    // As ONNX Runtime computes it, bit for bit: x * HardSigmoid(x) with alpha = 1/6 rounded to
    // float, two roundings. x / 6 (the spec's formula) differs in the last bit for ~15% of x.
    case ActKind::hard_swish: return x * std::clamp(x * kOneSixth + 0.5f, 0.0f, 1.0f);
    // ORT's Sigmoid, then Mul: two roundings.
    case ActKind::silu: return x * mlas_logistic(x);
    // As ONNX Runtime writes them (onnxruntime/core/providers/cpu/activation/activations.h).
    case ActKind::leaky_relu: return x < 0.0f ? x * act.alpha : x;
    case ActKind::elu: return x < 0.0f ? act.alpha * (std::exp(x) - 1.0f) : x;
    case ActKind::selu: return act.beta * (x > 0.0f || x != x ? x : act.alpha * (std::exp(x) - 1.0f));
    case ActKind::celu:
      if (x != x) return x;
      return std::max(0.0f, x) + std::min(0.0f, act.alpha * (std::exp(std::min(x / act.alpha, 0.0f)) - 1.0f));
    case ActKind::softplus: return (x > 0.0f ? x : 0.0f) + std::log1p(std::exp(-std::fabs(x)));
    case ActKind::thresholded_relu: return x > act.alpha ? x : 0.0f;
    case ActKind::erf: return std::erf(x);
    case ActKind::tanh: return std::tanh(x);
    case ActKind::gelu: return x * 0.5f * (1.0f + std::erf(x * kSqrtHalf));
    case ActKind::gelu_tanh: return 0.5f * x * (1.0f + std::tanh(kSqrtTwoOverPi * (x + kGeluCubic * x * x * x)));
  }
  return x;
}

}  // namespace octet::kernels
