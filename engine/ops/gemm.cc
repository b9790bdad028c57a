// Gemm and MatMul (FP32) on row-major operands.
#include "engine/ops/fused_activation.h"
#include "engine/op_registry.h"
#include "kernels/ref/gemm.h"

namespace octet {
namespace {

struct GemmGeometry {
  kernels::GemmShape s;
  int64_t c_stride_m = 0, c_stride_n = 0;
};

GemmGeometry gemm_geometry(const OpContext& c) {
  const auto& a = c.info(0).dims;
  const auto& b = c.info(1).dims;
  if (a.size() != 2 || b.size() != 2)
    c.fail("A " + ir::dims_str(a) + " and B " + ir::dims_str(b) + " must be 2-D");
  for (size_t i = 0; i < 3; ++i)
    if (c.has(i) && c.info(i).dtype != ir::DType::f32)
      c.fail(std::string(ir::dtype_name(c.info(i).dtype)) + " Gemm is not supported (only float32)");
  GemmGeometry g;
  g.s.trans_a = c.node.attrs.i("transA") != 0;
  g.s.trans_b = c.node.attrs.i("transB") != 0;
  g.s.m = int(g.s.trans_a ? a[1] : a[0]);
  g.s.k = int(g.s.trans_a ? a[0] : a[1]);
  int kb = int(g.s.trans_b ? b[1] : b[0]);
  g.s.n = int(g.s.trans_b ? b[0] : b[1]);
  if (kb != g.s.k)
    c.fail("inner dimensions differ: A " + ir::dims_str(a) + (g.s.trans_a ? " (transposed)" : "") + ", B " +
           ir::dims_str(b) + (g.s.trans_b ? " (transposed)" : ""));
  g.s.lda = int(a[1]);
  g.s.ldb = int(b[1]);
  if (c.has(2)) {
    // C broadcasts one way to [M, N]: scalar, [N], [1, N], [M, 1] or [M, N].
    const auto& cd = c.info(2).dims;
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

OpImpl gemm_op() {
  OpImpl op;
  op.want_layout = want_row_major;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    auto g = gemm_geometry(c);
    return {{ir::DType::f32, {g.s.m, g.s.n}, Layout::row_major}};
  };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    auto g = gemm_geometry(c);
    float alpha = c.node.attrs.f("alpha"), beta = c.node.attrs.f("beta");
    auto act = ops::fused_activation(c.node);
    auto a = static_cast<const float*>(in[0]);
    auto b = static_cast<const float*>(in[1]);
    auto cc = c.has(2) ? static_cast<const float*>(in[2]) : nullptr;
    auto y = static_cast<float*>(out[0]);
    return [=] { kernels::f32_gemm__ref(g.s, alpha, a, b, beta, cc, g.c_stride_m, g.c_stride_n, act, y); };
  };
  op.macs = [](const OpContext& c, const std::vector<TensorInfo>&) {
    auto g = gemm_geometry(c);
    return int64_t(g.s.m) * g.s.n * g.s.k;
  };
  return op;
}

// numpy matmul: rank-1 operands are promoted and the added dimension dropped again;
// leading (batch) dimensions broadcast.
struct MatMulGeometry {
  int64_t m, k, n;
  ir::Dims batch, out;
  std::vector<int64_t> a_batch_strides, b_batch_strides;  // in matrices, 0 where broadcast
};

MatMulGeometry matmul_geometry(const OpContext& c) {
  ir::Dims a = c.info(0).dims, b = c.info(1).dims;
  for (size_t i = 0; i < 2; ++i)
    if (c.info(i).dtype != ir::DType::f32)
      c.fail(std::string(ir::dtype_name(c.info(i).dtype)) + " MatMul is not supported (only float32)");
  if (a.empty() || b.empty()) c.fail("MatMul operands must have rank >= 1");
  const bool a_vec = a.size() == 1, b_vec = b.size() == 1;
  if (a_vec) a.insert(a.begin(), 1);
  if (b_vec) b.push_back(1);
  MatMulGeometry g;
  g.m = a[a.size() - 2];
  g.k = a.back();
  g.n = b.back();
  if (b[b.size() - 2] != g.k)
    c.fail("inner dimensions differ: " + ir::dims_str(c.info(0).dims) + " x " + ir::dims_str(c.info(1).dims));
  size_t ra = a.size() - 2, rb = b.size() - 2, r = std::max(ra, rb);
  g.batch.resize(r);
  g.a_batch_strides.assign(r, 0);
  g.b_batch_strides.assign(r, 0);
  int64_t sa = 1, sb = 1;
  for (size_t i = r; i-- > 0;) {
    int64_t da = i >= r - ra ? a[i - (r - ra)] : 1;
    int64_t db = i >= r - rb ? b[i - (r - rb)] : 1;
    if (da != db && da != 1 && db != 1)
      c.fail("batch dimensions of " + ir::dims_str(c.info(0).dims) + " and " + ir::dims_str(c.info(1).dims) +
             " do not broadcast");
    g.batch[i] = std::max(da, db);
    g.a_batch_strides[i] = da == 1 ? 0 : sa;
    g.b_batch_strides[i] = db == 1 ? 0 : sb;
    sa *= da;
    sb *= db;
  }
  g.out = g.batch;
  if (!a_vec) g.out.push_back(g.m);
  if (!b_vec) g.out.push_back(g.n);
  return g;
}

OpImpl matmul_op() {
  OpImpl op;
  op.want_layout = want_row_major;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    return {{ir::DType::f32, matmul_geometry(c).out, Layout::row_major}};
  };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    auto g = matmul_geometry(c);
    kernels::GemmShape s;
    s.m = int(g.m); s.n = int(g.n); s.k = int(g.k);
    auto a = static_cast<const float*>(in[0]);
    auto b = static_cast<const float*>(in[1]);
    auto y = static_cast<float*>(out[0]);
    return [=] {
      const int64_t batches = ir::element_count(g.batch);
      for (int64_t bi = 0; bi < batches; ++bi) {
        int64_t rem = bi, oa = 0, ob = 0;
        for (size_t d = g.batch.size(); d-- > 0;) {
          int64_t idx = rem % g.batch[d];
          rem /= g.batch[d];
          oa += idx * g.a_batch_strides[d];
          ob += idx * g.b_batch_strides[d];
        }
        kernels::f32_gemm__ref(s, 1.0f, a + oa * g.m * g.k, b + ob * g.k * g.n, 0.0f, nullptr, 0, 0, {},
                               y + bi * g.m * g.n);
      }
    };
  };
  op.macs = [](const OpContext& c, const std::vector<TensorInfo>&) {
    auto g = matmul_geometry(c);
    return ir::element_count(g.batch) * g.m * g.n * g.k;
  };
  return op;
}

}  // namespace

void register_gemm_ops(OpTable& t) {
  t.emplace_back("Gemm", gemm_op());
  t.emplace_back("MatMul", matmul_op());
}

}  // namespace octet
