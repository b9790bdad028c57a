// MaxPool, AveragePool and GlobalAveragePool (FP32) over channels-last activations.
#include "engine/ops/spatial.h"
#include "kernels/ref/pool2d.h"

namespace octet {
namespace {

ops::Window pool_window(const OpContext& c) {
  const TensorInfo& x = c.info(0);
  ops::require_spatial_rank(c, x, "X");
  const auto& ks = c.node.attrs.ints("kernel_shape");
  if (ks.size() + 2 != x.dims.size())
    c.fail("kernel_shape needs " + std::to_string(x.dims.size() - 2) + " values for X " + ir::dims_str(x.dims));
  if (c.node.attrs.i("storage_order", 0) != 0) c.fail("storage_order=1 is not supported");
  std::vector<int64_t> spatial(x.dims.begin() + 2, x.dims.end());
  return ops::resolve_window(c, spatial, ks, c.node.attrs.i("ceil_mode") != 0);
}

void require_f32(const OpContext& c) {
  if (c.info(0).dtype != ir::DType::f32)
    c.fail(std::string(ir::dtype_name(c.info(0).dtype)) + " " + c.node.op + " is not supported (only float32)");
}

std::vector<TensorInfo> infer_pool(const OpContext& c) {
  require_f32(c);
  ops::Window w = pool_window(c);
  ir::Dims out = {c.info(0).dims[0], c.info(0).dims[1]};
  out.insert(out.end(), w.out.begin(), w.out.end());
  return {{ir::DType::f32, out, Layout::channels_last}};
}

kernels::Pool2dShape pool_shape(const OpContext& c) {
  ops::Window2d w = ops::as_2d(pool_window(c));
  kernels::Pool2dShape s;
  s.batch = int(c.info(0).dims[0]);
  s.channels = int(c.info(0).dims[1]);
  s.in_h = w.in_h; s.in_w = w.in_w; s.out_h = w.out_h; s.out_w = w.out_w;
  s.kernel_h = w.k_h; s.kernel_w = w.k_w; s.stride_h = w.s_h; s.stride_w = w.s_w;
  s.dilation_h = w.d_h; s.dilation_w = w.d_w;
  s.pad_top = w.pad_top; s.pad_left = w.pad_left; s.pad_bottom = w.pad_bottom; s.pad_right = w.pad_right;
  return s;
}

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
