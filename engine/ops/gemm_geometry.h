#pragma once
// Operand geometry shared by the FP32 and the integer GEMM / MatMul ops: Gemm's transposes
// and C broadcast (Gemm, QGemm), numpy matmul's batch broadcast (MatMul, QLinearMatMul,
// MatMulInteger). Only shapes and attributes are checked here; element types are each op's.
#include <algorithm>
#include <string>
#include <vector>

#include "engine/op_registry.h"
#include "kernels/ref/gemm.h"

namespace octet::ops {

struct GemmGeometry {
  kernels::GemmShape s;
  int64_t c_stride_m = 0, c_stride_n = 0;  // element (i, j) of C; 0 where C broadcasts
};

// A is input a_in, B input b_in, the optional C input c_in (unidirectional broadcast to
// [M, N]); attributes transA, transB.
inline GemmGeometry gemm_geometry(const OpContext& c, size_t a_in, size_t b_in, size_t c_in) {
  const auto& a = c.info(a_in).dims;
  const auto& b = c.info(b_in).dims;
  if (a.size() != 2 || b.size() != 2)
    c.fail("A " + ir::dims_str(a) + " and B " + ir::dims_str(b) + " must be 2-D");
  GemmGeometry g;
  g.s.trans_a = c.node.attrs.i("transA", 0) != 0;
  g.s.trans_b = c.node.attrs.i("transB", 0) != 0;
  g.s.m = int(g.s.trans_a ? a[1] : a[0]);
  g.s.k = int(g.s.trans_a ? a[0] : a[1]);
  int kb = int(g.s.trans_b ? b[1] : b[0]);
  g.s.n = int(g.s.trans_b ? b[0] : b[1]);
  if (kb != g.s.k)
    c.fail("inner dimensions differ: A " + ir::dims_str(a) + (g.s.trans_a ? " (transposed)" : "") + ", B " +
           ir::dims_str(b) + (g.s.trans_b ? " (transposed)" : ""));
  g.s.lda = int(a[1]);
  g.s.ldb = int(b[1]);
  if (c.has(c_in)) {
    // C broadcasts one way to [M, N]: scalar, [N], [1, N], [M, 1] or [M, N].
    const auto& cd = c.info(c_in).dims;
    if (cd.size() > 2) c.fail("C must have rank <= 2, got " + ir::dims_str(cd));
    int64_t cm = cd.size() == 2 ? cd[0] : 1;
    int64_t cn = cd.empty() ? 1 : cd.back();
    if ((cm != 1 && cm != g.s.m) || (cn != 1 && cn != g.s.n))
      c.fail("C " + ir::dims_str(cd) + " does not broadcast to [" + std::to_string(g.s.m) + "," +
             std::to_string(g.s.n) + "]");
    g.c_stride_m = cm == 1 ? 0 : cn;
    g.c_stride_n = cn == 1 ? 0 : 1;
  }
  return g;
}

// numpy matmul: rank-1 operands are promoted and the added dimension dropped again;
// leading (batch) dimensions broadcast.
struct MatMulGeometry {
  int64_t m, k, n;
  ir::Dims batch, out;
  std::vector<int64_t> a_batch_strides, b_batch_strides;  // in matrices, 0 where broadcast

  int64_t batches() const { return ir::element_count(batch); }
  // Strides (in units of `matrix` elements) over the batch dimensions of a tensor whose
  // leading dimensions `lead` broadcast to `batch` (right-aligned); 0 where broadcast.
  std::vector<int64_t> strides_for(const ir::Dims& lead) const {
    std::vector<int64_t> strides(batch.size(), 0);
    int64_t s = 1;
    for (size_t i = lead.size(); i-- > 0;) {
      const size_t d = batch.size() - (lead.size() - i);
      strides[d] = lead[i] == 1 ? 0 : s;
      s *= lead[i];
    }
    return strides;
  }
  // Index of batch `bi`'s matrix in a tensor with the given batch strides.
  int64_t matrix_index(int64_t bi, const std::vector<int64_t>& strides) const {
    int64_t index = 0;
    for (size_t d = batch.size(); d-- > 0;) {
      index += (bi % batch[d]) * strides[d];
      bi /= batch[d];
    }
    return index;
  }
};

inline MatMulGeometry matmul_geometry(const OpContext& c, size_t a_in, size_t b_in) {
  ir::Dims a = c.info(a_in).dims, b = c.info(b_in).dims;
  if (a.empty() || b.empty()) c.fail("MatMul operands must have rank >= 1");
  const bool a_vec = a.size() == 1, b_vec = b.size() == 1;
  if (a_vec) a.insert(a.begin(), 1);
  if (b_vec) b.push_back(1);
  MatMulGeometry g;
  g.m = a[a.size() - 2];
  g.k = a.back();
  g.n = b.back();
  if (b[b.size() - 2] != g.k)
    c.fail("inner dimensions differ: " + ir::dims_str(c.info(a_in).dims) + " x " + ir::dims_str(c.info(b_in).dims));
  size_t ra = a.size() - 2, rb = b.size() - 2, r = std::max(ra, rb);
  g.batch.resize(r);
  for (size_t i = r; i-- > 0;) {
    int64_t da = i >= r - ra ? a[i - (r - ra)] : 1;
    int64_t db = i >= r - rb ? b[i - (r - rb)] : 1;
    if (da != db && da != 1 && db != 1)
      c.fail("batch dimensions of " + ir::dims_str(c.info(a_in).dims) + " and " + ir::dims_str(c.info(b_in).dims) +
             " do not broadcast");
    g.batch[i] = std::max(da, db);
  }
  g.a_batch_strides = g.strides_for(ir::Dims(a.begin(), a.end() - 2));
  g.b_batch_strides = g.strides_for(ir::Dims(b.begin(), b.end() - 2));
  g.out = g.batch;
  if (!a_vec) g.out.push_back(g.m);
  if (!b_vec) g.out.push_back(g.n);
  return g;
}

}  // namespace octet::ops
