// Shape arithmetic and data movement: Shape, Gather, Unsqueeze, Squeeze, Reshape, Flatten,
// Identity, Dropout, Constant, ConstantOfShape, Expand. Any element type; they move bytes, not
// numbers.
#include <cstring>

#include "engine/op_registry.h"
#include "engine/ops/batch_use.h"
#include "engine/ops/broadcast.h"
#include "engine/ops/reshape.h"
#include "kernels/ref/copy.h"

namespace octet {
namespace {

// A copy, or nothing when the plan made the output a view of the input (engine/plan_views.cc).
Kernel copy_kernel(const OpContext& c, std::span<const void* const> in, std::span<void* const> out) {
  size_t bytes = c.info(0).bytes();
  const void* x = in[0];
  void* y = out[0];
  if (x == y) {
    c.report_kernel({"view"});
    return [] {};
  }
  return [=] { ir::copy_bytes(y, x, bytes); };
}

// Ops whose output is the input's bytes in row-major order under another shape.
OpImpl reshaping_op(std::function<ir::Dims(const OpContext&)> out_dims) {
  OpImpl op;
  op.want_layout = [](const OpContext&, size_t i) -> std::optional<Layout> {
    return i == 0 ? std::optional(Layout::row_major) : std::nullopt;
  };
  op.infer = [out_dims](const OpContext& c) -> std::vector<TensorInfo> {
    ir::Dims d = out_dims(c);
    if (ir::element_count(d) != c.info(0).count())
      c.fail("cannot reshape " + ir::dims_str(c.info(0).dims) + " (" + std::to_string(c.info(0).count()) +
             " elements) to " + ir::dims_str(d));
    return {{c.info(0).dtype, d, Layout::row_major}};
  };
  op.build = copy_kernel;
  op.output_is_input = true;
  // The images stay in front, one block of the same shape each, at the planned batch and at
  // another: [0, -1], [-1, k], Flatten(axis=1) and a shape read with Shape do; a literal [1, -1]
  // keeps one image in front when planned for one, but joins the images of any other batch.
  op.batch_use_sees_batch_constants = true;
  op.batch_use = [out_dims](const OpContext& c, const std::vector<TensorInfo>& out) {
    const ir::Dims& in = c.info(0).dims;
    if (in.empty() || out.empty() || out[0].dims.empty() || out[0].dims[0] != in[0]) return BatchUse::mixes_images;
    const AtOtherBatch other(c);
    if (!other.known()) return BatchUse::mixes_images;
    ir::Dims there;
    try {
      there = out_dims(other.context());
    } catch (const ir::Error&) {
      return BatchUse::mixes_images;
    }
    ir::Dims here = out[0].dims;
    here[0] = other_batch(in[0]);
    return ops::keeps_images_apart_if(there == here);
  };
  return op;
}

std::vector<int64_t> constant_axes(const OpContext& c, size_t i, int64_t rank) {
  std::vector<int64_t> axes = c.constant(i, "axes").to_i64();
  for (auto& a : axes) a = normalize_axis(c, a, rank);
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) c.fail("axes repeat a dimension");
  return axes;
}

ir::Dims unsqueeze_dims(const OpContext& c) {
  const auto& in = c.info(0).dims;
  int64_t rank = int64_t(in.size() + size_t(c.constant(1, "axes").count()));
  auto axes = constant_axes(c, 1, rank);
  ir::Dims out;
  size_t next = 0, ai = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (ai < axes.size() && axes[ai] == d) { out.push_back(1); ++ai; }
    else out.push_back(in[next++]);
  }
  return out;
}

ir::Dims squeeze_dims(const OpContext& c) {
  const auto& in = c.info(0).dims;
  std::vector<int64_t> axes;
  if (c.has(1)) axes = constant_axes(c, 1, int64_t(in.size()));
  ir::Dims out;
  for (size_t d = 0; d < in.size(); ++d) {
    bool listed = std::find(axes.begin(), axes.end(), int64_t(d)) != axes.end();
    if (listed && in[d] != 1) c.fail("cannot squeeze dimension " + std::to_string(d) + " of " + ir::dims_str(in));
    if (listed || (axes.empty() && in[d] == 1)) continue;
    out.push_back(in[d]);
  }
  return out;
}

ir::Dims reshape_dims(const OpContext& c) { return ops::reshape_target(c, c.info(0).dims, 1); }

ir::Dims flatten_dims(const OpContext& c) {
  const auto& in = c.info(0).dims;
  int64_t axis = c.node.attrs.i("axis");
  if (axis < 0) axis += int64_t(in.size());
  if (axis < 0 || axis > int64_t(in.size())) c.fail("axis out of range for " + ir::dims_str(in));
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < in.size(); ++i) (int64_t(i) < axis ? outer : inner) *= in[i];
  return {outer, inner};
}

OpImpl shape_op() {
  OpImpl op;
  op.shape_only = true;
  op.want_layout = any_layout;
  auto range = [](const OpContext& c) {
    int64_t rank = int64_t(c.info(0).dims.size());
    auto clampi = [&](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t(0), rank); };
    int64_t start = clampi(c.node.attrs.i("start", 0));
    int64_t end = clampi(c.node.attrs.i("end", rank));
    return std::pair{start, std::max(start, end)};
  };
  op.infer = [range](const OpContext& c) -> std::vector<TensorInfo> {
    auto [s, e] = range(c);
    return {{ir::DType::s64, {e - s}, Layout::row_major}};
  };
  op.build = [range](const OpContext& c, std::span<const void* const>, std::span<void* const> out) -> Kernel {
    auto [s, e] = range(c);
    std::vector<int64_t> dims(c.info(0).dims.begin() + s, c.info(0).dims.begin() + e);
    auto y = static_cast<int64_t*>(out[0]);
    return [=] { std::copy(dims.begin(), dims.end(), y); };
  };
  return op;
}

OpImpl gather_op() {
  OpImpl op;
  op.want_layout = want_row_major;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    const auto& data = c.info(0).dims;
    if (data.empty()) c.fail("data must have rank >= 1");
    auto it = c.info(1).dtype;
    if (it != ir::DType::s64 && it != ir::DType::s32) c.fail("indices must be int32 or int64");
    int64_t axis = normalize_axis(c, c.node.attrs.i("axis"), int64_t(data.size()));
    ir::Dims out(data.begin(), data.begin() + axis);
    out.insert(out.end(), c.info(1).dims.begin(), c.info(1).dims.end());
    out.insert(out.end(), data.begin() + axis + 1, data.end());
    return {{c.info(0).dtype, out, Layout::row_major}};
  };
  // Picking along another axis than the images', with constant indices; or looking up rows of
  // a constant table (an embedding) with one row of indices per image.
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) {
    const int64_t axis = normalize_axis(c, c.node.attrs.i("axis"), int64_t(c.info(0).dims.size()));
    if (ops::is_activation(c, 0)) return ops::keeps_images_apart_if(axis != 0 && !ops::is_activation(c, 1));
    return ops::keeps_images_apart_if(axis == 0 && !c.info(1).dims.empty());
  };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const auto& data = c.info(0).dims;
    int64_t axis = normalize_axis(c, c.node.attrs.i("axis"), int64_t(data.size()));
    int64_t outer = 1, inner = int64_t(ir::dtype_size(c.info(0).dtype));
    for (int64_t d = 0; d < axis; ++d) outer *= data[size_t(d)];
    for (size_t d = size_t(axis) + 1; d < data.size(); ++d) inner *= data[d];
    int64_t len = data[size_t(axis)], n_idx = c.info(1).count();
    bool idx64 = c.info(1).dtype == ir::DType::s64;
    auto x = static_cast<const std::byte*>(in[0]);
    const void* idx = in[1];
    auto y = static_cast<std::byte*>(out[0]);
    std::string where = ir::Graph::describe(c.node);
    return [=] {
      for (int64_t j = 0; j < n_idx; ++j) {
        int64_t k = idx64 ? static_cast<const int64_t*>(idx)[j] : static_cast<const int32_t*>(idx)[j];
        if (k < 0) k += len;
        if (k < 0 || k >= len) throw ir::Error(where + ": index out of range");
        for (int64_t o = 0; o < outer; ++o)
          ir::copy_bytes(y + (o * n_idx + j) * inner, x + (o * len + k) * inner, size_t(inner));
      }
    };
  };
  return op;
}

OpImpl passthrough_op() {
  OpImpl op;
  op.want_layout = any_layout;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> { return {c.info(0)}; };
  op.batch_use = ops::broadcast_per_image;
  op.build = copy_kernel;
  op.output_is_input = true;
  return op;
}

OpImpl constant_op() {
  OpImpl op;
  op.want_layout = any_layout;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    const auto& v = c.node.attrs.t("value");
    return {{v.dtype, v.dims, Layout::row_major}};
  };
  op.build = [](const OpContext& c, std::span<const void* const>, std::span<void* const> out) -> Kernel {
    auto v = c.node.attrs.t("value");
    void* y = out[0];
    return [=] { ir::copy_bytes(y, v.bytes.data(), v.bytes.size()); };
  };
  return op;
}

// `count` copies of the `elem`-byte value at src, at dst: one fill of the value's width (a
// byte-wide memcpy per element ran Expand's uint8 SE gates at ~4 ns an element):
// ConstantOfShape's fill and Expand's repeated runs.
template <class T>
void fill_as(std::byte* dst, const std::byte* src, int64_t count) {
  T v;
  std::memcpy(&v, src, sizeof(T));
  std::fill(reinterpret_cast<T*>(dst), reinterpret_cast<T*>(dst) + count, v);
}

void fill_run(std::byte* dst, const std::byte* src, int64_t count, int64_t elem) {
  switch (elem) {
    case 1: std::memset(dst, int(src[0]), size_t(count)); return;
    case 2: return fill_as<uint16_t>(dst, src, count);
    case 4: return fill_as<uint32_t>(dst, src, count);
    case 8: return fill_as<uint64_t>(dst, src, count);
    default:
      for (int64_t i = 0; i < count; ++i) std::memcpy(dst + i * elem, src, size_t(elem));
  }
}

// ConstantOfShape: a tensor of the shape input 0 holds (constant at plan time, usually folded
// with it), every element `value` (one element of any type; float 0 by default).
OpImpl constant_of_shape_op() {
  OpImpl op;
  op.want_layout = any_layout;
  auto out_dims = [](const OpContext& c) {
    const ir::TensorData& shape = c.constant(0, "the shape");
    if (shape.dtype != ir::DType::s64) c.fail("the shape must be int64");
    if (shape.dims.size() != 1) c.fail("the shape must be 1-D, got " + ir::dims_str(shape.dims));
    ir::Dims d = shape.to_i64();
    for (int64_t e : d)
      if (e < 0) c.fail("negative dimension in shape " + ir::dims_str(d));
    return d;
  };
  op.infer = [out_dims](const OpContext& c) -> std::vector<TensorInfo> {
    const ir::TensorData& v = c.node.attrs.t("value");
    if (v.count() != 1) c.fail("value must hold one element, has " + std::to_string(v.count()));
    return {{v.dtype, out_dims(c), Layout::row_major}};
  };
  op.build = [out_dims](const OpContext& c, std::span<const void* const>, std::span<void* const> out) -> Kernel {
    const ir::TensorData v = c.node.attrs.t("value");
    const int64_t count = ir::element_count(out_dims(c));
    auto y = static_cast<std::byte*>(out[0]);
    c.report_kernel(kernels::portable_kernel("fill"));
    return [=] {
      fill_run(y, v.bytes.data(), count, int64_t(v.bytes.size()));
    };
  };
  return op;
}

// Expand: x broadcast (numpy rules, both ways) with the shape input 1 holds. The output is
// walked row-major in runs over its trailing axes: a run that x holds in full is one memcpy, a
// run along which x is broadcast is one value repeated.
ir::Dims expand_dims(const OpContext& c) {
  const ir::TensorData& shape = c.constant(1, "the shape");
  if (shape.dtype != ir::DType::s64 || shape.dims.size() != 1) c.fail("the shape must be a 1-D int64 tensor");
  return ops::broadcast_dims(c, c.info(0).dims, shape.to_i64());
}

OpImpl expand_op() {
  OpImpl op;
  op.want_layout = [](const OpContext&, size_t i) -> std::optional<Layout> {
    return i == 0 ? std::optional(Layout::row_major) : std::nullopt;
  };
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    return {{c.info(0).dtype, expand_dims(c), Layout::row_major}};
  };
  op.batch_use_sees_batch_constants = true;
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>& out) {
    const ir::Dims& in = c.info(0).dims;
    if (!ops::is_activation(c, 0) || out.empty() || in.size() != out[0].dims.size() || in.empty() ||
        in[0] != out[0].dims[0])
      return BatchUse::mixes_images;
    const AtOtherBatch other(c);
    if (!other.known()) return BatchUse::mixes_images;
    ir::Dims there;
    try {
      there = expand_dims(other.context());
    } catch (const ir::Error&) {
      return BatchUse::mixes_images;
    }
    ir::Dims here = out[0].dims;
    here[0] = other_batch(in[0]);
    return ops::keeps_images_apart_if(there == here);
  };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const ir::Dims y_dims = expand_dims(c);
    const size_t rank = y_dims.size();
    ir::Dims x_dims(rank, 1);
    const ir::Dims& xd = c.info(0).dims;
    std::copy(xd.begin(), xd.end(), x_dims.begin() + std::ptrdiff_t(rank - xd.size()));
    const int64_t elem = int64_t(ir::dtype_size(c.info(0).dtype));
    // The run: the trailing axes where x and y agree (copied), or else the trailing axes x
    // holds one value along (that value repeated: an SE gate [N, C, 1, 1] spread over H and W
    // is one run of H * W per channel).
    size_t first = rank;
    while (first > 0 && x_dims[first - 1] == y_dims[first - 1]) --first;
    const bool repeat = first == rank;
    if (repeat)  // x is 1 along the last axis at least (it differs there), so first < rank
      while (first > 0 && x_dims[first - 1] == 1) --first;
    int64_t run = 1;
    for (size_t d = first; d < rank; ++d) run *= y_dims[d];
    std::vector<int64_t> outer_dims(y_dims.begin(), y_dims.begin() + std::ptrdiff_t(first)), outer_x(first, 0);
    int64_t stride = repeat ? 1 : run;  // x's stride along axis first - 1
    for (size_t d = first; d-- > 0;) {
      outer_x[d] = x_dims[d] == 1 ? 0 : stride;
      stride *= x_dims[d];
    }
    const int64_t rows = ir::element_count(outer_dims);
    auto x = static_cast<const std::byte*>(in[0]);
    auto y = static_cast<std::byte*>(out[0]);
    c.report_kernel(kernels::portable_kernel(repeat ? "expand_fill_runs" : "expand_copy_runs"));
    return [=] {
      std::vector<int64_t> idx(outer_dims.size(), 0);
      int64_t xo = 0;
      std::byte* yp = y;
      for (int64_t r = 0; r < rows; ++r) {
        const std::byte* src = x + xo * elem;
        if (repeat) {
          fill_run(yp, src, run, elem);
        } else {
          std::memcpy(yp, src, size_t(run * elem));
        }
        yp += run * elem;
        for (size_t d = outer_dims.size(); d-- > 0;) {
          xo += outer_x[d];
          if (++idx[d] < outer_dims[d]) break;
          xo -= outer_x[d] * outer_dims[d];
          idx[d] = 0;
        }
      }
    };
  };
  return op;
}

}  // namespace

void register_shape_ops(OpTable& t) {
  t.emplace_back("Shape", shape_op());
  t.emplace_back("Gather", gather_op());
  t.emplace_back("Unsqueeze", reshaping_op(unsqueeze_dims));
  t.emplace_back("Squeeze", reshaping_op(squeeze_dims));
  t.emplace_back("Reshape", reshaping_op(reshape_dims));
  t.emplace_back("Flatten", reshaping_op(flatten_dims));
  t.emplace_back("Identity", passthrough_op());
  t.emplace_back("Dropout", passthrough_op());
  t.emplace_back("Constant", constant_op());
  t.emplace_back("ConstantOfShape", constant_of_shape_op());
  t.emplace_back("Expand", expand_op());
}

}  // namespace octet

namespace octet::ops {

ir::Dims reshape_target(const OpContext& c, const ir::Dims& in, size_t shape_input) {
  auto shape = c.constant(shape_input, "shape").to_i64();
  bool allow_zero = c.node.attrs.i("allowzero", 0) != 0;
  ir::Dims out(shape.size());
  int infer_at = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer_at >= 0) c.fail("shape has more than one -1");
      infer_at = int(i);
      continue;
    }
    if (shape[i] < -1) c.fail("shape has a negative extent " + std::to_string(shape[i]));
    if (shape[i] == 0 && !allow_zero) {
      if (i >= in.size()) c.fail("shape copies dimension " + std::to_string(i) + " that the input lacks");
      out[i] = in[i];
    } else {
      out[i] = shape[i];
    }
    if (__builtin_mul_overflow(known, out[i], &known))
      c.fail("the shape " + ir::dims_str(shape) + " has more elements than a 64-bit count holds");
  }
  if (infer_at >= 0) {
    int64_t total = ir::element_count(in);
    if (known == 0 || total % known)
      c.fail("cannot infer the -1 extent reshaping " + ir::dims_str(in) + " to " + ir::dims_str(shape));
    out[size_t(infer_at)] = total / known;
  }
  return out;
}

}  // namespace octet::ops
