#pragma once
// INT8 depthwise convolution (QLinearConv with groups == in_c == out_c, channel multiplier 1)
// over NHWC activations: u8 or s8 activations with any zero point, s8 weights with zero point
// 0 (per-channel scales), int32 bias, per-channel requantization to u8 or s8 with a clamp.
// Bit-exact with q8_conv2d_nhwc__ref (kernels/ref/qconv2d.h; math in docs/requantization.md).
// Picks the fastest microkernel of kernels/conv/dwconv_list.h the requested ISA allows (the
// portable row at Isa::scalar): one path at every level. Life cycle as F32DwConv (kernels/conv/f32_dwconv.h).
#include <pthreadpool.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel_id.h"
#include "kernels/conv/dwconv_indirection.h"
#include "kernels/conv/dwconv_list.h"
#include "kernels/isa.h"
#include "kernels/q8_type.h"
#include "kernels/ref/conv2d.h"
#include "kernels/ref/qmath.h"

namespace octet::kernels {

class PackedCache;  // kernels/packed_cache.h

// The microkernel Q8DwConv(..., isa) runs for shape s: the first entry of kQ8DwConvKernels
// that runs here under the cap `isa` and fits s; nullptr: none (the constructor throws
// Unsupported).
const Q8DwConvKernel* choose_q8_dwconv_kernel(Isa isa, const Conv2dShape& s);

// How Q8DwConv::run shares a "kw4" conv among `tasks` tasks: row_parts runs of output rows
// times channel_parts ranges of kDwKw4Block-channel blocks. A run of rows rebuilds the
// window's rows above its first one, which a neighbour also builds; a channel range builds
// only its channels but shares whole blocks unevenly. Picks the split into at most `tasks`
// tasks whose busiest task does the least work.
struct DwKw4Split {
  size_t row_parts = 1, channel_parts = 1;
};
DwKw4Split dw_kw4_split(const Conv2dShape& s, size_t tasks);

class Q8DwConv {
 public:
  // Depthwise geometry (groups == in_c == out_c). Weights must be s8 with zero point 0; the
  // caller checks that and uses the ref kernel otherwise.
  static bool supports(const Conv2dShape& s, Q8 x_type, Q8 y_type);

  // w: ONNX order [C][1][kernel_h][kernel_w]; bias: [C] or nullptr; rq.multiplier has 1 or C
  // values, [rq.qmin, rq.qmax] inside y_type's range. Packs them, or takes the packing `cache`
  // holds for the same recipe (nullptr: a private copy).
  Q8DwConv(const Conv2dShape& s, Q8 x_type, int32_t x_zero_point, const int8_t* w, const int32_t* bias,
           const Requantization& rq, Q8 y_type, Isa isa, PackedCache* cache = nullptr);
  // Runs exactly `kernel` (tests and benchmarks); the CPU must support kernel.isa.
  Q8DwConv(const Conv2dShape& s, Q8 x_type, int32_t x_zero_point, const int8_t* w, const int32_t* bias,
           const Requantization& rq, Q8 y_type, const Q8DwConvKernel& kernel, PackedCache* cache = nullptr);

  const std::string& kernel_name() const { return name_.name; }
  const KernelId& kernel_id() const { return name_; }

  // x: [batch][in_h][in_w][C] of x_type. run() must then be given the same x.
  void bind(const void* x);
  // y: [batch][out_h][out_w][C] of y_type. pool may be nullptr (calling thread only).
  // Not reentrant on one object: the "kw4" kernels' row buffers belong to the object.
  void run(const void* x, void* y, pthreadpool_t pool) const;

 private:
  void init(const int8_t* w, const int32_t* bias, const Requantization& rq, PackedCache* cache);
  static void row_task(void* context, size_t row);  // context: a RowTask (the .cc)
  void run_row(size_t row, uint8_t* y) const;

  Conv2dShape s_;
  Q8 x_type_, y_type_;
  int32_t x_zero_point_;
  const Q8DwConvKernel* kernel_ = nullptr;
  KernelId name_;
  std::shared_ptr<const std::vector<int32_t>> packed_;  // shared by the Session's plans
  Q8DwEpilogue ep_{};
  std::vector<float> multiplier_;  // one per channel
  std::vector<uint8_t> pad_row_;  // x_zero_point bytes
  DwColumns cols_;
  const uint8_t* bound_x_ = nullptr;
  std::vector<const uint8_t*> row_ptrs_;
  std::vector<const uint8_t*> border_taps_;
  // The "kw4" kernels' row buffers: one per task of run(), at most kMaxTasks.
  static constexpr int kMaxTasks = 8;
  std::vector<uint8_t> scratch_;
  size_t scratch_stride_ = 0;  // bytes per task, a multiple of 64
  std::vector<int32_t> pack_taps(const int8_t* w, const int32_t* bias) const;
  std::vector<int32_t> pack_kw4(const int8_t* w, const int32_t* bias) const;
  void run_task(size_t task, const DwKw4Split& split, uint8_t* y) const;
};

}  // namespace octet::kernels
