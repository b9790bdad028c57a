// Pow (opset 1+): a float32 base to one constant float32 exponent element by element in any
// layout (the usual case, a square in a normalisation), and every other combination ONNX Runtime
// runs (base float32 / float64 / int32 / int64, exponent the same four, broadcast together, the
// exponent computed at run time) as ORT's kernel computes it: static_cast<base>(std::pow(x, e))
// with C++'s overloads, except that an exponent constant along the innermost run (ORT's
// "scalar input 1" span) of 2 or 3 is x * x or x * x * x in the base type.
#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>

#include "engine/op_registry.h"
#include "engine/ops/batch_use.h"
#include "engine/ops/typed_broadcast.h"
#include "kernels/elementwise/eltwise.h"

namespace octet {
namespace {

bool is_pow_type(ir::DType t) {
  return t == ir::DType::f32 || t == ir::DType::f64 || t == ir::DType::s32 || t == ir::DType::s64;
}

// A float32 base to one constant float32 value: the element-wise map over x's own layout.
bool scalar_exponent(const OpContext& c) {
  if (c.info(0).dtype != ir::DType::f32 || c.info(1).dtype != ir::DType::f32 || c.info(1).count() != 1 ||
      c.info(1).dims.size() > c.info(0).dims.size())
    return false;
  return c.in_const.size() > 1 && c.in_const[1] != nullptr;
}

template <class T>
T times(T a, T b) {
  if constexpr (std::is_integral_v<T>) return T(uint64_t(a) * uint64_t(b));  // wraps like ORT, no UB
  else return a * b;
}

template <class T, class E>
T power(T x, E e) {
  const auto r = std::pow(x, e);
  if constexpr (std::is_integral_v<T>) {
    // Out of T's range (or NaN) the conversion is undefined in C++; x86's cvttsd2si, what ORT's
    // static_cast compiles to there, gives the lowest value.
    constexpr double lo = double(std::numeric_limits<T>::min()), hi = -lo;
    if (!(r >= lo && r < hi)) return std::numeric_limits<T>::min();
  }
  return static_cast<T>(r);
}

template <class T, class E>
void pow_runs(const ops::TypedBroadcast& w, const void* base, const void* exponent, void* out) {
  const T* px = static_cast<const T*>(base);
  const E* pe = static_cast<const E*>(exponent);
  T* py = static_cast<T*>(out);
  ops::for_each_run(w, [&](int64_t o, int64_t len, const int64_t* off, const int64_t* inner) {
    const T* x = px + off[0];
    const E* e = pe + off[1];
    T* y = py + o;
    const int64_t sx = inner[0], se = inner[1];
    if (se == 0 && *e == E(2)) {
      for (int64_t i = 0; i < len; ++i) y[i] = times(x[i * sx], x[i * sx]);
    } else if (se == 0 && *e == E(3)) {
      for (int64_t i = 0; i < len; ++i) y[i] = times(times(x[i * sx], x[i * sx]), x[i * sx]);
    } else {
      for (int64_t i = 0; i < len; ++i) y[i] = power(x[i * sx], e[i * se]);
    }
  });
}

OpImpl pow_op() {
  OpImpl op;
  op.want_layout = any_layout;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    for (size_t i = 0; i < 2; ++i)
      if (!is_pow_type(c.info(i).dtype))
        c.fail(std::string(ir::dtype_name(c.info(i).dtype)) + " Pow (input " + std::to_string(i) +
               ") is not supported (float, double, int32, int64)");
    if (scalar_exponent(c)) return {c.info(0)};
    return {{c.info(0).dtype, ops::typed_broadcast(c, {0, 1}).dims, Layout::row_major}};
  };
  op.batch_use = ops::broadcast_per_image;
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const ir::DType t = c.info(0).dtype;
    if (scalar_exponent(c)) {
      const float p = c.in_const[1]->as<float>()[0];
      const int64_t n = c.info(0).count();
      auto x = static_cast<const float*>(in[0]);
      auto y = static_cast<float*>(out[0]);
      pthreadpool_t pool = c.threadpool;
      if (p == 2.0f || p == 3.0f) {
        // x * x, then (x * x) * x: the SIMD Mul, rounding after each product as ORT does.
        const int64_t dims[] = {n}, unit[] = {1};
        auto mul = std::make_shared<const kernels::F32Binary>(kernels::BinaryOp::mul, 1, dims, unit, unit, c.isa);
        c.report_kernel(mul->kernel_id() + (p == 3.0f ? " x2" : ""));
        const bool cube = p == 3.0f;
        return [=] {
          mul->run(x, x, y, pool);
          if (cube) mul->run(y, x, y, pool);
        };
      }
      c.report_kernel(kernels::reference_kernel("f32_pow__ref"));
      c.report_fallback("std::pow per element, as ONNX Runtime rounds it; no SIMD pow");
      return [=] {
        for (int64_t i = 0; i < n; ++i) y[i] = std::pow(x[i], p);
      };
    }
    auto w = std::make_shared<const ops::TypedBroadcast>(ops::typed_broadcast(c, {0, 1}));
    const std::string name = std::string(ops::type_tag(t)) + ops::type_tag(c.info(1).dtype) + "_pow_runs";
    if (t == ir::DType::f32 || t == ir::DType::f64) {
      c.report_kernel(kernels::reference_kernel(name + "__ref"));
      c.report_fallback("std::pow per element, as ONNX Runtime rounds it; no SIMD pow");
    } else {
      c.report_kernel(kernels::portable_kernel(name));
    }
    const void *x = in[0], *e = in[1];
    void* y = out[0];
    return ops::with_type(c, t, [&](auto base) -> Kernel {
      using T = decltype(base);
      if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t>) {
        c.fail("8-bit Pow is not supported");
      } else {
        return ops::with_type(c, c.info(1).dtype, [&](auto exponent) -> Kernel {
          using E = decltype(exponent);
          return [=] { pow_runs<T, E>(*w, x, e, y); };
        });
      }
    });
  };
  return op;
}

}  // namespace

void register_pow_op(OpTable& t) { t.emplace_back("Pow", pow_op()); }

}  // namespace octet
