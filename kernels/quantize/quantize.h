#pragma once
// QuantizeLinear per tensor, float -> u8 / s8, DequantizeLinear per tensor, u8 / s8 -> float,
// and DynamicQuantizeLinear (a range pass, then the same quantize pass) on SIMD: bit-exact with
// q8_quantize_linear__ref, q8_dequantize_linear__ref and qu8_dynamic_quantize_linear__ref
// (kernels/ref/qlinear.h).
#include <pthreadpool.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/isa.h"
#include "kernels/kernel_list.h"
#include "kernels/q8_type.h"
#include "kernels/ref/qlinear.h"

namespace octet::kernels {

using Q8QuantizeFn = void (*)(size_t n, const float* x, float scale, int32_t zero_point, int32_t qmin, int32_t qmax,
                              void* y);
// min / max of x[0..n) (NaN for both when any element is NaN), as f32_range__ref.
using F32RangeFn = void (*)(size_t n, const float* x, float* min, float* max);
// y[i] = float(x[i] - zero_point) * scale, x bytes as int8 when is_signed, else uint8.
using Q8DequantizeFn = void (*)(size_t n, const void* x, bool is_signed, float scale, int32_t zero_point, float* y);
// f32_fake_quantize__ref (kernels/ref/qlinear.h): the code never leaves the registers.
using F32FakeQuantizeFn = void (*)(size_t n, const float* x, float scale, int32_t zero_point, int32_t qmin,
                                   int32_t qmax, float* y);
// q8_affine_quantize__ref (kernels/ref/qlinear.h) in registers: no float leaves them.
using Q8AffineQuantizeFn = void (*)(size_t n, const void* x, const float* a, const float* b,
                                    const Q8AffineQuantize& p, void* y);
// Every templated level (kernels/template_levels.h) defines a quantize, a dequantize and a
// range microkernel, in namespace <level>, from kernels/quantize/quantize_level.inc.

#define OCTET_Q8_QUANTIZE_DECLARE(isa, ...)                                                                        \
  namespace isa {                                                                                              \
  void q8_quantize(size_t n, const float* x, float scale, int32_t zero_point, int32_t qmin, int32_t qmax, void* y); \
  void f32_range(size_t n, const float* x, float* min, float* max);                                            \
  void q8_dequantize(size_t n, const void* x, bool is_signed, float scale, int32_t zero_point, float* y);      \
  void q8_affine_quantize(size_t n, const void* x, const float* a, const float* b, const Q8AffineQuantize& p,   \
                          void* y);                                                                            \
  void f32_fake_quantize(size_t n, const float* x, float scale, int32_t zero_point, int32_t qmin, int32_t qmax, \
                         float* y);                                                                            \
  }
OCTET_TEMPLATE_LEVELS(OCTET_Q8_QUANTIZE_DECLARE, )
#undef OCTET_Q8_QUANTIZE_DECLARE

struct Q8QuantizeKernel {
  const char* name;
  Isa isa;
  Q8QuantizeFn fn;
  F32RangeFn range;
  Q8DequantizeFn dequantize;
  const char* dequantize_name;
  Q8AffineQuantizeFn affine;
  const char* affine_name;
  F32FakeQuantizeFn fake_quantize;
  const char* fake_quantize_name;
};
#define OCTET_Q8_QUANTIZE_ENTRY(isa, ...)\
  {"q8_quantize__" #isa, Isa::isa, isa::q8_quantize, isa::f32_range, isa::q8_dequantize, "q8_dequantize__" #isa, \
   isa::q8_affine_quantize, "q8_affine_quantize__" #isa, isa::f32_fake_quantize, "f32_fake_quantize__" #isa},
inline constexpr Q8QuantizeKernel kQ8QuantizeKernelRows[] = {OCTET_TEMPLATE_LEVELS(OCTET_Q8_QUANTIZE_ENTRY, )
                                                                 Q8QuantizeKernel{}};
inline constexpr std::span<const Q8QuantizeKernel> kQ8QuantizeKernels = rows_before_terminator(kQ8QuantizeKernelRows);
#undef OCTET_Q8_QUANTIZE_ENTRY

// The first kernel that runs here under the cap `isa`; nullptr: use the ref kernel.
const Q8QuantizeKernel* choose_q8_quantize(Isa isa);

// y[i] = saturate(round_half_even(x[i] / scale) + zero_point) as `type`.
void q8_quantize(const Q8QuantizeKernel& k, Q8 type, size_t n, const float* x, float scale, int32_t zero_point,
                 void* y);

// The range pass of DynamicQuantizeLinear on `k` (nullptr: f32_range__ref).
F32Range f32_range(const Q8QuantizeKernel* k, size_t n, const float* x);

// The same passes split over `pool` in pieces of kEltwiseMinPiece elements (a smaller tensor,
// or no pool: the calling thread). Quantize and dequantize are element-wise, so every split
// writes the same bytes; the range is folded from the pieces' ranges in piece order (min and
// max are exact, and NaN in any piece makes both NaN, as f32_range__ref).
void q8_quantize(const Q8QuantizeKernel& k, Q8 type, size_t n, const float* x, float scale, int32_t zero_point,
                 void* y, pthreadpool_t pool);
void q8_dequantize(const Q8QuantizeKernel& k, size_t n, const void* x, bool is_signed, float scale,
                   int32_t zero_point, float* y, pthreadpool_t pool);
F32Range f32_range(const Q8QuantizeKernel* k, size_t n, const float* x, pthreadpool_t pool);
// Quantize and dequantize on `k`, or on the reference kernels (q8_quantize_linear__ref,
// q8_dequantize_linear__ref, on the calling thread) where k is nullptr: a level with no row.
void q8_quantize(const Q8QuantizeKernel* k, Q8 type, size_t n, const float* x, float scale, int32_t zero_point,
                 void* y, pthreadpool_t pool);
void q8_dequantize(const Q8QuantizeKernel* k, size_t n, const void* x, bool is_signed, float scale,
                   int32_t zero_point, float* y, pthreadpool_t pool);

// QuantizeLinear then DequantizeLinear (f32_fake_quantize__ref) on k, split over `pool` like the
// passes above; k nullptr: the ref on the calling thread.
void f32_fake_quantize(const Q8QuantizeKernel* k, Q8 type, size_t n, const float* x, float scale, int32_t zero_point,
                       float* y, pthreadpool_t pool);

// DynamicQuantizeLinear: the range of x, then y = quantize(x) with the derived scale and zero
// point. A non-finite range (NaN or +-inf in x) is returned as seen and nothing is written.
struct DynamicQuantizeResult {
  F32Range range;
  DynamicQuantization q;
  bool finite = true;
};
DynamicQuantizeResult qu8_dynamic_quantize(const Q8QuantizeKernel* k, size_t n, const float* x, uint8_t* y);

}  // namespace octet::kernels
