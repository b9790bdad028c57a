// LRN (local response normalization across channels: AlexNet, CaffeNet, GoogLeNet, ZFNet,
// Inception-v1/v2 of the ONNX zoo) on channels-last activations, where each pixel's channels
// are contiguous: F32Lrn (kernels/pool/lrn.h) in ONNX Runtime's order of operations, or its
// reference. ONNX defines any size >= 1 and rank >= 3; ORT takes odd sizes and rank 4 only, and
// octet the ONNX definition (the window [c - (size-1)/2, c + size/2]). Inside a QDQ model an LRN
// stays float between its DequantizeLinear and QuantizeLinear, as ORT's CPU provider runs it.
#include <memory>
#include <vector>

#include "engine/op_registry.h"
#include "engine/ops/batch_use.h"
#include "kernels/pool/lrn.h"
#include "kernels/ref/lrn.h"

namespace octet {
namespace {

kernels::LrnParams lrn_params(const OpContext& c) {
  kernels::LrnParams p;
  const int64_t size = c.node.attrs.i("size");
  if (size < 1 || size > (int64_t(1) << 20)) c.fail("size " + std::to_string(size) + " must be in [1, 2^20]");
  p.size = int(size);
  p.alpha = c.node.attrs.f("alpha");
  p.beta = c.node.attrs.f("beta");
  p.bias = c.node.attrs.f("bias");
  return p;
}

// Pixels (every axis but the channels) and channels of X.
std::pair<size_t, size_t> pixels_channels(const OpContext& c) {
  const ir::Dims& d = c.info(0).dims;
  int64_t pixels = d[0];
  for (size_t i = 2; i < d.size(); ++i) pixels *= d[i];
  return {size_t(pixels), size_t(d[1])};
}

std::shared_ptr<kernels::F32Lrn> fast_lrn(const OpContext& c, std::string* why_not) {
  if (c.isa == kernels::Isa::scalar) {
    if (why_not) *why_not = "--isa scalar";
    return nullptr;
  }
  auto fast = kernels::make_fast<kernels::F32Lrn>(lrn_params(c), pixels_channels(c).second, c.isa);
  if (!fast && why_not) *why_not = fast.why_not;
  return fast.driver;
}

size_t threads_of(pthreadpool_t pool) { return pool == nullptr ? 1 : pthreadpool_get_threads_count(pool); }

OpImpl lrn_op() {
  OpImpl op;
  op.want_layout = want_channels_last;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    const TensorInfo& x = c.info(0);
    if (x.dtype != ir::DType::f32) c.fail(std::string(ir::dtype_name(x.dtype)) + " LRN is not supported (float32)");
    if (x.dims.size() < 3) c.fail("X " + ir::dims_str(x.dims) + " must have rank 3 or more (N, C, D1, ...)");
    lrn_params(c);
    return {x};
  };
  // Each pixel's channels of one image.
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) { return ops::per_image_with_constants(c); };
  op.scratch_bytes = [](const OpContext& c, const std::vector<TensorInfo>&) -> size_t {
    const auto lrn = fast_lrn(c, nullptr);
    return lrn ? lrn->scratch_bytes(threads_of(c.threadpool)) : 0;
  };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const kernels::LrnParams p = lrn_params(c);
    const auto [pixels, channels] = pixels_channels(c);
    auto x = static_cast<const float*>(in[0]);
    auto y = static_cast<float*>(out[0]);
    pthreadpool_t pool = c.threadpool;
    std::string why_not;
    if (auto lrn = fast_lrn(c, &why_not)) {
      c.report_kernel(lrn->kernel_id());
      const size_t need = lrn->scratch_bytes(threads_of(pool));
      // The plan's scratch (always, in a plan); else its own.
      std::shared_ptr<std::vector<char>> own;
      void* scratch = c.scratch;
      if (c.scratch_size < need) {
        own = std::make_shared<std::vector<char>>(need);
        scratch = own->data();
      }
      return [=, pixels = pixels] { lrn->run(x, y, pixels, scratch, pool); (void)own; };
    }
    c.report_fallback(why_not);
    c.report_kernel(kernels::reference_kernel("f32_lrn_nhwc__ref"));
    return [=, pixels = pixels, channels = channels] { kernels::f32_lrn_nhwc__ref(p, pixels, channels, x, y); };
  };
  return op;
}

}  // namespace

void register_lrn_op(OpTable& t) { t.emplace_back("LRN", lrn_op()); }

}  // namespace octet
