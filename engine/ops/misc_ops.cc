// Softmax, LogSoftmax, ArgMax / ArgMin, ReduceMean / ReduceSum / ReduceMin / ReduceMax, Round and
// Pad (FP32; Pad any element type). Min / Max are in compare_ops.cc with Sum / Mean.
#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>

#include "engine/op_registry.h"
#include "engine/ops/reduction.h"
#include "engine/ops/batch_use.h"
#include "engine/ops/broadcast.h"
#include "engine/ops/global_avgpool.h"
#include "engine/ops/typed_broadcast.h"
#include "kernels/ref/copy.h"
#include "kernels/ref/minmax.h"
#include "kernels/ref/reduce.h"
#include "kernels/elementwise/eltwise.h"
#include "kernels/elementwise/pad.h"
#include "kernels/elementwise/softmax.h"

namespace octet {
namespace {

void require_f32(const OpContext& c) {
  if (c.info(0).dtype != ir::DType::f32)
    c.fail(std::string(ir::dtype_name(c.info(0).dtype)) + " " + c.node.op + " is not supported (only float32)");
}

// The axes Softmax / LogSoftmax normalise over: `axis` alone from opset 13, every axis from
// `axis` on before (coerce_2d, set by the importer).
struct AxisSplit {
  int64_t outer = 1, len = 1, inner = 1;
};

// The normalised axes as one run of memory: [outer][len][inner] over x's layout. A channels-last
// map normalised over its channels (a segmentation head's Softmax on axis 1) is then rows of
// channels, and needs no relayout. want_layout asks for row-major whenever a flattening
// Softmax's axes might not be one run (axis other than 0, 1, or the last).
AxisSplit softmax_split(const OpContext& c) {
  const TensorInfo& x = c.info(0);
  const int rank = int(x.dims.size());
  const int64_t axis = normalize_axis(c, c.node.attrs.i("axis"), rank);
  const bool coerce = c.node.attrs.i("coerce_2d", 0) != 0;
  const std::vector<int> order = memory_order(rank, x.layout);
  auto normalised = [&](int d) { return d == axis || (coerce && d > axis); };
  AxisSplit s;
  int state = 0;  // 0: before the run, 1: in it, 2: after it
  for (int d : order) {
    const int64_t extent = x.dims[size_t(d)];
    if (normalised(d)) {
      if (state == 2 && extent != 1) c.fail("the normalised axes are not contiguous in this layout");
      if (state == 0) state = 1;
      s.len *= extent;
    } else if (state == 0) {
      s.outer *= extent;
    } else {
      if (state == 1) state = 2;
      s.inner *= extent;
    }
  }
  return s;
}

OpImpl softmax_op(bool log) {
  OpImpl op;
  op.want_layout = [](const OpContext& c, size_t) -> std::optional<Layout> {
    const int64_t axis = c.node.attrs.i("axis");
    if (c.node.attrs.i("coerce_2d", 0) != 0 && axis != 0 && axis != 1 && axis != -1) return Layout::row_major;
    return std::nullopt;
  };
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    require_f32(c);
    if (c.info(0).dims.empty()) c.fail("input must have rank >= 1");
    normalize_axis(c, c.node.attrs.i("axis"), int64_t(c.info(0).dims.size()));
    return {c.info(0)};
  };
  // Normalises along `axis` (and, coerced to 2-D, every axis after it): apart unless that is the
  // images' axis, -rank counted from the back.
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) {
    return ops::keeps_images_apart_if(normalize_axis(c, c.node.attrs.i("axis"), int64_t(c.info(0).dims.size())) != 0);
  };
  op.build = [log](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const AxisSplit s = softmax_split(c);
    auto softmax = std::make_shared<const kernels::F32Softmax>(log, s.outer, s.len, s.inner, c.isa);
    c.report_kernel(softmax->kernel_id());
    auto x = static_cast<const float*>(in[0]);
    auto y = static_cast<float*>(out[0]);
    pthreadpool_t pool = c.threadpool;
    return [=] { softmax->run(x, y, pool); };
  };
  return op;
}

// ArgMax / ArgMin: int64 indices along `axis`, read through x's layout (the axis's stride and
// the extents around it in memory), the output row-major.
OpImpl arg_extremum_op(bool min) {
  OpImpl op;
  op.want_layout = want_row_major;
  auto out_dims = [](const OpContext& c) {
    const auto& d = c.info(0).dims;
    const int64_t axis = normalize_axis(c, c.node.attrs.i("axis", 0), int64_t(d.size()));
    ir::Dims o;
    for (size_t i = 0; i < d.size(); ++i) {
      if (int64_t(i) != axis) o.push_back(d[i]);
      else if (c.node.attrs.i("keepdims", 1) != 0) o.push_back(1);
    }
    return o;
  };
  op.infer = [out_dims](const OpContext& c) -> std::vector<TensorInfo> {
    require_f32(c);
    if (c.info(0).dims.empty()) c.fail("input must have rank >= 1");
    const int64_t axis = normalize_axis(c, c.node.attrs.i("axis", 0), int64_t(c.info(0).dims.size()));
    if (c.info(0).dims[size_t(axis)] == 0) c.fail("cannot take an index along an empty axis");
    return {{ir::DType::s64, out_dims(c), Layout::row_major}};
  };
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) {
    return ops::keeps_images_apart_if(normalize_axis(c, c.node.attrs.i("axis", 0), int64_t(c.info(0).dims.size())) != 0);
  };
  op.build = [min](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const auto& d = c.info(0).dims;
    const int64_t axis = normalize_axis(c, c.node.attrs.i("axis", 0), int64_t(d.size()));
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < d.size(); ++i) {
      if (int64_t(i) < axis) outer *= d[i];
      else if (int64_t(i) > axis) inner *= d[i];
    }
    auto arg = std::make_shared<const kernels::F32ArgExtremum>(min, c.node.attrs.i("select_last_index", 0) != 0,
                                                               outer, d[size_t(axis)], inner, c.isa);
    c.report_kernel(arg->kernel_id());
    auto x = static_cast<const float*>(in[0]);
    auto y = static_cast<int64_t*>(out[0]);
    pthreadpool_t pool = c.threadpool;
    return [=] { arg->run(x, y, pool); };
  };
  return op;
}

using ops::Reduction;
using ops::reduction;

std::vector<TensorInfo> infer_reduce(const OpContext& c) {
  require_f32(c);
  auto r = reduction(c);
  if (r.identity) return {c.info(0)};
  return {{ir::DType::f32, r.out, Layout::row_major}};
}


// A mean over H and W of an NCHW tensor is a global average pool (torchvision's
// `x.mean([2, 3])`, ShuffleNetV2's head). When it arrives channels-last, as a conv's output
// does, it runs the SIMD GAP kernel, whose [N][C] result is the output in either keepdims form
// (the trailing 1 x 1 changes nothing). want_layout cannot ask for that layout: it sees the node
// before its inputs, and the axes may be an input. Row-major, it is ORT's own case: a mean over
// trailing axes, the row sums of F32RowSums / H·W.
bool is_spatial_mean(const Reduction& r) { return r.reduced == std::vector<bool>{false, false, true, true}; }

// The reduced axes as one run of x's memory, [outer][len][inner], with the kept axes in memory in
// their logical order (so y [outer][inner] is the row-major output); nullopt otherwise.
std::optional<AxisSplit> reduced_run(const TensorInfo& x, const std::vector<bool>& reduced) {
  AxisSplit s;
  int state = 0;  // 0: before the run, 1: in it, 2: after it
  int last_kept = -1;
  for (int d : memory_order(int(x.dims.size()), x.layout)) {
    const int64_t extent = x.dims[size_t(d)];
    if (extent == 1) continue;
    if (reduced[size_t(d)]) {
      if (state == 2) return std::nullopt;
      state = 1;
      s.len *= extent;
    } else {
      if (d < last_kept) return std::nullopt;
      last_kept = d;
      if (state == 1) state = 2;
      (state == 0 ? s.outer : s.inner) *= extent;
    }
  }
  return s;
}

// ONNX Runtime's ReduceSum / ReduceMean over trailing axes (its KR case, and all axes): each of
// the `outer` rows of `len` floats summed in Eigen's packet order, then / divisor (1 for the sum).
Kernel row_sums_kernel(const OpContext& c, int64_t outer, int64_t len, const float* x, float* y, float divisor) {
  auto sums = std::make_shared<const kernels::F32RowSums>(size_t(len), c.isa);
  c.report_kernel(sums->kernel_id());
  pthreadpool_t pool = c.threadpool;
  return [=] { sums->run(size_t(outer), x, y, 0, divisor, pool); };
}

// A reduction op (ReduceSum, ReduceMean, ReduceMin, ReduceMax), the input read through its
// strides in whatever layout it has. kind: sum (mean: then divided by the count) or the
// extremum. Any set of axes the paths above do not take runs F32StridedReduce: for a sum, ORT's
// generic order (an accumulator from 0 over the reduced elements, row-major over the reduced
// axes; then / N), bit-identical with ORT for the sets that are not one run (RKRK, KRKR) and for
// a mean over leading axes (its RK case: rows added in order, up to the sign of a zero sum).
// ORT's KRK mean (a MatMul by ones) matches only over a few rows (3 probed); over 16 or 40 its
// order is not pinned.
OpImpl reduce_op(kernels::StridedReduceKind kind, bool mean) {
  OpImpl op;
  op.want_layout = any_layout;
  op.infer = infer_reduce;
  // A sum in Eigen's packet order (a spatial mean, rows of trailing axes) starts each row's
  // packets at ORT's 16-byte boundaries, counted from the first image: an image run alone keeps
  // them only when an image holds a multiple of 4 floats.
  op.batch_use = [kind](const OpContext& c, const std::vector<TensorInfo>&) {
    const Reduction r = reduction(c);
    const ir::Dims& d = c.info(0).dims;
    const bool leads_kept = kind != kernels::StridedReduceKind::sum || d.empty() || d[0] == 0 ||
                            (c.info(0).count() / d[0]) % 4 == 0;
    return ops::keeps_images_apart_if(ops::per_image_with_constants(c) == BatchUse::keeps_images_apart &&
                                      (r.identity || !r.reduced.at(0)) && leads_kept);
  };
  op.build = [kind, mean](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    auto r = reduction(c);
    const TensorInfo& x = c.info(0);
    auto xp = static_cast<const float*>(in[0]);
    auto y = static_cast<float*>(out[0]);
    if (r.identity) {
      size_t bytes = x.bytes();
      return [=] { ir::copy_bytes(y, xp, bytes); };
    }
    const ir::Dims dims = x.dims;
    if (mean && is_spatial_mean(r) && x.layout == Layout::channels_last)
      return ops::global_avgpool_kernel(c, int(dims[0]), int(dims[2] * dims[3]), int(dims[1]),
                                        kernels::GapOrder::eigen_packets4, xp, y);
    const auto run = x.layout == Layout::row_major ? reduced_run(x, r.reduced) : std::nullopt;
    if (mean && run && run->inner == 1) return row_sums_kernel(c, run->outer, run->len, xp, y, float(run->len));
    const auto strides = x.strides();
    int64_t n = 1;
    for (size_t i = 0; i < dims.size(); ++i)
      if (r.reduced[i]) n *= dims[i];
    std::unique_ptr<bool[]> flags(new bool[dims.size()]);
    for (size_t i = 0; i < dims.size(); ++i) flags[i] = r.reduced[i];
    auto op = std::make_shared<const kernels::F32StridedReduce>(int(dims.size()), dims.data(), strides.data(),
                                                                flags.get(), mean ? float(n) : 1.0f, c.isa, kind);
    c.report_kernel(op->kernel_id());
    pthreadpool_t pool = c.threadpool;
    return [=] { op->run(xp, y, pool); };
  };
  return op;
}

OpImpl reduce_extremum_op(kernels::Extremum kind) {
  OpImpl op = reduce_op(kind == kernels::Extremum::min ? kernels::StridedReduceKind::min : kernels::StridedReduceKind::max,
                        false);
  // Axes that form one run of memory (a channel max of a channels-last map, the last axis, H and
  // W of NHWC) run on the axis kernels; other sets on the strided walk.
  auto strided = op.build;
  op.build = [kind, strided](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const Reduction r = reduction(c);
    const auto run = r.identity ? std::nullopt : reduced_run(c.info(0), r.reduced);
    if (!run) return strided(c, in, out);
    auto extremum = std::make_shared<const kernels::F32AxisExtremum>(kind == kernels::Extremum::min, run->outer, run->len,
                                                                     run->inner, c.isa);
    if (!extremum->fast()) return strided(c, in, out);
    c.report_kernel(extremum->kernel_id());
    auto x = static_cast<const float*>(in[0]);
    auto y = static_cast<float*>(out[0]);
    pthreadpool_t pool = c.threadpool;
    return [=] { extremum->run(x, y, pool); };
  };
  return op;
}

OpImpl reduce_mean_op() { return reduce_op(kernels::StridedReduceKind::sum, true); }

// ReduceSum: the mean's strided walk without the division, except where the reduced axes form
// one run of memory, summed in ONNX Runtime's order for that case: ahead of a kept contiguous
// run (a sum over the group axis of [N, G, C, H, W], as split-attention and selective-kernel
// blocks write it; ORT's KRK and RK cases) whole rows add on the SIMD binary Add in the rows'
// order; at the end (ORT's KR case: the trailing axes, or all of them) each row is one Eigen
// packet sum (kernels::F32RowSums, as ReduceMean's). Those are ORT's orders when x is row-major
// (its memory order is then the logical one ORT walks); a channels-last x takes the same paths
// over its own memory order. Other sets take reduce_op's strided walk.
OpImpl reduce_sum_op() {
  OpImpl op = reduce_op(kernels::StridedReduceKind::sum, false);
  auto strided = op.build;
  op.build = [strided](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const Reduction r = reduction(c);
    const auto run = r.identity ? std::nullopt : reduced_run(c.info(0), r.reduced);
    if (!run) return strided(c, in, out);
    auto x = static_cast<const float*>(in[0]);
    auto y = static_cast<float*>(out[0]);
    const int64_t outer = run->outer, len = run->len, inner = run->inner;
    if (inner == 1) return row_sums_kernel(c, outer, len, x, y, 1.0f);
    if (c.isa == kernels::Isa::scalar) return strided(c, in, out);
    if (len == 1) {
      const size_t bytes = size_t(outer * inner) * sizeof(float);
      c.report_kernel(kernels::portable_kernel("copy"));
      return [=] { ir::copy_bytes(y, x, bytes); };
    }
    const int64_t dims[] = {outer, inner}, x_strides[] = {len * inner, 1}, y_strides[] = {inner, 1};
    auto first = std::make_shared<const kernels::F32Binary>(kernels::BinaryOp::add, 2, dims, x_strides, x_strides, c.isa);
    auto next = std::make_shared<const kernels::F32Binary>(kernels::BinaryOp::add, 2, dims, y_strides, x_strides, c.isa);
    c.report_kernel(first->kernel_id() + " x" + std::to_string(len - 1));
    pthreadpool_t pool = c.threadpool;
    return [=] {
      first->run(x, x + inner, y, pool);
      for (int64_t l = 2; l < len; ++l) next->run(y, x + l * inner, y, pool);
    };
  };
  return op;
}

struct PadSpec {
  std::vector<int64_t> begin, end;
  kernels::PadMode mode;
  uint64_t value = 0;                // constant_value's bytes when known at plan time (0: zero)
  bool runtime_value = false;        // constant_value is read at each run
  ir::Dims out;
};

PadSpec pad_spec(const OpContext& c) {
  const auto& d = c.info(0).dims;
  const size_t rank = d.size();
  auto pads = c.constant(1, "pads").to_i64();
  std::vector<int64_t> axes;
  if (c.has(3)) {
    axes = c.constant(3, "axes").to_i64();
    for (auto& a : axes) a = normalize_axis(c, a, int64_t(rank));
  } else {
    for (size_t i = 0; i < rank; ++i) axes.push_back(int64_t(i));
  }
  if (pads.size() != 2 * axes.size())
    c.fail("pads has " + std::to_string(pads.size()) + " values, expected " + std::to_string(2 * axes.size()));
  PadSpec p;
  p.begin.assign(rank, 0);
  p.end.assign(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    p.begin[size_t(axes[i])] = pads[i];
    p.end[size_t(axes[i])] = pads[i + axes.size()];
  }
  const std::string& mode = c.node.attrs.s("mode");
  p.mode = mode == "reflect" ? kernels::PadMode::reflect
           : mode == "edge"  ? kernels::PadMode::edge
                             : kernels::PadMode::constant;
  if (c.has(2)) {
    const ir::DType t = c.info(0).dtype;
    if (c.info(2).dtype != t || c.info(2).count() != 1)
      c.fail(std::string("constant_value must be a ") + ir::dtype_name(t) + " scalar");
    if (c.in_const.size() > 2 && c.in_const[2]) std::memcpy(&p.value, c.in_const[2]->bytes.data(), ir::dtype_size(t));
    else p.runtime_value = true;
  }
  // Negative pads crop first, the positive ones then pad what is left, as ONNX Runtime 1.30 does:
  // it refuses to edge- or reflect-pad an input that the crops leave empty along any axis (even
  // an unpadded one), and a reflect pad longer than the axis after its crop, less one. Within
  // those bounds mirroring about the cropped axis reads what mirroring about the whole one does,
  // so the kernels index the uncropped input. An input empty from the start is refused only
  // when its empty axis is padded (nothing is read, so no reflect is too long).
  const bool empty_input = std::find(d.begin(), d.end(), 0) != d.end();
  for (size_t i = 0; i < rank; ++i) {
    int64_t e = d[i] + p.begin[i] + p.end[i];
    if (e < 0) c.fail("pads crop dimension " + std::to_string(i) + " below zero");
    const int64_t kept = d[i] + std::min<int64_t>(p.begin[i], 0) + std::min<int64_t>(p.end[i], 0);
    const std::string mode_name = p.mode == kernels::PadMode::reflect ? "reflect" : "edge";
    if (p.mode != kernels::PadMode::constant) {
      if (empty_input && d[i] == 0 && e > 0) c.fail(mode_name + "-padding an empty dimension");
      if (!empty_input && kept <= 0)
        c.fail(mode_name + " mode with dimension " + std::to_string(i) + " cropped to nothing");
    }
    if (p.mode == kernels::PadMode::reflect && !empty_input && std::max(p.begin[i], p.end[i]) >= kept &&
        (p.begin[i] > 0 || p.end[i] > 0))
      c.fail("reflect pads must be smaller than the dimension they pad (" + std::to_string(kept) +
             (kept < d[i] ? " after cropping" : "") + ")");
    p.out.push_back(e);
  }
  return p;
}

// Pad in whatever layout the input arrives (a channels-last map stays channels-last, so no
// relayout is planned around it): the axes and pads go to kernels::PadRows in memory order.
OpImpl pad_op() {
  OpImpl op;
  op.want_layout = any_layout;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    if (c.info(0).dtype == ir::DType::b8) c.fail("bool Pad is not supported");
    return {{c.info(0).dtype, pad_spec(c).out, c.info(0).layout}};
  };
  // Padding axis 0 would add images (or crop them).
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) {
    const PadSpec p = pad_spec(c);
    return ops::keeps_images_apart_if(ops::per_image_with_constants(c) == BatchUse::keeps_images_apart &&
                                      p.begin.at(0) == 0 && p.end.at(0) == 0);
  };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const PadSpec p = pad_spec(c);
    const TensorInfo& x = c.info(0);
    const std::vector<int> order = memory_order(int(x.dims.size()), x.layout);
    std::vector<int64_t> dims, begin, end;
    for (int d : order) {
      dims.push_back(x.dims[size_t(d)]);
      begin.push_back(p.begin[size_t(d)]);
      end.push_back(p.end[size_t(d)]);
    }
    auto pad = std::make_shared<const kernels::PadRows>(int(dims.size()), dims.data(), begin.data(), end.data(), p.mode,
                                                        ir::dtype_size(x.dtype));
    c.report_kernel(kernels::portable_kernel(kernels::PadRows::kernel_name()));
    const void* xp = in[0];
    const void* runtime_value = p.runtime_value ? in[2] : nullptr;
    auto value = std::make_shared<const uint64_t>(p.value);
    void* y = out[0];
    pthreadpool_t pool = c.threadpool;
    return [=] { pad->run(xp, y, runtime_value ? runtime_value : value.get(), pool); };
  };
  return op;
}

}  // namespace

void register_misc_ops(OpTable& t) {
  t.emplace_back("Softmax", softmax_op(false));
  t.emplace_back("LogSoftmax", softmax_op(true));
  t.emplace_back("ArgMax", arg_extremum_op(false));
  t.emplace_back("ArgMin", arg_extremum_op(true));
  t.emplace_back("ReduceMean", reduce_mean_op());
  t.emplace_back("ReduceSum", reduce_sum_op());
  t.emplace_back("ReduceMin", reduce_extremum_op(kernels::Extremum::min));
  t.emplace_back("ReduceMax", reduce_extremum_op(kernels::Extremum::max));
  t.emplace_back("Pad", pad_op());
}

}  // namespace octet
