#pragma once
// Activation functions that can be fused into the epilogue of a kernel.
// Every kernel that takes an Activation applies it to each output element
// after bias, exactly as the standalone ONNX op would.
#include <algorithm>
#include <cmath>

namespace octet::kernels {

// silu is x * sigmoid(x), the Sigmoid -> Mul pair of SiLU / Swish exports fused into one.
// The kinds after silu are ONNX's parametric activations, alpha (and Selu's gamma in beta) as
// their attributes say.
enum class ActKind {
  none, relu, clip, sigmoid, hard_sigmoid, hard_swish, silu,
  leaky_relu, elu, selu, celu, softplus, thresholded_relu
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
};

inline constexpr float kOneSixth = 1.0f / 6.0f;

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
    // As ONNX Runtime writes them (onnxruntime/core/providers/cpu/activation/activations.h).
    case ActKind::leaky_relu: return x < 0.0f ? x * act.alpha : x;
    case ActKind::elu: return x < 0.0f ? act.alpha * (std::exp(x) - 1.0f) : x;
    case ActKind::selu: return act.beta * (x > 0.0f || x != x ? x : act.alpha * (std::exp(x) - 1.0f));
    case ActKind::celu:
      if (x != x) return x;
      return std::max(0.0f, x) + std::min(0.0f, act.alpha * (std::exp(std::min(x / act.alpha, 0.0f)) - 1.0f));
    case ActKind::softplus: return (x > 0.0f ? x : 0.0f) + std::log1p(std::exp(-std::fabs(x)));
    case ActKind::thresholded_relu: return x > act.alpha ? x : 0.0f;
  }
  return x;
}

}  // namespace octet::kernels
