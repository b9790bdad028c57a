#pragma once
// Every INT8 GEMM / IGEMM microkernel, one row each: the one list the drivers (Q8Conv,
// Q8Gemm), the tests and the benchmarks iterate.
//
// A microkernel computes an MR x nc tile (nc <= NR) of
//   y[i][c] = requantize(bias'[c] + sum over taps t, k of a[t][i][k] * w[t][k][c])
// reading each output row's input through an indirection array (IGEMM): for tap t, row i,
// a[t * MR + i] points at kc input bytes. Plain GEMM is the case ks = 1.
//
// Activations are u8 or s8. s8 kernels flip the sign bit of every activation byte on load
// (x ^ 0x80 = x + 128, now u8) so that vpdpbusd (u8 x s8) and the zero-extending int16
// path both apply; the packing folds the zero point into the bias as
//   bias'[c] = bias[c] - zp_u * sum_k w[k][c],   zp_u = x_zero_point (+ 128 for s8)
// so the inner loop never sees a zero point (padding taps read a row of x_zero_point bytes,
// which contributes exactly zp_u * w and cancels).
//
// Every microkernel has a float-output twin (`fn_f32`, the dynamic quantization path, where
// the zero point and scale are known only at run time): the accumulators start at
// args.acc_init[c] (the caller's run-time fold, the packed bias is ignored) and the tile
// stores y[i][c] = clamp(float(acc) * scale[c] + out_bias[c], lo, hi) as float: a plain
// multiply then a plain add (never fused), the order ONNX Runtime's Cast -> Mul -> Add uses.
//
// Packed weights, one block per NR output channels (the channel tail is zero-padded):
//   int32 bias'[NR], float multiplier[NR],
//   then for each tap, for each group of KR k's: w[NR][KR] (int8, or int16 when w_bytes == 2)
// K is rounded up to KR with zero weights. The K tail (kc % KR bytes) is read with one full
// KR-byte load when that stays inside [.., a_end) or the row is `zero` (allocated kc + KR
// bytes), else byte by byte: the kernels never read past the activations.
#include <cstddef>
#include <cstdint>

#include "kernels/isa.h"
#include "kernels/q8_type.h"

namespace octet::kernels {

struct Q8IgemmArgs {
  size_t mr;  // valid rows (1..MR); the indirection and y rows beyond mr repeat the last one
  size_t nc;  // valid columns (1..NR)
  size_t kc;  // activation bytes per tap row
  size_t ks;  // taps
  const uint8_t* const* a;  // [ks][MR] row pointers
  const uint8_t* zero;      // the padding row: never offset
  ptrdiff_t a_offset;       // added to every pointer of a except zero
  const uint8_t* a_end;     // end of the activations (offset applied): a row whose K tail
                            // ends kr bytes or more before it is read with one full load
  const void* w;            // packed block (see above)
  void* y;                  // row 0, column 0 of the tile
  size_t y_row_stride;      // bytes between output rows
  float lo, hi;             // clamp in float: qmin - y_zero_point, qmax - y_zero_point
                            // (float output: the fused activation's bounds)
  int32_t y_zero_point;
  // Float output only, each NR values from the tile's first column (read as whole vectors):
  const int32_t* acc_init = nullptr;  // initial accumulators
  const float* scale = nullptr;       // x_scale * w_scale[c]
  const float* out_bias = nullptr;    // float bias, or nullptr for none
};

using Q8IgemmFn = void (*)(const Q8IgemmArgs& args);

struct Q8GemmKernel {
  const char* name;
  Isa isa;
  Q8 x_type;
  int mr, nr, kr;
  int w_bytes;  // bytes per packed weight: 1 (int8) or 2 (int16, the _madd16 kernels)
  int lanes;    // int32 lanes per vector register (16 zmm, 8 ymm): for the tile choice
  Q8IgemmFn fn;      // quantized output
  Q8IgemmFn fn_f32;  // float output (see above)
};

// The microkernels live in kernels/x86/q8_gemm__<isa>.cc, namespace x86::<isa>; the float
// twin of `function` is `function_f32`.
// X(isa namespace, function, name, Isa, x type, MR, NR, KR, weight bytes, lanes)
#define OCTET_Q8_GEMM_KERNELS(X)                                                                   \
  X(avx512vnni, qu8s8_igemm_12x16c4, "qu8s8_igemm_12x16c4__avx512vnni", Isa::avx512vnni, Q8::u8,   \
    12, 16, 4, 1, 16)                                                                              \
  X(avx512vnni, qu8s8_igemm_6x32c4, "qu8s8_igemm_6x32c4__avx512vnni", Isa::avx512vnni, Q8::u8, 6,  \
    32, 4, 1, 16)                                                                                  \
  X(avx512vnni, qu8s8_igemm_4x64c4, "qu8s8_igemm_4x64c4__avx512vnni", Isa::avx512vnni, Q8::u8, 4,  \
    64, 4, 1, 16)                                                                                  \
  X(avx512vnni, qs8s8_igemm_12x16c4, "qs8s8_igemm_12x16c4__avx512vnni", Isa::avx512vnni, Q8::s8,   \
    12, 16, 4, 1, 16)                                                                              \
  X(avx512vnni, qs8s8_igemm_6x32c4, "qs8s8_igemm_6x32c4__avx512vnni", Isa::avx512vnni, Q8::s8, 6,  \
    32, 4, 1, 16)                                                                                  \
  X(avx512vnni, qs8s8_igemm_4x64c4, "qs8s8_igemm_4x64c4__avx512vnni", Isa::avx512vnni, Q8::s8, 4,  \
    64, 4, 1, 16)                                                                                  \
  X(avx512, qu8s8_igemm_12x16c2, "qu8s8_igemm_12x16c2__avx512_madd16", Isa::avx512, Q8::u8, 12,    \
    16, 2, 2, 16)                                                                                  \
  X(avx512, qu8s8_igemm_6x32c2, "qu8s8_igemm_6x32c2__avx512_madd16", Isa::avx512, Q8::u8, 6, 32,   \
    2, 2, 16)                                                                                      \
  X(avx512, qu8s8_igemm_4x64c2, "qu8s8_igemm_4x64c2__avx512_madd16", Isa::avx512, Q8::u8, 4, 64,   \
    2, 2, 16)                                                                                      \
  X(avx512, qs8s8_igemm_12x16c2, "qs8s8_igemm_12x16c2__avx512_madd16", Isa::avx512, Q8::s8, 12,    \
    16, 2, 2, 16)                                                                                  \
  X(avx512, qs8s8_igemm_6x32c2, "qs8s8_igemm_6x32c2__avx512_madd16", Isa::avx512, Q8::s8, 6, 32,   \
    2, 2, 16)                                                                                      \
  X(avx512, qs8s8_igemm_4x64c2, "qs8s8_igemm_4x64c2__avx512_madd16", Isa::avx512, Q8::s8, 4, 64,   \
    2, 2, 16)                                                                                      \
  X(avxvnni, qu8s8_igemm_6x16c4, "qu8s8_igemm_6x16c4__avxvnni", Isa::avxvnni, Q8::u8, 6, 16, 4, 1, \
    8)                                                                                             \
  X(avxvnni, qu8s8_igemm_4x32c4, "qu8s8_igemm_4x32c4__avxvnni", Isa::avxvnni, Q8::u8, 4, 32, 4, 1, \
    8)                                                                                             \
  X(avxvnni, qs8s8_igemm_6x16c4, "qs8s8_igemm_6x16c4__avxvnni", Isa::avxvnni, Q8::s8, 6, 16, 4, 1, \
    8)                                                                                             \
  X(avxvnni, qs8s8_igemm_4x32c4, "qs8s8_igemm_4x32c4__avxvnni", Isa::avxvnni, Q8::s8, 4, 32, 4, 1, \
    8)                                                                                             \
  X(avx2, qu8s8_igemm_6x16c2, "qu8s8_igemm_6x16c2__avx2_madd16", Isa::avx2, Q8::u8, 6, 16, 2, 2,   \
    8)                                                                                             \
  X(avx2, qu8s8_igemm_12x8c2, "qu8s8_igemm_12x8c2__avx2_madd16", Isa::avx2, Q8::u8, 12, 8, 2, 2,   \
    8)                                                                                             \
  X(avx2, qs8s8_igemm_6x16c2, "qs8s8_igemm_6x16c2__avx2_madd16", Isa::avx2, Q8::s8, 6, 16, 2, 2,   \
    8)                                                                                             \
  X(avx2, qs8s8_igemm_12x8c2, "qs8s8_igemm_12x8c2__avx2_madd16", Isa::avx2, Q8::s8, 12, 8, 2, 2, 8)

#define OCTET_Q8_GEMM_DECLARE_ENTRY(ns, fn, ...) \
  namespace ns {                                 \
  void fn(const Q8IgemmArgs& args);              \
  void fn##_f32(const Q8IgemmArgs& args);        \
  }
namespace x86 {
OCTET_Q8_GEMM_KERNELS(OCTET_Q8_GEMM_DECLARE_ENTRY)
}
#undef OCTET_Q8_GEMM_DECLARE_ENTRY

#define OCTET_Q8_GEMM_ENTRY(ns, fn, name, isa, xt, mr, nr, kr, wb, lanes) \
  Q8GemmKernel{name, isa, xt, mr, nr, kr, wb, lanes, &x86::ns::fn, &x86::ns::fn##_f32},
inline constexpr Q8GemmKernel kQ8GemmKernels[] = {OCTET_Q8_GEMM_KERNELS(OCTET_Q8_GEMM_ENTRY)};
#undef OCTET_Q8_GEMM_ENTRY

}  // namespace octet::kernels
