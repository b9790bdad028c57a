#pragma once
// QLinearConv (groups == 1) over NHWC activations with the INT8 IGEMM microkernels of
// kernels/gemm/q8_gemm_list.h, the portable rows included: one path at every level. Weights are
// s8 with zero point 0 (the caller checks the weight zero points and runs q8_conv2d_nhwc__ref
// otherwise). Results are bit-exact with q8_conv2d_nhwc__ref (docs/requantization.md).
//
// How the IGEMM sees a conv: one "tap" per kernel row (ky), whose kc = kernel_w * in_c bytes
// are the kernel_w neighbouring pixels of that input row, contiguous in NHWC (this needs
// dilation_w == 1; otherwise one tap per (ky, kx) of in_c bytes). When the conv pads, run()
// first copies the input into a private buffer framed by x_zero_point bytes (the frame is
// written once, in the constructor), so every tap row is contiguous and in bounds; fewer,
// longer taps cut the per-tap pointer work that dominates small in_c (3, 16). A 3-D conv (the
// depth fields, NDHWC) merges the same way, one tap per (kd, kh) kernel row, its copy padded
// per plane in H and W (taps of planes outside the input read the zero row): a video stem's
// 3x7x7 over 3 channels runs 21 taps of 21 bytes instead of 147 of 3.
//
// First layers (kernel_h * kernel_w * in_c <= 64, more than one tap): run() packs each output
// pixel's whole window into one contiguous row (im2col) of a scratch buffer allocated in the
// constructor, and the microkernel runs as a plain GEMM (one tap, K = the window rounded up to
// 4, so no K tail). A 3x3x3 window becomes one 28-byte row instead of three 9-byte taps each
// padded to 12 with a tail test per row.
//
// Life cycle: the constructor packs the weights (zero point folded into the bias, see
// q8_gemm_list.h); bind(x) builds the indirection buffer for one input address (a no-op with
// the padded copy, whose indirection is built once); run() may then be called with that
// address or any other input of the same shape (the pointers are offset) and never allocates.
// run() writes the padded copy, so one Q8Conv must not run on two threads at once (its own
// pool threads are fine).
//
// Dynamic quantization (ConvInteger -> Cast -> Mul -> Add -> activation as one step): the
// DequantizedOutput constructor packs the weights with zero point 0 and run_dequantized()
// takes the activation's scale and zero point per call, writes float y, and refills the
// padding frame only when the zero point changed (kernels/gemm/q8_float_output.h).
//
// Every level has a row (at Isa::scalar the portable one, kernels/gemm/q8_gemm__scalar.cc), so
// there is one path; kernel_name() says which row runs.
#include <pthreadpool.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/kernel_id.h"
#include "kernels/elementwise/output_range.h"
#include "kernels/gemm/q8_float_output.h"
#include "kernels/gemm/q8_pack.h"
#include "kernels/isa.h"
#include "kernels/gemm/q8_gemm_list.h"
#include "kernels/q8_type.h"
#include "kernels/quantize/q8_lookup_list.h"
#include "kernels/ref/conv2d.h"
#include "kernels/ref/qmath.h"

namespace octet::kernels {

// How Q8Conv's im2col path copies one output row's windows (q8_conv.cc).
struct WindowCopy {
  const size_t* offsets;  // [taps] chunk offsets from the window's top-left byte
  size_t taps, kc, pieces, step_x, stride;
};
using WindowCopyFn = void (*)(const WindowCopy& copy, const uint8_t* src, size_t count,
                              uint8_t* dst);

class Q8Conv {
 public:
  static bool supports(const Conv2dShape& s, Q8 x_type, Q8 y_type);

  // w: ONNX order [out_c][in_c][kernel_h][kernel_w] int8; bias: [out_c] int32 or nullptr;
  // rq: 1 or out_c multipliers, y zero point, clamp [qmin, qmax] inside y_type's range.
  // Uses the best microkernel of level <= isa (the portable rows at Isa::scalar); throws
  // Unsupported (kernels/fallback.h) when no row runs.
  // Every constructor packs w, or takes the packing `cache` holds for the same recipe
  // (nullptr: a private copy).
  Q8Conv(const Conv2dShape& s, Q8 x_type, int32_t x_zero_point, const int8_t* w,
         const int32_t* bias, const Requantization& rq, Q8 y_type, Isa isa, PackedCache* cache = nullptr);
  // Uses exactly this microkernel (tests, benchmarks); throws when its x type differs.
  Q8Conv(const Conv2dShape& s, Q8 x_type, int32_t x_zero_point, const int8_t* w,
         const int32_t* bias, const Requantization& rq, Q8 y_type, const Q8GemmKernel& kernel,
         PackedCache* cache = nullptr);

  // Float output: w is s8 with zero point 0; y = clamp(float(acc) * x_scale * w_scale + bias).
  Q8Conv(const Conv2dShape& s, Q8 x_type, const int8_t* w, DequantizedOutput out, Isa isa,
         PackedCache* cache = nullptr);
  Q8Conv(const Conv2dShape& s, Q8 x_type, const int8_t* w, DequantizedOutput out,
         const Q8GemmKernel& kernel, PackedCache* cache = nullptr);

  const std::string& kernel_name() const { return name_.name; }
  const KernelId& kernel_id() const { return name_; }
  const Q8GemmKernel& kernel() const { return *kernel_; }
  bool im2col() const { return im2col_; }  // the first-layer path (see above)

  // x: [batch][in_h][in_w][in_c] of x_type; y: [batch][out_h][out_w][out_c] of y_type, its pixels
  // y_pixel_stride elements apart (0: out_c; more: y is a slice of a Concat's channels).
  void bind(const void* x);
  void run(const void* x, void* y, pthreadpool_t pool, size_t y_pixel_stride = 0) const;
  // Requantizing convs: every output byte b is stored as table[b] (a fused 8-bit lookup: QLinearSilu,
  // QLinearHardSwish...), each tile looked up while in cache, on the fastest lookup kernel of
  // level <= isa. The table (256 bytes) must outlive the conv.
  void set_output_table(const uint8_t* table, Isa isa);
  // Float-output convs only: y is [batch][out_h][out_w][out_c] float. With `range`, the
  // range of y is folded into it as the tiles are written (range->reset() is the caller's);
  // without, y's pixels may be y_pixel_stride floats apart (0: out_c).
  void run_dequantized(const void* x, float x_scale, int32_t x_zero_point, float* y,
                       pthreadpool_t pool, OutputRange* range = nullptr, size_t y_pixel_stride = 0);

 private:
  void init(const int8_t* w, const int32_t* bias, const Requantization& rq, PackedCache* cache);
  void init_float_output(const int8_t* w, DequantizedOutput out, Isa isa, PackedCache* cache);
  void run_tiles(const void* x, void* y, pthreadpool_t pool, OutputRange* range, size_t y_pixel_stride) const;
  void set_padding_value(int32_t x_zero_point);

  Conv2dShape s_;
  Q8 x_type_, y_type_;
  int32_t x_zero_point_;
  int32_t y_zero_point_, qmin_, qmax_;
  std::vector<float> multiplier_;
  const Q8GemmKernel* kernel_ = nullptr;
  KernelId name_;

  void build_indirection(const uint8_t* base, int image_h, int image_w, int pad_top, int pad_left);
  void init_im2col();
  void pack_windows(size_t first, size_t last, const uint8_t* padded) const;

  std::shared_ptr<const Q8PackedWeights> packed_;  // shared by the Session's plans
  bool merge_kx_ = false;  // one tap per kernel row (kc = kernel_w * in_c)
  size_t taps_ = 0, kc_ = 0;
  // The padded copy of the input: [batch][in_h + pads][in_w + pads][in_c] + kr spare bytes,
  // frame = x_zero_point. Empty when the conv does not pad (the taps then read x itself).
  mutable AlignedBytes padded_;
  int padded_h_ = 0, padded_w_ = 0;
  std::vector<uint8_t> zero_row_;  // kc + kr bytes of x_zero_point: what padding taps read
  std::vector<const uint8_t*> indirection_;  // [pixel groups of MR][taps][MR]
  const uint8_t* bound_x_ = nullptr;

  // im2col path: windows_ is [pixels][window_stride_] bytes; row p holds the taps_ chunks of
  // kc_ bytes of pixel p's window back to back (K = taps_ * kc_), read from the padded copy at
  // chunk_offset_[t] past the window's top-left byte. gemm_kc_ = K rounded up to 4.
  bool im2col_ = false;
  size_t gemm_kc_ = 0, window_stride_ = 0, chunk_copy_ = 0;
  std::vector<size_t> chunk_offset_;
  mutable AlignedBytes windows_;
  WindowCopyFn copy_fn_ = nullptr;

  const uint8_t* output_table_ = nullptr;            // set_output_table
  const Q8LookupKernel* output_lookup_ = nullptr;   // nullptr: q8_lookup__ref

  // Float output (dynamic quantization); empty for the requantizing conv.
  std::optional<Q8FloatOutput> float_out_;
  std::vector<int64_t> column_sums_;
  int32_t padding_value_ = 0;  // what the frame and zero_row_ hold now
};

}  // namespace octet::kernels
