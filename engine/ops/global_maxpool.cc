// GlobalMaxPool (FP32, uint8, int8) over channels-last activations of any spatial rank: the
// MaxPool drivers of kernels/pool/pool2d.h with one window over the whole input, the spatial
// axes seen as one row ([N][1][H*W*...][C] is the same memory). The 8-bit form is what the QDQ
// fusion leaves between a DequantizeLinear and a QuantizeLinear of equal parameters (a max is
// order-preserving on the codes; ONNX Runtime runs that unit in float, with the same codes).
#include <memory>

#include "engine/op_registry.h"
#include "engine/ops/batch_use.h"
#include "engine/ops/spatial.h"
#include "kernels/pool/pool2d.h"

namespace octet {
namespace {

kernels::Pool2dShape global_window(const OpContext& c) {
  const ir::Dims& d = c.info(0).dims;
  int64_t spatial = 1;
  for (size_t i = 2; i < d.size(); ++i) spatial *= d[i];
  if (spatial == 0) c.fail("X has an empty spatial axis " + ir::dims_str(d) + ": its maximum is undefined");
  if (spatial > (int64_t(1) << 30) || d[1] > (int64_t(1) << 30)) c.fail("X " + ir::dims_str(d) + " is too large");
  kernels::Pool2dShape s;
  s.batch = int(d[0]);
  s.channels = int(d[1]);
  s.in_w = s.kernel_w = int(spatial);
  return s;
}

OpImpl global_maxpool_op() {
  OpImpl op;
  op.want_layout = want_channels_last;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    const TensorInfo& x = c.info(0);
    if (x.dtype != ir::DType::f32 && x.dtype != ir::DType::u8 && x.dtype != ir::DType::s8)
      c.fail(std::string(ir::dtype_name(x.dtype)) + " GlobalMaxPool is not supported (float32, uint8, int8)");
    const TensorInfo out = ops::global_pool_output(c, 0);
    global_window(c);
    return {out};
  };
  // Every output value is one image's channel.
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) { return ops::per_image_with_constants(c); };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const kernels::Pool2dShape s = global_window(c);
    pthreadpool_t pool = c.threadpool;
    if (c.info(0).dtype == ir::DType::f32) {
      auto driver = std::make_shared<kernels::F32MaxPool2d>(s, c.isa);
      auto x = static_cast<const float*>(in[0]);
      auto y = static_cast<float*>(out[0]);
      driver->bind(x);
      c.report_kernel(driver->kernel_id());
      return [=] { driver->run(x, y, pool); };
    }
    const kernels::Q8 type = c.info(0).dtype == ir::DType::u8 ? kernels::Q8::u8 : kernels::Q8::s8;
    auto driver = std::make_shared<kernels::Q8MaxPool2d>(type, s, c.isa);
    const void* x = in[0];
    void* y = out[0];
    driver->bind(x);
    c.report_kernel(driver->kernel_id());
    return [=] { driver->run(x, y, pool); };
  };
  return op;
}

}  // namespace

void register_global_maxpool_op(OpTable& t) { t.emplace_back("GlobalMaxPool", global_maxpool_op()); }

}  // namespace octet
