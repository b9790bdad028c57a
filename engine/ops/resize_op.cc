// Resize (opsets 10-19) and Upsample (7-9), which the loader normalises to Resize's inputs
// (X, roi, scales, sizes) and attributes: nearest, linear and cubic, FP32 and 8-bit (a nearest
// Resize between equal Q/DQ parameters runs on the integers, as in ONNX Runtime; linear and
// cubic stay in float there). A 2-D resize of a feature map (3-D or 4-D, batch and channels
// kept) runs over channels-last maps on kernels/resize/resize.h; a nearest resize of other axes
// on the row-major reference. roi and scales may be graph inputs: the session folds their values
// into the plan (OpImpl::value_inputs). Refused with a reason: antialias, linear beyond 2 axes,
// cubic other than over the last two axes of a 4-D (or a 2-D) input.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include "engine/op_registry.h"
#include "engine/ops/batch_use.h"
#include "kernels/quantize/quantize.h"
#include "kernels/resize/resize.h"
#include "kernels/ref/resize.h"

namespace octet {
namespace {

using kernels::CoordinateTransform;
using kernels::NearestRounding;
using kernels::ResizeMode;

struct ResizePlan {
  ir::Dims out;
  std::vector<float> scales;  // one per axis
  std::vector<float> roi;     // starts then ends, one per axis (tf_crop_and_resize; else 0s and 1s)
  kernels::Resize2dParams params;
  bool feature_map = false;  // runs on the channels-last 2-D kernels
};

CoordinateTransform transform_of(const OpContext& c) {
  const std::string& t = c.node.attrs.s("coordinate_transformation_mode");
  if (t == "half_pixel") return CoordinateTransform::half_pixel;
  if (t == "half_pixel_symmetric") return CoordinateTransform::half_pixel_symmetric;
  if (t == "pytorch_half_pixel") return CoordinateTransform::pytorch_half_pixel;
  if (t == "align_corners") return CoordinateTransform::align_corners;
  if (t == "asymmetric") return CoordinateTransform::asymmetric;
  if (t == "tf_half_pixel_for_nn") return CoordinateTransform::tf_half_pixel_for_nn;
  if (t == "tf_crop_and_resize") return CoordinateTransform::tf_crop_and_resize;
  c.fail("coordinate_transformation_mode '" + t + "' is not supported");
}

NearestRounding rounding_of(const OpContext& c) {
  const std::string& r = c.node.attrs.s("nearest_mode");
  if (r == "round_prefer_floor") return NearestRounding::round_prefer_floor;
  if (r == "round_prefer_ceil") return NearestRounding::round_prefer_ceil;
  if (r == "floor") return NearestRounding::floor;
  if (r == "ceil") return NearestRounding::ceil;
  if (r == "simple") return NearestRounding::simple;  // the loader's name for Resize-10's and Upsample's
  c.fail("nearest_mode '" + r + "' is not supported");
}

// A constant input, empty when omitted or of no elements (opset 13+ may pass an empty tensor).
const ir::TensorData* optional_constant(const OpContext& c, size_t i, const char* what) {
  if (!c.has(i)) return nullptr;
  const ir::TensorData& t = c.constant(i, what);
  return t.count() == 0 ? nullptr : &t;
}

// Per-axis values given for `axes` (opset 18), spread over every axis, others `fill`.
template <class T>
std::vector<T> spread(const OpContext& c, std::vector<T> given, size_t rank, T fill) {
  const auto& axes = c.node.attrs.ints("axes");
  if (axes.empty()) {
    if (given.size() != rank)
      c.fail(std::to_string(given.size()) + " scales or sizes for an input of rank " + std::to_string(rank));
    return given;
  }
  if (given.size() != axes.size())
    c.fail(std::to_string(given.size()) + " scales or sizes for " + std::to_string(axes.size()) + " axes");
  std::vector<T> all(rank, fill);
  std::vector<bool> seen(rank, false);
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t a = normalize_axis(c, axes[k], int64_t(rank));
    if (seen[size_t(a)]) c.fail("axis " + std::to_string(axes[k]) + " is repeated in axes");
    seen[size_t(a)] = true;
    all[size_t(a)] = given[k];
  }
  return all;
}

ResizePlan plan_resize(const OpContext& c) {
  const TensorInfo& x = c.info(0);
  if (x.dtype != ir::DType::f32 && x.dtype != ir::DType::u8 && x.dtype != ir::DType::s8)
    c.fail(std::string(ir::dtype_name(x.dtype)) + " " + c.node.op + " is not supported (float32, uint8, int8)");
  const size_t rank = x.dims.size();
  if (rank == 0) c.fail("X must have rank >= 1");
  const std::string& mode = c.node.attrs.s("mode");
  if (mode != "nearest" && mode != "linear" && mode != "bilinear" && mode != "cubic")
    c.fail("mode '" + mode + "' is not supported (nearest, linear, cubic)");
  if (c.node.attrs.i("antialias") != 0) c.fail("antialias is not supported");
  if (c.node.attrs.i("exclude_outside") != 0 && mode != "cubic") c.fail("exclude_outside applies to cubic mode only");

  ResizePlan p;
  p.params.mode = mode == "nearest" ? ResizeMode::nearest : mode == "cubic" ? ResizeMode::cubic : ResizeMode::linear;
  p.params.transform = transform_of(c);
  p.params.rounding = p.params.mode == ResizeMode::nearest ? rounding_of(c) : NearestRounding::round_prefer_floor;
  p.params.cubic_coeff_a = c.node.attrs.f("cubic_coeff_a", -0.75f);
  p.params.exclude_outside = c.node.attrs.i("exclude_outside", 0) != 0;
  p.params.extrapolation_value = c.node.attrs.f("extrapolation_value", 0.0f);

  const ir::TensorData* scales = optional_constant(c, 2, "scales");
  const ir::TensorData* sizes = optional_constant(c, 3, "sizes");
  if ((scales != nullptr) == (sizes != nullptr)) c.fail("exactly one of scales and sizes must be given");
  p.out = x.dims;
  if (scales) {
    if (scales->dtype != ir::DType::f32) c.fail("scales must be float32");
    const auto v = scales->values<float>();
    p.scales = spread(c, std::vector<float>(v.begin(), v.end()), rank, 1.0f);
    for (size_t d = 0; d < rank; ++d) {
      if (!(p.scales[d] > 0)) c.fail("every scale must be > 0, got " + std::to_string(p.scales[d]));
      if (c.node.op == "Upsample" && p.scales[d] < 1) c.fail("Upsample scales must be >= 1");
      p.out[d] = static_cast<int64_t>(p.scales[d] * static_cast<float>(x.dims[d]));  // ORT's float product, truncated
    }
  } else {
    p.out = spread(c, sizes->to_i64(), rank, int64_t(0));
    for (size_t d = 0; d < rank; ++d)
      if (c.node.attrs.ints("axes").size() && p.out[d] == 0) p.out[d] = x.dims[d];
    p.scales.resize(rank);
    for (size_t d = 0; d < rank; ++d) {
      if (p.out[d] < 0) c.fail("sizes must not be negative");
      if (x.dims[d] == 0 && p.out[d] != 0) c.fail("an empty axis cannot be resized to a non-empty one");
      p.scales[d] = x.dims[d] == 0 ? 1.0f : static_cast<float>(p.out[d]) / static_cast<float>(x.dims[d]);
    }
    const std::string& policy = c.node.attrs.s("keep_aspect_ratio_policy");
    if (policy != "stretch") {
      if (policy != "not_larger" && policy != "not_smaller")
        c.fail("keep_aspect_ratio_policy '" + policy + "' is not supported (stretch, not_larger, not_smaller)");
      const auto& axes = c.node.attrs.ints("axes");
      auto resized = [&](size_t d) {
        return axes.empty() ||
               std::any_of(axes.begin(), axes.end(), [&](int64_t a) { return normalize_axis(c, a, int64_t(rank)) == int64_t(d); });
      };
      float common = policy == "not_larger" ? std::numeric_limits<float>::max() : std::numeric_limits<float>::min();
      for (size_t d = 0; d < rank; ++d)
        if (resized(d)) common = policy == "not_larger" ? std::min(common, p.scales[d]) : std::max(common, p.scales[d]);
      for (size_t d = 0; d < rank; ++d) {
        p.scales[d] = resized(d) ? common : 1.0f;
        p.out[d] = resized(d) ? static_cast<int64_t>(std::round(common * static_cast<float>(x.dims[d]))) : x.dims[d];
      }
    }
  }

  // The region of interest: read only by tf_crop_and_resize (as ORT, which ignores it otherwise).
  p.roi.assign(2 * rank, 0.0f);
  std::fill(p.roi.begin() + std::ptrdiff_t(rank), p.roi.end(), 1.0f);
  if (p.params.transform == CoordinateTransform::tf_crop_and_resize) {
    if (const ir::TensorData* roi = optional_constant(c, 1, "roi")) {
      if (roi->dtype != ir::DType::f32) c.fail("roi must be float32");
      const auto v = roi->values<float>();
      const size_t half = v.size() / 2;
      for (float r : v)
        if (!std::isfinite(r)) c.fail("roi values must be finite, got " + std::to_string(r));
      if (v.size() % 2 != 0) c.fail("roi must hold starts and ends, got " + std::to_string(v.size()) + " values");
      const auto starts = spread(c, std::vector<float>(v.begin(), v.begin() + std::ptrdiff_t(half)), rank, 0.0f);
      const auto ends = spread(c, std::vector<float>(v.begin() + std::ptrdiff_t(half), v.end()), rank, 1.0f);
      std::copy(starts.begin(), starts.end(), p.roi.begin());
      std::copy(ends.begin(), ends.end(), p.roi.begin() + std::ptrdiff_t(rank));
    }
  }

  // Batch and channels kept: a 2-D (or 1-D) resize of NCHW / NCL feature maps.
  const bool spatial = (rank == 4 || rank == 3) && p.scales[0] == 1.0f && p.scales[1] == 1.0f &&
                       p.out[0] == x.dims[0] && p.out[1] == x.dims[1];
  p.feature_map = spatial || (rank == 2 && p.params.mode != ResizeMode::nearest);
  if (p.params.mode == ResizeMode::linear && !p.feature_map)
    c.fail("linear resize is supported over the last two axes of a 4-D input (batch and channels scales 1) or of a "
           "2-D one; got scales for rank " + std::to_string(rank));
  if (p.params.mode == ResizeMode::cubic && (!p.feature_map || rank == 3))
    c.fail("cubic resize is supported over the last two axes of a 4-D input (batch and channels scales 1) or of a "
           "2-D one (as in ONNX Runtime); got scales for rank " + std::to_string(rank));
  if (p.params.mode == ResizeMode::cubic && x.dtype != ir::DType::f32)
    c.fail(std::string(ir::dtype_name(x.dtype)) + " cubic resize is not supported (ONNX Runtime's runs on float32)");
  if (rank == 4 || rank == 2) {
    p.params.scale_h = p.scales[rank - 2];
    p.params.scale_w = p.scales[rank - 1];
    p.params.roi_h[0] = p.roi[rank - 2], p.params.roi_h[1] = p.roi[2 * rank - 2];
    p.params.roi_w[0] = p.roi[rank - 1], p.params.roi_w[1] = p.roi[2 * rank - 1];
  } else if (rank == 3) {
    p.params.scale_w = p.scales[2];
    p.params.roi_w[0] = p.roi[2], p.params.roi_w[1] = p.roi[5];
  }
  for (int64_t e : p.out)
    if (e > std::numeric_limits<int32_t>::max()) c.fail("an output extent of " + std::to_string(e) + " is too large");
  return p;
}

kernels::Resize2dShape shape_2d(const ir::Dims& in, const ir::Dims& out) {
  kernels::Resize2dShape s;
  if (in.size() == 2) {  // one single-channel image
    s.in_h = int(in[0]), s.in_w = int(in[1]), s.out_h = int(out[0]), s.out_w = int(out[1]);
    return s;
  }
  s.batch = int(in[0]);
  s.channels = int(in[1]);
  s.in_h = in.size() == 4 ? int(in[2]) : 1;
  s.out_h = in.size() == 4 ? int(out[2]) : 1;
  s.in_w = int(in.back());
  s.out_w = int(out.back());
  return s;
}

kernels::ResizeElement element_of(ir::DType t) {
  return t == ir::DType::u8 ? kernels::ResizeElement::u8
         : t == ir::DType::s8 ? kernels::ResizeElement::s8
                              : kernels::ResizeElement::f32;
}

// A QuantizeLinear + DequantizeLinear pair the Resize's float output went through
// (passes::fuse_quantize_dequantize): its rows rewritten in place, the codes never stored.
struct FakeQuantize {
  const kernels::Q8QuantizeKernel* k;  // nullptr: f32_fake_quantize__ref
  kernels::Q8 type;
  float scale;
  int32_t zero_point;

  static void row(const void* ctx, float* y, size_t n) {
    const auto& f = *static_cast<const FakeQuantize*>(ctx);
    kernels::f32_fake_quantize(f.k, f.type, n, y, f.scale, f.zero_point, y, nullptr);
  }
};

std::shared_ptr<const FakeQuantize> fake_quantize_of(const OpContext& c) {
  if (!c.node.attrs.has("fake_quantize_scale")) return nullptr;
  if (c.info(0).dtype != ir::DType::f32) c.fail("a fused QuantizeLinear + DequantizeLinear needs a float32 input");
  const bool s8 = c.node.attrs.i("fake_quantize_signed", 0) != 0;
  return std::make_shared<const FakeQuantize>(FakeQuantize{
      kernels::choose_q8_quantize(c.isa), s8 ? kernels::Q8::s8 : kernels::Q8::u8, c.node.attrs.f("fake_quantize_scale"),
      int32_t(c.node.attrs.i("fake_quantize_zero_point", 0))});
}

kernels::KernelId fake_quantize_name(const FakeQuantize& f) {
  return f.k ? kernels::KernelId{f.k->fake_quantize_name, f.k->isa == kernels::Isa::scalar}
             : kernels::reference_kernel("f32_fake_quantize__ref");
}

// The Resize's own kernel; with fq, each channels-last map row passes through it as written,
// any other path's output once at the end.
Kernel build_resize_with(const OpContext& c, std::span<const void* const> in, std::span<void* const> out,
                         const std::shared_ptr<const FakeQuantize>& fq);

Kernel build_resize(const OpContext& c, std::span<const void* const> in, std::span<void* const> out) {
  return build_resize_with(c, in, out, fake_quantize_of(c));
}

Kernel build_resize_with(const OpContext& c, std::span<const void* const> in, std::span<void* const> out,
                         const std::shared_ptr<const FakeQuantize>& fq) {
  const ResizePlan p = plan_resize(c);
  const TensorInfo& x = c.info(0);
  const void* xp = in[0];
  void* yp = out[0];
  if (ir::element_count(p.out) == 0) return [] {};
  const size_t count = size_t(ir::element_count(p.out));
  pthreadpool_t pool = c.threadpool;
  auto report = [&](const kernels::KernelId& id) { c.report_kernel(fq ? id + " + " + fake_quantize_name(*fq) : id); };
  auto then_fake_quantize = [&](Kernel k) -> Kernel {
    if (!fq) return k;
    auto* y = static_cast<float*>(yp);
    return [fq, k, y, count, pool] {
      k();
      kernels::f32_fake_quantize(fq->k, fq->type, count, y, fq->scale, fq->zero_point, y, pool);
    };
  };
  if (p.out == x.dims) {  // ORT copies the input whenever no extent changes, whatever the mode
    const size_t bytes = count * ir::dtype_size(x.dtype);
    report(kernels::portable_kernel("resize_identity__copy"));
    return then_fake_quantize([=] { std::memcpy(yp, xp, bytes); });
  }
  if (p.feature_map) {
    auto resize = std::make_shared<kernels::Resize2d>(shape_2d(x.dims, p.out), p.params, element_of(x.dtype), c.isa);
    if (fq) resize->set_row_epilogue({&FakeQuantize::row, fq.get()});
    report(resize->kernel_id());
    return [=] {
      (void)fq;  // kept alive: the epilogue reads it
      resize->run(xp, yp, pool);
    };
  }
  // Nearest over other axes (a resized batch or channel axis, rank 1 or 5+), in memory order.
  const std::vector<int> order = memory_order(int(x.dims.size()), x.layout);
  std::vector<std::vector<int32_t>> maps;
  ir::Dims in_dims, out_dims;
  const size_t rank = x.dims.size();
  for (int d : order) {
    const kernels::ResizeAxis axis{x.dims[size_t(d)], p.out[size_t(d)], p.scales[size_t(d)], p.roi[size_t(d)],
                                   p.roi[rank + size_t(d)]};
    maps.push_back(kernels::nearest_source_indices(axis, p.params.transform, p.params.rounding));
    in_dims.push_back(x.dims[size_t(d)]);
    out_dims.push_back(p.out[size_t(d)]);
  }
  report(kernels::reference_kernel("resize_nearest_any__ref"));
  c.report_fallback("a nearest resize of the batch or channel axis, or of rank other than 3 and 4");
  const size_t element = ir::dtype_size(x.dtype);
  std::array<unsigned char, sizeof(float)> fill{};
  const float e = p.params.extrapolation_value;
  if (x.dtype == ir::DType::f32) std::memcpy(fill.data(), &e, sizeof e);
  else if (x.dtype == ir::DType::u8) fill[0] = kernels::extrapolated<uint8_t>(e);
  else fill[0] = static_cast<unsigned char>(kernels::extrapolated<int8_t>(e));
  return then_fake_quantize([=] { kernels::resize_nearest_any__ref(in_dims, out_dims, maps, element, xp, yp, fill.data()); });
}

}  // namespace

void register_resize_ops(OpTable& t) {
  OpImpl op;
  // Feature maps channels-last, the layout of the convs around a resize (the planner asks before
  // shapes are known; the row-major reference walks any layout in memory order).
  op.want_layout = channels_last_map;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    const ResizePlan p = plan_resize(c);
    return {{c.info(0).dtype, p.out, c.info(0).layout}};
  };
  op.build = build_resize;
  op.value_inputs = {1, 2};  // roi, scales
  // Apart when axis 0 keeps its extent, at the planned batch and at another: sizes read with
  // Shape (a segmentation head's upsampling to the input's size) follow the batch.
  op.batch_use_sees_batch_constants = true;
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>& out) {
    const ir::Dims& in = c.info(0).dims;
    if (out.empty() || out[0].dims.empty() || in.empty() || out[0].dims[0] != in[0]) return BatchUse::mixes_images;
    const AtOtherBatch other(c);
    if (!other.known()) return BatchUse::mixes_images;
    try {
      ir::Dims out_there = out[0].dims;
      out_there[0] = other_batch(in[0]);
      if (plan_resize(other.context()).out != out_there) return BatchUse::mixes_images;
    } catch (const ir::Error&) {
      return BatchUse::mixes_images;
    }
    return ops::per_image_with_constants(c);
  };
  t.emplace_back("Resize", op);
  t.emplace_back("Upsample", op);
}

}  // namespace octet
