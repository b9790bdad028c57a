#pragma once
// RoiAlign over a channels-last map on the microkernels of kernels/sample/sample_list.h: the
// first row of the mode's table that runs under the cap; none, or a map too large for the
// microkernels' int32 offsets: kernels::Unsupported, and the op runs roi_align_nhwc__ref, whose
// results this reproduces bit for bit. Threads take whole rois; each bin's samples (taps and
// weights as kernels/ref/sample.h computes them) go to the microkernel in chunks on the stack,
// so run() allocates nothing.
#include <pthreadpool.h>

#include <cstddef>
#include <cstdint>

#include "kernels/fallback.h"
#include "kernels/isa.h"
#include "kernels/kernel_id.h"
#include "kernels/ref/sample.h"
#include "kernels/sample/sample_list.h"

namespace octet::kernels {

class F32RoiAlign {
 public:
  F32RoiAlign(const RoiAlignParams& p, const RoiAlignShape& s, Isa isa);
  // Runs exactly `ukernel` (tests and benchmarks); the CPU must support ukernel.isa.
  F32RoiAlign(const RoiAlignParams& p, const RoiAlignShape& s, const RoiAlignUkernel& ukernel);

  KernelId kernel_id() const { return row_kernel(*ukernel_); }
  // x: [batch][height][width][channels]; rois: [rois][4]; batch_indices: [rois] (each in
  // [0, batch), else std::out_of_range); y: [rois][out_h][out_w][channels].
  void run(const float* x, const float* rois, const int64_t* batch_indices, float* y, pthreadpool_t pool) const;

 private:
  struct Call;
  static void roi_task(void* context, size_t roi);
  void check() const;

  RoiAlignParams p_;
  RoiAlignShape s_;
  const RoiAlignUkernel* ukernel_;
};

}  // namespace octet::kernels
