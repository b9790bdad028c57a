#pragma once
// Every INT8 GEMM / IGEMM microkernel, one row each: the one list the drivers (Q8Conv,
// Q8Gemm), the tests and the benchmarks iterate.
//
// A microkernel computes an MR x nc tile (nc <= NR) of
//   y[i][c] = requantize(bias'[c] + sum over taps t, k of a[t][i][k] * w[t][k][c])
// reading each output row's input through an indirection array (IGEMM): for tap t, row i,
// a[t * MR + i] points at kc input bytes. Plain GEMM is the case ks = 1.
//
// Activations are u8 or s8; each kernel reads them as one type (`reads`) and flips the sign
// bit of the other on load (x ^ 0x80: x + 128 read as u8 on x86, so that vpdpbusd (u8 x s8)
// and the zero-extending int16 path apply; x - 128 read as s8 on Arm, for SDOT and the
// sign-extending multiplies). The packing folds the zero point into the bias as
//   bias'[c] = bias[c] - zp_r * sum_k w[k][c],   zp_r = x_zero_point + q8_read_shift(reads, x)
// so the inner loop never sees a zero point (padding taps read a row of x_zero_point bytes,
// which contributes exactly zp_r * w and cancels).
//
// Every microkernel has a float-output twin (`fn_f32`, the dynamic quantization path, where
// the zero point and scale are known only at run time): the accumulators start at
// args.acc_init[c] (the caller's run-time fold, the packed bias is ignored) and the tile
// stores y[i][c] = clamp(float(acc) * scale[c] + out_bias[c], lo, hi) as float: a plain
// multiply then a plain add (never fused), the order ONNX Runtime's Cast -> Mul -> Add uses.
//
// Every microkernel also has an int32-output twin (`fn_i32`, MatMulInteger and the QLinearMatMul
// whose weight zero point is not 0, which a caller corrects per row before requantizing): the
// accumulators start at the packed bias' like `fn` and are stored as they are, y[i][c] int32
// (y_row_stride in bytes), wrapped modulo 2^32 like the adds that made them.
//
// Packed weights, one block per NR output channels (the channel tail is zero-padded):
//   int32 bias'[NR], float multiplier[NR],
//   then for each tap, for each group of KR k's: w[NR][KR] (int8, or int16 when w_bytes == 2)
// K is rounded up to KR with zero weights. The K tail (kc % KR bytes) is read with one full
// KR-byte load when that stays inside [.., a_end) or the row is `zero` (allocated kc + KR
// bytes), else byte by byte: the kernels never read past the activations.
#include <cstddef>
#include <cstdint>

#include "kernels/arch.h"
#include "kernels/isa.h"
#include "kernels/isa_rows.h"
#include "kernels/kernel_list.h"
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

// The integer bounds of the epilogues' four-vector requantization (requantize4 and
// quad_bounds, used by kernels/gemm/q8_igemm_store.inc): the output's zero point, its clamp in
// bytes and the sign flip that maps an s8 output onto u8 for the unsigned saturating pack.
struct QuadBytes {
  int zp, lo8, hi8;  // zero point and [lo, hi] + zero point, all + 128 for an s8 output
  int flip8;         // 0x80 for an s8 output (undoes the + 128), else 0
};
// lo, hi: the clamp of the scaled accumulator (qmin - zp, qmax - zp), as Q8IgemmArgs holds it.
inline QuadBytes quad_bytes(float lo_f, float hi_f, int32_t zero_point) {
  const int lo = static_cast<int>(lo_f) + zero_point, hi = static_cast<int>(hi_f) + zero_point;
  const int shift = lo < 0 ? 128 : 0;  // only an s8 output reaches below 0
  return {zero_point + shift, lo + shift, hi + shift, shift != 0 ? 0x80 : 0};
}
inline QuadBytes quad_bytes(const Q8IgemmArgs& g) { return quad_bytes(g.lo, g.hi, g.y_zero_point); }

// What a tile stores: requantized bytes (fn), floats (fn_f32) or the int32 accumulators (fn_i32).
enum class Q8Out { requantized, dequantized, int32 };

struct Q8GemmKernel;
struct Q8WeightsToPack;

// Packed weights of one layer for one microkernel (layout and fold: kernels/gemm/q8_pack.h).
struct Q8PackedWeights;
using Q8PackFn = Q8PackedWeights (*)(const Q8GemmKernel& kernel, const Q8WeightsToPack& weights);

struct Q8GemmKernel {
  const char* name;
  Isa isa;
  Q8 x_type;
  int mr, nr, kr;
  int w_bytes;  // bytes per packed weight: 1 (int8) or 2 (int16, the _madd16 kernels)
  int lanes;    // int32 lanes per vector register (16 zmm, 8 ymm): for the tile choice
  Q8IgemmFn fn;      // quantized output
  Q8IgemmFn fn_f32;  // float output (see above)
  Q8IgemmFn fn_i32;  // int32 output (see above)
  Q8 reads;          // the type activations are read as; the other one is flipped on load
  Q8PackFn pack;     // lays out the weights and folds the zero point for this kernel
};

// What a kernel reading activations as `reads` adds to an activation of x_type (its sign-bit
// flip): the zero-point fold uses x_zero_point + this.
constexpr int32_t q8_read_shift(Q8 reads, Q8 x_type) {
  return reads == x_type ? 0 : (reads == Q8::u8 ? 128 : -128);
}

// The packing functions the list names (kernels/gemm/q8_pack.cc).
Q8PackedWeights pack_q8_kr_blocks(const Q8GemmKernel& kernel, const Q8WeightsToPack& weights);

#define OCTET_Q8_GEMM_TILE(arch, isa, xt, mr, nr, kr, wb, lanes, suffix, reads, packing) \
  namespace arch::isa {                                                          \
  void q##xt##s8_igemm_##mr##x##nr##c##kr(const Q8IgemmArgs& args);              \
  void q##xt##s8_igemm_##mr##x##nr##c##kr##_f32(const Q8IgemmArgs& args);        \
  void q##xt##s8_igemm_##mr##x##nr##c##kr##_i32(const Q8IgemmArgs& args);        \
  }
#include "kernels/gemm/q8_gemm_list.inc"
#undef OCTET_Q8_GEMM_TILE

inline constexpr Q8GemmKernel kQ8GemmKernelRows[] = {
#define OCTET_Q8_GEMM_TILE(arch, isa, xt, mr, nr, kr, wb, lanes, suffix, reads, packing)                   \
  {"q" #xt "s8_igemm_" #mr "x" #nr "c" #kr "__" #isa suffix, Isa::isa, Q8::xt, mr, nr, kr, wb, lanes,     \
   &arch::isa::q##xt##s8_igemm_##mr##x##nr##c##kr, &arch::isa::q##xt##s8_igemm_##mr##x##nr##c##kr##_f32, \
   &arch::isa::q##xt##s8_igemm_##mr##x##nr##c##kr##_i32, Q8::reads, &packing},
#include "kernels/gemm/q8_gemm_list.inc"
#undef OCTET_Q8_GEMM_TILE
    Q8GemmKernel{}};
inline constexpr std::span<const Q8GemmKernel> kQ8GemmKernels = rows_before_terminator(kQ8GemmKernelRows);

}  // namespace octet::kernels
