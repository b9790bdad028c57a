// Conv (FP32): NHWC activations, ONNX-ordered weights, fused bias and activation.
#include "engine/ops/fused_activation.h"
#include "engine/ops/spatial.h"
#include "kernels/ref/conv2d.h"

namespace octet {
namespace {

struct ConvGeometry {
  ops::Window window;
  int64_t batch, in_c, out_c, groups;
};

ConvGeometry conv_geometry(const OpContext& c) {
  const TensorInfo& x = c.info(0);
  const TensorInfo& w = c.info(1);
  ops::require_spatial_rank(c, x, "X");
  if (w.dims.size() != x.dims.size())
    c.fail("W " + ir::dims_str(w.dims) + " must have the rank of X " + ir::dims_str(x.dims));
  ConvGeometry g;
  g.batch = x.dims[0];
  g.in_c = x.dims[1];
  g.out_c = w.dims[0];
  g.groups = c.node.attrs.i("group");
  if (g.groups < 1 || g.in_c % g.groups || g.out_c % g.groups)
    c.fail("group " + std::to_string(g.groups) + " must divide the input channels (" +
           std::to_string(g.in_c) + ") and the output channels (" + std::to_string(g.out_c) + ")");
  if (w.dims[1] * g.groups != g.in_c)
    c.fail("W " + ir::dims_str(w.dims) + " expects " + std::to_string(w.dims[1] * g.groups) +
           " input channels, X " + ir::dims_str(x.dims) + " has " + std::to_string(g.in_c));
  std::vector<int64_t> spatial(x.dims.begin() + 2, x.dims.end());
  std::vector<int64_t> kernel(w.dims.begin() + 2, w.dims.end());
  const auto& ks = c.node.attrs.ints("kernel_shape");
  if (!ks.empty() && ks != kernel)
    c.fail("kernel_shape does not match the weights " + ir::dims_str(w.dims));
  g.window = ops::resolve_window(c, spatial, kernel, false);
  if (c.has(2) && c.info(2).count() != g.out_c)
    c.fail("B has " + std::to_string(c.info(2).count()) + " values, expected " + std::to_string(g.out_c));
  return g;
}

std::vector<TensorInfo> infer_conv(const OpContext& c) {
  ConvGeometry g = conv_geometry(c);
  if (c.info(0).dtype != ir::DType::f32)
    c.fail(std::string(ir::dtype_name(c.info(0).dtype)) + " Conv is not supported (only float32)");
  ir::Dims out = {g.batch, g.out_c};
  out.insert(out.end(), g.window.out.begin(), g.window.out.end());
  return {{ir::DType::f32, out, Layout::channels_last}};
}

Kernel build_conv(const OpContext& c, std::span<const void* const> in, std::span<void* const> out) {
  ConvGeometry g = conv_geometry(c);
  ops::Window2d w = ops::as_2d(g.window);
  kernels::Conv2dShape s;
  s.batch = int(g.batch);
  s.in_h = w.in_h; s.in_w = w.in_w; s.in_c = int(g.in_c);
  s.out_h = w.out_h; s.out_w = w.out_w; s.out_c = int(g.out_c);
  s.kernel_h = w.k_h; s.kernel_w = w.k_w;
  s.stride_h = w.s_h; s.stride_w = w.s_w;
  s.dilation_h = w.d_h; s.dilation_w = w.d_w;
  s.pad_top = w.pad_top; s.pad_left = w.pad_left;
  s.groups = int(g.groups);
  auto act = ops::fused_activation(c.node);
  auto x = static_cast<const float*>(in[0]);
  auto wt = static_cast<const float*>(in[1]);
  auto b = c.has(2) ? static_cast<const float*>(in[2]) : nullptr;
  auto y = static_cast<float*>(out[0]);
  return [=] { kernels::f32_conv2d_nhwc__ref(s, x, wt, b, act, y); };
}

int64_t conv_macs(const OpContext& c, const std::vector<TensorInfo>& out) {
  const auto& w = c.info(1).dims;
  int64_t per_output = 1;
  for (size_t i = 1; i < w.size(); ++i) per_output *= w[i];
  return out[0].count() * per_output;
}

}  // namespace

void register_conv_ops(OpTable& t) {
  OpImpl conv;
  conv.want_layout = [](const OpContext&, size_t i) -> std::optional<Layout> {
    return i == 0 ? std::optional(Layout::channels_last) : std::optional(Layout::row_major);
  };
  conv.infer = infer_conv;
  conv.build = build_conv;
  conv.macs = conv_macs;
  t.emplace_back("Conv", conv);
}

}  // namespace octet
