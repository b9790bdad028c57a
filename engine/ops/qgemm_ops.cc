// QLinearMatMul and MatMulInteger (ONNX opset 10/21) and com.microsoft QGemm in integers on
// row-major operands: the scalar INT8 reference kernels (kernels/ref/qgemm.h) behind the
// planner. Bit-exact with ONNX Runtime: int32 accumulation, then MLAS's requantization or,
// for QGemm without an output scale, MLAS's float scaling (docs/requantization.md 5, 6).

// Quantization parameters and QGemm's float output are computed here; keep every float
// step as written.
#include "engine/ops/batch_use.h"
#include "kernels/ref/fp_contract_off.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "engine/ops/gemm_geometry.h"
#include "engine/ops/qparams.h"
#include "kernels/fallback.h"
#include "kernels/gemm/q8_gemm.h"
#include "kernels/gemm/q8_matmul.h"
#include "kernels/ref/qgemm.h"

namespace octet {
namespace {

using ir::DType;

// ---- Per-row / per-column parameters of a batched matmul

// Where one batch's values of a scale or zero point are: one value for every matrix
// (per tensor), or one per row of A ([M] or [..., M, 1]) / per column of B ([N] or
// [..., 1, N]), whose leading dimensions broadcast against the batch.
struct MatrixParam {
  int64_t size = 1;                    // values per matrix: 1, M or N
  std::vector<int64_t> batch_strides;  // in matrices; empty when every batch shares them

  // Batch bi's values out of all of them.
  template <class T>
  std::span<const T> of(const std::vector<T>& values, const ops::MatMulGeometry& g, int64_t bi) const {
    const int64_t offset = batch_strides.empty() ? 0 : g.matrix_index(bi, batch_strides) * size;
    return std::span<const T>(values).subspan(size_t(offset), size_t(size));
  }
};

// rows: a parameter of A (per row); otherwise of B (per column).
MatrixParam matrix_param(const OpContext& c, size_t i, const char* what, const ops::MatMulGeometry& g, bool rows) {
  MatrixParam p;
  if (!c.has(i)) return p;
  const ir::Dims& d = c.info(i).dims;
  if (c.info(i).count() == 1) return p;
  const int64_t extent = rows ? g.m : g.n;
  const char* shape = rows ? "[M] or [..., M, 1]" : "[N] or [..., 1, N]";
  auto bad = [&] {
    c.fail(std::string(what) + " " + ir::dims_str(d) + " is neither a scalar nor " +
           (rows ? "per row " : "per column ") + shape + " with " + (rows ? "M = " : "N = ") +
           std::to_string(extent));
  };
  p.size = extent;
  if (d.size() == 1) {
    if (d[0] != extent) bad();
    return p;
  }
  const int64_t inner = rows ? d[d.size() - 2] : d.back(), unit = rows ? d.back() : d[d.size() - 2];
  if (inner != extent || unit != 1) bad();
  const ir::Dims lead(d.begin(), d.end() - 2);
  if (lead.size() > g.batch.size()) bad();
  for (size_t k = 0; k < lead.size(); ++k)
    if (lead[k] != 1 && lead[k] != g.batch[g.batch.size() - lead.size() + k]) bad();
  p.batch_strides = g.strides_for(lead);
  return p;
}

// A zero point must have its tensor's element type; its shape is matrix_param's business.
void require_zero_point_type(const OpContext& c, size_t zp, size_t tensor, const char* what) {
  if (c.has(zp) && c.info(zp).dtype != c.info(tensor).dtype)
    c.fail(std::string(what) + " is " + ir::dtype_name(c.info(zp).dtype) + "; it must have the type of its tensor (" +
           ir::dtype_name(c.info(tensor).dtype) + ")");
}

kernels::GemmShape matmul_shape(const ops::MatMulGeometry& g) {
  kernels::GemmShape s;
  s.m = int(g.m);
  s.n = int(g.n);
  s.k = int(g.k);
  return s;
}

// ---- The SIMD path of both: kernels::Q8MatMul

// A and B on Q8MatMul, one product per batch (B packed per run), or one product of every
// batch's rows when B is a constant matrix shared by all of them. a_zero_point / b_zero_point:
// one value / 1 or n values, constants; rq nullptr for the int32 output. An empty Kernel when
// the driver declines (reported).
Kernel fast_matmul(const OpContext& c, std::span<const void* const> in, const ops::MatMulGeometry& g, size_t a_in,
                   size_t b_in, int32_t a_zero_point, const std::vector<int32_t>& b_zero_point,
                   const kernels::Requantization* rq, DType ty, void* y) {
  const auto ta = ops::q8_tag(c.info(a_in).dtype), tb = ops::q8_tag(c.info(b_in).dtype);
  const auto yt = rq != nullptr ? ops::q8_tag(ty) : ta;
  if (!ta || !tb || !yt) return {};
  const bool b_batched = std::any_of(g.b_batch_strides.begin(), g.b_batch_strides.end(), [](int64_t s) { return s != 0; });
  // B shared by every batch: A's batches are all its own, consecutive, so one product takes them.
  const bool one_product = c.in_const[b_in] != nullptr && !b_batched;
  const int64_t rows = one_product ? g.batches() * g.m : g.m;
  const auto fast = kernels::make_fast<kernels::Q8MatMul>(g.k, g.n, *ta, a_zero_point, *tb,
                                                          one_product ? in[b_in] : nullptr, b_zero_point, rq, *yt, rows,
                                                          c.isa, c.packed_cache);
  if (!fast) return c.no_fast_kernel(fast.why_not);
  const std::shared_ptr<kernels::Q8MatMul> mm = fast.driver;
  c.report_kernel(mm->kernel_id() + (mm->corrected() ? " (B zero point by row sums)" : "") +
                  (one_product ? "" : " (B packed per run)"));
  const auto* a = static_cast<const uint8_t*>(in[a_in]);
  const auto* b = static_cast<const uint8_t*>(in[b_in]);
  auto* out = static_cast<uint8_t*>(y);
  const size_t y_bytes = rq != nullptr ? 1 : sizeof(int32_t);
  pthreadpool_t pool = c.threadpool;
  if (one_product) return [mm, rows, a, out, pool] { mm->run(rows, a, out, pool); };
  return [mm, g, a, b, out, y_bytes, pool] {
    const uint8_t* packed = nullptr;
    for (int64_t bi = 0; bi < g.batches(); ++bi) {
      const uint8_t* bb = b + g.matrix_index(bi, g.b_batch_strides) * g.k * g.n;
      if (bb != packed) mm->pack(packed = bb);
      mm->run(g.m, a + g.matrix_index(bi, g.a_batch_strides) * g.m * g.k, out + bi * g.m * g.n * int64_t(y_bytes),
              pool);
    }
  };
}

// Why the SIMD path cannot take these parameters, or "" when it can: everything constant, A's
// per tensor, B's one per matrix or per column (no batch of them).
std::string matmul_params_unsupported(const OpContext& c, std::initializer_list<size_t> params,
                                      std::initializer_list<const MatrixParam*> a_params,
                                      std::initializer_list<const MatrixParam*> b_params) {
  if (c.isa == kernels::Isa::scalar) return "--isa scalar";
  for (size_t i : params)
    if (c.has(i) && c.in_const[i] == nullptr) return "quantization parameters known only at run time";
  for (const MatrixParam* p : a_params)
    if (p->size != 1) return "per-row A parameters";
  for (const MatrixParam* p : b_params)
    if (!p->batch_strides.empty()) return "B parameters that vary over the batch";
  return "";
}

// The SIMD path runs only the type combinations the reference does (ops::q8_req_type_list()).
bool has_reference(DType ta, DType tb, DType ty) {
  return static_cast<bool>(ops::visit_q8_req_types(ta, tb, ty, [](auto, auto, auto) -> Kernel { return [] {}; }));
}

// ---- QLinearMatMul: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point

enum QLinearMatMulInput : size_t { kA, kAScale, kAZeroPoint, kB, kBScale, kBZeroPoint, kYScale, kYZeroPoint };

struct QMatMulGeometry {
  ops::MatMulGeometry g;
  MatrixParam a_scale, a_zero_point, b_scale, b_zero_point;
};

QMatMulGeometry qlinearmatmul_geometry(const OpContext& c) {
  QMatMulGeometry q{ops::matmul_geometry(c, kA, kB), {}, {}, {}, {}};
  ops::require_q8(c, kA, "a");
  ops::require_q8(c, kB, "b");
  for (size_t i : {kAScale, kBScale, kYScale})
    if (c.info(i).dtype != DType::f32) c.fail("the scales must be float32");
  require_zero_point_type(c, kAZeroPoint, kA, "a_zero_point");
  require_zero_point_type(c, kBZeroPoint, kB, "b_zero_point");
  q.a_scale = matrix_param(c, kAScale, "a_scale", q.g, true);
  q.a_zero_point = matrix_param(c, kAZeroPoint, "a_zero_point", q.g, true);
  q.b_scale = matrix_param(c, kBScale, "b_scale", q.g, false);
  q.b_zero_point = matrix_param(c, kBZeroPoint, "b_zero_point", q.g, false);
  ops::require_scale(c, kYScale, "y_scale");
  ops::quantized_output_type(c, kYZeroPoint);
  return q;
}

struct QMatMulParams {
  std::vector<float> a_scale, b_scale;
  std::vector<int32_t> a_zero_point, b_zero_point;
  float y_scale = 1;
  int32_t y_zero_point = 0;
};

Kernel build_qlinearmatmul(const OpContext& c, std::span<const void* const> in, std::span<void* const> out) {
  const QMatMulGeometry q = qlinearmatmul_geometry(c);
  const kernels::GemmShape s = matmul_shape(q.g);
  const void* a = in[kA];
  const void* b = in[kB];
  void* y = out[0];
  const DType ta = c.info(kA).dtype, tb = c.info(kB).dtype, ty = ops::quantized_output_type(c, kYZeroPoint);
  const std::string why_not =
      matmul_params_unsupported(c, {kAScale, kAZeroPoint, kBScale, kBZeroPoint, kYScale, kYZeroPoint},
                                {&q.a_scale, &q.a_zero_point}, {&q.b_scale, &q.b_zero_point});
  if (!why_not.empty()) {
    c.report_fallback(why_not);
  } else if (const auto yt = ops::q8_tag(ty); yt && has_reference(ta, tb, ty)) {
    const ops::ParamInputs p(c, in);
    // The reference's multiplier, (a_scale * b_scale[j]) / y_scale, per column of B.
    std::vector<float> multiplier;
    for (float b_scale : p[kBScale].floats())
      multiplier.push_back(kernels::requant_multiplier(p[kAScale].scalar(), b_scale, p[kYScale].scalar()));
    const kernels::Requantization rq{multiplier, p[kYZeroPoint].int_scalar(), kernels::q8_min(*yt),
                                     kernels::q8_max(*yt)};
    if (Kernel fast = fast_matmul(c, in, q.g, kA, kB, p[kAZeroPoint].int_scalar(), p[kBZeroPoint].ints(), &rq, ty, y))
      return fast;
  }
  c.report_kernel(kernels::reference_kernel("q8_qlinear_matmul__ref"));
  Kernel k = ops::visit_q8_req_types(ta, tb, ty, [&](auto ta_tag, auto tb_tag, auto ty_tag) -> Kernel {
    using TA = decltype(ta_tag);
    using TB = decltype(tb_tag);
    using TY = decltype(ty_tag);
    return ops::with_params(
        c, in, {kAScale, kAZeroPoint, kBScale, kBZeroPoint, kYScale, kYZeroPoint},
        [](const ops::ParamInputs& p) {
          return QMatMulParams{p[kAScale].floats(), p[kBScale].floats(), p[kAZeroPoint].ints(),
                               p[kBZeroPoint].ints(), p[kYScale].scalar(), p[kYZeroPoint].int_scalar()};
        },
        [=](const QMatMulParams& p) {
          const ops::MatMulGeometry& g = q.g;
          for (int64_t bi = 0; bi < g.batches(); ++bi) {
            const TA* ab = static_cast<const TA*>(a) + g.matrix_index(bi, g.a_batch_strides) * g.m * g.k;
            const TB* bb = static_cast<const TB*>(b) + g.matrix_index(bi, g.b_batch_strides) * g.k * g.n;
            kernels::q8_qlinear_matmul__ref(
                s, ab, q.a_scale.of(p.a_scale, g, bi), q.a_zero_point.of(p.a_zero_point, g, bi), bb,
                q.b_scale.of(p.b_scale, g, bi), q.b_zero_point.of(p.b_zero_point, g, bi), p.y_scale,
                p.y_zero_point, static_cast<TY*>(y) + bi * g.m * g.n);
          }
        });
  });
  if (!k)
    c.fail(std::string("a ") + ir::dtype_name(ta) + ", b " + ir::dtype_name(tb) + ", y " + ir::dtype_name(ty) +
           " is not supported; octet runs " + ops::q8_req_type_list());
  return k;
}

// ---- MatMulInteger: A, B, [a_zero_point], [b_zero_point] -> int32

enum MatMulIntegerInput : size_t { kIntA, kIntB, kIntAZeroPoint, kIntBZeroPoint };

struct IntMatMulGeometry {
  ops::MatMulGeometry g;
  MatrixParam a_zero_point, b_zero_point;
};

IntMatMulGeometry matmulinteger_geometry(const OpContext& c) {
  IntMatMulGeometry q{ops::matmul_geometry(c, kIntA, kIntB), {}, {}};
  ops::require_q8(c, kIntA, "A");
  ops::require_q8(c, kIntB, "B");
  require_zero_point_type(c, kIntAZeroPoint, kIntA, "a_zero_point");
  require_zero_point_type(c, kIntBZeroPoint, kIntB, "b_zero_point");
  q.a_zero_point = matrix_param(c, kIntAZeroPoint, "a_zero_point", q.g, true);
  q.b_zero_point = matrix_param(c, kIntBZeroPoint, "b_zero_point", q.g, false);
  return q;
}

struct IntMatMulParams {
  std::vector<int32_t> a_zero_point, b_zero_point;
};

Kernel build_matmulinteger(const OpContext& c, std::span<const void* const> in, std::span<void* const> out) {
  const IntMatMulGeometry q = matmulinteger_geometry(c);
  const kernels::GemmShape s = matmul_shape(q.g);
  const void* a = in[kIntA];
  const void* b = in[kIntB];
  auto* y = static_cast<int32_t*>(out[0]);
  const DType ta = c.info(kIntA).dtype, tb = c.info(kIntB).dtype;
  const std::string why_not = matmul_params_unsupported(c, {kIntAZeroPoint, kIntBZeroPoint}, {&q.a_zero_point},
                                                        {&q.b_zero_point});
  if (!why_not.empty()) {
    c.report_fallback(why_not);
  } else {
    const ops::ParamInputs p(c, in);
    if (Kernel fast = fast_matmul(c, in, q.g, kIntA, kIntB, p[kIntAZeroPoint].int_scalar(), p[kIntBZeroPoint].ints(),
                                  nullptr, DType::s32, y))
      return fast;
  }
  c.report_kernel(kernels::reference_kernel("q8_gemm_int32__ref"));
  Kernel k = ops::visit_q8_acc_types(ta, tb, [&](auto ta_tag, auto tb_tag) -> Kernel {
    using TA = decltype(ta_tag);
    using TB = decltype(tb_tag);
    // The zero points may come from a DynamicQuantizeLinear, i.e. only at run time.
    return ops::with_params(
        c, in, {kIntAZeroPoint, kIntBZeroPoint},
        [](const ops::ParamInputs& p) {
          return IntMatMulParams{p[kIntAZeroPoint].ints(), p[kIntBZeroPoint].ints()};
        },
        [=](const IntMatMulParams& p) {
          const ops::MatMulGeometry& g = q.g;
          for (int64_t bi = 0; bi < g.batches(); ++bi) {
            const TA* ab = static_cast<const TA*>(a) + g.matrix_index(bi, g.a_batch_strides) * g.m * g.k;
            const TB* bb = static_cast<const TB*>(b) + g.matrix_index(bi, g.b_batch_strides) * g.k * g.n;
            kernels::q8_gemm_int32__ref(s, ab, q.a_zero_point.of(p.a_zero_point, g, bi), bb,
                                        q.b_zero_point.of(p.b_zero_point, g, bi), nullptr, 0, 0, y + bi * g.m * g.n);
          }
        });
  });
  if (!k) c.fail(std::string("A ") + ir::dtype_name(ta) + " with B " + ir::dtype_name(tb) + " is not supported");
  return k;
}

// ---- QGemm (com.microsoft): A, a_scale, a_zero_point, B, b_scale, b_zero_point, [C],
// [y_scale, y_zero_point]; attributes alpha, transA, transB

enum QGemmInput : size_t { kGA, kGAScale, kGAZeroPoint, kGB, kGBScale, kGBZeroPoint, kGC, kGYScale, kGYZeroPoint };

bool qgemm_quantized_output(const OpContext& c) {
  if (c.has(kGYScale) != c.has(kGYZeroPoint))
    c.fail("y_scale and y_zero_point must be given together (quantized output) or both omitted (float output)");
  return c.has(kGYScale);
}

ops::GemmGeometry qgemm_geometry(const OpContext& c) {
  ops::GemmGeometry g = ops::gemm_geometry(c, kGA, kGB, kGC);
  ops::require_q8(c, kGA, "A");
  ops::require_q8(c, kGB, "B");
  ops::require_scale(c, kGAScale, "a_scale");
  ops::require_zero_point(c, kGAZeroPoint, "a_zero_point", c.info(kGA).dtype);
  ops::require_scale(c, kGBScale, "b_scale", g.s.n);
  ops::require_zero_point(c, kGBZeroPoint, "b_zero_point", c.info(kGB).dtype, g.s.n);
  if (c.has(kGC) && c.info(kGC).dtype != DType::s32)
    c.fail(std::string("C must be int32, got ") + ir::dtype_name(c.info(kGC).dtype));
  if (qgemm_quantized_output(c)) {
    ops::require_scale(c, kGYScale, "y_scale");
    ops::quantized_output_type(c, kGYZeroPoint);
  }
  return g;
}

DType qgemm_output_type(const OpContext& c) {
  return qgemm_quantized_output(c) ? ops::quantized_output_type(c, kGYZeroPoint) : DType::f32;
}

struct QGemmParams {
  int32_t a_zero_point = 0;
  std::vector<int32_t> b_zero_point;
  // Quantized output: (alpha * a_scale * b_scale[j]) / y_scale; float output: without / y_scale.
  std::vector<float> scale;
  int32_t y_zero_point = 0;
};

QGemmParams derive_qgemm_params(float alpha, bool quantized, const ops::ParamInputs& p) {
  QGemmParams q;
  q.a_zero_point = p[kGAZeroPoint].int_scalar();
  q.b_zero_point = p[kGBZeroPoint].ints();
  // ORT's order: (alpha * a_scale) * b_scale[j], then / y_scale.
  const float alpha_a = alpha * p[kGAScale].scalar();
  for (float b_scale : p[kGBScale].floats())
    q.scale.push_back(quantized ? kernels::requant_multiplier(alpha_a, b_scale, p[kGYScale].scalar())
                                : alpha_a * b_scale);
  if (quantized) q.y_zero_point = p[kGYZeroPoint].int_scalar();
  return q;
}

// A fully connected QGemm on the SIMD kernels: everything but A known at plan time, A not
// transposed, B s8 with zero point 0, C absent or a bias row. An empty Kernel otherwise.
Kernel fast_qgemm(const OpContext& c, std::span<const void* const> in, const ops::GemmGeometry& g, float alpha,
                  void* y) {
  if (c.isa == kernels::Isa::scalar) return c.no_fast_kernel("--isa scalar");
  if (g.s.trans_a) return c.no_fast_kernel("transA");
  if (c.info(kGB).dtype != DType::s8) return c.no_fast_kernel("uint8 B (the SIMD kernels take int8 weights)");
  for (size_t i : {kGAScale, kGAZeroPoint, kGB, kGBScale, kGBZeroPoint, kGYScale, kGYZeroPoint})
    if (!c.has(i) || c.in_const[i] == nullptr) return c.no_fast_kernel("B or quantization parameters not constant");
  if (c.has(kGC) && (c.in_const[kGC] == nullptr || g.c_stride_m != 0 || g.c_stride_n != 1))
    return c.no_fast_kernel("C is not a constant row");
  if (g.s.lda != g.s.k || g.s.ldb != (g.s.trans_b ? g.s.k : g.s.n)) return c.no_fast_kernel("strided A or B");
  const auto ta = ops::q8_tag(c.info(kGA).dtype), ty = ops::q8_tag(ops::quantized_output_type(c, kGYZeroPoint));
  if (!ta || !ty) return {};
  const QGemmParams p = derive_qgemm_params(alpha, true, ops::ParamInputs(c, in));
  for (int32_t zp : p.b_zero_point)
    if (zp != 0) return c.no_fast_kernel("B zero point != 0 (the SIMD kernels take symmetric int8 weights)");
  const kernels::Requantization rq{p.scale, p.y_zero_point, kernels::q8_min(*ty), kernels::q8_max(*ty)};
  const auto* bias = c.has(kGC) ? static_cast<const int32_t*>(in[kGC]) : nullptr;
  const auto fast = kernels::make_fast<kernels::Q8Gemm>(g.s.k, g.s.n, *ta, p.a_zero_point,
                                                         static_cast<const int8_t*>(in[kGB]), g.s.trans_b, bias, rq,
                                                         *ty, c.isa, c.packed_cache);
  if (!fast) return c.no_fast_kernel(fast.why_not);
  const std::shared_ptr<kernels::Q8Gemm> gemm = fast.driver;
  c.report_kernel(gemm->kernel_id());
  const void* a = in[kGA];
  const int64_t m = g.s.m;
  pthreadpool_t pool = c.threadpool;
  return [gemm, m, a, y, pool] { gemm->run(m, a, y, pool); };
}

Kernel build_qgemm(const OpContext& c, std::span<const void* const> in, std::span<void* const> out) {
  const ops::GemmGeometry g = qgemm_geometry(c);
  const float alpha = c.node.attrs.f("alpha", 1.0f);
  const bool quantized = qgemm_quantized_output(c);
  const void* a = in[kGA];
  const void* b = in[kGB];
  const auto* cc = c.has(kGC) ? static_cast<const int32_t*>(in[kGC]) : nullptr;
  void* y = out[0];
  const DType ta = c.info(kGA).dtype, tb = c.info(kGB).dtype;
  const std::initializer_list<size_t> params = {kGAScale, kGAZeroPoint, kGBScale, kGBZeroPoint, kGYScale, kGYZeroPoint};
  auto derive = [alpha, quantized](const ops::ParamInputs& p) { return derive_qgemm_params(alpha, quantized, p); };
  Kernel k;
  if (quantized) {
    if (Kernel fast = fast_qgemm(c, in, g, alpha, y)) return fast;
    c.report_kernel(kernels::reference_kernel("q8_gemm__ref"));
    const DType ty = ops::quantized_output_type(c, kGYZeroPoint);
    k = ops::visit_q8_req_types(ta, tb, ty, [&](auto ta_tag, auto tb_tag, auto ty_tag) -> Kernel {
      using TA = decltype(ta_tag);
      using TB = decltype(tb_tag);
      using TY = decltype(ty_tag);
      return ops::with_params(c, in, params, derive, [=](const QGemmParams& p) {
        const auto rq = kernels::full_range_requantization<TY>(p.scale, p.y_zero_point);
        kernels::q8_gemm__ref(g.s, static_cast<const TA*>(a), p.a_zero_point, static_cast<const TB*>(b),
                              p.b_zero_point, cc, g.c_stride_m, g.c_stride_n, rq, static_cast<TY*>(y));
      });
    });
    if (!k)
      c.fail(std::string("A ") + ir::dtype_name(ta) + ", B " + ir::dtype_name(tb) + ", Y " + ir::dtype_name(ty) +
             " is not supported; octet runs " + ops::q8_req_type_list());
    return k;
  }
  k = ops::visit_q8_acc_types(ta, tb, [&](auto ta_tag, auto tb_tag) -> Kernel {
    using TA = decltype(ta_tag);
    using TB = decltype(tb_tag);
    return ops::with_params(c, in, params, derive, [=](const QGemmParams& p) {
      // The int32 accumulators (C included) go into the output buffer, then each becomes
      // float(acc) * scale[j] in place, as MLAS's scale output processor does.
      const int32_t za[] = {p.a_zero_point};
      kernels::q8_gemm_int32__ref(g.s, static_cast<const TA*>(a), za, static_cast<const TB*>(b), p.b_zero_point, cc,
                                  g.c_stride_m, g.c_stride_n, static_cast<int32_t*>(y));
      auto* bytes = static_cast<std::byte*>(y);
      for (int64_t i = 0; i < int64_t(g.s.m); ++i) {
        for (int64_t j = 0; j < int64_t(g.s.n); ++j) {
          std::byte* e = bytes + (i * g.s.n + j) * 4;
          int32_t acc;
          std::memcpy(&acc, e, 4);
          const float v = static_cast<float>(acc) * p.scale[p.scale.size() == 1 ? 0 : size_t(j)];
          std::memcpy(e, &v, 4);
        }
      }
    });
  });
  if (!k) c.fail(std::string("A ") + ir::dtype_name(ta) + " with B " + ir::dtype_name(tb) + " is not supported");
  return k;
}

}  // namespace

void register_qgemm_ops(OpTable& t) {
  OpImpl qmatmul;
  qmatmul.want_layout = want_row_major;
  qmatmul.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    return {{ops::quantized_output_type(c, kYZeroPoint), qlinearmatmul_geometry(c).g.out, Layout::row_major}};
  };
  qmatmul.build = build_qlinearmatmul;
  qmatmul.batch_use = [](const OpContext& c, const std::vector<TensorInfo>& out) {
    return ops::matmul_per_image(c, out, kA, kB);
  };
  qmatmul.macs = [](const OpContext& c, const std::vector<TensorInfo>&) {
    auto g = ops::matmul_geometry(c, kA, kB);
    return g.batches() * g.m * g.n * g.k;
  };
  t.emplace_back("QLinearMatMul", qmatmul);

  OpImpl matmulint;
  matmulint.want_layout = want_row_major;
  matmulint.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    return {{DType::s32, matmulinteger_geometry(c).g.out, Layout::row_major}};
  };
  matmulint.build = build_matmulinteger;
  matmulint.batch_use = [](const OpContext& c, const std::vector<TensorInfo>& out) {
    return ops::matmul_per_image(c, out, kIntA, kIntB);
  };
  matmulint.macs = [](const OpContext& c, const std::vector<TensorInfo>&) {
    auto g = ops::matmul_geometry(c, kIntA, kIntB);
    return g.batches() * g.m * g.n * g.k;
  };
  t.emplace_back("MatMulInteger", matmulint);

  OpImpl qgemm;
  qgemm.want_layout = want_row_major;
  qgemm.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    const ops::GemmGeometry g = qgemm_geometry(c);
    return {{qgemm_output_type(c), {g.s.m, g.s.n}, Layout::row_major}};
  };
  qgemm.build = build_qgemm;
  qgemm.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) {
    return ops::gemm_per_image(c, kGA, kGC, c.node.attrs.i("transA", 0) != 0);
  };
  qgemm.macs = [](const OpContext& c, const std::vector<TensorInfo>&) {
    const auto g = ops::gemm_geometry(c, kGA, kGB, kGC);
    return int64_t(g.s.m) * g.s.n * g.s.k;
  };
  t.emplace_back("QGemm", qgemm);
}

}  // namespace octet
