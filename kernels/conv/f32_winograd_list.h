#pragma once
// The Winograd F(2x2, 3x3) transform microkernels (FP32, NHWC, vectorized over channels): the
// one list the driver (kernels/conv/f32_winograd.cc), the tests (tests/simd/test_f32_winograd.cc)
// and the benchmark (bench/f32_winograd_bench.cc) iterate, one row each in
// kernels/conv/f32_winograd_list.inc. The 16
// element-wise products between the transforms are GEMMs on kernels/gemm/f32_gemm_list.h.
//
// With d a 4x4 input tile, g a 3x3 filter, and xi = 4*i + j the index of one of the 16
// transformed positions:
//   V = B^T d B (input),  U = G g G^T (weights, in the driver),  Y = A^T M A (output, 2x2)
//   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
//   G   = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]
//   A^T = [1 1 1 0; 0 1 -1 -1]
// where M[xi] = sum over input channels of V[xi] * U[xi] (the GEMMs).
#include <cstddef>
#include <span>

#include "kernels/gemm/f32_gemm_list.h"
#include "kernels/arch.h"
#include "kernels/isa.h"
#include "kernels/kernel_list.h"

namespace octet::kernels {

// pixels: 16 pointers to the channels of the 4x4 input tile, row-major (a pointer to a row of
// zeros where the tile covers padding). Writes V[xi][c] to v + xi * v_stride + c.
using F32WinogradInputUkernel = void (*)(size_t channels, const float* const* pixels, float* v,
                                         size_t v_stride);
// Reads M[xi][c] at m + xi * m_stride + c and writes clamp(bias + Y) for the rows x cols
// (1 or 2 each) valid pixels of the 2x2 output tile: pixel (r, q) at y + r * y_row_stride +
// q * y_pixel_stride (channels, or more in a slice of a wider map). bias: `channels` floats
// (never nullptr).
using F32WinogradOutputUkernel = void (*)(size_t channels, const float* m, size_t m_stride,
                                          const float* bias, float* y, size_t y_row_stride,
                                          size_t y_pixel_stride, size_t rows, size_t cols,
                                          const F32MinMax& clamp);

struct F32WinogradKernel {
  const char* name;  // "f32_winograd_2x2_3x3__avx512"
  Isa isa;
  Features features;
  int channel_tile;  // channels per vector
  F32WinogradInputUkernel input;
  F32WinogradOutputUkernel output;
};

#define OCTET_F32_WINOGRAD(level, tile)                                                                      \
  namespace level {                                                                                        \
  void f32_winograd_2x2_3x3_input(size_t channels, const float* const* pixels, float* v, size_t v_stride); \
  void f32_winograd_2x2_3x3_output(size_t channels, const float* m, size_t m_stride, const float* bias,   \
                                   float* y, size_t y_row_stride, size_t y_pixel_stride, size_t rows,    \
                                   size_t cols, const F32MinMax& clamp);                                 \
  }
#include "kernels/conv/f32_winograd_list.inc"
#undef OCTET_F32_WINOGRAD

inline constexpr F32WinogradKernel kF32WinogradKernelRows[] = {
#define OCTET_F32_WINOGRAD(level, tile)                                                                \
  {"f32_winograd_2x2_3x3__" #level, Isa::level, OCTET_LEVEL_FEATURES(level), tile,                      \
   &level::f32_winograd_2x2_3x3_input, &level::f32_winograd_2x2_3x3_output},
#include "kernels/conv/f32_winograd_list.inc"
#undef OCTET_F32_WINOGRAD
    F32WinogradKernel{}};
inline constexpr std::span<const F32WinogradKernel> kF32WinogradKernels =
    rows_before_terminator(kF32WinogradKernelRows);

inline std::span<const F32WinogradKernel> f32_winograd_kernels() { return kF32WinogradKernels; }

}  // namespace octet::kernels
