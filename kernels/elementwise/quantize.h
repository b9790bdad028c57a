#pragma once
// QuantizeLinear per tensor, float -> u8 / s8, and DynamicQuantizeLinear (a range pass, then
// the same quantize pass) on SIMD: bit-exact with q8_quantize_linear__ref and
// qu8_dynamic_quantize_linear__ref (kernels/ref/qlinear.h).
#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/isa.h"
#include "kernels/q8_type.h"
#include "kernels/ref/qlinear.h"

namespace octet::kernels {

using Q8QuantizeFn = void (*)(size_t n, const float* x, float scale, int32_t zero_point, int32_t qmin, int32_t qmax,
                              void* y);
// min / max of x[0..n) (NaN for both when any element is NaN), as f32_range__ref.
using F32RangeFn = void (*)(size_t n, const float* x, float* min, float* max);
namespace avx2 {
void q8_quantize(size_t n, const float* x, float scale, int32_t zero_point, int32_t qmin, int32_t qmax, void* y);
void f32_range(size_t n, const float* x, float* min, float* max);
}
namespace avx512 {
void q8_quantize(size_t n, const float* x, float scale, int32_t zero_point, int32_t qmin, int32_t qmax, void* y);
void f32_range(size_t n, const float* x, float* min, float* max);
}

struct Q8QuantizeKernel {
  const char* name;
  Isa isa;
  Q8QuantizeFn fn;
  F32RangeFn range;
};
// Highest ISA first.
inline constexpr Q8QuantizeKernel kQ8QuantizeKernels[] = {
    {"q8_quantize__avx512", Isa::avx512, avx512::q8_quantize, avx512::f32_range},
    {"q8_quantize__avx2", Isa::avx2, avx2::q8_quantize, avx2::f32_range},
};

// The best kernel at or below `isa` that this CPU runs; nullptr: use the ref kernel.
const Q8QuantizeKernel* choose_q8_quantize(Isa isa);

// y[i] = saturate(round_half_even(x[i] / scale) + zero_point) as `type`.
void q8_quantize(const Q8QuantizeKernel& k, Q8 type, size_t n, const float* x, float scale, int32_t zero_point,
                 void* y);

// The range pass of DynamicQuantizeLinear on `k` (nullptr: f32_range__ref).
F32Range f32_range(const Q8QuantizeKernel* k, size_t n, const float* x);

// DynamicQuantizeLinear: the range of x, then y = quantize(x) with the derived scale and zero
// point. A non-finite range (NaN or +-inf in x) is returned as seen and nothing is written.
struct DynamicQuantizeResult {
  F32Range range;
  DynamicQuantization q;
  bool finite = true;
};
DynamicQuantizeResult qu8_dynamic_quantize(const Q8QuantizeKernel* k, size_t n, const float* x, uint8_t* y);

}  // namespace octet::kernels
