// RoiAlign (opsets 10, 16) and GridSample (16, 20): sampling a channels-last feature map at
// run-time coordinates (rois, a grid), FP32, in ONNX Runtime's arithmetic (kernels/ref/sample.h),
// on kernels/sample/roi_align.h and grid_sample.h or their references. The loader gives
// RoiAlign-10 its coordinate_transformation_mode (output_half_pixel) and GridSample-16's modes
// opset 20's names (linear, cubic). Inside a QDQ model both stay float between their
// DequantizeLinear and QuantizeLinear, as ORT's CPU provider runs them. Refused with a reason:
// 5-D (volumetric) GridSample, types other than float32.
#include <memory>
#include <string>

#include "engine/op_registry.h"
#include "engine/ops/batch_use.h"
#include "kernels/ref/sample.h"
#include "kernels/sample/grid_sample.h"
#include "kernels/sample/roi_align.h"

namespace octet {
namespace {

void need_f32(const OpContext& c, size_t i, const char* what) {
  if (c.info(i).dtype != ir::DType::f32)
    c.fail(std::string(ir::dtype_name(c.info(i).dtype)) + " " + what + " is not supported (float32)");
}

// ---- RoiAlign

kernels::RoiAlignParams roi_params(const OpContext& c) {
  kernels::RoiAlignParams p;
  const std::string& mode = c.node.attrs.s("mode");
  if (mode != "avg" && mode != "max") c.fail("mode '" + mode + "' is not supported (avg, max)");
  p.mode = mode == "max" ? kernels::RoiAlignMode::max : kernels::RoiAlignMode::avg;
  const std::string& t = c.node.attrs.s("coordinate_transformation_mode");
  if (t != "half_pixel" && t != "output_half_pixel")
    c.fail("coordinate_transformation_mode '" + t + "' is not supported (half_pixel, output_half_pixel)");
  p.half_pixel = t == "half_pixel";
  p.out_h = c.node.attrs.i("output_height");
  p.out_w = c.node.attrs.i("output_width");
  if (p.out_h < 1 || p.out_w < 1 || p.out_h > (1 << 20) || p.out_w > (1 << 20))
    c.fail("output_height and output_width must be in [1, 2^20], got " + std::to_string(p.out_h) + " and " +
           std::to_string(p.out_w));
  p.sampling_ratio = c.node.attrs.i("sampling_ratio");
  if (p.sampling_ratio < 0 || p.sampling_ratio > (1 << 20))
    c.fail("sampling_ratio must be in [0, 2^20], got " + std::to_string(p.sampling_ratio));
  p.spatial_scale = c.node.attrs.f("spatial_scale");
  return p;
}

kernels::RoiAlignShape roi_shape(const OpContext& c) {
  const ir::Dims& x = c.info(0).dims;
  kernels::RoiAlignShape s;
  s.batch = size_t(x[0]), s.channels = size_t(x[1]), s.height = size_t(x[2]), s.width = size_t(x[3]);
  s.rois = size_t(c.info(1).dims[0]);
  return s;
}

std::vector<TensorInfo> infer_roi_align(const OpContext& c) {
  need_f32(c, 0, "RoiAlign input X");
  need_f32(c, 1, "RoiAlign rois");
  const ir::Dims& x = c.info(0).dims;
  const ir::Dims& rois = c.info(1).dims;
  const ir::Dims& idx = c.info(2).dims;
  if (x.size() != 4) c.fail("X " + ir::dims_str(x) + " must have rank 4 (N, C, H, W)");
  if (rois.size() != 2 || rois[1] != 4) c.fail("rois " + ir::dims_str(rois) + " must be [num_rois, 4]");
  if (c.info(2).dtype != ir::DType::s64) c.fail("batch_indices must be int64");
  if (idx.size() != 1 || idx[0] != rois[0])
    c.fail("batch_indices " + ir::dims_str(idx) + " must be [num_rois] for rois " + ir::dims_str(rois));
  const kernels::RoiAlignParams p = roi_params(c);
  if ((x[2] == 0 || x[3] == 0) && rois[0] * x[1] != 0) c.fail("X " + ir::dims_str(x) + " has no pixels to sample");
  return {{ir::DType::f32, {rois[0], x[1], p.out_h, p.out_w}, Layout::channels_last}};
}

Kernel build_roi_align(const OpContext& c, std::span<const void* const> in, std::span<void* const> out) {
  const kernels::RoiAlignParams p = roi_params(c);
  const kernels::RoiAlignShape s = roi_shape(c);
  auto x = static_cast<const float*>(in[0]);
  auto rois = static_cast<const float*>(in[1]);
  auto idx = static_cast<const int64_t*>(in[2]);
  auto y = static_cast<float*>(out[0]);
  if (s.rois == 0 || s.channels == 0) return [] {};
  const std::string where = ir::Graph::describe(c.node);
  // Batch indices name an image of X: checked before any kernel reads it.
  auto check = [=] {
    for (size_t r = 0; r < s.rois; ++r)
      if (idx[r] < 0 || uint64_t(idx[r]) >= s.batch)
        throw ir::Error(where + ": batch_indices[" + std::to_string(r) + "] = " + std::to_string(idx[r]) +
                        " is outside the batch of " + std::to_string(s.batch));
  };
  std::string why;
  if (c.isa == kernels::Isa::scalar) {
    why = "--isa scalar";
  } else if (auto fast = kernels::make_fast<kernels::F32RoiAlign>(p, s, c.isa)) {
    c.report_kernel(fast.driver->kernel_id());
    pthreadpool_t pool = c.threadpool;
    auto roi = fast.driver;
    return [=] {
      check();
      roi->run(x, rois, idx, y, pool);
    };
  } else {
    why = fast.why_not;
  }
  c.report_fallback(why);
  c.report_kernel(kernels::reference_kernel("roi_align_nhwc__ref"));
  return [=] {
    check();
    kernels::roi_align_nhwc__ref(p, s, x, rois, idx, y);
  };
}

// ---- GridSample

kernels::GridSampleParams grid_params(const OpContext& c) {
  kernels::GridSampleParams p;
  const std::string& mode = c.node.attrs.s("mode");
  if (mode == "linear") p.mode = kernels::GridSampleMode::linear;
  else if (mode == "nearest") p.mode = kernels::GridSampleMode::nearest;
  else if (mode == "cubic") p.mode = kernels::GridSampleMode::cubic;
  else c.fail("mode '" + mode + "' is not supported (linear, nearest, cubic)");
  const std::string& pad = c.node.attrs.s("padding_mode");
  if (pad == "zeros") p.padding = kernels::GridSamplePadding::zeros;
  else if (pad == "border") p.padding = kernels::GridSamplePadding::border;
  else if (pad == "reflection") p.padding = kernels::GridSamplePadding::reflection;
  else c.fail("padding_mode '" + pad + "' is not supported (zeros, border, reflection)");
  p.align_corners = c.node.attrs.i("align_corners") != 0;
  return p;
}

kernels::GridSampleShape grid_shape(const OpContext& c) {
  const ir::Dims& x = c.info(0).dims;
  const ir::Dims& g = c.info(1).dims;
  kernels::GridSampleShape s;
  s.batch = size_t(x[0]), s.channels = size_t(x[1]), s.in_h = size_t(x[2]), s.in_w = size_t(x[3]);
  s.out_h = size_t(g[1]), s.out_w = size_t(g[2]);
  return s;
}

std::vector<TensorInfo> infer_grid_sample(const OpContext& c) {
  need_f32(c, 0, "GridSample input X");
  need_f32(c, 1, "GridSample grid");
  const ir::Dims& x = c.info(0).dims;
  const ir::Dims& g = c.info(1).dims;
  if (x.size() == 5) c.fail("5-D (volumetric) GridSample is not supported (4-D input only)");
  if (x.size() != 4) c.fail("X " + ir::dims_str(x) + " must have rank 4 (N, C, H, W)");
  if (g.size() != 4 || g[0] != x[0] || g[3] != 2)
    c.fail("grid " + ir::dims_str(g) + " must be [N, H_out, W_out, 2] for X " + ir::dims_str(x));
  grid_params(c);
  if ((x[2] == 0 || x[3] == 0) && g[1] * g[2] != 0) c.fail("X " + ir::dims_str(x) + " has no pixels to sample");
  return {{ir::DType::f32, {x[0], x[1], g[1], g[2]}, Layout::channels_last}};
}

Kernel build_grid_sample(const OpContext& c, std::span<const void* const> in, std::span<void* const> out) {
  const kernels::GridSampleParams p = grid_params(c);
  const kernels::GridSampleShape s = grid_shape(c);
  auto x = static_cast<const float*>(in[0]);
  auto grid = static_cast<const float*>(in[1]);
  auto y = static_cast<float*>(out[0]);
  if (s.batch * s.channels * s.out_h * s.out_w == 0) return [] {};
  std::string why;
  if (c.isa == kernels::Isa::scalar && p.mode != kernels::GridSampleMode::nearest) {
    why = "--isa scalar";
  } else if (auto fast = kernels::make_fast<kernels::F32GridSample>(p, s, c.isa)) {
    c.report_kernel(fast.driver->kernel_id());
    pthreadpool_t pool = c.threadpool;
    auto gs = fast.driver;
    return [=] { gs->run(x, grid, y, pool); };
  } else {
    why = fast.why_not;
  }
  c.report_fallback(why);
  c.report_kernel(kernels::reference_kernel("grid_sample_nhwc__ref"));
  return [=] { kernels::grid_sample_nhwc__ref(p, s, x, grid, y); };
}

}  // namespace

void register_sample_ops(OpTable& t) {
  OpImpl roi;
  roi.want_layout = channels_last_map;
  roi.infer = infer_roi_align;
  roi.build = build_roi_align;
  // Each roi reads the image its batch index names.
  roi.batch_use = ops::mixes_images;
  t.emplace_back("RoiAlign", roi);

  OpImpl gs;
  gs.want_layout = channels_last_map;
  gs.infer = infer_grid_sample;
  gs.build = build_grid_sample;
  // Image n of the output samples image n of X at grid n: apart when both carry the batch.
  gs.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) {
    return ops::keeps_images_apart_if(ops::is_activation(c, 0) && ops::is_activation(c, 1));
  };
  t.emplace_back("GridSample", gs);
}

}  // namespace octet
