// Comparisons (Equal, Greater, Less, GreaterOrEqual, LessOrEqual), logic on bools (And, Or, Xor,
// Not), IsNaN, IsInf, Sign, Mod, Shrink and the n-ary Sum, Mean, Max and Min: what detector heads and
// exporters' post-processing add around a CNN. Bools are one byte each, 0 or 1 (Where reads any
// nonzero byte as true). Float32 runs on the SIMD microkernels of
// kernels/elementwise/compare_list.h along runs of the output (the broadcast's axes merged where
// every operand steps through two as through one, so same-shape operands are one run); the other
// types on one plain loop per type over the same runs ("<type>_<op>_runs", engine/ops/typed_broadcast.h).
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <type_traits>

#include "engine/op_registry.h"
#include "engine/ops/batch_use.h"
#include "engine/ops/typed_broadcast.h"
#include "kernels/elementwise/compare_list.h"
#include "kernels/elementwise/parallel_pieces.h"
#include "kernels/ref/compare.h"

namespace octet {
// Named, so that a unity build that puts other op files in this unit does not meet these helpers.
namespace compare_ops {
namespace {

using ir::DType;

// The broadcast with its extent-1 axes dropped and each axis merged into the one before it where
// every operand steps through the pair as through one axis.
ops::TypedBroadcast merge_axes(const ops::TypedBroadcast& w) {
  ops::TypedBroadcast m;
  m.strides.resize(w.strides.size());
  for (size_t d = 0; d < w.dims.size(); ++d) {
    if (w.dims[d] == 1) continue;
    const size_t r = m.dims.size();
    bool merge = r > 0;
    for (size_t i = 0; merge && i < w.strides.size(); ++i)
      merge = m.strides[i][r - 1] == w.strides[i][d] * w.dims[d];
    if (merge) {
      m.dims[r - 1] *= w.dims[d];
      for (size_t i = 0; i < w.strides.size(); ++i) m.strides[i][r - 1] = w.strides[i][d];
    } else {
      m.dims.push_back(w.dims[d]);
      for (size_t i = 0; i < w.strides.size(); ++i) m.strides[i].push_back(w.strides[i][d]);
    }
  }
  return m;
}

std::shared_ptr<const ops::TypedBroadcast> merged_broadcast(const OpContext& c, const std::vector<size_t>& operands) {
  return std::make_shared<const ops::TypedBroadcast>(merge_axes(ops::typed_broadcast(c, operands)));
}

// The merged broadcast is one run (same-shape operands, a scalar against a tensor): its length
// and each operand's step along it, 0 or 1. Such a run is split over the thread pool.
struct OneRun {
  size_t n;
  std::vector<size_t> inc;
};
std::optional<OneRun> one_run(const ops::TypedBroadcast& w) {
  if (w.dims.size() > 1) return std::nullopt;
  OneRun r{w.dims.empty() ? 1 : size_t(w.dims[0]), {}};
  for (const auto& s : w.strides) {
    const int64_t step = w.dims.empty() ? 0 : s[0];
    if (step > 1) return std::nullopt;
    r.inc.push_back(size_t(step));
  }
  return r;
}

std::vector<size_t> all_inputs(const OpContext& c) {
  if (c.in.empty()) c.fail("needs at least one input");
  std::vector<size_t> all(c.in.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  return all;
}

void require_same_types(const OpContext& c, bool bool_ok, bool only_bool = false) {
  const DType t = c.info(0).dtype;
  for (size_t i = 0; i < c.in.size(); ++i) {
    const DType ti = c.info(i).dtype;
    if (ti != t)
      c.fail("inputs differ in type: " + std::string(ir::dtype_name(t)) + " and " + ir::dtype_name(ti));
  }
  if (only_bool && t != DType::b8) c.fail(std::string("inputs must be bool, got ") + ir::dtype_name(t));
  if (!bool_ok && t == DType::b8) c.fail("bool " + c.node.op + " is not supported");
}

// y[i] = f(a, b) over the runs of a two-operand broadcast, T in, R out.
template <class T, class R, class F>
Kernel binary_runs(std::shared_ptr<const ops::TypedBroadcast> w, const void* a, const void* b, void* y, F f) {
  return [=] {
    const auto* pa = static_cast<const T*>(a);
    const auto* pb = static_cast<const T*>(b);
    auto* py = static_cast<R*>(y);
    ops::for_each_run(*w, [&](int64_t o, int64_t len, const int64_t* off, const int64_t* inner) {
      const T* x = pa + off[0];
      const T* z = pb + off[1];
      R* out = py + o;
      for (int64_t i = 0; i < len; ++i) out[i] = f(x[i * inner[0]], z[i * inner[1]]);
    });
  };
}

// ---- Equal, Greater, Less, GreaterOrEqual, LessOrEqual ----

enum class Cmp { equal, greater, less, greater_equal, less_equal };

template <class T>
bool compare(Cmp k, T a, T b) {
  switch (k) {
    case Cmp::equal: return a == b;
    case Cmp::greater: return a > b;
    case Cmp::less: return a < b;
    case Cmp::greater_equal: return a >= b;
    default: return a <= b;
  }
}

const char* cmp_tag(Cmp k) {
  switch (k) {
    case Cmp::equal: return "equal";
    case Cmp::greater: return "greater";
    case Cmp::less: return "less";
    case Cmp::greater_equal: return "greater_equal";
    default: return "less_equal";
  }
}

Kernel f32_compare(const OpContext& c, Cmp k, std::span<const void* const> in, void* y) {
  // Less and LessOrEqual are Greater and GreaterOrEqual with the operands swapped.
  const bool swap = k == Cmp::less || k == Cmp::less_equal;
  std::span<const kernels::EltwiseUkernel<kernels::F32CompareUkernel>> table = kernels::kF32EqualUkernels;
  kernels::F32CompareUkernel ref = kernels::f32_equal__ref;
  const char* ref_name = "f32_equal__ref";
  if (k == Cmp::greater || k == Cmp::less) {
    table = kernels::kF32GreaterUkernels;
    ref = kernels::f32_greater__ref;
    ref_name = "f32_greater__ref";
  } else if (k != Cmp::equal) {
    table = kernels::kF32GreaterEqualUkernels;
    ref = kernels::f32_greater_equal__ref;
    ref_name = "f32_greater_equal__ref";
  }
  const auto* row = kernels::first_runnable(table, c.isa);
  const kernels::F32CompareUkernel fn = row ? row->fn : ref;
  kernels::KernelId id = row ? kernels::row_kernel(*row) : kernels::reference_kernel(ref_name);
  c.report_kernel(swap ? id + " (operands swapped)" : id);
  auto w = merged_broadcast(c, swap ? std::vector<size_t>{1, 0} : std::vector<size_t>{0, 1});
  const auto* a = static_cast<const float*>(in[swap ? 1 : 0]);
  const auto* b = static_cast<const float*>(in[swap ? 0 : 1]);
  auto* py = static_cast<uint8_t*>(y);
  pthreadpool_t pool = c.threadpool;
  if (const auto r = one_run(*w))
    return [=] {
      const size_t ia = r->inc[0], ib = r->inc[1];
      kernels::parallel_elements(pool, r->n, [&](size_t s, size_t count) {
        fn(count, a + s * ia, ia, b + s * ib, ib, py + s);
      });
    };
  return [=] {
    ops::for_each_run(*w, [&](int64_t o, int64_t len, const int64_t* off, const int64_t* inner) {
      // Row-major operands advance by 0 or 1; anything else (never planned) takes the ref.
      const auto run = inner[0] <= 1 && inner[1] <= 1 ? fn : ref;
      run(size_t(len), a + off[0], size_t(inner[0]), b + off[1], size_t(inner[1]), py + o);
    });
  };
}

OpImpl compare_op(Cmp k) {
  OpImpl op;
  op.want_layout = want_row_major;
  op.infer = [k](const OpContext& c) -> std::vector<TensorInfo> {
    if (c.in.size() != 2) c.fail("needs two inputs");
    require_same_types(c, k == Cmp::equal);
    return {{DType::b8, ops::typed_broadcast(c, {0, 1}).dims, Layout::row_major}};
  };
  op.batch_use = ops::broadcast_per_image;
  op.build = [k](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const DType t = c.info(0).dtype;
    if (t == DType::f32) return f32_compare(c, k, in, out[0]);
    c.report_kernel(kernels::portable_kernel(std::string(ops::type_tag(t)) + "_" + cmp_tag(k) + "_runs"));
    auto w = merged_broadcast(c, {0, 1});
    if (t == DType::b8)
      return binary_runs<uint8_t, uint8_t>(w, in[0], in[1], out[0],
                                           [](uint8_t a, uint8_t b) -> uint8_t { return (a != 0) == (b != 0); });
    return ops::with_type(c, t, [&](auto type) -> Kernel {
      using T = decltype(type);
      return binary_runs<T, uint8_t>(w, in[0], in[1], out[0], [k](T a, T b) -> uint8_t { return compare(k, a, b); });
    });
  };
  return op;
}

// ---- And, Or, Xor, Not ----

enum class Logic { and_, or_, xor_ };

OpImpl logic_op(Logic k) {
  OpImpl op;
  op.want_layout = want_row_major;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    if (c.in.size() != 2) c.fail("needs two inputs");
    require_same_types(c, true, true);
    return {{DType::b8, ops::typed_broadcast(c, {0, 1}).dims, Layout::row_major}};
  };
  op.batch_use = ops::broadcast_per_image;
  op.build = [k](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const char* tag = k == Logic::and_ ? "b8_and_runs" : k == Logic::or_ ? "b8_or_runs" : "b8_xor_runs";
    c.report_kernel(kernels::portable_kernel(tag));
    auto w = merged_broadcast(c, {0, 1});
    return binary_runs<uint8_t, uint8_t>(w, in[0], in[1], out[0], [k](uint8_t a, uint8_t b) -> uint8_t {
      const bool x = a != 0, z = b != 0;
      return k == Logic::and_ ? x && z : k == Logic::or_ ? x || z : x != z;
    });
  };
  return op;
}

OpImpl not_op() {
  OpImpl op;
  op.want_layout = want_row_major;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    require_same_types(c, true, true);
    return {{DType::b8, c.info(0).dims, Layout::row_major}};
  };
  op.batch_use = ops::broadcast_per_image;
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    c.report_kernel(kernels::portable_kernel("b8_not"));
    const int64_t n = c.info(0).count();
    const auto* x = static_cast<const uint8_t*>(in[0]);
    auto* y = static_cast<uint8_t*>(out[0]);
    return [=] {
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] == 0;
    };
  };
  return op;
}

// ---- IsNaN, IsInf ----

OpImpl classify_op(bool inf) {
  OpImpl op;
  op.want_layout = want_row_major;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    if (c.info(0).dtype != DType::f32)
      c.fail(std::string(ir::dtype_name(c.info(0).dtype)) + " " + c.node.op + " is not supported (float32)");
    return {{DType::b8, c.info(0).dims, Layout::row_major}};
  };
  op.batch_use = ops::broadcast_per_image;
  op.build = [inf](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const bool negative = inf && c.node.attrs.i("detect_negative", 1) != 0;
    const bool positive = inf && c.node.attrs.i("detect_positive", 1) != 0;
    const auto* row = kernels::first_runnable(inf ? kernels::kF32IsInfUkernels : kernels::kF32IsNaNUkernels, c.isa);
    const kernels::F32ClassifyUkernel fn = row ? row->fn : inf ? kernels::f32_isinf__ref : kernels::f32_isnan__ref;
    c.report_kernel(row ? kernels::row_kernel(*row)
                        : kernels::reference_kernel(inf ? "f32_isinf__ref" : "f32_isnan__ref"));
    const size_t n = size_t(c.info(0).count());
    const auto* x = static_cast<const float*>(in[0]);
    auto* y = static_cast<uint8_t*>(out[0]);
    pthreadpool_t pool = c.threadpool;
    return [=] {
      kernels::parallel_elements(pool, n, [&](size_t s, size_t count) { fn(count, x + s, y + s, negative, positive); });
    };
  };
  return op;
}

// ---- Sign, Shrink (on any layout: the output is the input's shape and layout) ----

template <class T>
T sign_of(T v) {
  if constexpr (std::is_unsigned_v<T>) return T(v > 0);
  else return T((v > 0) - (v < 0));
}

OpImpl sign_op() {
  OpImpl op;
  op.want_layout = any_layout;  // one element for one: any layout
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    if (c.info(0).dtype == DType::b8) c.fail("bool Sign is not supported");
    return {c.info(0)};
  };
  op.batch_use = ops::broadcast_per_image;
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const DType t = c.info(0).dtype;
    const int64_t n = c.info(0).count();
    const void* x = in[0];
    void* y = out[0];
    if (t == DType::f32) {
      const auto* row = kernels::first_runnable(kernels::kF32SignUkernels, c.isa);
      const kernels::F32UnaryUkernel fn = row ? row->fn : kernels::f32_sign__ref;
      c.report_kernel(row ? kernels::row_kernel(*row) : kernels::reference_kernel("f32_sign__ref"));
      pthreadpool_t pool = c.threadpool;
      return [=] {
        const auto* px = static_cast<const float*>(x);
        auto* py = static_cast<float*>(y);
        kernels::parallel_elements(pool, size_t(n), [&](size_t s, size_t count) { fn(count, px + s, py + s); });
      };
    }
    c.report_kernel(kernels::portable_kernel(std::string(ops::type_tag(t)) + "_sign"));
    return ops::with_type(c, t, [&](auto type) -> Kernel {
      using T = decltype(type);
      return [=] {
        const auto* px = static_cast<const T*>(x);
        auto* py = static_cast<T*>(y);
        for (int64_t i = 0; i < n; ++i) py[i] = sign_of(px[i]);
      };
    });
  };
  return op;
}

OpImpl shrink_op() {
  OpImpl op;
  op.want_layout = any_layout;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    if (c.info(0).dtype != DType::f32)
      c.fail(std::string(ir::dtype_name(c.info(0).dtype)) + " Shrink is not supported (float32)");
    return {c.info(0)};
  };
  op.batch_use = ops::broadcast_per_image;
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const float lambd = c.node.attrs.f("lambd", 0.5f), bias = c.node.attrs.f("bias", 0.0f);
    const auto* row = kernels::first_runnable(kernels::kF32ShrinkUkernels, c.isa);
    const kernels::F32ActUkernel fn = row ? row->fn : kernels::f32_shrink__ref;
    c.report_kernel(row ? kernels::row_kernel(*row) : kernels::reference_kernel("f32_shrink__ref"));
    const size_t n = size_t(c.info(0).count());
    const auto* x = static_cast<const float*>(in[0]);
    auto* y = static_cast<float*>(out[0]);
    pthreadpool_t pool = c.threadpool;
    return [=] {
      kernels::parallel_elements(pool, n, [&](size_t s, size_t count) { fn(count, x + s, y + s, lambd, bias); });
    };
  };
  return op;
}

// ---- Mod ----

// fmod = 0: the remainder takes the divisor's sign (Python's %); fmod = 1: C's, the dividend's.
// A zero divisor (undefined in ONNX; ONNX Runtime's integer kernel traps) gives 0, and so does
// lowest / -1, whose quotient overflows.
template <class T>
T integer_mod(T x, T y, bool fmod) {
  if (y == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (y == T(-1)) return 0;
  }
  T r = T(x % y);
  if (!fmod && ((r < 0 && y > 0) || (r > 0 && y < 0))) r = T(r + y);
  return r;
}

OpImpl mod_op() {
  OpImpl op;
  op.want_layout = want_row_major;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    if (c.in.size() != 2) c.fail("needs two inputs");
    require_same_types(c, false);
    const DType t = c.info(0).dtype;
    const int64_t fmod = c.node.attrs.i("fmod", 0);
    if (fmod != 0 && fmod != 1) c.fail("fmod must be 0 or 1, got " + std::to_string(fmod));
    if ((t == DType::f32 || t == DType::f64) && fmod != 1) c.fail("a float Mod needs fmod = 1");
    return {{t, ops::typed_broadcast(c, {0, 1}).dims, Layout::row_major}};
  };
  op.batch_use = ops::broadcast_per_image;
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const DType t = c.info(0).dtype;
    const bool fmod = c.node.attrs.i("fmod", 0) != 0;
    c.report_kernel(kernels::portable_kernel(std::string(ops::type_tag(t)) + (fmod ? "_fmod_runs" : "_mod_runs")));
    auto w = merged_broadcast(c, {0, 1});
    return ops::with_type(c, t, [&](auto type) -> Kernel {
      using T = decltype(type);
      if constexpr (std::is_floating_point_v<T>)
        return binary_runs<T, T>(w, in[0], in[1], out[0], [](T a, T b) { return std::fmod(a, b); });
      else
        return binary_runs<T, T>(w, in[0], in[1], out[0], [fmod](T a, T b) { return integer_mod(a, b, fmod); });
    });
  };
  return op;
}

// ---- Sum, Mean, Max, Min ----

// An n-ary FP32 microkernel over `count` operands (F32SumUkernel / F32ExtremumUkernel with the
// op's own arguments bound).
using NaryFn = std::function<void(size_t n, const float* const* x, const size_t* inc, float* y)>;

// Every input at once along the runs of the merged broadcast: one run (same shapes, scalars)
// split over the thread pool, else run by run with fn where each operand steps 0 or 1 and the
// reference `ref` where a run steps further.
// `operands`: the inputs in the order fn takes them.
Kernel nary_runs(const OpContext& c, std::span<const void* const> in, void* out, const std::vector<size_t>& operands,
                 NaryFn fn, NaryFn ref) {
  const size_t count = operands.size();
  auto w = merged_broadcast(c, operands);
  std::vector<const float*> x(count);
  for (size_t i = 0; i < count; ++i) x[i] = static_cast<const float*>(in[operands[i]]);
  auto* y = static_cast<float*>(out);
  pthreadpool_t pool = c.threadpool;
  if (const auto r = one_run(*w)) {
    // The operand pointers of each piece (pieces start at multiples of kEltwiseMinPiece), made
    // here so that a run allocates nothing.
    const size_t pieces = (r->n + kernels::kEltwiseMinPiece - 1) / kernels::kEltwiseMinPiece;
    auto at = std::make_shared<std::vector<const float*>>(std::max<size_t>(pieces, 1) * count);
    return [=] {
      kernels::parallel_elements(pool, r->n, [&](size_t s, size_t len) {
        const float** p = at->data() + s / kernels::kEltwiseMinPiece * count;
        for (size_t i = 0; i < count; ++i) p[i] = x[i] + s * r->inc[i];
        fn(len, p, r->inc.data(), y + s);
      });
    };
  }
  // This step's operand pointers (one plan runs one call at a time).
  std::vector<const float*> at(count);
  std::vector<size_t> inc(count);
  return [=]() mutable {
    ops::for_each_run(*w, [&](int64_t o, int64_t len, const int64_t* off, const int64_t* inner) {
      bool unit = true;
      for (size_t i = 0; i < count; ++i) {
        at[i] = x[i] + off[i];
        inc[i] = size_t(inner[i]);
        unit = unit && inner[i] <= 1;
      }
      (unit ? fn : ref)(size_t(len), at.data(), inc.data(), y + o);
    });
  };
}

// ONNX Runtime adds the inputs left to right, ((x0 + x1) + x2) + ..., each sum rounded, and
// multiplies Mean's by 1 / count (float): f32_sum keeps that order in every lane.
OpImpl sum_op(bool mean) {
  OpImpl op;
  op.want_layout = want_row_major;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    const std::vector<size_t> all = all_inputs(c);
    for (size_t i : all)
      if (c.info(i).dtype != DType::f32)
        c.fail(std::string(ir::dtype_name(c.info(i).dtype)) + " " + c.node.op + " (input " + std::to_string(i) +
               ") is not supported (float32)");
    return {{DType::f32, ops::typed_broadcast(c, all).dims, Layout::row_major}};
  };
  op.batch_use = ops::broadcast_per_image;
  op.build = [mean](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const size_t count = c.in.size();
    const float scale = mean ? 1.0f / static_cast<float>(count) : 1.0f;
    const auto* row = kernels::first_runnable(kernels::kF32SumUkernels, c.isa);
    const kernels::F32SumUkernel simd = row ? row->fn : kernels::f32_sum__ref;
    c.report_kernel(row ? kernels::row_kernel(*row) : kernels::reference_kernel("f32_sum__ref"));
    auto bind = [count, scale](kernels::F32SumUkernel k) -> NaryFn {
      return [=](size_t n, const float* const* x, const size_t* inc, float* y) { k(n, count, x, inc, y, scale); };
    };
    return nary_runs(c, in, out[0], all_inputs(c), bind(simd), bind(kernels::f32_sum__ref));
  };
  return op;
}

// Max / Min of float64 or integer inputs (one type for all), every input at once along runs.
template <class T>
Kernel typed_extremum(const OpContext& c, bool min, std::span<const void* const> in, void* out) {
  auto w = std::make_shared<const ops::TypedBroadcast>(ops::typed_broadcast(c, all_inputs(c)));
  std::vector<const T*> x;
  for (size_t i = 0; i < c.in.size(); ++i) x.push_back(static_cast<const T*>(in[i]));
  T* y = static_cast<T*>(out);
  const std::string name = std::string(ops::type_tag(c.info(0).dtype)) + (min ? "_min" : "_max") + "_runs";
  c.report_kernel(kernels::portable_kernel(name));
  return [=] {
    ops::for_each_run(*w, [&](int64_t o, int64_t len, const int64_t* off, const int64_t* inner) {
      for (int64_t j = 0; j < len; ++j) y[o + j] = x[0][off[0] + j * inner[0]];
      for (size_t i = 1; i < x.size(); ++i) {
        const T* xi = x[i] + off[i];
        for (int64_t j = 0; j < len; ++j) {
          const T v = xi[j * inner[i]];
          T& r = y[o + j];
          r = min ? (v < r ? v : r) : (r < v ? v : r);
        }
      }
    });
  };
}

// Max / Min of one or more inputs with numpy broadcasting. FP32 folds the inputs left to right
// with ONNX Runtime's NaN-propagating pick (kernels/ref/compare.h: f32_pick__ref, the operands
// swapped where the fold so far repeats along the run, as ORT's scalar-input-0 form), every
// input at once along runs as Sum's; float64 and integers run typed_extremum. Not reproduced:
// Eigen's scalar loop (the elements before the first aligned packet and after the last of
// each span) gives the earlier of two equal operands, so which of +0 / -0 ORT returns there
// depends on the address; octet gives the packets' answer everywhere.
OpImpl extremum_op(bool min) {
  OpImpl op;
  op.want_layout = want_row_major;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    const std::vector<size_t> all = all_inputs(c);
    const DType t = c.info(0).dtype;
    for (size_t i : all)
      if (c.info(i).dtype != t || t == DType::b8)
        c.fail(std::string(ir::dtype_name(c.info(i).dtype)) + " " + c.node.op + " (input " + std::to_string(i) +
               ") is not supported (all inputs float32, float64, uint8, int8, int32 or int64, one type)");
    return {{t, ops::typed_broadcast(c, all).dims, Layout::row_major}};
  };
  op.batch_use = ops::broadcast_per_image;
  op.build = [min](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    if (c.info(0).dtype != DType::f32)
      return ops::with_type(c, c.info(0).dtype, [&](auto t) { return typed_extremum<decltype(t)>(c, min, in, out[0]); });
    const auto list = min ? kernels::kF32MinUkernels : kernels::kF32MaxUkernels;
    const kernels::F32ExtremumUkernel ref = min ? kernels::f32_min__ref : kernels::f32_max__ref;
    const auto* row = kernels::first_runnable(list, c.isa);
    c.report_kernel(row ? kernels::row_kernel(*row) : kernels::reference_kernel(min ? "f32_min__ref" : "f32_max__ref"));
    const size_t count = c.in.size();
    auto bind = [count](kernels::F32ExtremumUkernel k) -> NaryFn {
      return [=](size_t n, const float* const* x, const size_t* inc, float* y) { k(n, count, x, inc, y); };
    };
    return nary_runs(c, in, out[0], all_inputs(c), bind(row ? row->fn : ref), bind(ref));
  };
  return op;
}

}  // namespace
}  // namespace compare_ops

void register_compare_ops(OpTable& t) {
  using namespace compare_ops;
  t.emplace_back("Equal", compare_op(Cmp::equal));
  t.emplace_back("Greater", compare_op(Cmp::greater));
  t.emplace_back("Less", compare_op(Cmp::less));
  t.emplace_back("GreaterOrEqual", compare_op(Cmp::greater_equal));
  t.emplace_back("LessOrEqual", compare_op(Cmp::less_equal));
  t.emplace_back("And", logic_op(Logic::and_));
  t.emplace_back("Or", logic_op(Logic::or_));
  t.emplace_back("Xor", logic_op(Logic::xor_));
  t.emplace_back("Not", not_op());
  t.emplace_back("IsNaN", classify_op(false));
  t.emplace_back("IsInf", classify_op(true));
  t.emplace_back("Sign", sign_op());
  t.emplace_back("Shrink", shrink_op());
  t.emplace_back("Mod", mod_op());
  t.emplace_back("Sum", sum_op(false));
  t.emplace_back("Mean", sum_op(true));
  t.emplace_back("Min", extremum_op(true));
  t.emplace_back("Max", extremum_op(false));
}

}  // namespace octet
