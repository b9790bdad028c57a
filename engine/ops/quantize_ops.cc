// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear and Cast (CastLike): the conversions between
// float and the quantized integer types (math in docs/requantization.md, sections 3 and 8).
//
// All four are element-wise, so they accept activations in any layout and keep it. A per-axis
// scale is applied along the axis wherever that axis lies in memory (for channels-last, the
// channel axis is the innermost one). Scales and zero points that are constants are read once,
// when the kernel is built; computed ones (DynamicQuantizeLinear's outputs, scale products of
// dynamically quantized graphs) are read by the kernel on every run.
#include <algorithm>
#include <cmath>
#include <optional>

#include "engine/batch_ranges.h"
#include "engine/op_registry.h"
#include "engine/ops/batch_use.h"
#include "engine/step_parts.h"
#include "kernels/quantize/quantize.h"
#include "kernels/ref/cast.h"
#include "kernels/ref/qlinear.h"

namespace octet {
namespace {

using ir::DType;

// ONNX TensorProto.DataType codes of the types octet has (Cast's `to`, QuantizeLinear's
// output_dtype; the loader rejects the others).
std::optional<DType> dtype_of_onnx_code(int64_t code) {
  switch (code) {
    case 1: return DType::f32;
    case 2: return DType::u8;
    case 3: return DType::s8;
    case 6: return DType::s32;
    case 7: return DType::s64;
    case 9: return DType::b8;
    case 11: return DType::f64;
    default: return std::nullopt;
  }
}

std::string type_str(DType t) { return ir::dtype_name(t); }

bool is_constant(const OpContext& c, size_t i) { return i < c.in_const.size() && c.in_const[i] != nullptr; }

// ---- scale and zero point (inputs 1 and 2 of QuantizeLinear and DequantizeLinear) ----

// How the scale applies to the data input: one value, or one per index along `axis`.
struct Granularity {
  int64_t count = 1;  // scale values
  int64_t axis = -1;  // logical axis when count > 1
};

Granularity granularity(const OpContext& c, const char* scale_name, const char* zp_name) {
  const TensorInfo& x = c.info(0);
  const TensorInfo& s = c.info(1);
  if (s.dtype != DType::f32)
    c.fail(std::string(scale_name) + " of type " + type_str(s.dtype) + " is not supported (float32 only)");
  if (c.has(2) && c.info(2).dims != s.dims && c.info(2).count() != s.count())
    c.fail(std::string(zp_name) + " " + ir::dims_str(c.info(2).dims) + " must have the shape of " + scale_name +
           " " + ir::dims_str(s.dims));
  Granularity g;
  g.count = s.count();
  if (g.count == 1) return g;  // a scalar, or a 1-element vector: per tensor
  if (s.dims.size() != 1)
    c.fail(std::string(scale_name) + " " + ir::dims_str(s.dims) +
           " must be a scalar (per tensor) or 1-D (per axis); blocked quantization is not supported");
  g.axis = normalize_axis(c, c.node.attrs.i("axis", 1), int64_t(x.dims.size()));
  if (x.dims[size_t(g.axis)] != g.count)
    c.fail(std::string(scale_name) + " has " + std::to_string(g.count) + " values for axis " +
           std::to_string(g.axis) + " of extent " + std::to_string(x.dims[size_t(g.axis)]) + " in " +
           ir::dims_str(x.dims));
  return g;
}

// Constant parameters, per tensor or per axis other than the images' (one scale per image
// would tie an image's result to its place in the batch).
BatchUse per_image_quantization(const OpContext& c, const std::vector<TensorInfo>&) {
  if (ops::per_image_with_constants(c) != BatchUse::keeps_images_apart) return BatchUse::mixes_images;
  const Granularity g = granularity(c, "scale", "zero_point");
  return ops::keeps_images_apart_if(g.count == 1 || g.axis != 0);
}

int32_t zero_point_at(const void* zp, DType t, int64_t i) {
  switch (t) {
    case DType::u8: return static_cast<const uint8_t*>(zp)[i];
    case DType::s8: return static_cast<const int8_t*>(zp)[i];
    case DType::s32: return static_cast<const int32_t*>(zp)[i];
    default: return 0;
  }
}

// Scale and zero point values the kernel uses. Constants are copied in at build time; run-time
// values are copied in by refresh() on every run (into storage sized once: no allocation).
class QuantParamValues {
 public:
  QuantParamValues(const OpContext& c, std::span<const void* const> in, int64_t count)
      : scale_(size_t(count)), zero_point_(c.has(2) ? size_t(count) : 0) {
    scale_src_ = static_cast<const float*>(in[1]);
    if (c.has(2)) {
      zp_src_ = in[2];
      zp_type_ = c.info(2).dtype;
    }
    scale_runtime_ = !is_constant(c, 1);
    zp_runtime_ = c.has(2) && !is_constant(c, 2);
    load(true);
  }
  void refresh() {
    if (scale_runtime_ || zp_runtime_) load(false);
  }
  float scale() const { return scale_[0]; }
  int32_t zero_point() const { return zero_point_.empty() ? 0 : zero_point_[0]; }
  std::span<const float> scales() const { return scale_; }
  std::span<const int32_t> zero_points() const { return zero_point_; }

 private:
  void load(bool all) {
    if (all || scale_runtime_) std::copy(scale_src_, scale_src_ + scale_.size(), scale_.begin());
    if (all || zp_runtime_)
      for (size_t i = 0; i < zero_point_.size(); ++i) zero_point_[i] = zero_point_at(zp_src_, zp_type_, int64_t(i));
  }
  std::vector<float> scale_;
  std::vector<int32_t> zero_point_;  // empty: absent, 0
  const float* scale_src_ = nullptr;
  const void* zp_src_ = nullptr;
  DType zp_type_ = DType::u8;
  bool scale_runtime_ = false, zp_runtime_ = false;
};

// The data tensor as the per-axis kernels see it: dimensions in memory order and where the
// quantization axis lies among them.
struct PhysicalAxis {
  std::vector<int64_t> dims;
  int axis = 0;
};

PhysicalAxis physical_axis(const TensorInfo& x, int64_t logical_axis) {
  PhysicalAxis p;
  const auto order = memory_order(int(x.dims.size()), x.layout);
  for (size_t k = 0; k < order.size(); ++k) {
    p.dims.push_back(x.dims[size_t(order[k])]);
    if (order[k] == logical_axis) p.axis = int(k);
  }
  return p;
}

// Runs `fn` with a null pointer of the C++ type stored for `t` (bool tensors are bytes).
template <class Fn>
void with_type(DType t, Fn&& fn) {
  switch (t) {
    case DType::f32: return fn(static_cast<float*>(nullptr));
    case DType::f64: return fn(static_cast<double*>(nullptr));
    case DType::u8: return fn(static_cast<uint8_t*>(nullptr));
    case DType::s8: return fn(static_cast<int8_t*>(nullptr));
    case DType::s32: return fn(static_cast<int32_t*>(nullptr));
    case DType::s64: return fn(static_cast<int64_t*>(nullptr));
    case DType::b8: return fn(static_cast<uint8_t*>(nullptr));
  }
}

// ---- QuantizeLinear ----

DType quantized_type(const OpContext& c) {
  std::optional<DType> from_attr;
  if (int64_t code = c.node.attrs.i("output_dtype", 0); code != 0) {
    from_attr = dtype_of_onnx_code(code);
    if (from_attr != DType::u8 && from_attr != DType::s8)
      c.fail("output_dtype " + std::to_string(code) + " is not supported (uint8 or int8)");
  }
  if (!c.has(2)) return from_attr.value_or(DType::u8);  // ONNX: no zero point means uint8
  const DType zp = c.info(2).dtype;
  if (zp != DType::u8 && zp != DType::s8)
    c.fail("y_zero_point of type " + type_str(zp) + " is not supported (uint8 or int8)");
  if (from_attr && *from_attr != zp)
    c.fail("output_dtype (" + type_str(*from_attr) + ") differs from y_zero_point's type (" + type_str(zp) + ")");
  return zp;
}

OpImpl quantize_linear_op() {
  OpImpl op;
  op.want_layout = any_layout;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    const TensorInfo& x = c.info(0);
    if (x.dtype != DType::f32) c.fail("x of type " + type_str(x.dtype) + " is not supported (float32 only)");
    granularity(c, "y_scale", "y_zero_point");
    return {{quantized_type(c), x.dims, x.layout}};
  };
  op.batch_use = per_image_quantization;
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const TensorInfo x = c.info(0);
    const Granularity g = granularity(c, "y_scale", "y_zero_point");
    QuantParamValues params(c, in, g.count);
    const auto* xp = static_cast<const float*>(in[0]);
    void* y = out[0];
    const int64_t n = x.count();
    const PhysicalAxis p = physical_axis(x, g.axis);
    Kernel k;
    with_type(quantized_type(c), [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t>) {
        auto* yp = static_cast<T*>(y);
        const kernels::Q8QuantizeKernel* fast = kernels::choose_q8_quantize(c.isa);
        const kernels::Q8 type = std::is_same_v<T, uint8_t> ? kernels::Q8::u8 : kernels::Q8::s8;
        c.report_kernel(g.count == 1 && fast ? kernels::row_kernel(*fast) : kernels::reference_kernel("q8_quantize_linear__ref"));
        pthreadpool_t pool = c.threadpool;
        if (g.count == 1)
          k = [=]() mutable {
            params.refresh();
            kernels::q8_quantize(fast, type, size_t(n), xp, params.scale(), params.zero_point(), yp, pool);
          };
        else
          k = [=]() mutable {
            params.refresh();
            kernels::q8_quantize_linear_per_axis__ref<T>(int(p.dims.size()), p.dims.data(), p.axis, xp,
                                                         params.scales(), params.zero_points(), yp);
          };
      }
    });
    return k;
  };
  return op;
}

// ---- QuantizeDequantize (octet's own, passes::fuse_quantize_dequantize) ----
// A QuantizeLinear whose only reader is a DequantizeLinear of the same per-tensor scale and zero
// point (a QDQ model's float output: x, y_scale, y_zero_point as QuantizeLinear's): one pass
// from floats to floats, the codes kept in registers.

OpImpl quantize_dequantize_op() {
  OpImpl op;
  op.want_layout = any_layout;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    const TensorInfo& x = c.info(0);
    if (x.dtype != DType::f32) c.fail("x of type " + type_str(x.dtype) + " is not supported (float32 only)");
    if (granularity(c, "y_scale", "y_zero_point").count != 1) c.fail("takes a per-tensor scale and zero point only");
    const DType q = quantized_type(c);
    if (q != DType::u8 && q != DType::s8) c.fail("quantizes to uint8 or int8 only, not " + type_str(q));
    return {{DType::f32, x.dims, x.layout}};
  };
  op.batch_use = per_image_quantization;
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    QuantParamValues params(c, in, 1);
    const auto* xp = static_cast<const float*>(in[0]);
    auto* yp = static_cast<float*>(out[0]);
    const int64_t n = c.info(0).count();
    const kernels::Q8 type = quantized_type(c) == DType::s8 ? kernels::Q8::s8 : kernels::Q8::u8;
    const kernels::Q8QuantizeKernel* fast = kernels::choose_q8_quantize(c.isa);
    c.report_kernel(fast ? kernels::KernelId{fast->fake_quantize_name, fast->isa == kernels::Isa::scalar}
                         : kernels::reference_kernel("f32_fake_quantize__ref"));
    pthreadpool_t pool = c.threadpool;
    return [=]() mutable {
      params.refresh();
      kernels::f32_fake_quantize(fast, type, size_t(n), xp, params.scale(), params.zero_point(), yp, pool);
    };
  };
  return op;
}

// ---- DequantizeLinear ----

OpImpl dequantize_linear_op() {
  OpImpl op;
  op.want_layout = any_layout;
  op.batch_use = per_image_quantization;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    const TensorInfo& x = c.info(0);
    if (x.dtype != DType::u8 && x.dtype != DType::s8 && x.dtype != DType::s32)
      c.fail("x of type " + type_str(x.dtype) + " is not supported (uint8, int8 or int32)");
    if (c.has(2) && c.info(2).dtype != x.dtype)
      c.fail("x_zero_point is " + type_str(c.info(2).dtype) + ", x is " + type_str(x.dtype) + "; they must match");
    granularity(c, "x_scale", "x_zero_point");
    // An int32 x is a bias: ONNX requires its zero point to be 0.
    if (x.dtype == DType::s32 && is_constant(c, 2))
      for (int64_t v : c.in_const[2]->to_i64())
        if (v != 0) c.fail("an int32 x must have zero point 0, x_zero_point holds " + std::to_string(v));
    return {{DType::f32, x.dims, x.layout}};
  };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const TensorInfo x = c.info(0);
    const Granularity g = granularity(c, "x_scale", "x_zero_point");
    QuantParamValues params(c, in, g.count);
    auto* y = static_cast<float*>(out[0]);
    const int64_t n = x.count();
    const PhysicalAxis p = physical_axis(x, g.axis);
    Kernel k;
    with_type(x.dtype, [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t> || std::is_same_v<T, int32_t>) {
        const auto* xp = static_cast<const T*>(in[0]);
        const kernels::Q8QuantizeKernel* fast =
            std::is_same_v<T, int32_t> ? nullptr : kernels::choose_q8_quantize(c.isa);
        c.report_kernel(g.count == 1 && fast ? kernels::KernelId{fast->dequantize_name, fast->isa == kernels::Isa::scalar}
                        : kernels::reference_kernel(g.count == 1 ? "q8_dequantize_linear__ref"
                                                                 : "q8_dequantize_linear_per_axis__ref"));
        pthreadpool_t pool = c.threadpool;
        if (g.count == 1 && !std::is_same_v<T, int32_t>)
          k = [=]() mutable {
            params.refresh();
            kernels::q8_dequantize(fast, size_t(n), xp, std::is_same_v<T, int8_t>, params.scale(),
                                   params.zero_point(), y, pool);
          };
        else if (g.count == 1)
          k = [=]() mutable {
            params.refresh();
            kernels::q8_dequantize_linear__ref<T>(n, xp, params.scale(), params.zero_point(), y);
          };
        else
          k = [=]() mutable {
            params.refresh();
            kernels::q8_dequantize_linear_per_axis__ref<T>(int(p.dims.size()), p.dims.data(), p.axis, xp,
                                                           params.scales(), params.zero_points(), y);
          };
      }
    });
    return k;
  };
  return op;
}

// ---- DynamicQuantizeLinear ----

// The range is computed from the data on every run: that per-call cost is part of what
// dynamic quantization costs, so nothing is precomputed here. Input 1, when present, is that
// range ([min, max]) already gathered by the producer of x as it wrote x
// (passes::compute_ranges_in_producers): then only the quantize pass runs here.
OpImpl dynamic_quantize_linear_op() {
  OpImpl op;
  op.want_layout = any_layout;
  // One range for the whole tensor, every image included: slicing would quantize each slice
  // with its own (and differ from ONNX Runtime); the threads of a lockstep run combine theirs.
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) {
    return ops::is_activation(c, 0) ? BatchUse::apart_but_batch_range : BatchUse::mixes_images;
  };
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    const TensorInfo& x = c.info(0);
    if (x.dtype != DType::f32) c.fail("x of type " + type_str(x.dtype) + " is not supported (float32 only)");
    if (c.has(1) && (c.info(1).dtype != DType::f32 || c.info(1).count() != 2))
      c.fail("the range input must be float32 [min, max], got " + type_str(c.info(1).dtype) + " " +
             ir::dims_str(c.info(1).dims));
    return {{DType::u8, x.dims, x.layout}, {DType::f32, {}, Layout::row_major}, {DType::u8, {}, Layout::row_major}};
  };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const size_t n = static_cast<size_t>(c.info(0).count());
    const auto* x = static_cast<const float*>(in[0]);
    auto* y = static_cast<uint8_t*>(out[0]);
    auto* scale = out.size() > 1 ? static_cast<float*>(out[1]) : nullptr;  // null when unused
    auto* zero_point = out.size() > 2 ? static_cast<uint8_t*>(out[2]) : nullptr;
    const auto* given_range = c.has(1) ? static_cast<const float*>(in[1]) : nullptr;
    const kernels::Q8QuantizeKernel* k = kernels::choose_q8_quantize(c.isa);
    if (given_range)
      c.report_kernel((k != nullptr ? kernels::row_kernel(*k) : kernels::reference_kernel("q8_quantize_linear__ref")) +
                      " (range from the producer)");
    else
      c.report_kernel(k != nullptr ? kernels::KernelId{std::string("qu8_dynamic_quantize__") + kernels::isa_name(k->isa),
                                                       k->isa == kernels::Isa::scalar}
                                   : kernels::reference_kernel("qu8_dynamic_quantize_linear__ref"));
    const std::string where = ir::Graph::describe(c.node);
    pthreadpool_t pool = c.threadpool;
    return [=] {
      kernels::F32Range range;
      if (given_range) {
        range = {given_range[0], given_range[1]};
      } else {
        PartTimer t("range");
        range = kernels::f32_range(k, n, x, pool);
      }
      range = batch_ranges::over_batch(range);
      // ONNX leaves a NaN / infinite range undefined (the scale would be NaN or inf): refuse it.
      if (n > 0 && !(std::isfinite(range.min) && std::isfinite(range.max)))
        throw ir::Error(where + ": the input holds NaN or infinite values (range [" + std::to_string(range.min) +
                        ", " + std::to_string(range.max) + "]), so no scale can be computed");
      PartTimer t("quantize");
      const kernels::DynamicQuantization q = n > 0 ? kernels::qu8_dynamic_params(range.min, range.max)
                                                   : kernels::DynamicQuantization{};
      if (k != nullptr) kernels::q8_quantize(*k, kernels::Q8::u8, n, x, q.scale, q.zero_point, y, pool);
      else kernels::q8_quantize_linear__ref<uint8_t>(static_cast<int64_t>(n), x, q.scale, q.zero_point, y);
      if (scale) *scale = q.scale;
      if (zero_point) *zero_point = q.zero_point;
    };
  };
  return op;
}

// ---- Cast ----

// Cast's `to`, or for CastLike the element type of its second input.
DType cast_target(const OpContext& c) {
  if (c.node.op == "CastLike") return c.info(1).dtype;
  auto t = dtype_of_onnx_code(c.node.attrs.i("to"));
  if (!t) c.fail("Cast to type " + std::to_string(c.node.attrs.i("to")) + " is not supported");
  return *t;
}

OpImpl cast_op() {
  OpImpl op;
  op.want_layout = any_layout;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    TensorInfo y = c.info(0);
    y.dtype = cast_target(c);
    return {y};
  };
  // CastLike reads only the type of its second input.
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) {
    return ops::keeps_images_apart_if(ops::is_activation(c, 0));
  };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const DType from = c.info(0).dtype, to = cast_target(c);
    const int64_t n = c.info(0).count();
    const void* x = in[0];
    void* y = out[0];
    if (from == to) {
      const size_t bytes = c.info(0).bytes();
      return [=] { ir::copy_bytes(y, x, bytes); };
    }
    Kernel k;
    with_type(from, [&](auto* from_tag) {
      using From = std::remove_pointer_t<decltype(from_tag)>;
      const auto* xp = static_cast<const From*>(x);
      if (to == DType::b8) {
        auto* yp = static_cast<bool*>(y);  // one byte holding 0 or 1
        k = [=] { kernels::cast__ref<bool, From>(n, xp, yp); };
        return;
      }
      with_type(to, [&](auto* to_tag) {
        using To = std::remove_pointer_t<decltype(to_tag)>;
        auto* yp = static_cast<To*>(y);
        k = [=] { kernels::cast__ref<To, From>(n, xp, yp); };
      });
    });
    return k;
  };
  return op;
}

}  // namespace

void register_quantize_ops(OpTable& t) {
  t.emplace_back("QuantizeLinear", quantize_linear_op());
  t.emplace_back("DequantizeLinear", dequantize_linear_op());
  t.emplace_back("QuantizeDequantize", quantize_dequantize_op());
  t.emplace_back("DynamicQuantizeLinear", dynamic_quantize_linear_op());
  t.emplace_back("Cast", cast_op());
  t.emplace_back("CastLike", cast_op());
}

}  // namespace octet
