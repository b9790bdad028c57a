// Gemm and MatMul (FP32) on row-major operands.
#include <memory>
#include <vector>

#include "engine/ops/batch_use.h"
#include "engine/ops/fused_activation.h"
#include "engine/ops/gemm_geometry.h"
#include "kernels/fallback.h"
#include "kernels/gemm/f32_batched_gemm.h"
#include "kernels/gemm/f32_gemm.h"
#include "kernels/ref/gemm.h"

namespace octet {
namespace {

ops::GemmGeometry gemm_geometry(const OpContext& c) {
  for (size_t i = 0; i < 3; ++i)
    if (c.has(i) && c.info(i).dtype != ir::DType::f32)
      c.fail(std::string(ir::dtype_name(c.info(i).dtype)) + " Gemm is not supported (only float32)");
  return ops::gemm_geometry(c, 0, 1, 2);
}

// Where Gemm's beta · C comes from (CSource): absent; a bias row (C constant along M, scaled at
// build time and started from by the microkernel); a residual [m][n] added in each tile's
// epilogue before the activation, either C itself (run-time [M, N], beta 1), a broadcast copy
// scaled at build time (constant C), or one scaled into the step's scratch at each run
// (run-time C of another shape or beta). ORT adds beta · C, rounded, to alpha · A·B the same way.
enum class CSource { none, bias_row, residual_as_is, residual_const, residual_per_run };

CSource c_source(const OpContext& c, const ops::GemmGeometry& g, float beta) {
  if (!c.has(2)) return CSource::none;
  if (c.in_const[2] != nullptr) return g.c_stride_m == 0 ? CSource::bias_row : CSource::residual_const;
  if (beta == 1.0f && g.c_stride_m == g.s.n && g.c_stride_n == 1) return CSource::residual_as_is;
  return CSource::residual_per_run;
}

size_t gemm_scratch_floats(const OpContext& c, const ops::GemmGeometry& g, float beta) {
  if (c.isa == kernels::Isa::scalar) return 0;
  size_t floats = g.s.trans_a ? size_t(g.s.m) * size_t(g.s.k) : 0;
  if (c_source(c, g, beta) == CSource::residual_per_run) floats += size_t(g.s.m) * size_t(g.s.n);
  return floats;
}

// The SIMD GEMM: B a constant (packed once, alpha folded into the packed weights; a pack is
// keyed by its contents, so the scaled copy need not outlive the driver) or an input (packed at
// each run by F32BatchedGemm, alpha folded as it packs); beta · C as CSource says. A transposed
// A is copied to [m][k] in the step's scratch on each run, O(m k) beside the GEMM's O(m k n).
Kernel fast_gemm(const OpContext& c, const ops::GemmGeometry& g, float alpha, float beta, const kernels::Activation& act,
                 const float* a, const float* b, const float* cc, float* y) {
  if (c.isa == kernels::Isa::scalar) return c.no_fast_kernel("--isa scalar");
  const int64_t m = g.s.m, k = g.s.k, n = g.s.n;
  const int64_t lda = g.s.lda != 0 ? g.s.lda : (g.s.trans_a ? m : k);
  if (g.s.ldb != (g.s.trans_b ? g.s.k : g.s.n) || (!g.s.trans_a && lda != k)) return c.no_fast_kernel("strided A or B");
  if (c.scratch_size < gemm_scratch_floats(c, g, beta) * sizeof(float)) return c.no_fast_kernel("no scratch");
  const CSource source = c_source(c, g, beta);
  const int64_t csm = g.c_stride_m, csn = g.c_stride_n;
  std::vector<float> bias;
  std::shared_ptr<std::vector<float>> residual_const;
  if (source == CSource::bias_row)
    for (int64_t j = 0; j < n; ++j) bias.push_back(beta * cc[j * csn]);
  if (source == CSource::residual_const) {
    residual_const = std::make_shared<std::vector<float>>(size_t(m) * size_t(n));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) (*residual_const)[size_t(i * n + j)] = beta * cc[i * csm + j * csn];
  }
  float* rows = g.s.trans_a ? static_cast<float*>(c.scratch) : nullptr;
  float* residual_scratch =
      source == CSource::residual_per_run ? static_cast<float*>(c.scratch) + (g.s.trans_a ? m * k : 0) : nullptr;
  const float* residual = source == CSource::residual_as_is ? cc
                          : residual_const                  ? residual_const->data()
                                                            : residual_scratch;
  // Per run, before the product: A transposed into rows, beta · C broadcast into the scratch.
  const auto prepare = [=](const float* c_now) {
    if (rows)
      for (int64_t p = 0; p < k; ++p)
        for (int64_t i = 0; i < m; ++i) rows[i * k + p] = a[p * lda + i];
    if (residual_scratch)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) residual_scratch[i * n + j] = beta * c_now[i * csm + j * csn];
  };
  const float* a_rows = rows ? rows : a;
  pthreadpool_t pool = c.threadpool;
  if (c.in_const[1] == nullptr) {
    const auto fast = kernels::make_fast<kernels::F32BatchedGemm>(m, k, n, c.isa, g.s.trans_b, act);
    if (!fast) return c.no_fast_kernel(fast.why_not);
    const std::shared_ptr<kernels::F32BatchedGemm> gemm = fast.driver;
    c.report_kernel(gemm->kernel_id());
    auto bias_row = std::make_shared<std::vector<float>>(std::move(bias));
    return [=, keep = residual_const] {
      prepare(cc);
      gemm->run(a_rows, b, y, pool, {alpha, bias_row->empty() ? nullptr : bias_row->data(), residual});
    };
  }
  std::vector<float> scaled_b;
  if (alpha != 1.0f) {
    scaled_b.assign(b, b + size_t(k) * size_t(n));
    for (float& w : scaled_b) w *= alpha;
    b = scaled_b.data();
  }
  const auto fast = kernels::make_fast<kernels::F32Gemm>(k, n, b, g.s.trans_b, bias.empty() ? nullptr : bias.data(),
                                                          act, c.isa, c.packed_cache);
  if (!fast) return c.no_fast_kernel(fast.why_not);
  const std::shared_ptr<kernels::F32Gemm> gemm = fast.driver;
  c.report_kernel(gemm->kernel_id());
  return [=, keep = residual_const] {  // keep: the constant residual outlives the build
    prepare(cc);
    gemm->run(m, a_rows, y, pool, residual);
  };
}

OpImpl gemm_op() {
  OpImpl op;
  op.want_layout = want_row_major;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    auto g = gemm_geometry(c);
    return {{ir::DType::f32, {g.s.m, g.s.n}, Layout::row_major}};
  };
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) {
    return ops::gemm_per_image(c, 0, 2, c.node.attrs.i("transA", 0) != 0);
  };
  // A transposed A ([m][k]) and a run-time beta · C ([m][n]) for the SIMD GEMM (fast_gemm).
  op.scratch_bytes = [](const OpContext& c, const std::vector<TensorInfo>&) -> size_t {
    return gemm_scratch_floats(c, gemm_geometry(c), c.node.attrs.f("beta")) * sizeof(float);
  };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    auto g = gemm_geometry(c);
    float alpha = c.node.attrs.f("alpha"), beta = c.node.attrs.f("beta");
    auto act = ops::fused_activation(c.node);
    auto a = static_cast<const float*>(in[0]);
    auto b = static_cast<const float*>(in[1]);
    auto cc = c.has(2) ? static_cast<const float*>(in[2]) : nullptr;
    auto y = static_cast<float*>(out[0]);
    if (Kernel fast = fast_gemm(c, g, alpha, beta, act, a, b, cc, y)) return fast;
    c.report_kernel(kernels::reference_kernel("f32_gemm__ref"));
    return [=] { kernels::f32_gemm__ref(g.s, alpha, a, b, beta, cc, g.c_stride_m, g.c_stride_n, act, y); };
  };
  op.macs = [](const OpContext& c, const std::vector<TensorInfo>&) {
    auto g = gemm_geometry(c);
    return int64_t(g.s.m) * g.s.n * g.s.k;
  };
  return op;
}

// MatMul of any A by a constant B of rank 1 or 2: one GEMM over every row of A, on the SIMD
// kernels, with the fused bias and activation in its epilogue; an empty Kernel otherwise. A 1-D
// operand is already [1, k] or [k, 1] in the geometry, the same bytes.
Kernel fast_matmul(const OpContext& c, const ops::MatMulGeometry& g, const kernels::Activation& act, const float* bias,
                   const float* a, const float* b, float* y) {
  if (c.isa == kernels::Isa::scalar) return c.no_fast_kernel("--isa scalar");
  if (c.in_const[1] == nullptr || c.info(1).dims.size() > 2) return c.no_fast_kernel("B is not a 1-D or 2-D constant");
  const auto fast = kernels::make_fast<kernels::F32Gemm>(int(g.k), int(g.n), b, false, bias, act, c.isa,
                                                          c.packed_cache);
  if (!fast) return c.no_fast_kernel(fast.why_not);
  const std::shared_ptr<kernels::F32Gemm> gemm = fast.driver;
  c.report_kernel(gemm->kernel_id());
  pthreadpool_t pool = c.threadpool;
  const int64_t m = g.batches() * g.m;
  return [gemm, m, a, y, pool] { gemm->run(m, a, y, pool); };
}

// MatMul whose B is an activation (or a constant of rank 3 and more): one SIMD GEMM per matrix
// of the batch (a 1-D operand broadcast to every one), B packed at each run with the fused bias
// row and activation in the tiles' epilogue; an empty Kernel otherwise.
Kernel batched_matmul(const OpContext& c, const ops::MatMulGeometry& g, const kernels::Activation& act,
                      const float* bias, const float* a, const float* b, float* y) {
  if (c.isa == kernels::Isa::scalar) return c.no_fast_kernel("--isa scalar");
  const auto fast = kernels::make_fast<kernels::F32BatchedGemm>(g.m, g.k, g.n, c.isa, false, act);
  if (!fast) return c.no_fast_kernel(fast.why_not);
  const std::shared_ptr<kernels::F32BatchedGemm> gemm = fast.driver;
  c.report_kernel(gemm->kernel_id());
  c.report_fallback("");  // fast_matmul's reason no longer applies
  pthreadpool_t pool = c.threadpool;
  return [=] {
    for (int64_t bi = 0; bi < g.batches(); ++bi) {
      const int64_t oa = g.matrix_index(bi, g.a_batch_strides), ob = g.matrix_index(bi, g.b_batch_strides);
      gemm->run(a + oa * g.m * g.k, b + ob * g.k * g.n, y + bi * g.m * g.n, pool, {1.0f, bias, nullptr});
    }
  };
}

ops::MatMulGeometry matmul_geometry(const OpContext& c) {
  for (size_t i = 0; i < 2; ++i)
    if (c.info(i).dtype != ir::DType::f32)
      c.fail(std::string(ir::dtype_name(c.info(i).dtype)) + " MatMul is not supported (only float32)");
  return ops::matmul_geometry(c, 0, 1);
}

OpImpl matmul_op() {
  OpImpl op;
  op.want_layout = want_row_major;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    return {{ir::DType::f32, matmul_geometry(c).out, Layout::row_major}};
  };
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>& out) { return ops::matmul_per_image(c, out, 0, 1); };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    auto g = matmul_geometry(c);
    kernels::GemmShape s;
    s.m = int(g.m); s.n = int(g.n); s.k = int(g.k);
    auto a = static_cast<const float*>(in[0]);
    auto b = static_cast<const float*>(in[1]);
    auto y = static_cast<float*>(out[0]);
    // A third input is a bias row fused by passes::fuse_matmul_bias, with its activation.
    const auto act = ops::fused_activation(c.node);
    const float* bias = c.has(2) ? static_cast<const float*>(in[2]) : nullptr;
    if (c.has(2) && (!c.in_const[2] || c.info(2).count() != g.n)) c.fail("the fused bias must be a constant of N values");
    if (Kernel fast = fast_matmul(c, g, act, bias, a, b, y)) return fast;
    if (Kernel batched = batched_matmul(c, g, act, bias, a, b, y)) return batched;
    c.report_kernel(kernels::reference_kernel("f32_gemm__ref"));
    return [=] {
      for (int64_t bi = 0; bi < g.batches(); ++bi) {
        const int64_t oa = g.matrix_index(bi, g.a_batch_strides), ob = g.matrix_index(bi, g.b_batch_strides);
        float* yb = y + bi * g.m * g.n;
        kernels::f32_gemm__ref(s, 1.0f, a + oa * g.m * g.k, b + ob * g.k * g.n, 0.0f, nullptr, 0, 0, {}, yb);
        if (!bias && act.kind == kernels::ActKind::none) continue;
        for (int64_t r = 0; r < g.m; ++r)
          for (int64_t j = 0; j < g.n; ++j) {
            float& v = yb[r * g.n + j];
            if (bias) v += bias[j];
            v = kernels::apply(act, v);
          }
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
