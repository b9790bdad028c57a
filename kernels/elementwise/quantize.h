#pragma once
// QuantizeLinear per tensor, float -> u8 / s8, on SIMD: bit-exact with q8_quantize_linear__ref
// (kernels/ref/qlinear.h). Used for a quantized model's input, which runs once per image.
#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/isa.h"
#include "kernels/q8_type.h"

namespace octet::kernels {

using Q8QuantizeFn = void (*)(size_t n, const float* x, float scale, int32_t zero_point, int32_t qmin, int32_t qmax,
                              void* y);
namespace avx2 {
void q8_quantize(size_t n, const float* x, float scale, int32_t zero_point, int32_t qmin, int32_t qmax, void* y);
}
namespace avx512 {
void q8_quantize(size_t n, const float* x, float scale, int32_t zero_point, int32_t qmin, int32_t qmax, void* y);
}

struct Q8QuantizeKernel {
  const char* name;
  Isa isa;
  Q8QuantizeFn fn;
};
// Highest ISA first.
inline constexpr Q8QuantizeKernel kQ8QuantizeKernels[] = {
    {"q8_quantize__avx512", Isa::avx512, avx512::q8_quantize},
    {"q8_quantize__avx2", Isa::avx2, avx2::q8_quantize},
};

// The best kernel at or below `isa` that this CPU runs; nullptr: use the ref kernel.
const Q8QuantizeKernel* choose_q8_quantize(Isa isa);

// y[i] = saturate(round_half_even(x[i] / scale) + zero_point) as `type`.
void q8_quantize(const Q8QuantizeKernel& k, Q8 type, size_t n, const float* x, float scale, int32_t zero_point,
                 void* y);

}  // namespace octet::kernels
