// ScatterND, ScatterElements and Scatter (opsets 9-10, ScatterElements without reduction): data
// copied, then updates written at the places indices name, replacing (reduction none) or combined
// with add, mul, max or min, in the order the indices come (a repeated index with `none` keeps the
// last update). Portable kernels: a copy and indexed stores.
#include <algorithm>
#include <memory>

#include "engine/op_registry.h"
#include "engine/ops/batch_use.h"
#include "engine/ops/index_ops.h"
#include "kernels/kernel_id.h"

namespace octet {
namespace {

using ops::checked_index;
using ops::index_at;

enum class Reduction { none, add, mul, max, min };

Reduction reduction_of(const OpContext& c) {
  const std::string r = c.node.attrs.has("reduction") ? c.node.attrs.s("reduction") : "none";
  if (r == "none") return Reduction::none;
  if (c.info(0).dtype == ir::DType::b8) c.fail("reduction '" + r + "' is not defined on bool data");
  if (r == "add") return Reduction::add;
  if (r == "mul") return Reduction::mul;
  if (r == "max") return Reduction::max;
  if (r == "min") return Reduction::min;
  c.fail("reduction '" + r + "' is not supported (none, add, mul, max, min)");
}

template <class T>
void combine(T* dst, const T* src, int64_t n, Reduction r) {
  switch (r) {
    case Reduction::none: std::copy(src, src + n, dst); break;
    case Reduction::add: for (int64_t i = 0; i < n; ++i) dst[i] = T(dst[i] + src[i]); break;
    case Reduction::mul: for (int64_t i = 0; i < n; ++i) dst[i] = T(dst[i] * src[i]); break;
    case Reduction::max: for (int64_t i = 0; i < n; ++i) dst[i] = std::max(dst[i], src[i]); break;
    case Reduction::min: for (int64_t i = 0; i < n; ++i) dst[i] = std::min(dst[i], src[i]); break;
  }
}

// dst[0..n) combined with src[0..n), elements of type t.
void combine_bytes(ir::DType t, std::byte* dst, const std::byte* src, int64_t n, Reduction r) {
  switch (t) {
    case ir::DType::f32: combine(reinterpret_cast<float*>(dst), reinterpret_cast<const float*>(src), n, r); break;
    case ir::DType::f64: combine(reinterpret_cast<double*>(dst), reinterpret_cast<const double*>(src), n, r); break;
    case ir::DType::u8:
    case ir::DType::b8: combine(reinterpret_cast<uint8_t*>(dst), reinterpret_cast<const uint8_t*>(src), n, r); break;
    case ir::DType::s8: combine(reinterpret_cast<int8_t*>(dst), reinterpret_cast<const int8_t*>(src), n, r); break;
    case ir::DType::s32: combine(reinterpret_cast<int32_t*>(dst), reinterpret_cast<const int32_t*>(src), n, r); break;
    case ir::DType::s64: combine(reinterpret_cast<int64_t*>(dst), reinterpret_cast<const int64_t*>(src), n, r); break;
  }
}

void check_updates_type(const OpContext& c) {
  if (c.info(2).dtype != c.info(0).dtype)
    c.fail("updates are " + std::string(ir::dtype_name(c.info(2).dtype)) + " but data " + ir::dtype_name(c.info(0).dtype));
}

// ---- ScatterND ----

struct ScatterNdGeom {
  int64_t tuples = 1, q = 0, slice = 1;
  std::vector<int64_t> extents, strides;
};

ScatterNdGeom scatter_nd_geom(const OpContext& c) {
  const ir::Dims &x = c.info(0).dims, &idx = c.info(1).dims, &upd = c.info(2).dims;
  ops::index_is_64(c, 1, "indices");
  check_updates_type(c);
  if (x.empty() || idx.empty()) c.fail("data and indices must have rank >= 1");
  ScatterNdGeom g;
  g.q = idx.back();
  if (g.q < 1 || g.q > int64_t(x.size())) c.fail("the last axis of indices must be 1 to rank(data)");
  ir::Dims want(idx.begin(), idx.end() - 1);
  want.insert(want.end(), x.begin() + g.q, x.end());
  if (upd != want) c.fail("updates " + ir::dims_str(upd) + " must have the shape " + ir::dims_str(want));
  for (size_t a = 0; a + 1 < idx.size(); ++a) g.tuples *= idx[a];
  const auto xs = ops::dense_strides(x);
  for (int64_t a = 0; a < g.q; ++a) {
    g.extents.push_back(x[size_t(a)]);
    g.strides.push_back(xs[size_t(a)]);
  }
  for (size_t a = size_t(g.q); a < x.size(); ++a) g.slice *= x[a];
  return g;
}

OpImpl scatter_nd_op() {
  OpImpl op;
  op.want_layout = want_row_major;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    scatter_nd_geom(c);
    reduction_of(c);
    return {{c.info(0).dtype, c.info(0).dims, Layout::row_major}};
  };
  // Unset batch_use: an index tuple addresses axis 0, the images' axis.
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const ScatterNdGeom g = scatter_nd_geom(c);
    const Reduction r = reduction_of(c);
    const ir::DType t = c.info(0).dtype;
    const bool idx64 = c.info(1).dtype == ir::DType::s64;
    const size_t elem = ir::dtype_size(t), bytes = c.info(0).bytes();
    auto x = static_cast<const std::byte*>(in[0]);
    const void* idx = in[1];
    auto upd = static_cast<const std::byte*>(in[2]);
    auto y = static_cast<std::byte*>(out[0]);
    const std::string where = ir::Graph::describe(c.node);
    c.report_kernel(kernels::portable_kernel("scatter_nd_slices"));
    return [=] {
      ir::copy_bytes(y, x, bytes);
      for (int64_t m = 0; m < g.tuples; ++m) {
        int64_t off = 0;
        for (int64_t a = 0; a < g.q; ++a)
          off += checked_index(index_at(idx, idx64, m * g.q + a), g.extents[size_t(a)], where) * g.strides[size_t(a)];
        combine_bytes(t, y + size_t(off) * elem, upd + size_t(m * g.slice) * elem, g.slice, r);
      }
    };
  };
  return op;
}

// ---- ScatterElements, Scatter ----

OpImpl scatter_elements_op() {
  OpImpl op;
  op.want_layout = want_row_major;
  constexpr auto axis_of = ops::element_axis;
  op.infer = [axis_of](const OpContext& c) -> std::vector<TensorInfo> {
    const ir::Dims &x = c.info(0).dims, &idx = c.info(1).dims;
    ops::index_is_64(c, 1, "indices");
    check_updates_type(c);
    reduction_of(c);
    if (x.empty()) c.fail("data must have rank >= 1");
    const int64_t axis = axis_of(c);
    if (c.info(2).dims != idx) c.fail("updates " + ir::dims_str(c.info(2).dims) + " must have the shape of indices " + ir::dims_str(idx));
    if (idx.size() != x.size()) c.fail("indices " + ir::dims_str(idx) + " must have the rank of data " + ir::dims_str(x));
    for (size_t a = 0; a < x.size(); ++a)
      if (int64_t(a) != axis && idx[a] > x[a])
        c.fail("indices " + ir::dims_str(idx) + " exceed data " + ir::dims_str(x) + " outside the axis");
    return {{c.info(0).dtype, x, Layout::row_major}};
  };
  // Per image when every input holds the images whole and the axis is another.
  op.batch_use = [axis_of](const OpContext& c, const std::vector<TensorInfo>&) {
    const ir::Dims& x = c.info(0).dims;
    bool apart = axis_of(c) != 0;
    for (size_t i = 0; i < 3; ++i) apart = apart && ops::is_activation(c, i) && c.info(i).dims[0] == x[0];
    return ops::keeps_images_apart_if(apart);
  };
  op.build = [axis_of](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const ir::Dims x_dims = c.info(0).dims, idx_dims = c.info(1).dims;
    const size_t axis = size_t(axis_of(c)), rank = x_dims.size();
    const Reduction r = reduction_of(c);
    const ir::DType t = c.info(0).dtype;
    const bool idx64 = c.info(1).dtype == ir::DType::s64;
    const auto xs = ops::dense_strides(x_dims);
    const size_t elem = ir::dtype_size(t), bytes = c.info(0).bytes();
    const int64_t len = x_dims[axis], inner = idx_dims[rank - 1],
                  rows = inner ? ir::element_count(idx_dims) / inner : 0;
    auto x = static_cast<const std::byte*>(in[0]);
    const void* idx = in[1];
    auto upd = static_cast<const std::byte*>(in[2]);
    auto y = static_cast<std::byte*>(out[0]);
    const std::string where = ir::Graph::describe(c.node);
    c.report_kernel(kernels::portable_kernel("scatter_elements"));
    return [=] {
      ir::copy_bytes(y, x, bytes);
      std::vector<int64_t> at(rank, 0);
      for (int64_t row = 0, j = 0; row < rows; ++row) {
        int64_t base = 0;
        for (size_t a = 0; a + 1 < rank; ++a)
          if (a != axis) base += at[a] * xs[a];
        for (int64_t i = 0; i < inner; ++i, ++j) {
          const int64_t k = checked_index(index_at(idx, idx64, j), len, where);
          const int64_t off = axis == rank - 1 ? base + k : base + k * xs[axis] + i;
          combine_bytes(t, y + size_t(off) * elem, upd + size_t(j) * elem, 1, r);
        }
        for (size_t a = rank - 1; a-- > 0;) {
          if (++at[a] < idx_dims[a]) break;
          at[a] = 0;
        }
      }
    };
  };
  return op;
}

}  // namespace

void register_scatter_ops(OpTable& t) {
  t.emplace_back("ScatterND", scatter_nd_op());
  t.emplace_back("ScatterElements", scatter_elements_op());
  t.emplace_back("Scatter", scatter_elements_op());
}

}  // namespace octet
