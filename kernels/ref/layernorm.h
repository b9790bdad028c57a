#pragma once
// LayerNormalization (opset 17) over `rows` contiguous rows of n values, the way ONNX Runtime's
// CPU kernel computes it (onnxruntime/core/providers/cpu/nn/layer_norm_impl.cc), so that a float
// LayerNormalization feeding a QuantizeLinear gives ORT's codes: per row, in float and in index
// order, sum += x and sum_sq += x * x (a multiply then an add, no FMA); mean = sum / n;
// std = sqrt(sum_sq / n - mean * mean + epsilon); y = (x - mean) / std * scale + bias (bias
// skipped, not added as 0, when absent); the optional outputs are mean and 1 / std.
//
// The one-pass variance loses precision when |mean| is large against the spread (catastrophic
// cancellation, NaN once the difference goes negative by more than epsilon); ORT has the same
// loss, and matching its bits was chosen over a more accurate two-pass formula (docs/kernels.md).
#include <cstddef>

namespace octet::kernels {

void f32_layernorm__ref(size_t rows, size_t n, const float* x, const float* scale, const float* bias, float epsilon,
                        float* y, float* mean, float* inv_std);

}  // namespace octet::kernels
