// TopK, GatherElements, GatherND and Tile: elements picked or repeated by index, any element type
// (TopK compares numbers). Portable kernels: they move bytes along index lists, where a vector
// form has nothing to do (Tile's runs are memcpy).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "engine/op_registry.h"
#include "engine/ops/batch_use.h"
#include "engine/ops/index_ops.h"
#include "engine/ops/topk_heap.h"
#include "kernels/kernel_id.h"

namespace octet {
namespace {

using ops::checked_index;
using ops::index_at;

// ---- TopK ----
//
// The k largest (or smallest) values along an axis and their int64 indices, sorted, equal
// values by lower index first: ONNX Runtime's order. k is input 1 (the importer moves opset 1's
// attribute there). With sorted=0 ONNX leaves the order to the implementation, and ORT's is
// whatever its selection leaves (probed against ORT 1.30): the heap in its array order, or
// std::nth_element's partition of the indices. octet takes the same steps; the partition is
// libstdc++'s, so a build on another C++ library refuses sorted=0 where nth_element runs.
//
// NaN compares neither above nor below nor equal to anything, so with a NaN in a row the
// order "value, then index" is no order at all and the answer is whatever a selection leaves:
// ORT's picks a NaN or not, and places it, by the comparisons its own steps make. So octet
// takes ORT's steps (ORT 1.30, probed): k = 1 a scan that keeps the first value no later one
// beats (a NaN first stays, a NaN later never enters); k < 4 or log2 k / log2 len < 0.725 a
// binary heap of k indices (engine/ops/topk_heap.h); otherwise std::nth_element then std::sort
// with the same comparison. -0 and +0 are equal: by index, as any tie.

int64_t topk_k(const OpContext& c, int64_t len) {
  const ir::TensorData& kt = c.constant(1, "K");
  if (kt.count() != 1 || (kt.dtype != ir::DType::s64 && kt.dtype != ir::DType::s32))
    c.fail("K must hold one int64 value");
  const int64_t k = kt.to_i64()[0];
  if (k < 0 || k > len)
    c.fail("K = " + std::to_string(k) + " is out of range for an axis of " + std::to_string(len));
  return k;
}

// ORT's choice of its heap over nth_element (k = 1 is a scan either way).
bool topk_uses_heap(int64_t len, int64_t k) { return k < 4 || std::log2(double(k)) / std::log2(double(len)) < 0.725; }

template <class T>
void topk_rows(const T* x, T* values, int64_t* indices, int64_t rows, int64_t len, int64_t inner, int64_t k,
               bool largest, bool sorted) {
  std::vector<T> col(size_t(inner > 1 ? len : 0));
  std::vector<int64_t> order(static_cast<size_t>(len));
  const bool heap = topk_uses_heap(len, k);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < inner; ++j) {
      const T* v = x + r * len * inner + j;
      if (inner > 1) {
        for (int64_t i = 0; i < len; ++i) col[size_t(i)] = v[i * inner];
        v = col.data();
      }
      const int64_t out = r * k * inner + j;
      if (k == 1) {  // the first best value
        int64_t best = 0;
        for (int64_t i = 1; i < len; ++i)
          if (largest ? v[i] > v[best] : v[i] < v[best]) best = i;
        values[out] = v[best];
        indices[out] = best;
        continue;
      }
      for (int64_t i = 0; i < len; ++i) order[size_t(i)] = i;
      auto before = [v, largest](int64_t a, int64_t b) {
        return largest ? v[a] > v[b] || (v[a] == v[b] && a < b) : v[a] < v[b] || (v[a] == v[b] && a < b);
      };
      // A heap of the k best (O(len log k)) wins while k is small against len; a quickselect
      // then a sort of the k beyond (8400 scores: 21 against 25 us at k = 100, 89 against 41 at
      // k = 1000, bench/index_ops_bench.cc). The switch is ORT's, and so is each (see above).
      if (heap) {
        auto better = [v, largest](int64_t a, int64_t b) { return largest ? v[a] > v[b] : v[a] < v[b]; };
        if (sorted) ops::topk_heap_select(len, k, order.data(), order.data(), before, better);
        else ops::topk_heap_fill(len, k, order.data(), before, better);
      } else {
        std::nth_element(order.begin(), order.begin() + (k - 1), order.end(), before);
        if (sorted) std::sort(order.begin(), order.begin() + k, before);
      }
      for (int64_t i = 0; i < k; ++i) {
        values[out + i * inner] = v[order[size_t(i)]];
        indices[out + i * inner] = order[size_t(i)];
      }
    }
}

struct TopkGeom {
  int64_t axis, rows, len, inner, k;
};

TopkGeom topk_geom(const OpContext& c) {
  const ir::Dims& d = c.info(0).dims;
  if (d.empty()) c.fail("X must have rank >= 1");
  TopkGeom g{normalize_axis(c, c.node.attrs.i("axis", -1), int64_t(d.size())), 1, 0, 1, 0};
  for (int64_t a = 0; a < g.axis; ++a) g.rows *= d[size_t(a)];
  g.len = d[size_t(g.axis)];
  for (size_t a = size_t(g.axis) + 1; a < d.size(); ++a) g.inner *= d[a];
  g.k = topk_k(c, g.len);
#ifndef __GLIBCXX__
  if (c.node.attrs.i("sorted", 1) == 0 && g.k > 1 && !topk_uses_heap(g.len, g.k))
    c.fail("sorted = 0 with k = " + std::to_string(g.k) + " of " + std::to_string(g.len) +
           ": ONNX Runtime leaves libstdc++'s std::nth_element order, which this build (another C++ library) "
           "cannot reproduce");
#endif
  return g;
}

OpImpl topk_op() {
  OpImpl op;
  op.want_layout = want_row_major;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    const TopkGeom g = topk_geom(c);
    const ir::DType t = c.info(0).dtype;
    if (t == ir::DType::b8) c.fail("X must be a number type");
    ir::Dims d = c.info(0).dims;
    d[size_t(g.axis)] = g.k;
    return {{t, d, Layout::row_major}, {ir::DType::s64, d, Layout::row_major}};
  };
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) {
    return ops::keeps_images_apart_if(topk_geom(c).axis != 0 && ops::per_image_with_constants(c) == BatchUse::keeps_images_apart);
  };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const TopkGeom g = topk_geom(c);
    const ir::DType t = c.info(0).dtype;
    const bool largest = c.node.attrs.i("largest", 1) != 0;
    const bool sorted = c.node.attrs.i("sorted", 1) != 0;
    const int64_t count = g.rows * g.k * g.inner;
    // An output nobody reads may have no buffer.
    auto spare_values = std::make_shared<std::vector<std::byte>>(out[0] ? 0 : size_t(count) * ir::dtype_size(t));
    auto spare_indices = std::make_shared<std::vector<int64_t>>(out.size() > 1 && out[1] ? 0 : size_t(count));
    void* values = out[0] ? out[0] : spare_values->data();
    auto* indices = out.size() > 1 && out[1] ? static_cast<int64_t*>(out[1]) : spare_indices->data();
    const void* x = in[0];
    c.report_kernel(kernels::portable_kernel(g.k == 1 ? "topk_scan" : "topk_select_sort"));
    return [=] {
      (void)spare_values, (void)spare_indices;
      if (g.k == 0) return;
      auto run = [&](auto tag) {
        using T = decltype(tag);
        topk_rows(static_cast<const T*>(x), static_cast<T*>(values), indices, g.rows, g.len, g.inner, g.k, largest, sorted);
      };
      switch (t) {
        case ir::DType::f32: run(float{}); break;
        case ir::DType::f64: run(double{}); break;
        case ir::DType::u8: run(uint8_t{}); break;
        case ir::DType::s8: run(int8_t{}); break;
        case ir::DType::s32: run(int32_t{}); break;
        case ir::DType::s64: run(int64_t{}); break;
        case ir::DType::b8: break;
      }
    };
  };
  return op;
}

// ---- GatherElements ----
//
// y[i...] = x[i...] with the axis coordinate replaced by indices[i...]; y has the indices' shape,
// which may be smaller than x's on the other axes.

OpImpl gather_elements_op() {
  OpImpl op;
  op.want_layout = want_row_major;
  constexpr auto axis_of = ops::element_axis;
  op.infer = [axis_of](const OpContext& c) -> std::vector<TensorInfo> {
    const ir::Dims &x = c.info(0).dims, &idx = c.info(1).dims;
    ops::index_is_64(c, 1, "indices");
    if (x.empty()) c.fail("data must have rank >= 1");
    const int64_t axis = axis_of(c);
    if (idx.size() != x.size()) c.fail("indices " + ir::dims_str(idx) + " must have the rank of data " + ir::dims_str(x));
    for (size_t a = 0; a < x.size(); ++a)
      if (int64_t(a) != axis && idx[a] > x[a])
        c.fail("indices " + ir::dims_str(idx) + " exceed data " + ir::dims_str(x) + " outside the axis");
    return {{c.info(0).dtype, idx, Layout::row_major}};
  };
  // Per image when both hold the images (TopK's indices picking from the scores) and the axis is another.
  op.batch_use = [axis_of](const OpContext& c, const std::vector<TensorInfo>&) {
    return ops::keeps_images_apart_if(axis_of(c) != 0 && ops::is_activation(c, 0) && ops::is_activation(c, 1) &&
                                      c.info(0).dims[0] == c.info(1).dims[0]);
  };
  op.build = [axis_of](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const ir::Dims x_dims = c.info(0).dims, idx_dims = c.info(1).dims;
    const size_t axis = size_t(axis_of(c)), rank = x_dims.size();
    const bool idx64 = ops::index_is_64(c, 1, "indices");
    const auto xs = ops::dense_strides(x_dims);
    const size_t elem = ir::dtype_size(c.info(0).dtype);
    const int64_t len = x_dims[axis], inner = idx_dims[rank - 1], rows = ir::element_count(idx_dims) / std::max<int64_t>(inner, 1);
    auto x = static_cast<const std::byte*>(in[0]);
    const void* idx = in[1];
    auto y = static_cast<std::byte*>(out[0]);
    const std::string where = ir::Graph::describe(c.node);
    c.report_kernel(kernels::portable_kernel("gather_elements"));
    return [=] {
      if (inner == 0) return;
      std::vector<int64_t> at(rank, 0);  // the coordinates of the row's first element
      for (int64_t r = 0, j = 0; r < rows; ++r) {
        int64_t base = 0;
        for (size_t a = 0; a + 1 < rank; ++a)
          if (a != axis) base += at[a] * xs[a];
        for (int64_t i = 0; i < inner; ++i, ++j) {
          const int64_t k = checked_index(index_at(idx, idx64, j), len, where);
          const int64_t off = axis == rank - 1 ? base + k : base + k * xs[axis] + i;
          ops::copy_element(y + size_t(j) * elem, x + size_t(off) * elem, elem);
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

// ---- GatherND ----
//
// indices [b..., m, q] with batch_dims b: each q-tuple picks a slice data[b..., i1..iq, ...],
// copied whole.

struct GatherNdGeom {
  int64_t batches = 1, tuples = 1, q = 0, slice = 1;  // tuples per batch, elements per slice
  std::vector<int64_t> extents, strides;              // of the q indexed axes (strides in elements)
  int64_t data_batch = 1;                             // elements of data per batch
  ir::Dims out;
};

GatherNdGeom gather_nd_geom(const OpContext& c) {
  const ir::Dims &x = c.info(0).dims, &idx = c.info(1).dims;
  ops::index_is_64(c, 1, "indices");
  const int64_t b = c.node.attrs.i("batch_dims", 0);
  if (x.empty() || idx.empty()) c.fail("data and indices must have rank >= 1");
  if (b < 0 || b >= int64_t(std::min(x.size(), idx.size())))
    c.fail("batch_dims " + std::to_string(b) + " must be below the ranks of data and indices");
  GatherNdGeom g;
  g.q = idx.back();
  if (g.q < 1 || b + g.q > int64_t(x.size()))
    c.fail("the last axis of indices (" + std::to_string(g.q) + ") must be 1 to rank(data) - batch_dims");
  for (int64_t a = 0; a < b; ++a) {
    if (x[size_t(a)] != idx[size_t(a)]) c.fail("data and indices differ on batch axis " + std::to_string(a));
    g.batches *= x[size_t(a)];
  }
  for (size_t a = size_t(b); a + 1 < idx.size(); ++a) g.tuples *= idx[a];
  const auto xs = ops::dense_strides(x);
  for (int64_t a = b; a < b + g.q; ++a) {
    g.extents.push_back(x[size_t(a)]);
    g.strides.push_back(xs[size_t(a)]);
  }
  for (size_t a = size_t(b + g.q); a < x.size(); ++a) g.slice *= x[a];
  for (size_t a = size_t(b); a < x.size(); ++a) g.data_batch *= x[a];
  g.out.assign(idx.begin(), idx.end() - 1);
  g.out.insert(g.out.end(), x.begin() + b + g.q, x.end());
  return g;
}

OpImpl gather_nd_op() {
  OpImpl op;
  op.want_layout = want_row_major;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    return {{c.info(0).dtype, gather_nd_geom(c).out, Layout::row_major}};
  };
  // Per image when the images are the first batch axis of both.
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) {
    return ops::keeps_images_apart_if(c.node.attrs.i("batch_dims", 0) >= 1 && ops::is_activation(c, 0) &&
                                      ops::is_activation(c, 1));
  };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const GatherNdGeom g = gather_nd_geom(c);
    const bool idx64 = c.info(1).dtype == ir::DType::s64;
    const size_t elem = ir::dtype_size(c.info(0).dtype), run = size_t(g.slice) * elem;
    auto x = static_cast<const std::byte*>(in[0]);
    const void* idx = in[1];
    auto y = static_cast<std::byte*>(out[0]);
    const std::string where = ir::Graph::describe(c.node);
    c.report_kernel(kernels::portable_kernel("gather_nd_copy_slices"));
    return [=] {
      for (int64_t b = 0, t = 0; b < g.batches; ++b)
        for (int64_t m = 0; m < g.tuples; ++m, ++t) {
          int64_t off = b * g.data_batch;
          for (int64_t a = 0; a < g.q; ++a)
            off += checked_index(index_at(idx, idx64, t * g.q + a), g.extents[size_t(a)], where) * g.strides[size_t(a)];
          ir::copy_bytes(y + size_t(t) * run, x + size_t(off) * elem, run);
        }
    };
  };
  return op;
}

// ---- Tile ----
//
// Each axis from the outermost: its d blocks written (recursively), then that span copied
// r - 1 times after itself. The trailing axes that are not repeated are one memcpy of x.

struct TilePlan {
  ir::Dims in, reps, out;
  std::vector<int64_t> in_block, out_block;  // elements below each axis, in x and in y
  size_t dense_from = 0;                     // the axes from here on are not repeated
};

TilePlan tile_plan(const OpContext& c) {
  TilePlan p;
  p.in = c.info(0).dims;
  const ir::TensorData& r = c.constant(1, "repeats");
  if (r.dtype != ir::DType::s64) c.fail("repeats must be int64");
  p.reps = r.to_i64();
  if (p.reps.size() != p.in.size())
    c.fail("repeats has " + std::to_string(p.reps.size()) + " values for an input of rank " + std::to_string(p.in.size()));
  const size_t rank = p.in.size();
  p.in_block.assign(rank + 1, 1);
  p.out_block.assign(rank + 1, 1);
  for (size_t a = 0; a < rank; ++a) {
    if (p.reps[a] < 0) c.fail("repeats must not be negative, got " + ir::dims_str(p.reps));
    p.out.push_back(p.in[a] * p.reps[a]);
  }
  for (size_t a = rank; a-- > 0;) {
    p.in_block[a] = p.in_block[a + 1] * p.in[a];
    p.out_block[a] = p.out_block[a + 1] * p.out[a];
  }
  p.dense_from = rank;
  while (p.dense_from > 0 && p.reps[p.dense_from - 1] == 1) --p.dense_from;
  return p;
}

void tile_axis(const TilePlan& p, size_t a, const std::byte* x, std::byte* y, size_t elem) {
  if (a == p.dense_from) {
    std::memcpy(y, x, size_t(p.in_block[a]) * elem);
    return;
  }
  if (a + 1 == p.dense_from)  // the blocks below are x's own: one run
    std::memcpy(y, x, size_t(p.in_block[a]) * elem);
  else
    for (int64_t i = 0; i < p.in[a]; ++i)
      tile_axis(p, a + 1, x + size_t(i * p.in_block[a + 1]) * elem, y + size_t(i * p.out_block[a + 1]) * elem, elem);
  const size_t span = size_t(p.in[a] * p.out_block[a + 1]) * elem;
  for (int64_t r = 1; r < p.reps[a]; ++r) std::memcpy(y + size_t(r) * span, y, span);
}

OpImpl tile_op() {
  OpImpl op;
  op.want_layout = want_row_major;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    return {{c.info(0).dtype, tile_plan(c).out, Layout::row_major}};
  };
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) {
    const TilePlan p = tile_plan(c);
    return ops::keeps_images_apart_if(!p.reps.empty() && p.reps[0] == 1 &&
                                      ops::per_image_with_constants(c) == BatchUse::keeps_images_apart);
  };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    auto p = std::make_shared<const TilePlan>(tile_plan(c));
    const size_t elem = ir::dtype_size(c.info(0).dtype);
    auto x = static_cast<const std::byte*>(in[0]);
    auto y = static_cast<std::byte*>(out[0]);
    c.report_kernel(kernels::portable_kernel("tile_copy_runs"));
    return [=] {
      if (ir::element_count(p->out) == 0) return;
      tile_axis(*p, 0, x, y, elem);
    };
  };
  return op;
}

}  // namespace

void register_index_ops(OpTable& t) {
  t.emplace_back("TopK", topk_op());
  t.emplace_back("GatherElements", gather_elements_op());
  t.emplace_back("GatherND", gather_nd_op());
  t.emplace_back("Tile", tile_op());
}

}  // namespace octet
