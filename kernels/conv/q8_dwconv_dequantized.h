#pragma once
// Depthwise ConvInteger with a float output, the dynamic quantization path's depthwise layer
// (ConvInteger -> Cast -> Mul -> Add -> Relu/Clip of a MobileNet block):
//   y[p][c] = clamp(float(acc[p][c]) * (x_scale * w_scale[c]) + bias[c], lo, hi),
//   acc[p][c] = sum over taps of (x - x_zero_point) * w.
// The accumulator is computed exactly on the FP32 depthwise microkernels: every product of
// (x - x_zp) (|.| <= 255) and an int8 weight is an integer below 2^15, so with fewer than 2^24 /
// (255 * 128) = 514 taps every partial sum is an integer below 2^24, which float represents
// exactly in any order and with or without FMA. run() goes image by image (a batch's tensors of
// a dynamic model are whole-batch ones, far beyond the caches): it writes float(x - x_zp) of
// one image into a scratch image (padding reads 0.0 = x_zp - x_zp), runs the FP32 depthwise
// conv with the int8 weights as floats and no bias, and applies the float epilogue in place to
// each output row the conv finishes, while the row is still in L1. Bit-exact with q8_conv2d_nhwc_acc__ref followed by
// dequantize_accumulators__ref.
#include <pthreadpool.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/aligned_buffer.h"
#include "kernels/conv/dequantized_epilogue.h"
#include "kernels/conv/f32_dwconv.h"
#include "kernels/elementwise/output_range.h"
#include "kernels/gemm/q8_float_output.h"
#include "kernels/isa.h"
#include "kernels/q8_type.h"
#include "kernels/ref/conv2d.h"

namespace octet::kernels {

class Q8DequantizedDwConv {
 public:
  // Depthwise geometry (groups == in_c == out_c) with fewer than 514 taps.
  static bool supports(const Conv2dShape& s);

  // w: ONNX order [C][1][kernel_h][kernel_w] int8 (zero point 0). Uses the FP32 depthwise
  // microkernel of level <= isa; has_kernel() is false when there is none (the caller then
  // runs the integer reference conv). The FP32 conv packs the weights through `cache` as
  // F32DwConv does (nullptr: a private copy).
  Q8DequantizedDwConv(const Conv2dShape& s, Q8 x_type, const int8_t* w, DequantizedOutput out, Isa isa,
                      PackedCache* cache = nullptr);

  bool has_kernel() const { return !conv_->kernel_id().scalar; }
  const std::string& kernel_name() const { return conv_->kernel_name(); }
  const KernelId& kernel_id() const { return conv_->kernel_id(); }

  // x: [batch][in_h][in_w][C] of x_type; y: [batch][out_h][out_w][C] float. Not for two
  // threads at once (the scratch image belongs to the object). With `range`, the range of
  // each output row is folded into it right after the row's epilogue.
  void run(const void* x, float x_scale, int32_t x_zero_point, float* y, pthreadpool_t pool,
           OutputRange* range = nullptr);

 private:
  Conv2dShape s_;  // the whole batch; the FP32 conv runs one image of it at a time
  Q8 x_type_;
  DequantizedOutput out_;
  AlignedFloats centered_;  // float(x - x_zero_point) of one image, the FP32 conv's bound input
  std::vector<float> scale_;     // x_scale * w_scale[c], per run
  std::unique_ptr<F32DwConv> conv_;
  const DequantizedEpilogueKernel* epilogue_ = nullptr;  // the passes before and after conv_
  F32Epilogue activation_;                               // out_.act, after the epilogue's clamp
};

}  // namespace octet::kernels
