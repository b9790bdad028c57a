// ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp, ReduceProd and
// LpNormalization (FP32), on kernels/elementwise/reduce_more.h: ONNX Runtime's summation orders,
// x read through its strides in whatever layout it arrives.
#include <memory>
#include <vector>

#include "engine/op_registry.h"
#include "engine/ops/batch_use.h"
#include "kernels/elementwise/reduce_more.h"

namespace octet {
namespace {
namespace reduce_more {  // its own names: unity builds join this file with misc_ops.cc

void require_f32(const OpContext& c) {
  if (c.info(0).dtype != ir::DType::f32)
    c.fail(std::string(ir::dtype_name(c.info(0).dtype)) + " " + c.node.op + " is not supported (only float32)");
}

struct Reduction {
  std::vector<bool> reduced;
  ir::Dims out;
  bool identity = false;  // noop_with_empty_axes with no axes: each element mapped on its own
};

Reduction reduction(const OpContext& c) {
  const auto& d = c.info(0).dims;
  Reduction r;
  r.reduced.assign(d.size(), false);
  std::vector<int64_t> axes;
  if (c.has(1)) axes = c.constant(1, "axes").to_i64();
  if (axes.empty()) {
    if (c.node.attrs.i("noop_with_empty_axes") != 0) r.identity = true;
    else r.reduced.assign(d.size(), true);
  }
  for (int64_t a : axes) r.reduced[size_t(normalize_axis(c, a, int64_t(d.size())))] = true;
  const bool keep = c.node.attrs.i("keepdims") != 0;
  for (size_t i = 0; i < d.size(); ++i) {
    if (!r.reduced[i]) r.out.push_back(d[i]);
    else if (keep) r.out.push_back(1);
  }
  return r;
}

// With noop_with_empty_axes and no axes ORT applies the reduction to each element alone (|x|,
// sqrt(x * x), log x, ...): a reduction over no axes, which the driver runs as one term each.
OpImpl map_reduce_op(kernels::MapReduce kind) {
  OpImpl op;
  op.want_layout = any_layout;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    require_f32(c);
    return {{ir::DType::f32, reduction(c).out, Layout::row_major}};
  };
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) {
    const Reduction r = reduction(c);
    return ops::keeps_images_apart_if(ops::per_image_with_constants(c) == BatchUse::keeps_images_apart &&
                                      (r.identity || (!r.reduced.empty() && !r.reduced[0])));
  };
  op.build = [kind](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const Reduction r = reduction(c);
    const TensorInfo& x = c.info(0);
    const ir::Dims dims = x.dims;
    const auto strides = x.strides();
    std::unique_ptr<bool[]> flags(new bool[dims.size() + 1]);
    for (size_t i = 0; i < dims.size(); ++i) flags[i] = r.reduced[i];
    auto k = std::make_shared<const kernels::F32MapReduce>(kind, int(dims.size()), dims.data(), strides.data(),
                                                           flags.get(), c.isa);
    c.report_kernel(k->kernel_id());
    auto xp = static_cast<const float*>(in[0]);
    auto y = static_cast<float*>(out[0]);
    pthreadpool_t pool = c.threadpool;
    return [=] { k->run(xp, y, pool); };
  };
  return op;
}

struct LpGeometry {
  int64_t outer = 1, len = 1, inner = 1;
};

LpGeometry lp_geometry(const OpContext& c) {
  const auto& d = c.info(0).dims;
  if (d.empty()) c.fail("input must have rank >= 1");
  const int64_t axis = normalize_axis(c, c.node.attrs.i("axis"), int64_t(d.size()));
  LpGeometry g;
  for (size_t i = 0; i < d.size(); ++i) (int64_t(i) < axis ? g.outer : int64_t(i) == axis ? g.len : g.inner) *= d[i];
  return g;
}

OpImpl lp_norm_op() {
  OpImpl op;
  op.want_layout = want_row_major;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    require_f32(c);
    const int64_t p = c.node.attrs.i("p");
    if (p != 1 && p != 2) c.fail("p = " + std::to_string(p) + " is not supported (1 or 2)");
    lp_geometry(c);
    return {{ir::DType::f32, c.info(0).dims, Layout::row_major}};
  };
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) {
    return ops::keeps_images_apart_if(normalize_axis(c, c.node.attrs.i("axis"), int64_t(c.info(0).dims.size())) != 0);
  };
  op.scratch_bytes = [](const OpContext& c, const std::vector<TensorInfo>&) {
    const LpGeometry g = lp_geometry(c);
    return size_t(g.outer * g.inner) * sizeof(float);
  };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const LpGeometry g = lp_geometry(c);
    auto k = std::make_shared<const kernels::F32LpNorm>(int(c.node.attrs.i("p")), g.outer, g.len, g.inner, c.isa);
    c.report_kernel(k->kernel_id());
    std::shared_ptr<std::vector<float>> own;
    float* norms = static_cast<float*>(c.scratch);
    if (c.scratch_size < k->scratch_floats() * sizeof(float)) {  // evaluated at plan time, outside the arena
      own = std::make_shared<std::vector<float>>(k->scratch_floats());
      norms = own->data();
    }
    auto x = static_cast<const float*>(in[0]);
    auto y = static_cast<float*>(out[0]);
    pthreadpool_t pool = c.threadpool;
    return [=] { k->run(x, y, norms, pool); };
  };
  return op;
}

}  // namespace reduce_more
}  // namespace

void register_reduce_more_ops(OpTable& t) {
  using kernels::MapReduce;
  using reduce_more::map_reduce_op;
  using reduce_more::lp_norm_op;
  t.emplace_back("ReduceL1", map_reduce_op(MapReduce::l1));
  t.emplace_back("ReduceL2", map_reduce_op(MapReduce::l2));
  t.emplace_back("ReduceSumSquare", map_reduce_op(MapReduce::sum_square));
  t.emplace_back("ReduceLogSum", map_reduce_op(MapReduce::log_sum));
  t.emplace_back("ReduceLogSumExp", map_reduce_op(MapReduce::log_sum_exp));
  t.emplace_back("ReduceProd", map_reduce_op(MapReduce::prod));
  t.emplace_back("LpNormalization", lp_norm_op());
}

}  // namespace octet
