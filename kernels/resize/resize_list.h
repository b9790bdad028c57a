#pragma once
// Every linear-resize microkernel (FP32, uint8, int8) and cubic one (FP32): the one list the driver
// (kernels/resize/resize.h), the tests (tests/simd/test_resize.cc) and the benchmark
// (bench/resize_bench.cc) iterate. Adding a kernel is one line in the table of its op.
//
// What a microkernel computes (NHWC, vectorized over channels): one output row of `pixels`
// pixels from two input rows, top and bottom. Output pixel p, channel c, with the four weights
// c00 = w0[p] * wy0, c01 = w1[p] * wy0, c10 = w0[p] * wy1, c11 = w1[p] * wy1 (rounded products):
//   y[p * channels + c] = ((c00 * top[x0[p] + c] + c01 * top[x1[p] + c]) + c10 * bottom[x0[p] + c])
//                         + c11 * bottom[x1[p] + c]
// each product and sum rounded on its own (no FMA), as resize_linear_nhwc__ref and ONNX Runtime
// compute it, so the results are bit-identical; 8-bit outputs are truncated toward zero.
// x0 / x1 are element offsets into a row (input pixel * channels).
// A cubic microkernel (FP32, NHWC) computes one output row from four input rows with four taps
// per pixel, as resize_cubic_nhwc__ref does (kernels/ref/resize.h), bit for bit:
//   r_i = (((0 + wx[4p] * rows[i][x[4p] + c]) + wx[4p+1] * rows[i][x[4p+1] + c]) + ...) + ...
//   y[p * channels + c] = (((0 + r_0 * wy[0] / wy_sum) + r_1 * wy[1] / wy_sum) + ...) + ...
// Nearest resize is a copy of whole pixels and rows (the driver's memcpy), with no microkernel.
#include <cstddef>
#include <cstdint>

#include "kernels/arch.h"
#include "kernels/elementwise/eltwise_list.h"
#include "kernels/isa.h"
#include "kernels/kernel_list.h"

namespace octet::kernels {

struct ResizeRowArgs {
  const void* top;
  const void* bottom;
  const int32_t* x0;
  const int32_t* x1;
  const float* w0;
  const float* w1;
  float wy0, wy1;
  size_t pixels, channels;
  void* y;
};

using ResizeLinearUkernel = void (*)(const ResizeRowArgs&);

struct ResizeCubicRowArgs {
  const float* rows[4];
  const int32_t* x;   // 4 per pixel: element offsets into a row (input pixel * channels)
  const float* wx;    // 4 per pixel: column coefficient / column sum
  float wy[4];        // the row's coefficients
  float wy_sum;       // and their divisor
  size_t pixels, channels;
  float* y;
};

using ResizeCubicUkernel = void (*)(const ResizeCubicRowArgs&);
using ResizeCubicEntry = EltwiseUkernel<ResizeCubicUkernel>;

// A list entry: name, isa, fn (the element-wise lists' entry type).
using ResizeUkernel = EltwiseUkernel<ResizeLinearUkernel>;

// ---- Every templated level (kernels/template_levels.h) defines every resize microkernel
// below, in namespace <level>, from kernels/resize/resize_level.inc.

#define OCTET_RESIZE_DECLARE(isa, unused)        \
  namespace isa {                                \
  void f32_resize_linear(const ResizeRowArgs&);  \
  void qu8_resize_linear(const ResizeRowArgs&);  \
  void qs8_resize_linear(const ResizeRowArgs&);  \
  void f32_resize_cubic(const ResizeCubicRowArgs&); \
  }
OCTET_TEMPLATE_LEVELS(OCTET_RESIZE_DECLARE, )
#undef OCTET_RESIZE_DECLARE

#define OCTET_RESIZE_ENTRY(isa, OP) {#OP "__" #isa, Isa::isa, &isa::OP},
#define OCTET_RESIZE_TABLE(NAME, OP, ENTRY)                                                          \
  inline constexpr ENTRY NAME##Rows[] = {OCTET_TEMPLATE_LEVELS(OCTET_RESIZE_ENTRY, OP) ENTRY{}}; \
  inline constexpr std::span<const ENTRY> NAME = rows_before_terminator(NAME##Rows);

OCTET_RESIZE_TABLE(kF32ResizeLinearUkernels, f32_resize_linear, ResizeUkernel)
OCTET_RESIZE_TABLE(kQu8ResizeLinearUkernels, qu8_resize_linear, ResizeUkernel)
OCTET_RESIZE_TABLE(kQs8ResizeLinearUkernels, qs8_resize_linear, ResizeUkernel)
OCTET_RESIZE_TABLE(kF32ResizeCubicUkernels, f32_resize_cubic, ResizeCubicEntry)

#undef OCTET_RESIZE_TABLE
#undef OCTET_RESIZE_ENTRY

}  // namespace octet::kernels
