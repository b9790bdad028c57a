// PointwiseDepthwise (made by passes::fuse_pointwise_depthwise, FP32, NHWC):
//   t = pw_act(Conv 1x1 (x, w1, b1))              w1: [mid][in_c][1][1]
//   y = act(Conv depthwise (t, w2, b2))           w2: [mid][1][kh][kw], group = mid
// with the depthwise conv's window attributes (strides, pads, dilations, auto_pad). t never
// exists whole (past 1 MiB an image): kernels/conv/f32_pwdw_conv.h keeps a ring of its rows,
// in scratch the plan places in its arena (OpImpl::scratch_bytes).
#include <memory>
#include <vector>

#include "engine/op_registry.h"
#include "engine/ops/batch_use.h"
#include "engine/ops/fused_activation.h"
#include "engine/ops/pwdw_shape.h"
#include "engine/ops/two_conv_inputs.h"
#include "engine/ops/spatial.h"
#include "kernels/conv/f32_pwdw_conv.h"
#include "kernels/fallback.h"
#include "kernels/ref/conv2d.h"

namespace octet {
namespace {

using ops::kB1;
using ops::kB2;
using ops::kW1;
using ops::kW2;
using ops::kX;


Kernel build_pwdw(const OpContext& c, std::span<const void* const> in, std::span<void* const> out) {
  const ops::PwDwShape s = ops::pwdw_shape(c);
  const kernels::Activation pw_act = ops::fused_activation(c.node, "pw_act", "pw_act_params");
  const kernels::Activation dw_act = ops::fused_activation(c.node);
  const ops::TwoConvData d = ops::two_conv_data(c, in);
  const float *x = d.x, *w1 = d.w1, *b1 = d.b1, *w2 = d.w2, *b2 = d.b2;
  auto y = static_cast<float*>(out[0]);
  pthreadpool_t pool = c.threadpool;
  if (c.isa == kernels::Isa::scalar) {
    c.report_fallback("--isa scalar");
  } else {
    const size_t threads = pool == nullptr ? 1 : pthreadpool_get_threads_count(pool);
    // The plan's scratch when it is what scratch_bytes asked for (it always is in a plan);
    // else the conv allocates its own.
    const size_t need = kernels::F32PointwiseDwConv::scratch_floats(s.dw, threads) * sizeof(float);
    float* scratch = c.scratch_size >= need ? static_cast<float*>(c.scratch) : nullptr;
    auto fast = kernels::make_fast<kernels::F32PointwiseDwConv>(s.dw, s.pw.in_c, w1, b1, pw_act, w2, b2, dw_act, c.isa,
                                                                threads, kernels::PwDwRingLimits{}, scratch,
                                                                c.packed_cache);
    if (fast) {
      std::shared_ptr<kernels::F32PointwiseDwConv> conv = fast.driver;
      c.report_kernel(conv->kernel_id());
      return [conv, x, y, pool] { conv->run(x, y, pool); };
    }
    c.report_fallback(fast.why_not);
  }
  // The two reference convs through a scratch tensor of the whole intermediate.
  auto scratch = std::make_shared<std::vector<float>>(size_t(s.pw.batch) * s.pw.in_h * s.pw.in_w * s.dw.in_c);
  c.report_kernel(kernels::reference_kernel("f32_conv2d_nhwc__ref"));
  return [=] {
    kernels::f32_conv2d_nhwc__ref(s.pw, x, w1, b1, pw_act, scratch->data());
    kernels::f32_conv2d_nhwc__ref(s.dw, scratch->data(), w2, b2, dw_act, y);
  };
}

}  // namespace

void register_pwdw_ops(OpTable& t) {
  OpImpl op;
  op.want_layout = channels_last_map;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    const ops::PwDwShape s = ops::pwdw_shape(c);
    ops::require_constant_weights(c);
    return {{ir::DType::f32, {s.dw.batch, s.dw.out_c, s.dw.out_h, s.dw.out_w}, Layout::channels_last}};
  };
  op.build = build_pwdw;
  // The rings in the arena (the ref convs of --isa scalar allocate their own intermediate).
  op.scratch_bytes = [](const OpContext& c, const std::vector<TensorInfo>&) -> size_t {
    if (c.isa == kernels::Isa::scalar) return 0;
    const size_t threads = c.threadpool == nullptr ? 1 : pthreadpool_get_threads_count(c.threadpool);
    return kernels::F32PointwiseDwConv::scratch_floats(ops::pwdw_shape(c).dw, threads) * sizeof(float);
  };
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) { return ops::per_image_with_constants(c); };
  op.macs = [](const OpContext& c, const std::vector<TensorInfo>&) {
    const ops::PwDwShape s = ops::pwdw_shape(c);
    const int64_t pixels_in = int64_t(s.pw.batch) * s.pw.in_h * s.pw.in_w;
    const int64_t pixels_out = int64_t(s.dw.batch) * s.dw.out_h * s.dw.out_w;
    return pixels_in * s.pw.in_c * s.dw.in_c + pixels_out * s.dw.out_c * s.dw.kernel_h * s.dw.kernel_w;
  };
  t.emplace_back("PointwiseDepthwise", op);
}

}  // namespace octet
