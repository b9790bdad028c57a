// Conv (FP32): NHWC activations, ONNX-ordered weights, fused bias and activation. A fourth
// input, when present, is the residual the graph added to the conv's output (a ResNet block's
// Add, fused by passes::fuse_residual_adds with the activation after it): y = act(conv(x) + r).
#include <type_traits>

#include "engine/ops/batch_use.h"
#include "engine/ops/fused_activation.h"
#include "engine/ops/repeated_channels.h"
#include "engine/ops/spatial.h"
#include "engine/ops/strided_output.h"
#include "kernels/conv/f32_conv.h"
#include "kernels/conv/f32_dwconv.h"
#include "kernels/conv/f32_narrow_group_conv.h"
#include "kernels/conv/f32_winograd.h"
#include "kernels/elementwise/eltwise.h"
#include "kernels/fallback.h"
#include "kernels/ref/conv2d.h"

namespace octet {
namespace {

constexpr size_t kResidual = 3;

// Drivers that add the residual to each output tile while it is in cache; the others write y
// without the activation, and one pass over y adds the residual and applies it.
template <class FastConv>
constexpr bool kAddsResidualPerTile =
    std::is_same_v<FastConv, kernels::F32Conv> || std::is_same_v<FastConv, kernels::F32WinogradConv> ||
    std::is_same_v<FastConv, kernels::F32NarrowGroupConv>;
// Drivers that write y's pixels any stride apart (y a slice of a Concat's channels).
template <class FastConv>
constexpr bool kWritesStrided =
    std::is_same_v<FastConv, kernels::F32Conv> || std::is_same_v<FastConv, kernels::F32WinogradConv>;

ops::ConvGeometry conv_geometry(const OpContext& c) {
  ops::ConvGeometry g = ops::conv_geometry(c, 0, 1, true);
  if (c.has(2) && c.info(2).count() != g.out_c)
    c.fail("B has " + std::to_string(c.info(2).count()) + " values, expected " + std::to_string(g.out_c));
  return g;
}

std::vector<TensorInfo> infer_conv(const OpContext& c) {
  ops::ConvGeometry g = conv_geometry(c);
  if (c.info(0).dtype != ir::DType::f32)
    c.fail(std::string(ir::dtype_name(c.info(0).dtype)) + " Conv is not supported (only float32)");
  if (c.has(kResidual) && (c.info(kResidual).dtype != ir::DType::f32 || c.info(kResidual).dims != g.out_dims()))
    c.fail("the fused residual is " + std::string(ir::dtype_name(c.info(kResidual).dtype)) + " " +
           ir::dims_str(c.info(kResidual).dims) + ", the output float32 " + ir::dims_str(g.out_dims()));
  return {{ir::DType::f32, g.out_dims(), Layout::channels_last}};
}

// k, then y = act(y + r) over the whole output: the residual for a driver that wrote y without it.
Kernel then_add_residual(Kernel k, const kernels::Conv2dShape& s, const kernels::Activation& act, kernels::Isa isa,
                         const float* r, float* y) {
  const size_t count = size_t(s.batch) * s.out_d * s.out_h * s.out_w * s.out_c;
  auto epilogue = std::make_shared<const kernels::F32Epilogue>(act, isa);
  return [k = std::move(k), epilogue, r, y, count] {
    k();
    epilogue->run_residual(1, count, y, count, r);
  };
}

// A SIMD kernel (weights packed now, indirection bound to x's arena address) when the
// weights and bias are constants and a kernel fits; an empty Kernel otherwise.
template <class FastConv>
Kernel fast_conv(const OpContext& c, const kernels::Conv2dShape& s, const kernels::Activation& act, const float* x,
                 const float* w, const float* b, ops::StridedOutput& output, const float* r) {
  const bool after = r != nullptr && !kAddsResidualPerTile<FastConv>;
  const kernels::Activation conv_act = after ? kernels::Activation{} : act;
  if (!FastConv::supports(s, conv_act)) return c.no_fast_kernel("shape or activation not supported");
  const kernels::FastDriver<FastConv> fast = kernels::make_fast<FastConv>(s, w, b, conv_act, c.isa, c.packed_cache);
  if (!fast) return c.no_fast_kernel(fast.why_not);
  const std::shared_ptr<FastConv> conv = fast.driver;
  conv->bind(x);
  c.report_kernel(conv->kernel_id() + (r ? "+residual" : ""));
  c.report_fallback("");  // an earlier driver's reason no longer applies
  pthreadpool_t pool = c.threadpool;
  if constexpr (kWritesStrided<FastConv>) {
    auto* y = static_cast<float*>(output.placed());
    const size_t stride = output.stride();
    return [conv, x, y, r, pool, stride] { conv->run(x, y, pool, r, stride); };
  } else if constexpr (kAddsResidualPerTile<FastConv>) {
    auto* y = static_cast<float*>(output.dense());
    return output.then_place([conv, x, y, r, pool] { conv->run(x, y, pool, r); }, pool);
  } else {
    auto* y = static_cast<float*>(output.dense());
    Kernel k = [conv, x, y, pool] { conv->run(x, y, pool); };
    return output.then_place(after ? then_add_residual(std::move(k), s, act, c.isa, r, y) : k, pool);
  }
}

// A depthwise conv with a channel multiplier (engine/ops/repeated_channels.h) on F32DwConv over
// its input's channels repeated; an empty Kernel when F32DwConv takes no such shape.
Kernel multiplier_depthwise_conv(const OpContext& c, const kernels::Conv2dShape& s, const kernels::Activation& act,
                                 const float* x, const float* w, const float* b, ops::StridedOutput& output,
                                 const float* r) {
  const std::optional<kernels::Conv2dShape> repeated = ops::repeated_depthwise_shape(s);
  if (!repeated) return {};
  const ops::RepeatedChannels<float> buffer(s);
  Kernel conv = fast_conv<kernels::F32DwConv>(c, *repeated, act, buffer.data(), w, b, output, r);
  if (!conv) return {};
  if (c.kernel_name) c.report_kernel(kernels::portable_kernel("repeat_channels") + " + " + *c.kernel_name);
  return buffer.then(c.threadpool, x, std::move(conv));
}

Kernel build_conv(const OpContext& c, std::span<const void* const> in, std::span<void* const> out) {
  kernels::Conv2dShape s = ops::conv2d_shape(conv_geometry(c));
  auto act = ops::fused_activation(c.node);
  auto x = static_cast<const float*>(in[0]);
  auto wt = static_cast<const float*>(in[1]);
  auto b = c.has(2) ? static_cast<const float*>(in[2]) : nullptr;
  ops::StridedOutput output(s, sizeof(float), out[0], c);
  auto r = c.has(kResidual) ? static_cast<const float*>(in[kResidual]) : nullptr;
  const bool constant_params = c.in_const[1] != nullptr && (!c.has(2) || c.in_const[2] != nullptr);
  if (c.isa != kernels::Isa::scalar && constant_params) {
    // A 3-D depthwise conv runs grouped on the IGEMM (the depthwise kernels are 2-D).
    const bool depthwise = s.groups > 1 && s.groups == s.in_c && s.out_c == s.in_c && !s.has_depth();
    // Winograd F(2x2, 3x3) does 2.25x fewer multiplies than the direct conv; with few
    // channels its transforms cost more than that saves (kernels/conv/f32_winograd.h).
    if (c.winograd && kernels::F32WinogradConv::supports(s, act) && kernels::F32WinogradConv::faster_than_direct(s, kernels::vector_rate(c.isa), c.model_weight_bytes))
      if (Kernel k = fast_conv<kernels::F32WinogradConv>(c, s, act, x, wt, b, output, r)) return k;
    if (depthwise)
      if (Kernel k = fast_conv<kernels::F32DwConv>(c, s, act, x, wt, b, output, r)) return k;
    if (Kernel k = multiplier_depthwise_conv(c, s, act, x, wt, b, output, r)) return k;
    // Groups of 2 or 4 channels: a vector across several groups, where the count of its FMAs and
    // in-group broadcasts is below the GEMM tile's padded FMAs (kernels/conv/f32_narrow_group_conv.h).
    if (kernels::F32NarrowGroupConv::faster_than_tile(s, c.isa))
      if (Kernel k = fast_conv<kernels::F32NarrowGroupConv>(c, s, act, x, wt, b, output, r)) return k;
    // Dense and grouped convs (and a depthwise one no depthwise kernel took) on the IGEMM.
    if (Kernel k = fast_conv<kernels::F32Conv>(c, s, act, x, wt, b, output, r)) return k;
  } else {
    c.report_fallback(c.isa == kernels::Isa::scalar ? "--isa scalar" : "weights or bias not constant");
  }
  c.report_kernel(kernels::reference_kernel("f32_conv2d_nhwc__ref") + (r ? "+residual" : ""));
  auto* y = static_cast<float*>(output.dense());
  if (!r) return output.then_place([=] { kernels::f32_conv2d_nhwc__ref(s, x, wt, b, act, y); }, c.threadpool);
  return output.then_place(
      then_add_residual([=] { kernels::f32_conv2d_nhwc__ref(s, x, wt, b, {}, y); }, s, act, c.isa, r, y), c.threadpool);
}

std::optional<Layout> conv_layout(const OpContext&, size_t input) {
  return input == 0 || input == kResidual ? Layout::channels_last : Layout::row_major;
}

}  // namespace

void register_conv_ops(OpTable& t) {
  OpImpl conv;
  conv.want_layout = conv_layout;
  conv.infer = infer_conv;
  conv.build = build_conv;
  conv.strided_output = [](const OpContext&) { return true; };  // in place or through StridedOutput's buffer
  conv.macs = [](const OpContext& c, const std::vector<TensorInfo>& out) { return ops::conv_macs(c, 1, out[0]); };
  conv.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) {
    // The residual has the output's shape: image i of it is added to image i of y.
    for (size_t i = 1; i < c.in.size(); ++i)
      if (i != kResidual && ops::is_activation(c, i)) return BatchUse::mixes_images;
    return ops::keeps_images_apart_if(ops::is_activation(c, 0));
  };
  t.emplace_back("Conv", conv);
}

}  // namespace octet
