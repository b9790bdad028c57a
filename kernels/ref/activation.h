#pragma once
// Activation functions that can be fused into the epilogue of a kernel.
// Every kernel that takes an Activation applies it to each output element
// after bias, exactly as the standalone ONNX op would.
#include <algorithm>
#include <cmath>

namespace octet::kernels {

// silu is x * sigmoid(x), the Sigmoid -> Mul pair of SiLU / Swish exports fused into one.
// gelu is x * 0.5 * (1 + erf(x / sqrt 2)) and gelu_tanh its tanh approximation
// 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))): ONNX's Gelu (opset 20), or the
// Div / Erf / Add / Mul / Mul chain torch writes before it (passes::fuse_gelu).
enum class ActKind { none, relu, clip, sigmoid, hard_sigmoid, hard_swish, silu, erf, tanh, gelu, gelu_tanh };

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
  static Activation erf() { return {ActKind::erf}; }
  static Activation tanh() { return {ActKind::tanh}; }
  static Activation gelu() { return {ActKind::gelu}; }
  static Activation gelu_tanh() { return {ActKind::gelu_tanh}; }
};

inline constexpr float kOneSixth = 1.0f / 6.0f;
inline constexpr float kSqrtHalf = 0.70710678118654752f;     // GELU's 1 / sqrt(2)
inline constexpr float kSqrtTwoOverPi = 0.79788456080286536f;  // GELU tanh form's sqrt(2 / pi)
inline constexpr float kGeluCubic = 0.044715f;

inline float apply(const Activation& act, float x) {
  switch (act.kind) {
    case ActKind::none: return x;
    // max(x, 0) written so that NaN (and -0) propagate like ONNX Runtime's Relu. The bound is
    // act.min (0 for relu), not a literal: clang 14 for AArch64 turns `x < 0.0f ? 0.0f : x` into
    // FMAX, which gives +0 for -0 (docs/arm.md).
    case ActKind::relu: return x < act.min ? act.min : x;
    case ActKind::clip: return x < act.min ? act.min : (x > act.max ? act.max : x);
    case ActKind::sigmoid: return 1.0f / (1.0f + std::exp(-x));
    case ActKind::hard_sigmoid: return std::clamp(act.alpha * x + act.beta, 0.0f, 1.0f);
    // As ONNX Runtime computes it, bit for bit: x * HardSigmoid(x) with alpha = 1/6 rounded to
    // float, two roundings. x / 6 (the spec's formula) differs in the last bit for ~15% of x.
    case ActKind::hard_swish: return x * std::clamp(x * kOneSixth + 0.5f, 0.0f, 1.0f);
    case ActKind::silu: return x * (1.0f / (1.0f + std::exp(-x)));
    case ActKind::erf: return std::erf(x);
    case ActKind::tanh: return std::tanh(x);
    case ActKind::gelu: return x * 0.5f * (1.0f + std::erf(x * kSqrtHalf));
    case ActKind::gelu_tanh: return 0.5f * x * (1.0f + std::tanh(kSqrtTwoOverPi * (x + kGeluCubic * x * x * x)));
  }
  return x;
}

}  // namespace octet::kernels
