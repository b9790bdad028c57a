// Element-wise FP32 ops: activations, broadcasting arithmetic and inference BatchNorm.
// Relu, Clip, Sigmoid, Add and Mul run on the SIMD kernels of kernels/elementwise/eltwise.h
// when the shapes fit (that driver falls back to the ref kernels otherwise).
#include <limits>
#include <memory>

#include "engine/ops/broadcast.h"
#include "kernels/elementwise/eltwise.h"
#include "kernels/ref/elementwise.h"

namespace octet {
namespace {

using kernels::Activation;

void require_f32(const OpContext& c, size_t i) {
  if (c.info(i).dtype != ir::DType::f32)
    c.fail(std::string(ir::dtype_name(c.info(i).dtype)) + " " + c.node.op + " (input " + std::to_string(i) +
           ") is not supported (only float32)");
}

bool is_constant(const OpContext& c, size_t i) { return i < c.in_const.size() && c.in_const[i]; }

// A bound known at plan time, or `dflt` when absent or computed at run time (see runtime_bound).
float scalar_input(const OpContext& c, size_t i, const char* what, float dflt) {
  if (!c.has(i)) return dflt;
  if (c.info(i).dtype != ir::DType::f32 || c.info(i).count() != 1)
    c.fail(std::string(what) + " must be a float32 scalar");
  return is_constant(c, i) ? c.in_const[i]->as<float>()[0] : dflt;
}

// Where the kernel reads a bound that is only known at run time; nullptr otherwise.
const float* runtime_bound(const OpContext& c, size_t i, std::span<const void* const> in) {
  return c.has(i) && !is_constant(c, i) ? static_cast<const float*>(in[i]) : nullptr;
}

Activation unary_activation(const OpContext& c) {
  const std::string& op = c.node.op;
  if (op == "Relu") return Activation::relu();
  if (op == "Sigmoid") return Activation::sigmoid();
  if (op == "HardSwish") return Activation::hard_swish();
  if (op == "HardSigmoid") return Activation::hard_sigmoid(c.node.attrs.f("alpha"), c.node.attrs.f("beta"));
  const float inf = std::numeric_limits<float>::infinity();
  return Activation::clip(scalar_input(c, 1, "min", -inf), scalar_input(c, 2, "max", inf));
}

OpImpl unary_op() {
  OpImpl u;
  u.want_layout = any_layout;
  u.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    require_f32(c, 0);
    unary_activation(c);  // validates Clip's bounds
    return {c.info(0)};
  };
  u.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const auto act = unary_activation(c);
    int64_t n = c.info(0).count();
    auto x = static_cast<const float*>(in[0]);
    auto y = static_cast<float*>(out[0]);
    const float* lo = c.node.op == "Clip" ? runtime_bound(c, 1, in) : nullptr;
    const float* hi = c.node.op == "Clip" ? runtime_bound(c, 2, in) : nullptr;
    auto unary = std::make_shared<const kernels::F32Unary>(act.kind, c.isa);
    c.report_kernel(unary->kernel_name());
    pthreadpool_t pool = c.threadpool;
    if (lo || hi)
      return [=] {
        auto a = act;
        if (lo) a.min = *lo;
        if (hi) a.max = *hi;
        unary->run(a, n, x, y, pool);
      };
    return [=] { unary->run(act, n, x, y, pool); };
  };
  return u;
}

ir::Dims broadcast_dims(const OpContext& c) { return ops::broadcast_dims(c, c.info(0).dims, c.info(1).dims); }

kernels::BinaryOp binary_kind(const std::string& op) {
  if (op == "Add") return kernels::BinaryOp::add;
  if (op == "Sub") return kernels::BinaryOp::sub;
  if (op == "Mul") return kernels::BinaryOp::mul;
  return kernels::BinaryOp::div;
}

OpImpl binary_op() {
  OpImpl b;
  b.want_layout = any_layout;
  b.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    require_f32(c, 0);
    require_f32(c, 1);
    ir::Dims out = broadcast_dims(c);
    return {{ir::DType::f32, out, ops::broadcast_layout(c.info(0), c.info(1), out)}};
  };
  b.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    ir::Dims dims = broadcast_dims(c);
    if (int(dims.size()) > kernels::kMaxRank) c.fail("rank above 8 is not supported");
    const auto box =
        ops::strided_broadcast(c.info(0), c.info(1), dims, ops::broadcast_layout(c.info(0), c.info(1), dims));
    auto binary = std::make_shared<const kernels::F32Binary>(binary_kind(c.node.op), box.rank, box.dims.data(),
                                                             box.a_strides.data(), box.b_strides.data(), c.isa);
    c.report_kernel(binary->kernel_name());
    auto a = static_cast<const float*>(in[0]);
    auto bp = static_cast<const float*>(in[1]);
    auto y = static_cast<float*>(out[0]);
    pthreadpool_t pool = c.threadpool;
    return [=] { binary->run(a, bp, y, pool); };
  };
  return b;
}

OpImpl batchnorm_op() {
  OpImpl bn;
  bn.want_layout = [](const OpContext&, size_t i) -> std::optional<Layout> {
    return i == 0 ? Layout::channels_last : Layout::row_major;
  };
  bn.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    require_f32(c, 0);
    const auto& x = c.info(0);
    if (x.dims.size() < 2) c.fail("X must have rank >= 2, got " + ir::dims_str(x.dims));
    for (size_t i = 1; i <= 4; ++i) {
      require_f32(c, i);
      if (c.info(i).count() != x.dims[1])
        c.fail("input " + std::to_string(i) + " must hold one value per channel (" + std::to_string(x.dims[1]) + ")");
    }
    return {x};
  };
  bn.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const auto& x = c.info(0);
    int channels = int(x.dims[1]);
    int64_t pixels = x.count() / std::max<int64_t>(1, channels);
    float eps = c.node.attrs.f("epsilon");
    auto p = [&](size_t i) { return static_cast<const float*>(in[i]); };
    auto xs = p(0), scale = p(1), bias = p(2), mean = p(3), var = p(4);
    auto y = static_cast<float*>(out[0]);
    c.report_kernel("f32_batchnorm_channels_last__ref");
    return [=] {
      kernels::f32_batchnorm_channels_last__ref(pixels, channels, xs, scale, bias, mean, var, eps, y);
    };
  };
  return bn;
}

}  // namespace

void register_elementwise_ops(OpTable& t) {
  for (const char* op : {"Relu", "Sigmoid", "HardSigmoid", "HardSwish", "Clip"}) t.emplace_back(op, unary_op());
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) t.emplace_back(op, binary_op());
  t.emplace_back("BatchNormalization", batchnorm_op());
}

}  // namespace octet
