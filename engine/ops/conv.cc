// Conv (FP32): NHWC activations, ONNX-ordered weights, fused bias and activation.
#include "engine/ops/batch_use.h"
#include "engine/ops/fused_activation.h"
#include "engine/ops/spatial.h"
#include "kernels/conv/f32_conv.h"
#include "kernels/conv/f32_dwconv.h"
#include "kernels/conv/f32_winograd.h"
#include "kernels/fallback.h"
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

// A SIMD kernel (weights packed now, indirection bound to x's arena address) when the
// weights and bias are constants and a kernel fits; an empty Kernel otherwise.
template <class FastConv>
Kernel fast_conv(const OpContext& c, const kernels::Conv2dShape& s, const kernels::Activation& act, const float* x,
                 const float* w, const float* b, float* y) {
  if (!FastConv::supports(s, act)) return c.no_fast_kernel("shape or activation not supported");
  const kernels::FastDriver<FastConv> fast = kernels::make_fast<FastConv>(s, w, b, act, c.isa);
  if (!fast) return c.no_fast_kernel(fast.why_not);
  const std::shared_ptr<FastConv> conv = fast.driver;
  conv->bind(x);
  c.report_kernel(conv->kernel_name());
  pthreadpool_t pool = c.threadpool;
  return [conv, x, y, pool] { conv->run(x, y, pool); };
}

Kernel build_conv(const OpContext& c, std::span<const void* const> in, std::span<void* const> out) {
  kernels::Conv2dShape s = ops::conv2d_shape(conv_geometry(c));
  auto act = ops::fused_activation(c.node);
  auto x = static_cast<const float*>(in[0]);
  auto wt = static_cast<const float*>(in[1]);
  auto b = c.has(2) ? static_cast<const float*>(in[2]) : nullptr;
  auto y = static_cast<float*>(out[0]);
  const bool constant_params = c.in_const[1] != nullptr && (!c.has(2) || c.in_const[2] != nullptr);
  if (c.isa != kernels::Isa::scalar && constant_params) {
    const bool depthwise = s.groups > 1 && s.groups == s.in_c && s.out_c == s.in_c;
    // Winograd F(2x2, 3x3) does 2.25x fewer multiplies than the direct conv; with few
    // channels its transforms cost more than that saves (kernels/conv/f32_winograd.h).
    if (c.winograd && kernels::F32WinogradConv::supports(s, act) && kernels::F32WinogradConv::faster_than_direct(s))
      if (Kernel k = fast_conv<kernels::F32WinogradConv>(c, s, act, x, wt, b, y)) return k;
    Kernel k = depthwise ? fast_conv<kernels::F32DwConv>(c, s, act, x, wt, b, y)
                         : (s.groups == 1 ? fast_conv<kernels::F32Conv>(c, s, act, x, wt, b, y) : Kernel{});
    if (k) return k;
    if (!depthwise && s.groups != 1) c.report_fallback("grouped conv (groups " + std::to_string(s.groups) + ")");
  } else {
    c.report_fallback(c.isa == kernels::Isa::scalar ? "--isa scalar" : "weights or bias not constant");
  }
  c.report_kernel("f32_conv2d_nhwc__ref");
  return [=] { kernels::f32_conv2d_nhwc__ref(s, x, wt, b, act, y); };
}

}  // namespace

void register_conv_ops(OpTable& t) {
  OpImpl conv;
  conv.want_layout = channels_last_map;
  conv.infer = infer_conv;
  conv.build = build_conv;
  conv.macs = [](const OpContext& c, const std::vector<TensorInfo>& out) { return ops::conv_macs(c, 1, out[0]); };
  conv.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) { return ops::per_image_with_constants(c); };
  t.emplace_back("Conv", conv);
}

}  // namespace octet
