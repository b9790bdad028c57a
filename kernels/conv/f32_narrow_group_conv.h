#pragma once
// FP32 grouped convolution with narrow groups (2 or 4 input and output channels per group:
// ResNeXt-50 32x4d's first stage), NHWC, on the microkernels of kernels/conv/f32_gconv_list.h:
// a vector of output channels spans several groups, so no FMA is spent on the padding columns
// the GEMM tiles (F32Conv) give each group.
//
// Life cycle as F32Conv's: construct once per layer (packs the weights), bind() once per input
// address (one pointer per output pixel and tap for image 0, other images an offset; only the
// border pixels where the row kernel runs), run() any number of times on that input (no
// allocation; threads split the output rows, or tiles of pixels where the row kernel does not run).
#include <pthreadpool.h>

#include <memory>
#include <string>
#include <vector>

#include "kernels/conv/dwconv_indirection.h"
#include "kernels/conv/f32_gconv_list.h"
#include "kernels/elementwise/eltwise.h"
#include "kernels/isa.h"
#include "kernels/kernel_id.h"
#include "kernels/ref/activation.h"
#include "kernels/ref/conv2d.h"

namespace octet::kernels {

class PackedCache;  // kernels/packed_cache.h

// The first row of kF32GconvKernels for groups of `group_width` that runs here under the cap
// `isa`; nullptr when none does.
const F32GconvKernel* choose_f32_gconv_kernel(Isa isa, int group_width);

class F32NarrowGroupConv {
 public:
  // 2-D, groups > 1, in_c / groups == out_c / groups == 2 or 4, positive sizes; any activation
  // (relu / clip are the microkernel's clamp, the others F32Epilogue over each output tile).
  static bool supports(const Conv2dShape& s, const Activation& act);
  // The cost model (docs/kernels.md): cycles of the vector instructions of one run, FMAs at two
  // a cycle and the in-group broadcasts at one (one per FMA on the indirect kernel, 10 per 24 on
  // the row kernel at stride 1, 17 per 24 at stride 2; none where a vector is one group: NEON's
  // FMA by element), at the level's vector rate; and the compute cycles of the GEMM tile F32Conv
  // would take for the same conv (f32_gemm_compute_cycles: its padded columns).
  static double cycles(const Conv2dShape& s, const F32GconvKernel& kernel);
  static double tile_cycles(const Conv2dShape& s, Isa isa);
  // Whether this driver's kernel under the cap `isa` costs fewer cycles than the tile.
  static bool faster_than_tile(const Conv2dShape& s, Isa isa);

  // weights ONNX order [out_c][G][kh][kw]; bias [out_c] or nullptr. Packs them, or takes the
  // packing `cache` holds for the same recipe. Throws Unsupported when !supports() or no row
  // runs under `isa`.
  F32NarrowGroupConv(const Conv2dShape& s, const float* weights, const float* bias, const Activation& act, Isa isa,
                     PackedCache* cache = nullptr);
  // Runs exactly `kernel` (tests and benchmarks); the CPU must support kernel.isa.
  F32NarrowGroupConv(const Conv2dShape& s, const float* weights, const float* bias, const Activation& act,
                     const F32GconvKernel& kernel, PackedCache* cache = nullptr);

  const std::string& kernel_name() const { return name_.name; }
  const KernelId& kernel_id() const { return name_; }

  void bind(const float* x);  // x: [batch][in_h][in_w][C]; run() must then be given the same x
  // y = act(conv(x) [+ residual]); residual in y's shape, not overlapping y. No allocation.
  void run(const float* x, float* y, pthreadpool_t pool, const float* residual = nullptr) const;

 private:
  static void tile_task(void* context, size_t image, size_t pixel, size_t count);
  static void row_task(void* context, size_t image, size_t oy);

  Conv2dShape s_;
  Activation act_;
  const F32GconvKernel* kernel_;
  KernelId name_;
  float min_, max_;
  F32Epilogue epilogue_;
  std::shared_ptr<const std::vector<float>> packed_;  // shared by the Session's plans
  std::vector<float> zero_;  // what every padding tap reads: a whole row of zeros for the row kernel
  bool rows_ = false;        // 3-wide, dilation 1, stride 1 or 2: interior pixels on the row kernel
  int lo_ = 0, hi_ = 0;      // the interior output columns (dw_interior_columns)
  std::vector<const float*> taps_;                     // [out_h * out_w][kernel_h * kernel_w], image 0
  const float* bound_ = nullptr;
};

}  // namespace octet::kernels
