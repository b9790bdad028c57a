#pragma once
// LayerNormalization (opset 17) over `rows` contiguous rows of n values, the way ONNX Runtime
// 1.30's CPU kernel computes it on x86, so that a float LayerNormalization feeding a
// (Dynamic)QuantizeLinear gives ORT's codes. Pinned by probing the runtime on rows of every
// length 1-20 and 23-103 (tests/parity/test_parity_layernorm.cc keeps discriminating ones):
//
// n >= 8: MLAS's AVX2 kernel (ORT's LayerNormF32Kernel on every x86 CPU with AVX2):
//   mean = float(dsum / n), dsum in double: 4 lanes, lane k adding x[k], x[k+4], ... over the
//     first n / 4 * 4 values, folded (l0 + l2) + (l1 + l3), then the rest in order;
//   var: d = x - mean in float, 8 lanes, lane k = fma(d, d, lane) over x[k], x[k+8], ... of the
//     first n / 8 * 8 values, folded r_k = v_k + v_{k+4}, (r0 + r2) + (r1 + r3); then the tail
//     as GCC compiled its scalar loop: when 4 or more remain, 4 products rounded and added in
//     order (the loop's vectorised body), the last 1-3 as var = fma(d, d, var);
//   inv = 1 / sqrtf(var / n + epsilon); y = fma((x - mean) * inv, scale, bias), or
//     (x - mean) * inv * scale without bias.
// n < 8 (MLAS declines such rows): ORT's scalar loop, Welford's update in float:
//   delta = x - mean; mean += delta / (h + 1); M2 += delta * (x - mean);
//   sd = sqrt(M2 / n + epsilon); y = (x - mean) / sd * scale (+ bias); inv = 1 / sd.
// The optional outputs are that mean and inv. ORT on Arm has no MLAS kernel and runs the scalar
// loop for every length; octet follows the x86 arithmetic at every level, as for Softmax.
#include <cstddef>

namespace octet::kernels {

void f32_layernorm__ref(size_t rows, size_t n, const float* x, const float* scale, const float* bias, float epsilon,
                        float* y, float* mean, float* inv_std);

}  // namespace octet::kernels
