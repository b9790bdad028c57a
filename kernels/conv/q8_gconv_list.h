#pragma once
// Every INT8 narrow-group convolution microkernel (one line each in q8_gconv_list.inc): the one
// list the driver (kernels/conv/q8_narrow_group_conv.cc), the tests (tests/simd/test_q8_gconv.cc)
// and the benchmarks iterate, best first.
//
// A grouped conv whose groups have G = 4 or 8 input and G output channels (ResNeXt's first
// stages, RegNet's group width 8), NHWC. The GEMM tiles give each group a whole tile of columns
// (4 of 16 busy at G = 4) and gather its channels apart; here one multiply-add instruction serves
// several groups at once. A row sums KR activation bytes per int32 lane (4: vpdpbusd; 2:
// vpmaddwd on int16). Per pixel and tap the kernel loads a "chunk" of 4 KR input channels (4
// units of KR) into every 128-bit lane, so int32 lane l of a vector sees unit l % 4. A block of
// 16 channels is 16 / (4 KR) chunks; a chunk's 4 KR output channels lie over 4G lane "slots":
// slot s reads unit u = s % 4, which is part h = u % (G / KR) of the chunk's group g = u / (G / KR),
// and holds output m = s / 4 of that group. Its sum over the G / KR parts of the group is output
// channel 4 KR c + g G + m of the block (chunk c). So every multiply-add is a real one; the epilogue
// adds the parts and permutes the slots into channel order once per tile, then stores through the
// IGEMM's own store (kernels/gemm/q8_igemm_store.inc): the same requantization and float output,
// bit for bit.
//
// Groups of a multiple of 16 channels (the g16 rows, dot-product levels) need no slots: a block
// of 16 output channels lies in one group, in channel order, and per tap each input quad of the
// group is broadcast to every lane as in the dense IGEMM, read where it is (no gather); its tap
// holds G / 4 quads x 16 channels x 4 int8, w[o][4q + j][tap] (the same bytes a block).
//
// Packed weights, per block of 16 output channels (the channel tail zero-padded):
//   int32 bias'[16], float multiplier[16] (channel order), then for each tap, for each chunk c:
//   4G slots of KR weights (int8 for KR 4, int16 for KR 2: 4 bytes a slot), slot s holding
//   w[4 KR c + g G + m][KR h + j][tap] for j < KR.
// bias' folds the activations' zero point as the IGEMM's does (q8_gemm_list.h): bias - zp_r * the
// sum of the channel's weights, zp_r = x_zero_point + q8_read_shift(reads, x_type).
#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/arch.h"
#include "kernels/gemm/q8_gemm_list.h"
#include "kernels/isa.h"
#include "kernels/isa_rows.h"
#include "kernels/kernel_list.h"
#include "kernels/q8_type.h"

namespace octet::kernels {

// Output channels per packed block, and the packed bytes of one block.
inline constexpr int kQ8GconvBlock = 16;
inline constexpr size_t q8_gconv_block_bytes(int group_width, int kr, size_t taps) {
  return 2 * kQ8GconvBlock * 4 + taps * size_t(kQ8GconvBlock / (4 * kr) * 16 * group_width);
}

struct Q8GconvArgs {
  // [pixels][ks]: tap t of pixel p at taps[p * ks + t], `zero` where it falls into the padding.
  // Every other pointer is moved by x_offset bytes (the image).
  const uint8_t* const* taps;
  size_t pixels;
  size_t channels;  // input = output channels, a multiple of G
  size_t ks;
  size_t group_width;  // G
  ptrdiff_t x_offset;
  const uint8_t* zero;  // >= channels bytes of the activations' zero point
  const void* packed;   // every block (above)
  void* y;              // pixel p at y + p * y_stride bytes
  size_t y_stride;
  float lo, hi;          // as Q8IgemmArgs: the clamp (float output: the activation's bounds)
  int32_t y_zero_point;  // requantized output
  // Float output only, one value per channel padded to whole blocks (Q8FloatOutput):
  const int32_t* acc_init = nullptr;
  const float* scale = nullptr;
  const float* out_bias = nullptr;
};

using Q8GconvFn = void (*)(const Q8GconvArgs& args);

struct Q8GconvKernel {
  const char* name;
  Isa isa;
  Q8 x_type;
  int group_width;  // G: 4, 8, or 16 for any multiple of 16
  int kr;           // activation bytes per int32 lane and instruction (the packing)
  Q8 reads;         // the type activations are read as; the other one is flipped on load
  Q8GconvFn fn;      // requantized output
  Q8GconvFn fn_f32;  // float output
};

#define OCTET_Q8_GCONV(arch, isa, xt, g, kr, suffix, reads) \
  namespace arch::isa {                                  \
  void q##xt##s8_gconv_g##g(const Q8GconvArgs& args);     \
  void q##xt##s8_gconv_g##g##_f32(const Q8GconvArgs& args); \
  }
#include "kernels/conv/q8_gconv_list.inc"
#undef OCTET_Q8_GCONV

inline constexpr Q8GconvKernel kQ8GconvKernelRows[] = {
#define OCTET_Q8_GCONV(arch, isa, xt, g, kr, suffix, reads)                                                   \
  {"q" #xt "s8_gconv_g" #g "__" #isa suffix, Isa::isa, Q8::xt, g, kr, Q8::reads, &arch::isa::q##xt##s8_gconv_g##g, \
   &arch::isa::q##xt##s8_gconv_g##g##_f32},
#include "kernels/conv/q8_gconv_list.inc"
#undef OCTET_Q8_GCONV
    Q8GconvKernel{}};
inline constexpr std::span<const Q8GconvKernel> kQ8GconvKernels = rows_before_terminator(kQ8GconvKernelRows);

// Whether row k runs groups of g input and output channels.
constexpr bool q8_gconv_row_fits(const Q8GconvKernel& k, int g) {
  return k.group_width == (g >= 16 && g % 16 == 0 ? 16 : g);
}

}  // namespace octet::kernels
