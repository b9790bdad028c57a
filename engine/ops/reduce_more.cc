// ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp, ReduceProd and
// LpNormalization (FP32), on kernels/elementwise/reduce_more.h: ONNX Runtime's summation orders,
// x read through its strides in whatever layout it arrives. CumSum and Hardmax along an axis.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "engine/op_registry.h"
#include "engine/ops/reduction.h"
#include "engine/ops/batch_use.h"
#include "engine/ops/typed_broadcast.h"
#include "kernels/elementwise/reduce_more.h"
#include "kernels/elementwise/softmax.h"
#include "kernels/kernel_id.h"

namespace octet {
namespace {
namespace reduce_more {  // its own names: unity builds join this file with misc_ops.cc

void require_f32(const OpContext& c) {
  if (c.info(0).dtype != ir::DType::f32)
    c.fail(std::string(ir::dtype_name(c.info(0).dtype)) + " " + c.node.op + " is not supported (only float32)");
}

using ops::Reduction;
using ops::reduction;

// float64, int32 and int64 (the types ORT's CPU kernels take besides float32) by ORT's generic
// loop in T: the reduced elements in the row-major order of the reduced axes, one step at a
// time; sqrt, log and exp through double as ORT's reduce_sqrt / reduce_log / reduce_exp. Integer
// results are exact in any order; a float64 over every axis is summed in that order too (ORT:
// Eigen's packets of 2), within float64's tolerance.
template <class T>
T typed_finish(kernels::MapReduce kind, T acc, T max) {
  using kernels::MapReduce;
  switch (kind) {
    case MapReduce::l2: return T(std::sqrt(double(acc)));
    case MapReduce::log_sum: return T(std::log(double(acc)));
    case MapReduce::log_sum_exp: return T(std::log(double(acc))) + max;
    default: return acc;
  }
}

template <class T>
Kernel typed_reduce(const OpContext& c, kernels::MapReduce kind, const void* in, void* out) {
  using kernels::MapReduce;
  const Reduction r = reduction(c);
  const TensorInfo& x = c.info(0);
  const auto strides = x.strides();
  std::vector<int64_t> bases = {0}, offsets = {0};
  bool empty = false;
  for (size_t d = 0; d < x.dims.size(); ++d) {
    const bool folded = r.reduced[d] && !r.identity;
    empty = empty || (folded && x.dims[d] == 0);
    std::vector<int64_t>& v = folded ? offsets : bases;
    std::vector<int64_t> next;
    for (int64_t o : v)
      for (int64_t i = 0; i < x.dims[d]; ++i) next.push_back(o + i * strides[d]);
    v.swap(next);
  }
  auto xp = static_cast<const T*>(in);
  auto y = static_cast<T*>(out);
  c.report_kernel(kernels::portable_kernel(std::string(ops::type_tag(x.dtype)) + "_map_reduce_strided"));
  return [=] {
    for (size_t j = 0; j < bases.size(); ++j) {
      const T* p = xp + bases[j];
      if (empty) {
        const float e = kernels::map_reduce_empty_value(kind);
        // ORT fills -infinity<T>(), which is 0 for the integers.
        y[j] = std::numeric_limits<T>::has_infinity || !std::isinf(e) ? T(e) : T(0);
        continue;
      }
      T max = 0;
      if (kind == MapReduce::log_sum_exp) {
        auto bad = [](T v) { return std::isinf(double(v)) || std::isnan(double(v)); };
        max = std::isinf(double(p[offsets[0]])) ? T(0) : p[offsets[0]];
        for (int64_t o : offsets) max = (bad(p[o]) || p[o] < max) ? max : p[o];
      }
      T acc = kind == MapReduce::prod ? T(1) : T(0);
      for (int64_t o : offsets) {
        const T v = p[o];
        switch (kind) {
          case MapReduce::l1: acc += v > 0 ? v : T(-v); break;
          case MapReduce::l2:
          case MapReduce::sum_square: acc += v * v; break;
          case MapReduce::sum:
          case MapReduce::log_sum: acc += v; break;
          case MapReduce::log_sum_exp: acc += T(std::exp(double(v - max))); break;
          case MapReduce::prod: acc *= v; break;
        }
      }
      y[j] = typed_finish<T>(kind, acc, max);
    }
  };
}

// With noop_with_empty_axes and no axes ORT applies the reduction to each element alone (|x|,
// sqrt(x * x), log x, ...): a reduction over no axes, which the driver runs as one term each.
OpImpl map_reduce_op(kernels::MapReduce kind) {
  OpImpl op;
  op.want_layout = any_layout;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    const ir::DType t = c.info(0).dtype;
    if (t != ir::DType::f32 && t != ir::DType::f64 && t != ir::DType::s32 && t != ir::DType::s64)
      c.fail(std::string(ir::dtype_name(t)) + " " + c.node.op + " is not supported (float32, float64, int32, int64)");
    return {{t, reduction(c).out, Layout::row_major}};
  };
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) {
    const Reduction r = reduction(c);
    return ops::keeps_images_apart_if(ops::per_image_with_constants(c) == BatchUse::keeps_images_apart &&
                                      (r.identity || (!r.reduced.empty() && !r.reduced[0])));
  };
  op.build = [kind](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const Reduction r = reduction(c);
    const TensorInfo& x = c.info(0);
    if (x.dtype != ir::DType::f32)
      return ops::with_type(c, x.dtype, [&](auto t) { return typed_reduce<decltype(t)>(c, kind, in[0], out[0]); });
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

// x as [outer][len][inner] around one axis (row-major).
LpGeometry axis_split(const ir::Dims& d, int64_t axis, bool coerce_2d) {
  LpGeometry g;
  for (size_t i = 0; i < d.size(); ++i) {
    const int64_t a = int64_t(i);
    if (a < axis) g.outer *= d[i];
    else if (a == axis || (coerce_2d && a > axis)) g.len *= d[i];
    else g.inner *= d[i];
  }
  return g;
}

// CumSum (float32, float64, int32, int64): y[k] = y[k - 1] + x[k] along the axis (exclusive: from
// 0 with x[k - 1]; reverse: from the end), as ONNX Runtime adds its slices. Each output is a chain
// of adds in that order, so the vectors run across the inner dimension: float32 on the reduce_more
// family's kernel (kernels/elementwise/reduce_more.h: a lane per column), the other types in the
// loop over i below, which the compiler vectorizes. An innermost axis is a scalar chain per row.
int64_t cumsum_axis(const OpContext& c) {
  const ir::TensorData& a = c.constant(1, "axis");
  const std::vector<int64_t> v = a.to_i64();
  if (v.size() != 1) c.fail("axis must hold one value");
  return normalize_axis(c, v[0], int64_t(c.info(0).dims.size()));
}

template <class T>
Kernel cumsum_kernel(const OpContext& c, const void* in, void* out) {
  const LpGeometry g = axis_split(c.info(0).dims, cumsum_axis(c), false);
  const bool exclusive = c.node.attrs.i("exclusive") != 0, reverse = c.node.attrs.i("reverse") != 0;
  if constexpr (std::is_same_v<T, float>) {
    auto k = std::make_shared<const kernels::F32CumSum>(g.outer, g.len, g.inner, exclusive, reverse, c.isa);
    c.report_kernel(k->kernel_id());
    auto x = static_cast<const float*>(in);
    auto y = static_cast<float*>(out);
    pthreadpool_t pool = c.threadpool;
    return [=] { k->run(x, y, pool); };
  }
  auto x = static_cast<const T*>(in);
  auto y = static_cast<T*>(out);
  c.report_kernel(kernels::portable_kernel(std::string(ops::type_tag(c.info(0).dtype)) + "_cumsum_axis"));
  return [=] {
    const int64_t len = g.len, inner = g.inner;
    for (int64_t o = 0; o < g.outer; ++o) {
      const T* xo = x + o * len * inner;
      T* yo = y + o * len * inner;
      for (int64_t s = 0; s < len; ++s) {
        const int64_t k = reverse ? len - 1 - s : s, prev = reverse ? k + 1 : k - 1;
        T* yk = yo + k * inner;
        if (s == 0) {
          for (int64_t i = 0; i < inner; ++i) yk[i] = exclusive ? T(0) : xo[k * inner + i];
        } else {
          const T* add = xo + (exclusive ? prev : k) * inner;
          const T* yp = yo + prev * inner;
          for (int64_t i = 0; i < inner; ++i) yk[i] = yp[i] + add[i];
        }
      }
    }
  };
}

OpImpl cumsum_op() {
  OpImpl op;
  op.want_layout = want_row_major;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    const ir::DType t = c.info(0).dtype;
    if (t != ir::DType::f32 && t != ir::DType::f64 && t != ir::DType::s32 && t != ir::DType::s64)
      c.fail(std::string(ir::dtype_name(t)) + " CumSum is not supported (float32, float64, int32, int64)");
    if (c.info(0).dims.empty()) c.fail("input must have rank >= 1");
    cumsum_axis(c);
    return {{t, c.info(0).dims, Layout::row_major}};
  };
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) {
    return ops::keeps_images_apart_if(ops::per_image_with_constants(c) == BatchUse::keeps_images_apart &&
                                      cumsum_axis(c) != 0);
  };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    return ops::with_type(c, c.info(0).dtype, [&](auto t) { return cumsum_kernel<decltype(t)>(c, in[0], out[0]); });
  };
  return op;
}

// Hardmax: 1 at the first largest value along the axis, 0 elsewhere (ORT: the row max, then the
// first element equal to it). Before opset 13 every axis from `axis` on is one (coerce_2d, set by
// the importer). The max search is ArgMax's SIMD kernel (first index); writing the ones is a fill.
OpImpl hardmax_op() {
  OpImpl op;
  op.want_layout = want_row_major;
  auto geometry = [](const OpContext& c) {
    const auto& d = c.info(0).dims;
    if (d.empty()) c.fail("input must have rank >= 1");
    const int64_t axis = normalize_axis(c, c.node.attrs.i("axis"), int64_t(d.size()));
    return axis_split(d, axis, c.node.attrs.i("coerce_2d", 0) != 0);
  };
  op.infer = [geometry](const OpContext& c) -> std::vector<TensorInfo> {
    require_f32(c);
    geometry(c);
    return {{ir::DType::f32, c.info(0).dims, Layout::row_major}};
  };
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) {
    return ops::keeps_images_apart_if(normalize_axis(c, c.node.attrs.i("axis"), int64_t(c.info(0).dims.size())) != 0);
  };
  op.scratch_bytes = [geometry](const OpContext& c, const std::vector<TensorInfo>&) {
    const LpGeometry g = geometry(c);
    return size_t(g.outer * g.inner) * sizeof(int64_t);
  };
  op.build = [geometry](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const LpGeometry g = geometry(c);
    auto x = static_cast<const float*>(in[0]);
    auto y = static_cast<float*>(out[0]);
    if (g.outer * g.len * g.inner == 0) return [] {};
    auto arg = std::make_shared<const kernels::F32ArgExtremum>(false, false, g.outer, g.len, g.inner, c.isa);
    c.report_kernel(arg->kernel_id() + " + one-hot fill");
    const size_t positions = size_t(g.outer * g.inner);
    std::shared_ptr<std::vector<int64_t>> own;
    auto idx = static_cast<int64_t*>(c.scratch);
    if (c.scratch_size < positions * sizeof(int64_t)) {  // evaluated at plan time, outside the arena
      own = std::make_shared<std::vector<int64_t>>(positions);
      idx = own->data();
    }
    pthreadpool_t pool = c.threadpool;
    return [=] {
      arg->run(x, idx, pool);
      std::fill(y, y + g.outer * g.len * g.inner, 0.0f);
      for (int64_t o = 0; o < g.outer; ++o)
        for (int64_t i = 0; i < g.inner; ++i) {
          const int64_t k = idx[size_t(o * g.inner + i)];
          // A row with a NaN: ORT compares each element with a NaN max and sets none.
          if (!std::isnan(x[(o * g.len + k) * g.inner + i])) y[(o * g.len + k) * g.inner + i] = 1.0f;
        }
    };
  };
  return op;
}

// MeanVarianceNormalization over `axes` (default 0, 2, 3: per channel of an NCHW batch).
std::vector<bool> mvn_axes(const OpContext& c) {
  const int64_t rank = int64_t(c.info(0).dims.size());
  std::vector<bool> normalized(size_t(rank), false);
  for (int64_t a : c.node.attrs.ints("axes")) normalized[size_t(normalize_axis(c, a, rank))] = true;
  return normalized;
}

OpImpl mvn_op() {
  OpImpl op;
  op.want_layout = want_row_major;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    require_f32(c);
    mvn_axes(c);
    return {{ir::DType::f32, c.info(0).dims, Layout::row_major}};
  };
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) {
    const std::vector<bool> n = mvn_axes(c);
    return ops::keeps_images_apart_if(!n.empty() && !n[0]);
  };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const ir::Dims dims = c.info(0).dims;
    const std::vector<bool> n = mvn_axes(c);
    std::unique_ptr<bool[]> flags(new bool[dims.size() + 1]);
    for (size_t i = 0; i < dims.size(); ++i) flags[i] = n[i];
    auto k = std::make_shared<const kernels::F32MeanVarianceNorm>(int(dims.size()), dims.data(), flags.get(), c.isa);
    c.report_kernel(k->kernel_id());
    auto scratch = std::make_shared<std::vector<float>>(k->scratch_floats());
    auto x = static_cast<const float*>(in[0]);
    auto y = static_cast<float*>(out[0]);
    return [=] { k->run(x, y, scratch->data()); };
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
  t.emplace_back("CumSum", reduce_more::cumsum_op());
  t.emplace_back("Hardmax", reduce_more::hardmax_op());
  t.emplace_back("MeanVarianceNormalization", reduce_more::mvn_op());
}

}  // namespace octet
