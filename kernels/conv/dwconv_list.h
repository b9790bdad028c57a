#pragma once
// Every depthwise-convolution microkernel (FP32 and INT8, one line each in dwconv_list.inc):
// the one list the drivers (kernels/conv/f32_dwconv.cc, q8_dwconv.cc), the tests
// (tests/simd/test_dwconv.cc) and the benchmark (bench/dwconv_bench.cc) iterate. In preference
// order; a driver takes the first entry that runs under its cap (isa_runs) and fits() the
// shape, and falls back to the scalar ref conv (kernels/ref/conv2d.h, qconv2d.h) when none does.
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
//   INT8: [bias'][weights][multiplier][tile] 32-bit words; bias' = bias - x_zp*sum(w)
//         (int32), the multiplier as float, the weights as Q8DwPacking says.
// INT8 entries with an `image_rows` function use the "kw4" format instead (a 4-byte dot
// product over the horizontal taps: vpdpbusd, q8_dwconv__avx512vnni.cc; SDOT,
// arm/q8_dwconv__neondot.cc): they run whole output rows of one image, building per input row
// a buffer whose 32-bit lane (pixel, channel) holds the 4 bytes x[iy][ox*sw - pad_left +
// kx*dw][c], kx = 0..3 (padding: x_zero_point). Packed per slot of 16 lanes:
// [bias'][kernel_h * words][multiplier][16] 32-bit words (Q8DwPacking::kw4 below). Which
// channel a slot's lane holds and how activations are read are the two variants':
//   kw4       vpdpbusd (u8 x s8): s8 activations flipped to u8 on load, so bias' = bias -
//             x_zp' * sum(w) with x_zp' = x_zp (u8) or x_zp + 128 (s8); lanes in the unpack
//             order of the kernel's 64- and 32-channel chunks (ChunkLayout in
//             q8_dwconv__avx512vnni.cc, Q8DwConv::pack_kw4)
//   kw4_sdot  SDOT (s8 x s8): u8 activations flipped to s8 on load, x_zp' = x_zp - 128 (u8) or
//             x_zp (s8); lanes in channel order (slot g, lane l: channel 16g + l)
#include <cstddef>
#include <cstdint>

#include "kernels/isa.h"
#include "kernels/kernel_list.h"
#include "kernels/ref/conv2d.h"

namespace octet::kernels {

struct F32DwRowArgs {
  const float* const* rows;  // [kernel_h]
  size_t x_offset;  // floats added to every row pointer: the first channel of a slice of the map's
  size_t pixels;
  size_t channels;  // channels computed (from x_offset on)
  size_t pixel_step;  // floats between the windows of consecutive output pixels (stride_w * C)
  size_t tap_step;    // floats between horizontal taps (dilation_w * C)
  int kernel_h, kernel_w;
  const float* packed;
  float* y;  // pixel p at y + p * y_step
  size_t y_step;   // floats between output pixels: the map's channels (>= channels: a slice of them)
  float min, max;  // output clamp (-inf, +inf for no activation)
};

struct F32DwIndirectArgs {
  const float* const* taps;  // [pixels][kernel_size]
  size_t x_offset;           // as in F32DwRowArgs, added to every tap pointer
  size_t pixels;
  size_t channels;
  int kernel_size;  // kernel_h * kernel_w
  const float* packed;
  float* y;
  size_t y_step;  // as in F32DwRowArgs
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
  int32_t qmin, qmax;  // the output clamp
  // Every |multiplier| <= 0.5, so |acc * multiplier| < 2^30 and cvtps2dq cannot overflow: a
  // kernel may round first and clamp afterwards, in integers.
  bool small_multipliers;
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

inline constexpr size_t kDwKw4Block = 64;  // a kw4 kernel's channel ranges start at multiples of it

// Output rows [oy_begin, oy_end) of one image, channels [c_begin, c_end), "kw4" format.
// c_begin is a multiple of kDwKw4Block; c_end one too, or C (the last range takes the
// channels past the whole blocks). The scratch rows hold only the range's channels.
struct Q8DwImageRowsArgs {
  const Conv2dShape* shape;  // batch ignored
  const uint8_t* x;          // the image, [in_h][in_w][C]
  int oy_begin, oy_end;
  size_t c_begin, c_end;
  const int32_t* packed;
  uint8_t* y;            // the image's output, [out_h][out_w][C]
  uint8_t* scratch;      // dw_kw4_scratch_bytes(shape), 64-byte aligned
  const uint8_t* pad;    // >= C bytes of x_zero_point
  Q8DwEpilogue ep;
};

using Q8DwRowFn = void (*)(const Q8DwRowArgs&);
using Q8DwIndirectFn = void (*)(const Q8DwIndirectArgs&);
using Q8DwImageRowsFn = void (*)(const Q8DwImageRowsArgs&);

// The "kw4" format holds 4 horizontal taps per lane: entry e of a built input row holds, for
// each channel, the bytes at columns e * stride_w - pad_left + kx * dilation_w, kx = 0..3. A
// kernel wider than 4 (up to 8; dw_kw4_fits) takes a second word of taps 4..7, which for
// output column ox are entry ox + 4 * dilation_w / stride_w's first four: so the built row
// runs that many entries past out_w, and stride_w must divide 4 * dilation_w. The input rows of one output
// row's window are kept in a ring of (kernel_h - 1) * dilation_h + 1 slots.
inline constexpr int kDwKw4MaxRing = 16;
inline int dw_kw4_ring(const Conv2dShape& s) { return (s.kernel_h - 1) * s.dilation_h + 1; }
inline int dw_kw4_words(const Conv2dShape& s) { return (s.kernel_w + 3) / 4; }  // per kernel row
inline int dw_kw4_word_shift(const Conv2dShape& s) { return 4 * s.dilation_w / s.stride_w; }  // in entries
inline int dw_kw4_entries(const Conv2dShape& s) {
  return s.out_w + (dw_kw4_words(s) - 1) * dw_kw4_word_shift(s);
}
// Word counts a slot (kernel_h * words) whose weights the kw4 kernel keeps in registers; other
// counts load them at every pixel, which on 5x5 layers (before their register path) ran 5-17%
// slower than the int32-lane kernel. Kernels 4 wide or less take any count, as they always
// have; wider ones only these (heights 1, 5 and 7), the rest going to the int32-lane kernel.
inline bool dw_kw4_register_words(int words) { return words <= 3 || words == 10 || words == 14; }
inline bool dw_kw4_fits(const Conv2dShape& s) {
  const bool words_fit = s.kernel_w <= 4 || (s.kernel_w <= 8 && 4 * s.dilation_w % s.stride_w == 0 &&
                                             dw_kw4_register_words(s.kernel_h * dw_kw4_words(s)));
  return words_fit && dw_kw4_ring(s) <= kDwKw4MaxRing;
}
// Bytes of one entry of a built row: (C + 15) / 16 slots of 16 lanes x 4 bytes.
inline size_t dw_kw4_entry_bytes(size_t C) { return (C + 15) / 16 * 64; }
inline size_t dw_kw4_scratch_bytes(const Conv2dShape& s) {
  return static_cast<size_t>(dw_kw4_ring(s)) * dw_kw4_entries(s) * dw_kw4_entry_bytes(static_cast<size_t>(s.in_c));
}

// How an INT8 entry wants its weights packed (per block of channel_tile channels):
enum class Q8DwPacking {
  int32_taps,  // [bias'][kh*kw taps][multiplier]: one weight per int32 lane, high half 0
  tap_pairs,   // [bias'][(kh*kw + 1) / 2][multiplier]: taps 2p, 2p + 1 in the low / high
               // int16 of an int32 lane (0 past the last tap)
  kw4,         // the "kw4" format above: [bias'][kernel_h * words][multiplier], word
               // ky * words + j holding taps 4j .. 4j + 3 of kernel row ky (0 past kernel_w)
  kw4_sdot,    // the same words, lanes in channel order, activations read as s8 (above)
};
inline bool is_kw4(Q8DwPacking p) { return p == Q8DwPacking::kw4 || p == Q8DwPacking::kw4_sdot; }

struct Q8DwConvKernel {
  const char* name;
  Isa isa;
  int channel_tile;
  Q8DwPacking packing;
  Q8DwRowFn row;                   // int32_taps / tap_pairs
  Q8DwIndirectFn indirect;         //
  Q8DwImageRowsFn image_rows = nullptr;  // kw4, kw4_sdot: shapes with dw_kw4_fits() only

  bool fits(const Conv2dShape& s) const { return image_rows == nullptr || dw_kw4_fits(s); }
};

// The microkernels of dwconv_list.inc.
#define OCTET_F32_DWCONV(isa, tile)                            \
  namespace isa {                                              \
  void f32_dwconv_c##tile##_row(const F32DwRowArgs& a);        \
  void f32_dwconv_c##tile##_indirect(const F32DwIndirectArgs& a); \
  }
#define OCTET_Q8_DWCONV(isa, tile, name, packing)              \
  namespace isa {                                              \
  void q8_dwconv_c##tile##_row(const Q8DwRowArgs& a);          \
  void q8_dwconv_c##tile##_indirect(const Q8DwIndirectArgs& a); \
  }
#define OCTET_Q8_DWCONV_IMAGE_ROWS(isa, tile, name, packing)             \
  namespace isa {                                                        \
  void q8_dwconv_c##tile##kw4_image_rows(const Q8DwImageRowsArgs& a);    \
  }
#include "kernels/conv/dwconv_list.inc"
#undef OCTET_F32_DWCONV
#undef OCTET_Q8_DWCONV
#undef OCTET_Q8_DWCONV_IMAGE_ROWS

inline constexpr F32DwConvKernel kF32DwConvKernelRows[] = {
#define OCTET_F32_DWCONV(isa, tile) \
  {"f32_dwconv_c" #tile "__" #isa, Isa::isa, tile, isa::f32_dwconv_c##tile##_row, isa::f32_dwconv_c##tile##_indirect},
#define OCTET_Q8_DWCONV(isa, tile, name, packing)
#define OCTET_Q8_DWCONV_IMAGE_ROWS(isa, tile, name, packing)
#include "kernels/conv/dwconv_list.inc"
#undef OCTET_F32_DWCONV
#undef OCTET_Q8_DWCONV
#undef OCTET_Q8_DWCONV_IMAGE_ROWS
    F32DwConvKernel{}};
inline constexpr std::span<const F32DwConvKernel> kF32DwConvKernels = rows_before_terminator(kF32DwConvKernelRows);

inline constexpr Q8DwConvKernel kQ8DwConvKernelRows[] = {
#define OCTET_F32_DWCONV(isa, tile)
#define OCTET_Q8_DWCONV(isa, tile, name, packing) \
  {name, Isa::isa, tile, Q8DwPacking::packing, isa::q8_dwconv_c##tile##_row, isa::q8_dwconv_c##tile##_indirect},
#define OCTET_Q8_DWCONV_IMAGE_ROWS(isa, tile, name, packing) \
  {name, Isa::isa, tile, Q8DwPacking::packing, nullptr, nullptr, isa::q8_dwconv_c##tile##kw4_image_rows},
#include "kernels/conv/dwconv_list.inc"
#undef OCTET_F32_DWCONV
#undef OCTET_Q8_DWCONV
#undef OCTET_Q8_DWCONV_IMAGE_ROWS
    Q8DwConvKernel{}};
inline constexpr std::span<const Q8DwConvKernel> kQ8DwConvKernels = rows_before_terminator(kQ8DwConvKernelRows);

}  // namespace octet::kernels
