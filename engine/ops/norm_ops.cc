// The steps of the decomposed LayerNormalization older exports write are ordinary ops (Sqrt is an
// activation row, Pow engine/ops/pow_op.cc; passes::fuse_layer_norm removes them from such
// chains); here LayerNormalization (opset 17, FP32) on kernels::F32LayerNorm: ONNX Runtime's formula bit for
// bit (kernels/ref/layernorm.h). The normalised axes [axis, rank) must be contiguous, so the
// input arrives row-major (the planner relayouts a channels-last map first); Scale and B hold
// the normalised shape's count of values (any shape of that count, or one that broadcasts to it
// when constant), and Mean / InvStdDev, when the graph reads them, are [d0 .. d(axis-1), 1 ... 1].
#include <cmath>
#include <memory>
#include <vector>

#include "engine/op_registry.h"
#include "engine/ops/batch_use.h"
#include "engine/ops/norm_inputs.h"
#include "kernels/elementwise/eltwise.h"
#include "kernels/elementwise/instance_norm.h"

namespace octet {
namespace {

struct NormShape {
  int64_t axis = 0, rows = 1, n = 1;
};

NormShape norm_shape(const OpContext& c) {
  const ir::Dims& d = c.info(0).dims;
  if (d.empty()) c.fail("X must have rank 1 or more");
  NormShape s;
  s.axis = normalize_axis(c, c.node.attrs.i("axis", -1), int64_t(d.size()));
  for (size_t i = 0; i < d.size(); ++i) (int64_t(i) < s.axis ? s.rows : s.n) *= d[i];
  return s;
}

// Scale (input 1) or B (input 2) as n values: the tensor itself when it holds n, else a
// constant broadcast (unidirectionally, numpy rules) to the normalised shape.
std::shared_ptr<std::vector<float>> expanded_param(const OpContext& c, size_t i, const NormShape& s) {
  const TensorInfo& p = c.info(i);
  if (p.count() == s.n) return nullptr;
  const ir::Dims& d = c.info(0).dims;
  const ir::Dims target(d.begin() + s.axis, d.end());
  const char* what = i == 1 ? "Scale" : "B";
  if (p.dims.size() > target.size())
    c.fail(std::string(what) + " has a higher rank than the normalised shape");
  for (size_t k = 0; k < p.dims.size(); ++k) {
    const int64_t e = p.dims[p.dims.size() - 1 - k], t = target[target.size() - 1 - k];
    if (e != 1 && e != t) c.fail(std::string(what) + " does not broadcast to the normalised shape");
  }
  const float* v = c.constant(i, what).as<float>();
  auto out = std::make_shared<std::vector<float>>(size_t(s.n));
  const auto src_strides = strides_of(p.dims, Layout::row_major);
  for (int64_t j = 0; j < s.n; ++j) {
    int64_t rest = j, off = 0;
    for (size_t k = 0; k < target.size(); ++k) {
      const size_t tk = target.size() - 1 - k;
      const int64_t idx = rest % target[tk];
      rest /= target[tk];
      if (k < p.dims.size()) {
        const size_t pk = p.dims.size() - 1 - k;
        if (p.dims[pk] != 1) off += idx * src_strides[pk];
      }
    }
    (*out)[size_t(j)] = v[off];
  }
  return out;
}

OpImpl layer_norm_op() {
  OpImpl op;
  op.want_layout = want_row_major;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    for (size_t i = 0; i < 3; ++i)
      if (c.has(i) && c.info(i).dtype != ir::DType::f32)
        c.fail(std::string(ir::dtype_name(c.info(i).dtype)) + " input " + std::to_string(i) +
               " is not supported (only float32)");
    if (!c.has(1)) c.fail("Scale (input 1) is required");
    if (c.node.attrs.i("stash_type", 1) != 1) c.fail("stash_type other than 1 (float) is not supported");
    const NormShape s = norm_shape(c);
    ir::Dims stats = c.info(0).dims;
    for (size_t i = size_t(s.axis); i < stats.size(); ++i) stats[i] = 1;
    std::vector<TensorInfo> out = {{ir::DType::f32, c.info(0).dims, Layout::row_major}};
    for (size_t i = 1; i < c.node.outputs.size() && i < 3; ++i) out.push_back({ir::DType::f32, stats, Layout::row_major});
    return out;
  };
  // Rows are normalised apart: images stay apart unless the normalised axes include axis 0.
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) {
    return ops::keeps_images_apart_if(norm_shape(c).axis != 0 && ops::per_image_with_constants(c) ==
                                                                     BatchUse::keeps_images_apart);
  };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const NormShape s = norm_shape(c);
    const auto scale_copy = expanded_param(c, 1, s);
    const auto bias_copy = c.has(2) ? expanded_param(c, 2, s) : nullptr;
    const float* scale = scale_copy ? scale_copy->data() : static_cast<const float*>(in[1]);
    const float* bias = !c.has(2) ? nullptr : bias_copy ? bias_copy->data() : static_cast<const float*>(in[2]);
    auto norm = std::make_shared<const kernels::F32LayerNorm>(size_t(s.n), c.isa);
    c.report_kernel(norm->kernel_id());
    const float eps = c.node.attrs.f("epsilon", 1e-5f);
    auto x = static_cast<const float*>(in[0]);
    auto y = static_cast<float*>(out[0]);
    float* mean = out.size() > 1 ? static_cast<float*>(out[1]) : nullptr;
    float* inv_std = out.size() > 2 ? static_cast<float*>(out[2]) : nullptr;
    const size_t rows = size_t(s.rows);
    pthreadpool_t pool = c.threadpool;
    return [=] { norm->run(rows, x, scale, bias, eps, y, mean, inv_std, pool); (void)scale_copy; (void)bias_copy; };
  };
  return op;
}

// InstanceNormalization (FP32): each (image, channel) plane normalised over its pixels, then
// scaled and shifted per channel, as ONNX Runtime computes it bit for bit
// (kernels/elementwise/instance_norm.h: its statistics in Eigen's summation order, then
// y = x · a + b per plane, a multiply, then an add). GroupNorm exports (timm's efficientnet_b0_gn)
// write it over [N, groups, C/groups·H·W].
OpImpl instance_norm_op() {
  OpImpl op;
  op.want_layout = want_row_major;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    ops::require_channel_norm_inputs(c, "scale", "B");
    return {{ir::DType::f32, c.info(0).dims, Layout::row_major}};
  };
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) { return ops::per_image_with_constants(c); };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const ir::Dims& d = c.info(0).dims;
    const int64_t channels = d[1], rows = d[0] * channels, n = c.info(0).count() / std::max<int64_t>(1, rows);
    auto x = static_cast<const float*>(in[0]);
    auto scale = static_cast<const float*>(in[1]);
    auto bias = static_cast<const float*>(in[2]);
    auto y = static_cast<float*>(out[0]);
    const float eps = c.node.attrs.f("epsilon", 1e-5f);
    if (rows == 0 || n == 0) return [] {};
    auto norm = std::make_shared<const kernels::F32InstanceNorm>(size_t(n), c.isa);
    c.report_kernel(norm->kernel_id());
    pthreadpool_t pool = c.threadpool;
    return [=] { norm->run(size_t(rows), size_t(channels), x, scale, bias, eps, y, pool); };
  };
  return op;
}

}  // namespace

void register_norm_ops(OpTable& t) {
  t.emplace_back("LayerNormalization", layer_norm_op());
  t.emplace_back("InstanceNormalization", instance_norm_op());
}

}  // namespace octet
