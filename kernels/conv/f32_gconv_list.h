#pragma once
// Every FP32 narrow-group convolution microkernel (one line each in f32_gconv_list.inc): the one
// list the driver (kernels/conv/f32_narrow_group_conv.cc), the tests
// (tests/simd/test_f32_gconv.cc) and the benchmarks iterate, in preference order.
//
// A grouped conv whose groups have G = 2 or 4 input and G output channels, NHWC. A vector of
// `channel_tile` output channels covers channel_tile / G whole groups, and the input channels of
// those groups are the same channel indices: per tap the kernel loads the pixel's input vector
// at those channels and, for each c < G, broadcasts element c within each group of G lanes
// (Ops::dup_in_groups) and multiplies it with the packed weights of input channel c. No FMA is
// spent on padding columns, where the GEMM tiles pad each group to a whole tile of columns.
//
// Two functions per row:
//   indirect  any output pixels: one pointer per pixel and tap (F32GconvArgs)
//   row       a run of output pixels of one output row whose windows lie inside the input
//             horizontally, 3-wide kernels at stride 1 or 2 and dilation 1 (f32_gconv_row_fits):
//             the window of pixel p at kernel row ky starts at rows[ky] + p * stride_w * C. Each
//             input column's G broadcasts then serve every pixel whose window holds it (3 at
//             stride 1), where the indirect function broadcasts once per FMA.
// Packed weights, per block of channel_tile output channels (the tail block zero-padded):
//   [bias][kernel_h * kernel_w taps][G input channels of the group][channel_tile] floats
// lane l of block b holding output channel o = b * channel_tile + l: w[o][c][tap].
#include <cstddef>
#include <span>

#include "kernels/isa.h"
#include "kernels/kernel_list.h"
#include "kernels/ref/conv2d.h"

namespace octet::kernels {

struct F32GconvArgs {
  // [pixels][kernel_size]: tap t of pixel p at taps[p * kernel_size + t], `zero` where the tap
  // falls into the padding. Every other pointer is moved by x_offset floats (the image).
  const float* const* taps;
  size_t pixels;
  size_t channels;  // input = output channels, a multiple of G
  int kernel_size;
  size_t x_offset;
  const float* zero;  // >= channels zeros
  const float* packed;
  float* y;               // pixel p at y + p * channels
  const float* residual;  // nullptr, or y's layout: added before the clamp
  float min, max;         // output clamp (-inf, +inf for none)
};

struct F32GconvRowArgs {
  const float* const* rows;  // [kernel_h], the pad row (zeros) where the kernel row is outside
  size_t pixels;
  size_t channels;
  int kernel_h, stride_w;
  const float* packed;
  float* y;               // pixel p at y + p * channels
  const float* residual;  // nullptr, or y's layout: added before the clamp
  float min, max;
};

// Output pixels per register tile of both functions (fewer at the end of a run).
inline constexpr int kF32GconvPixels = 8;

inline bool f32_gconv_row_fits(const Conv2dShape& s) {
  return s.kernel_w == 3 && s.dilation_w == 1 && (s.stride_w == 1 || s.stride_w == 2);
}

using F32GconvFn = void (*)(const F32GconvArgs&);
using F32GconvRowFn = void (*)(const F32GconvRowArgs&);

struct F32GconvKernel {
  const char* name;
  Isa isa;
  int channel_tile;
  int group_width;  // G
  F32GconvFn indirect;
  F32GconvRowFn row;
};

#define OCTET_F32_GCONV(isa, tile, g) \
  namespace isa {                     \
  void f32_gconv_g##g##c##tile(const F32GconvArgs& a); \
  void f32_gconv_g##g##c##tile##_row(const F32GconvRowArgs& a); \
  }
#include "kernels/conv/f32_gconv_list.inc"
#undef OCTET_F32_GCONV

inline constexpr F32GconvKernel kF32GconvKernelRows[] = {
#define OCTET_F32_GCONV(isa, tile, g) \
  {"f32_gconv_g" #g "c" #tile "__" #isa, Isa::isa, tile, g, isa::f32_gconv_g##g##c##tile, \
   isa::f32_gconv_g##g##c##tile##_row},
#include "kernels/conv/f32_gconv_list.inc"
#undef OCTET_F32_GCONV
    F32GconvKernel{}};
inline constexpr std::span<const F32GconvKernel> kF32GconvKernels = rows_before_terminator(kF32GconvKernelRows);

}  // namespace octet::kernels
