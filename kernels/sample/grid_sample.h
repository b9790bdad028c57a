#pragma once
// GridSample (2-D) over channels-last maps: nearest copies whole pixels (or zeros), linear (linear4
// with zeros padding and align_corners 0, as ORT) and cubic run the first microkernel of their table in kernels/sample/sample_list.h that runs under
// the cap; none: kernels::Unsupported, and the op runs grid_sample_nhwc__ref, whose results this
// reproduces bit for bit. Threads take output rows; each row's taps and weights (computed as
// kernels/ref/sample.h does) go to the microkernel in chunks on the stack, so run() allocates
// nothing. A tap outside the map under zeros padding points at a row of zeros the driver keeps.
#include <pthreadpool.h>

#include <cstddef>
#include <vector>

#include "kernels/fallback.h"
#include "kernels/isa.h"
#include "kernels/kernel_id.h"
#include "kernels/ref/sample.h"
#include "kernels/sample/sample_list.h"

namespace octet::kernels {

class F32GridSample {
 public:
  F32GridSample(const GridSampleParams& p, const GridSampleShape& s, Isa isa);
  // Linear or cubic: runs exactly `ukernel` (tests and benchmarks); the CPU must support ukernel.isa.
  F32GridSample(const GridSampleParams& p, const GridSampleShape& s, const GridSampleUkernel& ukernel);

  KernelId kernel_id() const;
  // x: [batch][in_h][in_w][channels]; grid: [batch][out_h][out_w][2]; y: [batch][out_h][out_w][channels].
  void run(const float* x, const float* grid, float* y, pthreadpool_t pool) const;

 private:
  struct Call;
  static void row_task(void* context, size_t row);
  void check() const;

  GridSampleParams p_;
  GridSampleShape s_;
  const GridSampleUkernel* ukernel_ = nullptr;  // nullptr for nearest
  std::vector<float> zeros_;                    // one pixel of zeros
};

}  // namespace octet::kernels
