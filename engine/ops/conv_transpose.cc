// ConvTranspose (FP32): NHWC activations, ONNX-ordered weights [C, M / group, k...], 1-D, 2-D and
// 3-D spatial (NCDHW at the model boundary, NDHWC inside: the shape's depth fields). Output extents and pads follow ONNX Runtime (output_shape, output_padding and
// auto_pad distribute the total padding as ORT's DistributePadding does). A QDQ ConvTranspose
// stays float in ORT's CPU provider (no QDQ selector takes it): octet runs the same float steps
// (kernels/ref/conv_transpose.h) between the DequantizeLinear and QuantizeLinear.
#include <memory>
#include <vector>

#include "engine/ops/batch_use.h"
#include "engine/ops/fused_activation.h"
#include "engine/ops/spatial.h"
#include "kernels/conv/f32_conv_transpose.h"
#include "kernels/fallback.h"
#include "kernels/ref/conv_transpose.h"

namespace octet {
namespace {

struct Geometry {
  kernels::ConvTranspose2dShape s;
  ir::Dims out_dims;  // [N, M, spatial...]
};

Geometry geometry(const OpContext& c) {
  const TensorInfo& x = c.info(0);
  const TensorInfo& w = c.info(1);
  ops::require_spatial_rank(c, x, "X", true);
  if (w.dims.size() != x.dims.size())
    c.fail("W " + ir::dims_str(w.dims) + " must have the rank of X " + ir::dims_str(x.dims));
  if (x.dtype != ir::DType::f32)
    c.fail(std::string(ir::dtype_name(x.dtype)) + " ConvTranspose is not supported (only float32)");
  const auto& a = c.node.attrs;
  const size_t r = x.dims.size() - 2;
  const int64_t group = a.i("group", 1);
  const int64_t in_c = x.dims[1];
  if (group < 1 || in_c % group) c.fail("group " + std::to_string(group) + " must divide the input channels (" + std::to_string(in_c) + ")");
  if (w.dims[0] != in_c)
    c.fail("W " + ir::dims_str(w.dims) + " expects " + std::to_string(w.dims[0]) + " input channels, X " +
           ir::dims_str(x.dims) + " has " + std::to_string(in_c));
  const int64_t out_c = w.dims[1] * group;
  if (c.has(2) && c.info(2).count() != out_c)
    c.fail("B has " + std::to_string(c.info(2).count()) + " values, expected " + std::to_string(out_c));
  std::vector<int64_t> kernel(w.dims.begin() + 2, w.dims.end());
  if (a.has("kernel_shape") && !a.ints("kernel_shape").empty() && a.ints("kernel_shape") != kernel)
    c.fail("kernel_shape does not match the weights " + ir::dims_str(w.dims));
  auto list = [&](const char* name, int64_t dflt, size_t n) {
    std::vector<int64_t> v = a.has(name) ? a.ints(name) : std::vector<int64_t>{};
    if (v.empty()) v.assign(n, dflt);
    if (v.size() != n)
      c.fail(std::string(name) + " has " + std::to_string(v.size()) + " values, expected " + std::to_string(n));
    return v;
  };
  const auto strides = list("strides", 1, r), dilations = list("dilations", 1, r);
  const auto adj = list("output_padding", 0, r);
  auto pads = list("pads", 0, 2 * r);
  std::vector<int64_t> out_shape = a.has("output_shape") ? a.ints("output_shape") : std::vector<int64_t>{};
  if (!out_shape.empty() && out_shape.size() != r && out_shape.size() != r + 2)
    c.fail("output_shape has " + std::to_string(out_shape.size()) + " values, expected " + std::to_string(r));
  const std::string auto_pad = a.has("auto_pad") ? a.s("auto_pad") : "NOTSET";
  if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" && auto_pad != "VALID")
    c.fail("auto_pad '" + auto_pad + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  std::vector<int64_t> out(r);
  for (size_t i = 0; i < r; ++i) {
    if (kernel[i] < 1 || strides[i] < 1 || dilations[i] < 1) c.fail("kernel, strides and dilations must be positive");
    if (adj[i] < 0 || adj[i] >= std::max(strides[i], dilations[i]))
      c.fail("output_padding " + ir::dims_str(adj) + " must be smaller than the stride or the dilation");
    const int64_t full = (x.dims[2 + i] - 1) * strides[i] + adj[i] + (kernel[i] - 1) * dilations[i] + 1;
    int64_t& head = pads[i];
    int64_t& tail = pads[i + r];
    auto distribute = [&](int64_t total) {
      head = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      tail = total - head;
    };
    if (!out_shape.empty()) {
      out[i] = out_shape[out_shape.size() == r ? i : i + 2];
      distribute(std::max<int64_t>(0, full - out[i]));
      continue;
    }
    if (same) distribute(std::max<int64_t>(0, full - x.dims[2 + i] * strides[i]));
    if (head < 0 || tail < 0) c.fail("negative pads are not supported");
    out[i] = full - head - tail;
  }
  for (int64_t o : out)
    if (o < 1) c.fail("the output would have extents " + ir::dims_str(out));

  Geometry g;
  g.out_dims = {x.dims[0], out_c};
  g.out_dims.insert(g.out_dims.end(), out.begin(), out.end());
  kernels::ConvTranspose2dShape& s = g.s;
  // Spatial axis `axis` of the shape (0 depth, 1 height, 2 width) from a list over the model's
  // r axes: a 2-D op has no depth, a 1-D one only a width.
  const size_t skip = 3 - r;
  auto at = [&](const std::vector<int64_t>& v, size_t axis, int64_t one) {
    return int(axis < skip ? one : v[axis - skip]);
  };
  const std::vector<int64_t> in(x.dims.begin() + 2, x.dims.end()), head(pads.begin(), pads.begin() + long(r));
  s.batch = int(x.dims[0]);
  s.in_c = int(in_c);
  s.out_c = int(out_c);
  s.groups = int(group);
  s.in_d = at(in, 0, 1);
  s.in_h = at(in, 1, 1);
  s.in_w = at(in, 2, 1);
  s.out_d = at(out, 0, 1);
  s.out_h = at(out, 1, 1);
  s.out_w = at(out, 2, 1);
  s.kernel_d = at(kernel, 0, 1);
  s.kernel_h = at(kernel, 1, 1);
  s.kernel_w = at(kernel, 2, 1);
  s.stride_d = at(strides, 0, 1);
  s.stride_h = at(strides, 1, 1);
  s.stride_w = at(strides, 2, 1);
  s.dilation_d = at(dilations, 0, 1);
  s.dilation_h = at(dilations, 1, 1);
  s.dilation_w = at(dilations, 2, 1);
  s.pad_front = at(head, 0, 0);
  s.pad_top = at(head, 1, 0);
  s.pad_left = at(head, 2, 0);
  // MLAS's K block: ORT transposes a constant filter at load, but in a QDQ file the filter is a
  // DequantizeLinear's output (ORT keeps weight DQs unfolded), read transposed: 128. The QDQ
  // codes must match; an FP32 model with a narrow deep input may differ from ORT in rounding.
  s.k_chunk = kernels::mlas_sgemm_k_chunk(int64_t(s.in_d) * s.in_h * s.in_w, in_c / group, true);
  return g;
}

std::vector<TensorInfo> infer(const OpContext& c) {
  return {{ir::DType::f32, geometry(c).out_dims, Layout::channels_last}};
}

size_t scratch_bytes(const OpContext& c, const std::vector<TensorInfo>&) {
  if (c.isa == kernels::Isa::scalar) return 0;
  const size_t bytes = kernels::F32ConvTranspose::scratch_floats(geometry(c).s) * sizeof(float);
  return bytes > kernels::F32ConvTranspose::kMaxScratchBytes ? 0 : bytes;
}

Kernel build(const OpContext& c, std::span<const void* const> in, std::span<void* const> out) {
  const kernels::ConvTranspose2dShape s = geometry(c).s;
  const kernels::Activation act = ops::fused_activation(c.node);
  auto x = static_cast<const float*>(in[0]);
  auto w = static_cast<const float*>(in[1]);
  auto b = c.has(2) ? static_cast<const float*>(in[2]) : nullptr;
  auto y = static_cast<float*>(out[0]);
  const bool constant_params = c.in_const[1] != nullptr && (!c.has(2) || c.in_const[2] != nullptr);
  if (s.batch == 0) return [] {};
  if (c.isa != kernels::Isa::scalar && constant_params) {
    auto fast = kernels::make_fast<kernels::F32ConvTranspose>(s, w, b, act, c.isa);
    if (fast) {
      std::shared_ptr<const kernels::F32ConvTranspose> k = fast.driver;
      const size_t need = kernels::F32ConvTranspose::scratch_floats(s);
      std::shared_ptr<std::vector<float>> own;
      float* scratch = static_cast<float*>(c.scratch);
      if (c.scratch_size < need * sizeof(float)) {  // evaluated at plan time, outside the arena
        own = std::make_shared<std::vector<float>>(need);
        scratch = own->data();
      }
      c.report_kernel(k->kernel_id());
      pthreadpool_t pool = c.threadpool;
      return [k, own, x, y, scratch, pool] { k->run(x, y, scratch, pool); };
    }
    c.report_fallback(fast.why_not);
  } else {
    c.report_fallback(c.isa == kernels::Isa::scalar ? "--isa scalar" : "weights or bias not constant");
  }
  c.report_kernel(kernels::reference_kernel("f32_conv_transpose2d_nhwc__ref"));
  return [=] { kernels::f32_conv_transpose2d_nhwc__ref(s, x, w, b, act, y); };
}

std::optional<Layout> layout(const OpContext&, size_t input) {
  return input == 0 ? Layout::channels_last : Layout::row_major;
}

}  // namespace

void register_conv_transpose_ops(OpTable& t) {
  OpImpl op;
  op.want_layout = layout;
  op.infer = infer;
  op.build = build;
  op.scratch_bytes = scratch_bytes;
  // Every input value reaches (kernel_d ·) kernel_h · kernel_w · M / group outputs.
  op.macs = [](const OpContext& c, const std::vector<TensorInfo>&) {
    const auto& w = c.info(1).dims;
    int64_t per_input = 1;
    for (size_t i = 1; i < w.size(); ++i) per_input *= w[i];
    return c.info(0).count() * per_input;
  };
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) {
    for (size_t i = 1; i < c.in.size(); ++i)
      if (ops::is_activation(c, i)) return BatchUse::mixes_images;
    return ops::keeps_images_apart_if(ops::is_activation(c, 0));
  };
  t.emplace_back("ConvTranspose", op);
}

}  // namespace octet
