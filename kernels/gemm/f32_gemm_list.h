#pragma once
// The FP32 GEMM / IGEMM microkernels (f32_gemm_list.inc) as a table.
//
// Both forms compute a tile of at most MR rows of Y = clamp(bias + A·W) and walk the output
// channels NR at a time until nc are done, storing only the valid columns.
//
// Packed weights (one NR block after the other, channels past n zero-filled):
//   bias[NR], then [ks][kc][NR]
// where kc is the reduction length per tap (in_c for a conv, K for a GEMM) and ks the number
// of kernel taps (kernel_h·kernel_w for a conv, 1 for a GEMM).
//
// gemm:  row r of A starts at a + r·a_stride (rows >= mr are never read).
// igemm: "indirect" A: for each of the ks taps, MR row pointers to kc-long input rows (an
//        NHWC pixel), tap-major: a[p·MR + r]. A pointer equal to `zero` (a row of kc zeros,
//        for padding) is used as is; every other pointer gets a_offset elements added, so one
//        indirection buffer serves every image of a batch. Rows >= mr must still be readable
//        (the driver repeats the last valid pixel).
// c rows are c_stride elements apart.
// gemm with mr == 1 (a GEMV) walks f32_gemv_blocks(NR) NR blocks side by side, one stream of
// packed weights each, summing every output in the same order as the one-block loop.
#include <cstddef>
#include <span>

#include "kernels/arch.h"
#include "kernels/isa.h"
#include "kernels/kernel_list.h"
#include "kernels/ref/activation.h"

namespace octet::kernels {

// Most column blocks a one-row gemm walks side by side (see above), and the columns a task of one takes.
inline constexpr size_t kF32GemvBlocks = 4;

// The blocks of `block_lanes` columns a one-row gemm walks side by side: the fewest whose
// accumulators hold 32 lanes, i.e. 8 MACs a cycle over a 4-cycle FMA latency, more than one
// core's caches or memory feed (~5 floats a cycle), up to kF32GemvBlocks. Each block is its own
// stream of packed weights, and fewer streams read faster on Zen 4 (a 1280 x 1000 classifier
// from L3, f32_conv_bench: one stream of 8x48 blocks 58 us, four 187 us).
constexpr size_t f32_gemv_blocks(size_t block_lanes) {
  constexpr size_t kChainLanes = 32;
  const size_t blocks = (kChainLanes + block_lanes - 1) / block_lanes;
  return blocks < kF32GemvBlocks ? blocks : kF32GemvBlocks;
}

// Output clamp of the fused epilogue: y = min(max(acc, min), max); NaN passes through
// (max/min are applied with the accumulator as the operand returned on NaN), like ONNX Relu/Clip.
struct F32MinMax {
  float min;
  float max;
};
inline constexpr F32MinMax kNoClamp = {-__builtin_inff(), __builtin_inff()};

// The clamp a microkernel applies for `act`: Relu's and Clip's bounds, none for anything else
// (the drivers apply those to each tile after the kernel: F32Epilogue).
inline F32MinMax f32_clamp_for(const Activation& act) {
  switch (act.kind) {
    case ActKind::relu: return {0.0f, __builtin_inff()};
    case ActKind::clip: return {act.min, act.max};
    default: return kNoClamp;
  }
}

// A streaming tile (gemm_stream, igemm_stream) also prefetches into the L2 the span of packed
// weights its driver runs next (the next chunk of columns), one line every few k steps so that
// the span arrives by the tile's end: memory stays busy while the tiles after a chunk's first
// compute from the L2, where it would sit idle. The driver sets the span on the thread that
// runs the tile (ScopedStreamAhead, f32_gemm.h); the tile reads it once at its start. Only
// addresses: a prefetch never faults and changes no result.
struct F32StreamAhead {
  const char* begin = nullptr;
  size_t bytes = 0;
};
F32StreamAhead& f32_stream_ahead();  // the calling thread's span (empty unless a driver set one)

using F32GemmUkernel = void (*)(size_t mr, size_t nc, size_t kc, const float* a, size_t a_stride,
                                const float* w, float* c, size_t c_stride, const F32MinMax& clamp);
using F32IgemmUkernel = void (*)(size_t mr, size_t nc, size_t kc, size_t ks, const float* const* a,
                                 size_t a_offset, const float* zero, const float* w, float* c,
                                 size_t c_stride, const F32MinMax& clamp);

struct F32GemmKernel {
  const char* gemm_name;   // "f32_gemm_8x32__avx512"
  const char* igemm_name;  // "f32_igemm_8x32__avx512"
  Isa isa;
  Features features;
  int mr;
  int nr;
  F32GemmUkernel gemm;
  F32IgemmUkernel igemm;
  // The same tiles, bit for bit, prefetching their packed weights ahead of the loads: for
  // weights that come from beyond the L2 on every run (f32_weights_stream; on Arm the plain forms).
  F32GemmUkernel gemm_stream;
  F32IgemmUkernel igemm_stream;
};

// The streaming forms exist on x86 (kernels/x86/f32_gemm_tile.inc); on Arm the table's streaming
// entries are the plain tiles (a prefetching form would need timing on an Arm core, which qemu
// cannot give).
#if OCTET_ARCH_X86
#define OCTET_F32_STREAM(f) f##_stream
#define OCTET_F32_STREAM_DECLS(mr, nr)                                                                  \
  void f32_gemm_##mr##x##nr##_stream(size_t mr_, size_t nc, size_t kc, const float* a, size_t a_stride, \
                                     const float* w, float* c, size_t c_stride, const F32MinMax& clamp); \
  void f32_igemm_##mr##x##nr##_stream(size_t mr_, size_t nc, size_t kc, size_t ks, const float* const* a, \
                                      size_t a_offset, const float* zero, const float* w, float* c,   \
                                      size_t c_stride, const F32MinMax& clamp);
#else
#define OCTET_F32_STREAM(f) f
#define OCTET_F32_STREAM_DECLS(mr, nr)
#endif

#define OCTET_F32_GEMM_TILE(isa, mr, nr)                                                          \
  namespace isa {                                                                                 \
  void f32_gemm_##mr##x##nr(size_t mr_, size_t nc, size_t kc, const float* a, size_t a_stride,    \
                            const float* w, float* c, size_t c_stride, const F32MinMax& clamp);   \
  void f32_igemm_##mr##x##nr(size_t mr_, size_t nc, size_t kc, size_t ks, const float* const* a,  \
                             size_t a_offset, const float* zero, const float* w, float* c,        \
                             size_t c_stride, const F32MinMax& clamp);                            \
  OCTET_F32_STREAM_DECLS(mr, nr)                                                                  \
  }
#include "kernels/gemm/f32_gemm_list.inc"
#undef OCTET_F32_GEMM_TILE

inline constexpr F32GemmKernel kF32GemmKernelRows[] = {
#define OCTET_F32_GEMM_TILE(isa, mr, nr)                                                        \
  {"f32_gemm_" #mr "x" #nr "__" #isa, "f32_igemm_" #mr "x" #nr "__" #isa, Isa::isa,             \
   OCTET_LEVEL_FEATURES(isa), mr, nr,                                                             \
   &isa::f32_gemm_##mr##x##nr, &isa::f32_igemm_##mr##x##nr,                                       \
   &isa::OCTET_F32_STREAM(f32_gemm_##mr##x##nr), &isa::OCTET_F32_STREAM(f32_igemm_##mr##x##nr)},
#include "kernels/gemm/f32_gemm_list.inc"
#undef OCTET_F32_GEMM_TILE
    F32GemmKernel{}};
inline constexpr std::span<const F32GemmKernel> kF32GemmKernels = rows_before_terminator(kF32GemmKernelRows);

inline std::span<const F32GemmKernel> f32_gemm_kernels() { return kF32GemmKernels; }

}  // namespace octet::kernels
