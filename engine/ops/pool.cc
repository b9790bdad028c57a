// MaxPool (FP32, uint8, int8; FP32 with its Indices output), AveragePool and GlobalAveragePool (FP32)
// over channels-last activations.
// GlobalAveragePool, and an AveragePool whose window is the whole unpadded input, run on the
// SIMD kernel of kernels/elementwise/eltwise.h; MaxPool and the other AveragePools on the
// drivers of kernels/pool/pool2d.h (the ref kernels at --isa scalar).
#include <algorithm>
#include <memory>

#include "engine/ops/batch_use.h"
#include "engine/ops/global_avgpool.h"
#include "engine/ops/spatial.h"
#include "kernels/elementwise/eltwise.h"
#include "kernels/pool/maxpool_indices.h"
#include "kernels/pool/pool2d.h"
#include "kernels/ref/maxpool_indices.h"
#include "kernels/ref/pool2d.h"

namespace octet {

namespace ops {

Kernel global_avgpool_kernel(const OpContext& c, int batch, int hw, int channels, kernels::GapOrder order,
                             const void* in, void* out) {
  auto gap = std::make_shared<const kernels::F32GlobalAvgPool>(batch, hw, channels, order, c.isa);
  c.report_kernel(gap->kernel_id());
  auto x = static_cast<const float*>(in);
  auto y = static_cast<float*>(out);
  pthreadpool_t pool = c.threadpool;
  return [=] { gap->run(x, y, pool); };
}

}  // namespace ops

namespace {

void require_f32(const OpContext& c) {
  if (c.info(0).dtype != ir::DType::f32)
    c.fail(std::string(ir::dtype_name(c.info(0).dtype)) + " " + c.node.op + " is not supported (only float32)");
}

// MaxPool and AveragePool run 1-D, 2-D and 3-D windows.
std::vector<TensorInfo> pool_output(const OpContext& c) {
  ops::Window w = ops::pool_window(c, true);
  ir::Dims out = {c.info(0).dims[0], c.info(0).dims[1]};
  out.insert(out.end(), w.out.begin(), w.out.end());
  return {{c.info(0).dtype, out, Layout::channels_last}};
}

std::vector<TensorInfo> infer_pool(const OpContext& c) {
  require_f32(c);
  return pool_output(c);
}

// MaxPool's second output, Indices: positions in the whole NCHW input, so an image's indices
// depend on its place in the batch.
bool wants_indices(const OpContext& c) { return c.node.outputs.size() > 1 && !c.node.outputs[1].empty(); }

// MaxPool also runs on 8-bit quantized tensors, where ONNX Runtime's QDQ fusion leaves it.
std::vector<TensorInfo> infer_maxpool(const OpContext& c) {
  const ir::DType t = c.info(0).dtype;
  if (t != ir::DType::f32 && t != ir::DType::u8 && t != ir::DType::s8)
    c.fail(std::string(ir::dtype_name(t)) + " MaxPool is not supported (float32, uint8, int8)");
  std::vector<TensorInfo> out = pool_output(c);
  if (wants_indices(c)) {
    if (t != ir::DType::f32) c.fail("the Indices output of a " + std::string(ir::dtype_name(t)) + " MaxPool is not supported (float32)");
    out.push_back({ir::DType::s64, out[0].dims, Layout::channels_last});
  }
  return out;
}

// Values and indices together, one pass: F32MaxPoolIndices, or its reference.
Kernel maxpool_indices_kernel(const OpContext& c, const kernels::Pool2dShape& s, const void* x, void* y, void* i) {
  const int rank = int(c.info(0).dims.size()) - 2;
  const bool column_major = c.node.attrs.i("storage_order", 0) == 1;
  auto xf = static_cast<const float*>(x);
  auto yf = static_cast<float*>(y);
  auto idx = static_cast<int64_t*>(i);
  pthreadpool_t pool = c.threadpool;
  if (c.isa != kernels::Isa::scalar) {
    auto fast = kernels::make_fast<kernels::F32MaxPoolIndices>(s, rank, column_major, c.isa);
    if (fast) {
      std::shared_ptr<kernels::F32MaxPoolIndices> d = fast.driver;
      d->bind(xf);
      c.report_kernel(d->kernel_id());
      return [=] { d->run(xf, yf, idx, pool); };
    }
    c.report_fallback(fast.why_not);
  } else {
    c.report_fallback("--isa scalar");
  }
  c.report_kernel(kernels::reference_kernel("f32_maxpool_indices_nhwc__ref"));
  return [=] { kernels::f32_maxpool_indices_nhwc__ref(s, rank, column_major, xf, yf, idx); };
}

kernels::Pool2dShape pool_shape(const OpContext& c) { return ops::pool2d_shape(c, ops::pool_window(c, true)); }

// A window that is the whole input with no padding: a global average (whatever the strides).
bool is_global_window(const kernels::Pool2dShape& s) {
  return s.kernel_h == s.in_h && s.kernel_w == s.in_w && s.dilation_h == 1 && s.dilation_w == 1 && s.pad_top == 0 &&
         s.pad_left == 0 && s.pad_bottom == 0 && s.pad_right == 0 && s.out_h == 1 && s.out_w == 1 &&
         s.kernel_d == s.in_d && s.dilation_d == 1 && s.pad_front == 0 && s.pad_back == 0 && s.out_d == 1;
}

// A pooling driver bound to x's arena address.
template <class Driver, class X, class Y>
Kernel bound_pool_kernel(const OpContext& c, std::shared_ptr<Driver> pool_driver, X x, Y y) {
  pool_driver->bind(x);
  c.report_kernel(pool_driver->kernel_id());
  pthreadpool_t pool = c.threadpool;
  return [=] { pool_driver->run(x, y, pool); };
}

Kernel maxpool_kernel(const OpContext& c, const kernels::Pool2dShape& s, const void* x, void* y) {
  switch (c.info(0).dtype) {
    case ir::DType::u8:
      return bound_pool_kernel(c, std::make_shared<kernels::Q8MaxPool2d>(kernels::Q8::u8, s, c.isa), x, y);
    case ir::DType::s8:
      return bound_pool_kernel(c, std::make_shared<kernels::Q8MaxPool2d>(kernels::Q8::s8, s, c.isa), x, y);
    default:
      return bound_pool_kernel(c, std::make_shared<kernels::F32MaxPool2d>(s, c.isa),
                               static_cast<const float*>(x), static_cast<float*>(y));
  }
}

std::vector<TensorInfo> infer_global_pool(const OpContext& c) {
  require_f32(c);
  return {ops::global_pool_output(c, 0)};
}

}  // namespace

void register_pool_ops(OpTable& t) {
  OpImpl maxpool{want_channels_last, infer_maxpool,
                 [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
                   if (wants_indices(c)) return maxpool_indices_kernel(c, pool_shape(c), in[0], out[0], out[1]);
                   return maxpool_kernel(c, pool_shape(c), in[0], out[0]);
                 }};

  OpImpl avgpool{want_channels_last, infer_pool,
                 [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
                   auto s = pool_shape(c);
                   // Both count_include_pad settings divide by in_h * in_w here. ORT sums such a
                   // window as GlobalAveragePool when its strides are 1 (MlasPool's global
                   // kernel); other strides take MLAS's window kernels, whose generic one sums in
                   // order.
                   if (is_global_window(s)) {
                     const kernels::GapOrder order = s.stride_d == 1 && s.stride_h == 1 && s.stride_w == 1
                                                         ? kernels::GapOrder::mlas_lanes4
                                                         : kernels::GapOrder::sequential;
                     return ops::global_avgpool_kernel(c, s.batch, s.in_d * s.in_h * s.in_w, s.channels, order, in[0],
                                                       out[0]);
                   }
                   bool include_pad = c.node.attrs.i("count_include_pad") != 0;
                   // Absent (a graph octet built): as if ORT knew the shape.
                   const bool ort_nchwc = c.node.attrs.i(ir::kShapeKnownToOrtAttr, 1) != 0;
                   return bound_pool_kernel(c, std::make_shared<kernels::F32AvgPool2d>(s, include_pad, c.isa, ort_nchwc),
                                            static_cast<const float*>(in[0]), static_cast<float*>(out[0]));
                 }};

  OpImpl gap{want_channels_last, infer_global_pool,
             [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
               const auto& d = c.info(0).dims;
               int batch = int(d[0]), channels = int(d[1]);
               int hw = int(ir::element_count(d) / std::max<int64_t>(1, d[0] * d[1]));
               return ops::global_avgpool_kernel(c, batch, hw, channels, kernels::GapOrder::mlas_lanes4, in[0],
                                                 out[0]);
             }};
  // Every output value is one window of one image.
  for (OpImpl* pool : {&maxpool, &avgpool, &gap})
    pool->batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) { return ops::per_image_with_constants(c); };
  // Indices count from the batch's first image.
  maxpool.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) {
    return wants_indices(c) ? BatchUse::mixes_images : ops::per_image_with_constants(c);
  };
  t.emplace_back("MaxPool", maxpool);
  t.emplace_back("AveragePool", avgpool);
  t.emplace_back("GlobalAveragePool", gap);
}

}  // namespace octet
