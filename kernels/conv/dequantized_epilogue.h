#pragma once
// The two element-wise passes around the FP32 depthwise conv on the dynamic path
// (Q8DequantizedDwConv): int8 / uint8 activations to float(x - zero_point) before it, and the
// float epilogue y = clamp(y * scale[c] + bias[c]) after it, in place. The epilogue's multiply
// and add round separately (never one FMA), and the clamp is std::min(std::max(v, lo), hi),
// NaN included, as dequantize_accumulators__ref: bit-exact with the scalar loops.
#include <cstddef>
#include <cstdint>

#include "kernels/isa.h"
#include "kernels/q8_type.h"

namespace octet::kernels {

// out[i] = float(int32(x[i]) - zero_point), x of type Q8 (is_signed: int8).
using Q8CenterFn = void (*)(size_t n, const void* x, bool is_signed, int32_t zero_point, float* out);
// For each of `pixels` rows of `channels` floats: y = min(max(y * scale[c] + bias[c], lo), hi);
// bias may be null (no add).
using F32ScaleBiasClampFn = void (*)(size_t pixels, size_t channels, float* y, const float* scale,
                                     const float* bias, float lo, float hi);

namespace avx2 {
void q8_center(size_t n, const void* x, bool is_signed, int32_t zero_point, float* out);
void f32_scale_bias_clamp(size_t pixels, size_t channels, float* y, const float* scale, const float* bias, float lo,
                          float hi);
}  // namespace avx2
namespace avx512 {
void q8_center(size_t n, const void* x, bool is_signed, int32_t zero_point, float* out);
void f32_scale_bias_clamp(size_t pixels, size_t channels, float* y, const float* scale, const float* bias, float lo,
                          float hi);
}  // namespace avx512

void q8_center__ref(size_t n, const void* x, bool is_signed, int32_t zero_point, float* out);
void f32_scale_bias_clamp__ref(size_t pixels, size_t channels, float* y, const float* scale, const float* bias,
                               float lo, float hi);

struct DequantizedEpilogueKernel {
  const char* name;
  Isa isa;
  Q8CenterFn center;
  F32ScaleBiasClampFn epilogue;
};
// Highest ISA first.
inline constexpr DequantizedEpilogueKernel kDequantizedEpilogueKernels[] = {
    {"dequantized_epilogue__avx512", Isa::avx512, avx512::q8_center, avx512::f32_scale_bias_clamp},
    {"dequantized_epilogue__avx2", Isa::avx2, avx2::q8_center, avx2::f32_scale_bias_clamp},
    {"dequantized_epilogue__ref", Isa::scalar, q8_center__ref, f32_scale_bias_clamp__ref},
};

// The best kernel at or below `isa` this CPU runs (the ref one at worst).
const DequantizedEpilogueKernel& choose_dequantized_epilogue(Isa isa);

}  // namespace octet::kernels
