// MaxPool, AveragePool and GlobalAveragePool (FP32) over channels-last activations.
#include "engine/ops/spatial.h"
#include "kernels/ref/pool2d.h"

namespace octet {
namespace {

void require_f32(const OpContext& c) {
  if (c.info(0).dtype != ir::DType::f32)
    c.fail(std::string(ir::dtype_name(c.info(0).dtype)) + " " + c.node.op + " is not supported (only float32)");
}

std::vector<TensorInfo> infer_pool(const OpContext& c) {
  require_f32(c);
  ops::Window w = ops::pool_window(c);
  ir::Dims out = {c.info(0).dims[0], c.info(0).dims[1]};
  out.insert(out.end(), w.out.begin(), w.out.end());
  return {{ir::DType::f32, out, Layout::channels_last}};
}

kernels::Pool2dShape pool_shape(const OpContext& c) { return ops::pool2d_shape(c, ops::pool_window(c)); }

std::vector<TensorInfo> infer_global_pool(const OpContext& c) {
  const TensorInfo& x = c.info(0);
  require_f32(c);
  if (x.dims.size() < 3) c.fail("X must have rank >= 3, got " + ir::dims_str(x.dims));
  ir::Dims out(x.dims.size(), 1);
  out[0] = x.dims[0];
  out[1] = x.dims[1];
  return {{ir::DType::f32, out, Layout::channels_last}};
}

}  // namespace

void register_pool_ops(OpTable& t) {
  OpImpl maxpool{want_channels_last, infer_pool,
                 [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
                   auto s = pool_shape(c);
                   auto x = static_cast<const float*>(in[0]);
                   auto y = static_cast<float*>(out[0]);
                   return [=] { kernels::f32_maxpool2d_nhwc__ref(s, x, y); };
                 }};
  t.emplace_back("MaxPool", maxpool);

  OpImpl avgpool{want_channels_last, infer_pool,
                 [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
                   auto s = pool_shape(c);
                   bool include_pad = c.node.attrs.i("count_include_pad") != 0;
                   auto x = static_cast<const float*>(in[0]);
                   auto y = static_cast<float*>(out[0]);
                   return [=] { kernels::f32_avgpool2d_nhwc__ref(s, include_pad, x, y); };
                 }};
  t.emplace_back("AveragePool", avgpool);

  OpImpl gap{want_channels_last, infer_global_pool,
             [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
               const auto& d = c.info(0).dims;
               int batch = int(d[0]), channels = int(d[1]);
               int hw = int(ir::element_count(d) / (d[0] * d[1]));
               auto x = static_cast<const float*>(in[0]);
               auto y = static_cast<float*>(out[0]);
               return [=] { kernels::f32_global_avgpool_nhwc__ref(batch, hw, channels, x, y); };
             }};
  t.emplace_back("GlobalAveragePool", gap);
}

}  // namespace octet
