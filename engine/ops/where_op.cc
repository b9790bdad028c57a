// Where (opset 9+): y = condition ? x : y over the three inputs broadcast together, for every
// element type octet has. Float32 runs on the SIMD blend of kernels/elementwise/eltwise_list.h
// (f32_where), along the output's last axis; the other types (int64 shape arithmetic, ...) on
// one plain loop per type.
#include <cstring>
#include <memory>

#include "engine/op_registry.h"
#include "engine/ops/batch_use.h"
#include "engine/ops/typed_broadcast.h"
#include "kernels/elementwise/eltwise_list.h"
#include "kernels/ref/elementwise.h"

namespace octet {
namespace {

template <class T>
void select_runs(const ops::TypedBroadcast& w, const void* cond, const void* a, const void* b, void* y) {
  const auto* pc = static_cast<const uint8_t*>(cond);
  const auto* pa = static_cast<const T*>(a);
  const auto* pb = static_cast<const T*>(b);
  auto* py = static_cast<T*>(y);
  ops::for_each_run(w, [&](int64_t o, int64_t len, const int64_t* off, const int64_t* inner) {
    const uint8_t* c = pc + off[0];
    const T* x = pa + off[1];
    const T* z = pb + off[2];
    T* out = py + o;
    for (int64_t i = 0; i < len; ++i) out[i] = c[i * inner[0]] ? x[i * inner[1]] : z[i * inner[2]];
  });
}

OpImpl where_op() {
  OpImpl op;
  op.want_layout = want_row_major;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    if (c.info(0).dtype != ir::DType::b8)
      c.fail("condition must be bool, got " + std::string(ir::dtype_name(c.info(0).dtype)));
    if (c.info(1).dtype != c.info(2).dtype)
      c.fail(std::string("X and Y differ in type: ") + ir::dtype_name(c.info(1).dtype) + " and " +
             ir::dtype_name(c.info(2).dtype));
    return {{c.info(1).dtype, ops::typed_broadcast(c, {0, 1, 2}).dims, Layout::row_major}};
  };
  op.batch_use = ops::broadcast_per_image;
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    auto w = std::make_shared<const ops::TypedBroadcast>(ops::typed_broadcast(c, {0, 1, 2}));
    const ir::DType t = c.info(1).dtype;
    const void *cond = in[0], *a = in[1], *b = in[2];
    void* y = out[0];
    if (t == ir::DType::f32) {
      // Float32 runs on the SIMD blend, every run's operands advancing by 0 or 1.
      const auto* row = kernels::first_runnable(kernels::kF32WhereUkernels, c.isa);
      const kernels::F32WhereUkernel fn = row ? row->fn : kernels::f32_where__ref;
      c.report_kernel(row ? kernels::row_kernel(*row) : kernels::reference_kernel("f32_where__ref"));
      return [=] {
        const auto* pc = static_cast<const uint8_t*>(cond);
        const auto* pa = static_cast<const float*>(a);
        const auto* pb = static_cast<const float*>(b);
        auto* py = static_cast<float*>(y);
        ops::for_each_run(*w, [&](int64_t o, int64_t len, const int64_t* off, const int64_t* inner) {
          // Row-major operands advance by 0 or 1; anything else (never planned) takes the ref.
          const auto run = inner[0] <= 1 && inner[1] <= 1 && inner[2] <= 1 ? fn : kernels::f32_where__ref;
          run(size_t(len), pc + off[0], size_t(inner[0]), pa + off[1], size_t(inner[1]), pb + off[2], size_t(inner[2]),
              py + o);
        });
      };
    }
    c.report_kernel(kernels::portable_kernel(std::string(ops::type_tag(t)) + "_where_runs"));
    if (t == ir::DType::b8) return [=] { select_runs<uint8_t>(*w, cond, a, b, y); };
    return ops::with_type(c, t, [&](auto type) -> Kernel {
      using T = decltype(type);
      return [=] { select_runs<T>(*w, cond, a, b, y); };
    });
  };
  return op;
}

}  // namespace

void register_where_op(OpTable& t) { t.emplace_back("Where", where_op()); }

}  // namespace octet
