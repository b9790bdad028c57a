// Conv (FP32): NHWC activations, ONNX-ordered weights, fused bias and activation.
#include "engine/ops/fused_activation.h"
#include "engine/ops/spatial.h"
#include "kernels/ref/conv2d.h"

namespace octet {
namespace {

ops::ConvGeometry conv_geometry(const OpContext& c) {
  ops::ConvGeometry g = ops::conv_geometry(c, 0, 1);
  if (c.has(2) && c.info(2).count() != g.out_c)
    c.fail("B has " + std::to_string(c.info(2).count()) + " values, expected " + std::to_string(g.out_c));
  return g;
}

std::vector<TensorInfo> infer_conv(const OpContext& c) {
  ops::ConvGeometry g = conv_geometry(c);
  if (c.info(0).dtype != ir::DType::f32)
    c.fail(std::string(ir::dtype_name(c.info(0).dtype)) + " Conv is not supported (only float32)");
  return {{ir::DType::f32, g.out_dims(), Layout::channels_last}};
}

Kernel build_conv(const OpContext& c, std::span<const void* const> in, std::span<void* const> out) {
  kernels::Conv2dShape s = ops::conv2d_shape(conv_geometry(c));
  auto act = ops::fused_activation(c.node);
  auto x = static_cast<const float*>(in[0]);
  auto wt = static_cast<const float*>(in[1]);
  auto b = c.has(2) ? static_cast<const float*>(in[2]) : nullptr;
  auto y = static_cast<float*>(out[0]);
  return [=] { kernels::f32_conv2d_nhwc__ref(s, x, wt, b, act, y); };
}

}  // namespace

void register_conv_ops(OpTable& t) {
  OpImpl conv;
  conv.want_layout = [](const OpContext&, size_t i) -> std::optional<Layout> {
    return i == 0 ? std::optional(Layout::channels_last) : std::optional(Layout::row_major);
  };
  conv.infer = infer_conv;
  conv.build = build_conv;
  conv.macs = [](const OpContext& c, const std::vector<TensorInfo>& out) { return ops::conv_macs(c, 1, out[0]); };
  t.emplace_back("Conv", conv);
}

}  // namespace octet
