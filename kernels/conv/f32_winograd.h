#pragma once
// FP32 3x3 stride-1 convolution by Winograd F(2x2, 3x3), NHWC. Each 2x2 block of output pixels
// (a "tile") reads a 4x4 input tile; the input transform turns it into 16 vectors of in_c
// values, 16 GEMMs [tiles x in_c]·[in_c x out_c] against the transformed weights (the FP32
// GEMM microkernels of kernels/gemm/f32_gemm_list.h) replace the 36 multiplies per tile and
// channel pair of the direct conv by 16 (2.25x fewer), and the output transform turns the 16
// products back into 2x2 pixels with the bias and activation fused. Transforms:
// kernels/conv/f32_winograd_list.h. The result differs from the direct conv by rounding only
// (the transforms add and subtract values of similar magnitude: error ~ a few ulp of
// sum|x||w|).
//
// Work is split into blocks of tiles of one image that go through all three steps at once,
// so that their transformed inputs and products stay in L2; each thread works on its own
// scratch.
#include <pthreadpool.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel_id.h"
#include "kernels/gemm/f32_gemm_list.h"
#include "kernels/conv/f32_winograd_list.h"
#include "kernels/cache_budgets.h"
#include "kernels/gemm/f32_gemm.h"
#include "kernels/isa.h"
#include "kernels/ref/activation.h"
#include "kernels/ref/conv2d.h"

namespace octet::kernels {

class F32WinogradConv {  // 3x3, stride 1, dilation 1, groups 1, any pads (incl. asymmetric), NHWC
 public:
  // True for 3x3, stride 1, dilation 1, groups 1, positive sizes and out_h / out_w that a
  // non-negative bottom / right pad explains. Any activation (none / relu / clip fuse into
  // the output transform, the others are applied to each output pixel right after it).
  static bool supports(const Conv2dShape& s, const Activation& act);
  // Whether to prefer this over F32Conv (a hint for the engine): supported and in_c, out_c >= 8.
  // Measured single-thread (bench/f32_winograd_bench): with 1 or 3 input channels (first
  // layers) the transforms dominate and Winograd is ~4x SLOWER than the direct conv; at 16..64
  // channels it is 1.2x (16->16 @32) to 1.8x (64->64 @8) faster. 8 is an unmeasured midpoint.
  // Not when the transformed weights outgrow the cache budget and the batch has too few tiles
  // to reuse them, a number that grows with the level's `vector_rate` (kernels/isa.h) and
  // shrinks when the model's weights (`model_weight_bytes`, all its constants; 0: unknown, as
  // if from memory) stay in the L3 between runs (.cc).
  static bool faster_than_direct(const Conv2dShape& s, double vector_rate = 1.0, size_t model_weight_bytes = 0,
                                 const CacheSizes& sizes = cache_sizes());
  // weights ONNX order [out_c][in_c][3][3]; bias [out_c] or nullptr. Transforms and packs here,
  // or takes the packing `cache` holds for the same recipe (nullptr: a private copy).
  // Chooses the transforms and the GEMM microkernel of the highest level <= `isa` that the CPU
  // supports; throws std::invalid_argument when there is none (isa == scalar) or the shape is
  // not supported: callers use F32Conv or the ref kernel then.
  F32WinogradConv(const Conv2dShape& s, const float* weights, const float* bias, const Activation& act, Isa isa,
                  PackedCache* cache = nullptr);
  // Or exact list entries (tests / benchmarks); throws std::invalid_argument when the CPU
  // cannot run them.
  F32WinogradConv(const Conv2dShape& s, const float* weights, const float* bias, const Activation& act,
                  const F32WinogradKernel& transforms, const F32GemmKernel& gemm, PackedCache* cache = nullptr);

  const std::string& kernel_name() const { return name_.name; }  // "f32_winograd_2x2_3x3__avx512"
  const KernelId& kernel_id() const { return name_; }
  const F32GemmKernel& gemm_kernel() const { return *gemm_; }

  void bind(const float* x);  // allocates the scratch (nothing depends on x itself)
  // y = conv(x). No allocation. With a residual (y's shape, not overlapping y):
  // y = act(conv(x) + residual), added to each output tile as it is written. y's pixels are
  // y_pixel_stride floats apart (0: out_c; more: a slice of a Concat's channels), the residual's
  // out_c.
  void run(const float* x, float* y, pthreadpool_t pool, const float* residual = nullptr,
           size_t y_pixel_stride = 0) const;

  // Most output tiles one block holds (a multiple of the GEMM's MR, or every tile of an image).
  size_t tiles_per_block() const { return block_tiles_; }
  // Whether run() on `threads` threads shares out the output channels (each thread runs every
  // block over its share) rather than the blocks.
  bool shares_channels(size_t threads) const;

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  struct Block;
  void run_block(const Block& b, size_t slot, const float* x, float* y, const float* residual,
                 size_t y_pixel_stride) const;
  static void run_slot(void* context, size_t slot);

  Conv2dShape s_;
  Activation act_;
  F32MinMax clamp_;
  F32Epilogue epilogue_;
  const F32WinogradKernel* transforms_;
  const F32GemmKernel* gemm_;
  KernelId name_;
  struct TransformedWeights {
    std::vector<F32PackedWeights> positions;  // 16, one per transformed position xi = 4 i + j
    friend size_t packed_size(const TransformedWeights& t) {
      size_t b = 0;
      for (const auto& p : t.positions) b += p.bytes();
      return b;
    }
  };
  std::shared_ptr<const TransformedWeights> weights_;  // shared by the Session's plans
  bool weights_stream_ = false;            // the transformed weights come from beyond the L2 (f32_weights_stream)
  F32GemmUkernel gemm_form_;               // the GEMM tile's plain or streaming form
  size_t column_chunk_ = 0;                // columns a block's GEMMs run over all its tiles at a time
  std::vector<float> bias_;                // out_c (zeros when there is no bias)
  std::vector<float> zero_;                // in_c zeros: the pixel every padding tap reads
  size_t tiles_h_, tiles_w_, block_tiles_, blocks_per_image_;
  size_t slot_floats_;  // V [16][block_tiles][in_c] then M [16][block_tiles][out_c]
  std::unique_ptr<float[], Free> scratch_;  // slots_ x slot_floats_, 64-byte aligned
  size_t slots_ = 0;
};

}  // namespace octet::kernels
