#pragma once
// FP32 dense and grouped convolution, NHWC, on the GEMM / IGEMM microkernels of
// kernels/gemm/f32_gemm_list.h. A 1x1, stride-1, unpadded conv is a plain GEMM over the pixels;
// every other conv is an indirect GEMM: bind() builds, once per input address, MR row
// pointers per kernel tap for each tile of output pixels (pointing at the zero row where the
// tap falls into padding), and run() only walks them. A wide kernel over few input channels (a
// first layer: 3 channels) merges each row of kernel_w taps into one tap of kernel_w · in_c
// contiguous floats of a horizontally padded copy of x, so the microkernel runs 7 taps of 21
// floats instead of 49 taps of 3 (ResNet's 7x7 stem).
// A 3-D conv (Conv2dShape's depth fields, NDHWC) is the same IGEMM: its taps run over
// (kd, kh, kw) and its pixels over (od, oh, ow); 1x1x1 stride-1 unpadded ones are a plain GEMM.
#include <pthreadpool.h>

#include <string>
#include <vector>

#include "kernels/kernel_id.h"
#include "kernels/gemm/f32_gemm_list.h"
#include "kernels/gemm/f32_gemm.h"
#include "kernels/isa.h"
#include "kernels/ref/activation.h"
#include "kernels/ref/conv2d.h"

namespace octet::kernels {

class F32Conv {  // dense or grouped conv, any kernel / stride / dilation / pads, NHWC
 public:
  // Every size positive, in_c and out_c multiples of groups; any activation (none / relu / clip
  // fuse into the kernel, the others are applied to each output tile right after it is
  // computed). A grouped conv (ResNeXt, RegNet) runs each group as its own IGEMM over the
  // group's input channels (the microkernel's a_offset) into its slice of the output channels.
  // Depthwise convs (one channel per group) have their own driver (F32DwConv).
  static bool supports(const Conv2dShape& s, const Activation& act);
  // weights ONNX order [out_c][in_c][kh][kw] ([out_c][in_c][kd][kh][kw] in 3-D); bias [out_c] or nullptr. Packs here, or takes
  // the packing `cache` holds for the same recipe (nullptr: a private copy).
  // Chooses the best microkernel that runs here under the cap `isa` (isa_runs); throws
  // std::invalid_argument if none (i.e. isa == scalar): callers use the ref kernel then.
  F32Conv(const Conv2dShape& s, const float* weights, const float* bias, const Activation& act, Isa isa,
          PackedCache* cache = nullptr);
  // Or pick an exact list entry (tests / benchmarks).
  F32Conv(const Conv2dShape& s, const float* weights, const float* bias, const Activation& act,
          const F32GemmKernel& kernel, PackedCache* cache = nullptr);

  const std::string& kernel_name() const { return name_.name; }
  const KernelId& kernel_id() const { return name_; }
  const F32GemmKernel& kernel() const { return *kernel_; }
  // True when the conv runs as a plain GEMM (1x1, stride 1, no padding): bind() is then free.
  bool is_plain_gemm() const { return plain_gemm_; }
  // True when each row of taps runs as one tap over a padded copy of x (few input channels).
  bool merges_taps() const { return merge_kx_; }
  // Whether a conv of this shape merges its taps: kernel_w >= 5, dilation_w 1, in_c < 8.
  static bool merges_taps(const Conv2dShape& s);

  void bind(const float* x);  // builds the indirection for this input address (allocates)
  // (merged taps: for the padded copy, whatever x is)
  // y = conv(x); x must be the bound address (bind again if it changed). No allocation.
  // With a residual (y's shape and layout, not overlapping y): y = act(conv(x) + residual),
  // added to each tile while it is in cache (a ResNet block's Add and Relu fused). y's pixels
  // are y_pixel_stride floats apart (0: out_c; more: y is a slice of a wider map's channels,
  // a Concat's output), the residual's out_c.
  void run(const float* x, float* y, pthreadpool_t pool, const float* residual = nullptr,
           size_t y_pixel_stride = 0) const;

 private:
  Conv2dShape s_;
  Activation act_;
  F32MinMax clamp_;
  F32Epilogue epilogue_;
  const F32GemmKernel* kernel_;
  KernelId name_;
  bool plain_gemm_;
  bool merge_kx_;
  size_t group_in_c_, group_out_c_, group_cols_;  // grouped conv: channels per group, packed columns per group
  std::shared_ptr<const F32PackedWeights> weights_;  // shared by the Session's plans
  bool stream_ = false;                    // the tiles' streaming form (f32_weights_stream)
  std::vector<float> zero_;                // kc zeros: the row every padding tap reads
  // Merged taps: x with pad_left + pad_right zero columns per row, per image; run() rewrites
  // the interior only.
  mutable std::vector<float> padded_;
  size_t padded_w_ = 0;
  std::vector<const float*> indirection_;  // [pixel tile][tap][MR], for image 0 of the bound x
  const float* bound_ = nullptr;
};

}  // namespace octet::kernels
