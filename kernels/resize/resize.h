#pragma once
// Resize over NHWC maps (kernels/ref/resize.h for the arithmetic): nearest copies whole pixels,
// and a run of output rows that read the same input row copies the first of them; linear (and
// cubic, FP32 only) runs the first microkernel of kernels/resize/resize_list.h that runs under
// its cap (isa_runs), or resize_linear_nhwc__ref (resize_cubic_nhwc__ref), whose results it
// reproduces bit for bit, when none does. With tf_crop_and_resize, the rows and pixels whose
// source lies outside the input are then filled with the extrapolation value.
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
  float cubic_coeff_a = -0.75f;
  bool exclude_outside = false;
  float extrapolation_value = 0.0f;             // tf_crop_and_resize
  float roi_h[2] = {0.0f, 1.0f}, roi_w[2] = {0.0f, 1.0f};  // tf_crop_and_resize: start, end
};

class Resize2d {
 public:
  Resize2d(const Resize2dShape& s, const Resize2dParams& p, ResizeElement e, Isa isa);
  // Linear only: runs exactly `ukernel` (tests and benchmarks); the CPU must support ukernel.isa.
  Resize2d(const Resize2dShape& s, const Resize2dParams& p, ResizeElement e, const ResizeUkernel& ukernel);
  // Cubic FP32 only: runs exactly `ukernel`, likewise.
  Resize2d(const Resize2dShape& s, const Resize2dParams& p, const ResizeCubicEntry& ukernel);

  // FP32 output only: fn(ctx, row, n) rewrites each output row of n floats in place right after
  // it is written, while it is in cache (QDQ's fake quantization of a segmentation net's
  // upsampled logits); on the paths that write whole runs of rows (nearest, the references),
  // once the output is complete.
  struct RowEpilogue {
    void (*fn)(const void* ctx, float* row, size_t n) = nullptr;
    const void* ctx = nullptr;
  };
  void set_row_epilogue(const RowEpilogue& e);

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
  static void cubic_task(void* context, size_t row);
  void finish_row(void* y, size_t task) const;  // the epilogue on output row `task`, if any
  static void epilogue_task(void* context, size_t row);
  // tf_crop_and_resize: fills output row `task` where its source row or pixels lie outside the
  // input; true when the whole row was filled.
  bool extrapolate_row(size_t task, void* y, const std::vector<uint8_t>& rows_outside,
                       const std::vector<uint8_t>& cols_outside) const;
  void fill(unsigned char* p, size_t elements) const;

  Resize2dShape s_;
  Resize2dParams p_;
  ResizeElement element_;
  size_t element_bytes_;
  const ResizeUkernel* ukernel_ = nullptr;
  const ResizeCubicEntry* cubic_ukernel_ = nullptr;
  unsigned char fill_[sizeof(float)] = {};  // the extrapolation value as one element
  std::vector<int32_t> rows_, cols_;     // nearest: source row / column of each output row / column
  std::vector<int32_t> run_starts_;      // nearest: output rows where a new source row starts, + out_h
  LinearTaps row_taps_, col_taps_;       // linear
  std::vector<int32_t> col_offsets0_, col_offsets1_;  // linear: col_taps_ indices * channels
  CubicTaps row_cubic_, col_cubic_;                   // cubic
  std::vector<int32_t> cubic_offsets_;                // cubic: 4 per pixel, col_cubic_ indices * channels
  std::vector<float> cubic_wx_;                       // cubic: 4 per pixel, coefficient / sum
  RowEpilogue epilogue_;
};

}  // namespace octet::kernels
