// Where (opset 9+): y = condition ? x : y over the three inputs broadcast together, for every
// element type octet has (float32 activations, int64 shape arithmetic, ...). The choice is a
// copy, so one loop over the element's bytes serves every type.
#include <cstring>
#include <memory>

#include "engine/op_registry.h"
#include "engine/ops/batch_use.h"
#include "engine/ops/typed_broadcast.h"

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
    if (c.info(0).dtype != ir::DType::b8) c.fail("condition must be bool, got " + std::string(ir::dtype_name(c.info(0).dtype)));
    if (c.info(1).dtype != c.info(2).dtype)
      c.fail(std::string("X and Y differ in type: ") + ir::dtype_name(c.info(1).dtype) + " and " +
             ir::dtype_name(c.info(2).dtype));
    return {{c.info(1).dtype, ops::typed_broadcast(c, {0, 1, 2}).dims, Layout::row_major}};
  };
  op.batch_use = ops::broadcast_per_image;
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    auto w = std::make_shared<const ops::TypedBroadcast>(ops::typed_broadcast(c, {0, 1, 2}));
    const size_t size = ir::dtype_size(c.info(1).dtype);
    // A float32 Where runs the same loop: no SIMD blend kernel yet, so it is marked scalar.
    const std::string name = std::string(ops::type_tag(c.info(1).dtype)) + "_where_runs";
    c.report_kernel(c.info(1).dtype == ir::DType::f32 ? kernels::reference_kernel("f32_where__ref")
                                                      : kernels::portable_kernel(name));
    const void *cond = in[0], *a = in[1], *b = in[2];
    void* y = out[0];
    switch (size) {
      case 1: return [=] { select_runs<uint8_t>(*w, cond, a, b, y); };
      case 4: return [=] { select_runs<uint32_t>(*w, cond, a, b, y); };
      default: return [=] { select_runs<uint64_t>(*w, cond, a, b, y); };
    }
  };
  return op;
}

}  // namespace

void register_where_op(OpTable& t) { t.emplace_back("Where", where_op()); }

}  // namespace octet
