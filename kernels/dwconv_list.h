#pragma once
// Every depthwise-convolution microkernel (FP32 and INT8): the one list the drivers
// (kernels/conv/f32_dwconv.cc, q8_dwconv.cc), the tests (tests/simd/test_dwconv.cc) and the
// benchmark (bench/dwconv_bench.cc) iterate. Highest ISA first; a driver takes the first
// entry whose isa <= the requested level and that the CPU supports, and falls back to the
// scalar ref conv (kernels/ref/conv2d.h, qconv2d.h) when none fits.
//
// Layout: activations NHWC, vectorized over channels, `channel_tile` channels per vector.
// A microkernel entry has two functions:
//   row       a run of output pixels of one output row whose windows lie inside the input
//             horizontally: tap (ky, kx) of pixel p is at rows[ky] + p*pixel_step + kx*tap_step
//             (rows[ky] is the pad row when the tap row is outside the input)
//   indirect  output pixels whose windows touch the left / right padding: one pointer per
//             tap (taps[p*kernel_size + t], the pad row for taps in the padding)
// Packed weights, per block of `channel_tile` channels (the tail block zero-padded):
//   FP32: [bias][kh*kw taps][tile] floats
//   INT8: [bias'][kh*kw taps][multiplier][tile] 32-bit words; bias' = bias - x_zp*sum(w)
//         (int32), each weight in the low half of its int32 word with the high half zero (see
//         q8_dwconv__avx512.cc for why), the multiplier as float.
#include <cstddef>
#include <cstdint>

#include "kernels/isa.h"

namespace octet::kernels {

struct F32DwRowArgs {
  const float* const* rows;  // [kernel_h]
  size_t pixels;
  size_t channels;
  size_t pixel_step;  // floats between the windows of consecutive output pixels (stride_w * C)
  size_t tap_step;    // floats between horizontal taps (dilation_w * C)
  int kernel_h, kernel_w;
  const float* packed;
  float* y;  // pixel p at y + p * channels
  float min, max;  // output clamp (-inf, +inf for no activation)
};

struct F32DwIndirectArgs {
  const float* const* taps;  // [pixels][kernel_size]
  size_t pixels;
  size_t channels;
  int kernel_size;  // kernel_h * kernel_w
  const float* packed;
  float* y;
  float min, max;
};

using F32DwRowFn = void (*)(const F32DwRowArgs&);
using F32DwIndirectFn = void (*)(const F32DwIndirectArgs&);

struct F32DwConvKernel {
  const char* name;
  Isa isa;
  int channel_tile;
  F32DwRowFn row;
  F32DwIndirectFn indirect;
};

// INT8: bytes are u8 or s8 as x_signed / y_signed say.
struct Q8DwEpilogue {
  bool x_signed, y_signed;
  float lo, hi;        // clamp of the scaled accumulator: qmin - zp, qmax - zp
  int32_t zero_point;  // output zero point
};

struct Q8DwRowArgs {
  const uint8_t* const* rows;  // [kernel_h]
  size_t pixels;
  size_t channels;
  size_t pixel_step;  // bytes (stride_w * C)
  size_t tap_step;    // bytes (dilation_w * C)
  int kernel_h, kernel_w;
  const int32_t* packed;
  uint8_t* y;
  Q8DwEpilogue ep;
};

struct Q8DwIndirectArgs {
  const uint8_t* const* taps;  // [pixels][kernel_size]
  size_t pixels;
  size_t channels;
  int kernel_size;
  const int32_t* packed;
  uint8_t* y;
  Q8DwEpilogue ep;
};

using Q8DwRowFn = void (*)(const Q8DwRowArgs&);
using Q8DwIndirectFn = void (*)(const Q8DwIndirectArgs&);

struct Q8DwConvKernel {
  const char* name;
  Isa isa;
  int channel_tile;
  Q8DwRowFn row;
  Q8DwIndirectFn indirect;
};

// The microkernels (kernels/x86/*_dwconv__<isa>.cc), each in its ISA's namespace.
namespace avx512 {
void f32_dwconv_c16_row(const F32DwRowArgs& a);
void f32_dwconv_c16_indirect(const F32DwIndirectArgs& a);
void q8_dwconv_c16_row(const Q8DwRowArgs& a);
void q8_dwconv_c16_indirect(const Q8DwIndirectArgs& a);
}  // namespace avx512
namespace avx2 {
void f32_dwconv_c8_row(const F32DwRowArgs& a);
void f32_dwconv_c8_indirect(const F32DwIndirectArgs& a);
void q8_dwconv_c8_row(const Q8DwRowArgs& a);
void q8_dwconv_c8_indirect(const Q8DwIndirectArgs& a);
}  // namespace avx2

inline constexpr F32DwConvKernel kF32DwConvKernels[] = {
    {"f32_dwconv_c16__avx512", Isa::avx512, 16, avx512::f32_dwconv_c16_row,
     avx512::f32_dwconv_c16_indirect},
    {"f32_dwconv_c8__avx2", Isa::avx2, 8, avx2::f32_dwconv_c8_row, avx2::f32_dwconv_c8_indirect},
};

inline constexpr Q8DwConvKernel kQ8DwConvKernels[] = {
    {"q8_dwconv_c16__avx512_maddwd", Isa::avx512, 16, avx512::q8_dwconv_c16_row,
     avx512::q8_dwconv_c16_indirect},
    {"q8_dwconv_c8__avx2_maddwd", Isa::avx2, 8, avx2::q8_dwconv_c8_row, avx2::q8_dwconv_c8_indirect},
};

}  // namespace octet::kernels
