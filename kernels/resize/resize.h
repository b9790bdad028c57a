#pragma once
// Resize over NHWC maps (kernels/ref/resize.h for the arithmetic): nearest copies whole pixels,
// and a run of output rows that read the same input row copies the first of them; linear runs
// the first microkernel of kernels/resize/resize_list.h that runs under its cap (isa_runs), or
// resize_linear_nhwc__ref, whose results it reproduces bit for bit, when none does.
// kernel_name() says which ran. Construct once per layer (the indices and weights are computed
// there), run() any number of times: no allocation, threads split the output rows.
#include <pthreadpool.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernel_id.h"
#include "kernels/isa.h"
#include "kernels/q8_type.h"
#include "kernels/ref/resize.h"
#include "kernels/resize/resize_list.h"

namespace octet::kernels {

enum class ResizeElement : uint8_t { f32, u8, s8 };

struct Resize2dParams {
  ResizeMode mode = ResizeMode::nearest;
  CoordinateTransform transform = CoordinateTransform::half_pixel;
  NearestRounding rounding = NearestRounding::round_prefer_floor;
  float scale_h = 1.0f, scale_w = 1.0f;
};

class Resize2d {
 public:
  Resize2d(const Resize2dShape& s, const Resize2dParams& p, ResizeElement e, Isa isa);
  // Linear only: runs exactly `ukernel` (tests and benchmarks); the CPU must support ukernel.isa.
  Resize2d(const Resize2dShape& s, const Resize2dParams& p, ResizeElement e, const ResizeUkernel& ukernel);

  KernelId kernel_id() const;
  std::string kernel_name() const { return kernel_id().name; }
  // x: [batch][in_h][in_w][channels], y: [batch][out_h][out_w][channels].
  void run(const void* x, void* y, pthreadpool_t pool) const;

 private:
  struct Call {
    const Resize2d* self;
    const void* x;
    void* y;
  };
  void setup();
  static void nearest_task(void* context, size_t run);
  static void linear_task(void* context, size_t row);

  Resize2dShape s_;
  Resize2dParams p_;
  ResizeElement element_;
  size_t element_bytes_;
  const ResizeUkernel* ukernel_ = nullptr;
  std::vector<int32_t> rows_, cols_;     // nearest: source row / column of each output row / column
  std::vector<int32_t> run_starts_;      // nearest: output rows where a new source row starts, + out_h
  LinearTaps row_taps_, col_taps_;       // linear
  std::vector<int32_t> col_offsets0_, col_offsets1_;  // linear: col_taps_ indices * channels
};

}  // namespace octet::kernels
