#pragma once
// The FP32 element-wise activations that are one ONNX op each, on the F32ActUkernel signature
// (n, x, y, p0, p1): the one list everything about them is derived from. A row gives
//
//   KIND     the ActKind enumerator and the Activation factory's name (Activation::KIND(p0, p1))
//   OP       the ONNX op (ai.onnx), spelled as an identifier: its name is #OP and its microkernel
//            table kF32<OP>Ukernels (kernels/elementwise/eltwise_list.h)
//   SINCE    the first ONNX opset the importer accepts it at
//   KERNEL   the vector kernel's name: a function of that name written once over the level's Ops in
//            kernels/elementwise/eltwise_loops.inc or kernels/elementwise/f32_act_softmax_loops.inc, compiled for every
//            level of OCTET_TEMPLATE_LEVELS (AVX2, AVX-512, NEON) and named KERNEL__<level>
//   A0, D0   the attribute read into Activation::alpha (its name or nullptr) and its default
//   A1, D1   likewise into Activation::beta
//   REL, ABS how far the vector kernel may be from the scalar formula: |simd - ref| <= REL |ref|
//            + ABS (0, 0: bit for bit); tests/parity holds the op to 1e-5 of ONNX Runtime plus ABS
//   FORMULA  the scalar reference (kernels/ref/activation.h's apply): an expression in x, alpha and
//            beta, evaluated in float
//
// and from it: ActKind and the factories, apply() (kernels/ref/activation.h), the per-level
// declarations and kernel tables (kernels/elementwise/eltwise_list.h), the drivers' choice of kernel
// (kernels/elementwise/eltwise.cc), the ONNX op -> Activation mapping and the op registry
// (engine/ops/elementwise.cc), the importer's entry (loader/importers.cc), the catalogue's probe
// and Arm family (tools/catalogue/), and the tests (tests/simd/test_activation_list.cc: every
// level against the formula on random and adversarial values; tests/parity/
// test_parity_activation_list.cc: every level against ONNX Runtime).
//
// Relu and Clip (a clamp), Sigmoid (ORT's logistic, F32UnaryUkernel), SiLU (no ONNX op) and Gelu
// (one op, two kinds) are not rows: kernels/ref/activation.h writes them out.
#define OCTET_F32_ACTIVATIONS(X)                                                                           \
  X(hard_sigmoid, HardSigmoid, 1, f32_hsigmoid, "alpha", 0.2f, "beta", 0.5f, 0, 0,                          \
    std::clamp(alpha * x + beta, 0.0f, 1.0f))                                                              \
  /* As ONNX Runtime computes it, bit for bit: x * HardSigmoid(x) with alpha = 1/6 rounded to float, two   \
     roundings. x / 6 (the spec's formula) differs in the last bit for ~15% of x. */                       \
  X(hard_swish, HardSwish, 14, f32_hswish, nullptr, 0.0f, nullptr, 0.0f, 0, 0,                              \
    x * std::clamp(x * kOneSixth + 0.5f, 0.0f, 1.0f))                                                      \
  /* LeakyRelu to Celu as ONNX Runtime writes them (onnxruntime/core/providers/cpu/activation). */         \
  X(leaky_relu, LeakyRelu, 1, f32_leaky_relu, "alpha", 0.01f, nullptr, 0.0f, 0, 0,                          \
    x < 0.0f ? x * alpha : x)                                                                              \
  X(elu, Elu, 1, f32_elu, "alpha", 1.0f, nullptr, 0.0f, 4e-7f, 3e-7f,                                       \
    x < 0.0f ? alpha * (std::exp(x) - 1.0f) : x)                                                           \
  /* Selu's gamma is Activation::beta. */                                                                  \
  X(selu, Selu, 1, f32_selu, "alpha", 1.67326319217681884765625f, "gamma", 1.05070102214813232421875f,      \
    4e-7f, 5.3e-7f, beta * (x > 0.0f || x != x ? x : alpha * (std::exp(x) - 1.0f)))                        \
  X(celu, Celu, 12, f32_celu, "alpha", 1.0f, nullptr, 0.0f, 4e-7f, 3e-7f,                                   \
    x != x ? x                                                                                             \
           : std::max(0.0f, x) + std::min(0.0f, alpha * (std::exp(std::min(x / alpha, 0.0f)) - 1.0f)))     \
  /* Never overflows: exp of -|x| only. */                                                                 \
  X(softplus, Softplus, 1, f32_softplus, nullptr, 0.0f, nullptr, 0.0f, 1e-6f, 1e-38f,                       \
    (x > 0.0f ? x : 0.0f) + std::log1p(std::exp(-std::fabs(x))))                                           \
  X(thresholded_relu, ThresholdedRelu, 10, f32_thresholded_relu, "alpha", 1.0f, nullptr, 0.0f, 0, 0,        \
    x > alpha ? x : 0.0f)                                                                                  \
  X(erf, Erf, 9, f32_erf, nullptr, 0.0f, nullptr, 0.0f, 1e-6f, 1e-38f, mlas_erf(x))                          \
  X(tanh, Tanh, 1, f32_tanh, nullptr, 0.0f, nullptr, 0.0f, 1e-6f, 1e-38f, std::tanh(x))                     \
  /* x * tanh(softplus(x)) on Softplus's overflow-free form. tanh of it is exactly 1 from x ~ 9, so    \
     y = x for large x; -inf gives -inf * 0 = NaN, as ONNX's and ORT's expansion do. */                 \
  X(mish, Mish, 18, f32_mish, nullptr, 0.0f, nullptr, 0.0f, 1e-6f, 1e-38f,                                 \
    x * std::tanh((x > 0.0f ? x : 0.0f) + std::log1p(std::exp(-std::fabs(x)))))                          \
  /* Rounding to an integer, exact: "same" padding computed from the input's shape divides in float  \
     and rounds up (TF-ported EfficientNets). */                                                         \
  X(ceil, Ceil, 6, f32_ceil, nullptr, 0.0f, nullptr, 0.0f, 0, 0, std::ceil(x))                             \
  X(floor, Floor, 6, f32_floor, nullptr, 0.0f, nullptr, 0.0f, 0, 0, std::floor(x))                        \
  /* Half to even, as ONNX specifies (2.5 -> 2, -0.5 -> -0), under the default rounding mode. */           \
  X(round, Round, 11, f32_round, nullptr, 0.0f, nullptr, 0.0f, 0, 0, std::nearbyint(x))                    \
  /* One correctly rounded operation each, so every level gives the reference's bits. */                  \
  X(neg, Neg, 6, f32_neg, nullptr, 0.0f, nullptr, 0.0f, 0, 0, -x)                                          \
  X(abs, Abs, 6, f32_abs, nullptr, 0.0f, nullptr, 0.0f, 0, 0, std::fabs(x))                                \
  X(reciprocal, Reciprocal, 6, f32_reciprocal, nullptr, 0.0f, nullptr, 0.0f, 0, 0, 1.0f / x)              \
  X(sqrt, Sqrt, 6, f32_sqrt, nullptr, 0.0f, nullptr, 0.0f, 0, 0, std::sqrt(x))                           \
  /* The ONNX formula as written (ORT differs in the last bit on some x); softsign(inf) is NaN. */       \
  X(softsign, Softsign, 1, f32_softsign, nullptr, 0.0f, nullptr, 0.0f, 0, 0, x / (1.0f + std::fabs(x)))    \
  /* exp(-|x|), then its reciprocal for x > 0: within 1 ulp plus the subnormal spacing of exp(-|x|)    \
     relative to it (x near 88.7, where exp(x) nears FLT_MAX); subnormal results within 1e-38. */      \
  X(exp, Exp, 6, f32_exp, nullptr, 0.0f, nullptr, 0.0f, 1e-6f, 1e-38f, std::exp(x))                      \
  /* k ln2 + log(m) for x = m 2^k, m in [sqrt(1/2), sqrt(2)), log(m) by the atanh series of log1p. */     \
  X(log, Log, 6, f32_log, nullptr, 0.0f, nullptr, 0.0f, 1e-6f, 0, std::log(x))
