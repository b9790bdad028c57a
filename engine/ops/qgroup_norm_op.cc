// QLinearGroupNorm (octet's own, passes::fuse_qdq_group_norm): torch's GroupNorm export left in
// float between a DequantizeLinear and a QuantizeLinear of a QDQ model (timm's
// efficientnet_b0_gn):
//
//   x (8-bit, [N, G, L]) ─ DequantizeLinear ─ InstanceNormalization ─ Reshape [N, C, ...]
//     ─ Mul gamma ─ Add beta ─ QuantizeLinear
//
// run as one step on kernels::Q8GroupNorm, row by row in a float scratch: the same bits as the
// five steps (and so as ORT's), without the float map's four trips through memory. The Reshape
// back stays a view after it (the pass keeps it on the 8-bit output).
//
//   inputs: x (8-bit [N, G, L]), x_scale, x_zero_point, scale [G], B [G], gamma [C], beta [C],
//           y_scale, y_zero_point; attribute epsilon. Output: 8-bit [N, G, L], row (n, g)'s
//           values C / G runs of channels in order.
#include <algorithm>
#include <memory>
#include <vector>

#include "engine/op_registry.h"
#include "engine/ops/batch_use.h"
#include "engine/ops/qparams.h"
#include "kernels/elementwise/instance_norm.h"

namespace octet {
namespace {

enum QgnInput : size_t { kQgnX, kQgnXScale, kQgnXZeroPoint, kQgnScale, kQgnB, kQgnGamma, kQgnBeta, kQgnYScale, kQgnYZeroPoint };

void check_qgn(const OpContext& c) {
  ops::require_q8(c, kQgnX, "X");
  const TensorInfo& x = c.info(kQgnX);
  if (x.dims.size() != 3) c.fail("X must be [N, groups, values], got " + ir::dims_str(x.dims));
  ops::require_scale(c, kQgnXScale, "x_scale");
  ops::require_zero_point(c, kQgnXZeroPoint, "x_zero_point", x.dtype);
  ops::require_scale(c, kQgnYScale, "y_scale");
  ops::quantized_output_type(c, kQgnYZeroPoint);
  const int64_t groups = x.dims[1];
  for (size_t i : {kQgnScale, kQgnB})
    if (!c.has(i) || c.info(i).dtype != ir::DType::f32 || c.info(i).count() != groups)
      c.fail("input " + std::to_string(i) + " must hold one float per group (" + std::to_string(groups) + ")");
  const int64_t channels = c.has(kQgnGamma) ? c.info(kQgnGamma).count() : 0;
  if (channels <= 0 || groups <= 0 || channels % groups != 0 || x.dims[2] % (channels / groups) != 0)
    c.fail("gamma's " + std::to_string(channels) + " channels must split the " + std::to_string(groups) +
           " groups' rows of " + std::to_string(x.dims[2]) + " values evenly");
  for (size_t i : {kQgnGamma, kQgnBeta})
    if (c.info(i).dtype != ir::DType::f32 || c.info(i).count() != channels)
      c.fail("input " + std::to_string(i) + " must hold one float per channel (" + std::to_string(channels) + ")");
  for (size_t i : {kQgnXScale, kQgnXZeroPoint, kQgnScale, kQgnB, kQgnGamma, kQgnBeta, kQgnYScale, kQgnYZeroPoint})
    if (c.has(i) && c.in_const[i] == nullptr) c.fail("input " + std::to_string(i) + " must be a constant");
}

OpImpl qgroup_norm_op() {
  OpImpl op;
  op.want_layout = want_row_major;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    check_qgn(c);
    return {{ops::quantized_output_type(c, kQgnYZeroPoint), c.info(kQgnX).dims, Layout::row_major}};
  };
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) { return ops::per_image_with_constants(c); };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    check_qgn(c);
    const TensorInfo& x = c.info(kQgnX);
    const int64_t groups = x.dims[1], n = x.dims[2], rows = x.dims[0] * groups;
    const int64_t channels = c.info(kQgnGamma).count();
    if (rows == 0 || n == 0) return [] {};
    const kernels::Q8 x_type = x.dtype == ir::DType::s8 ? kernels::Q8::s8 : kernels::Q8::u8;
    const kernels::Q8 y_type =
        ops::quantized_output_type(c, kQgnYZeroPoint) == ir::DType::s8 ? kernels::Q8::s8 : kernels::Q8::u8;
    auto norm = std::make_shared<const kernels::Q8GroupNorm>(x_type, y_type, size_t(n), size_t(channels / groups), c.isa);
    c.report_kernel(norm->kernel_id());
    const size_t threads = c.threadpool ? std::max<size_t>(1, pthreadpool_get_threads_count(c.threadpool)) : 1;
    auto scratch = std::make_shared<std::vector<float>>(threads * norm->scratch_floats());
    const ops::ParamInputs params(c, in);
    const kernels::QuantParams x_q = params[kQgnXScale].quant(params[kQgnXZeroPoint]);
    const kernels::QuantParams y_q = params[kQgnYScale].quant(params[kQgnYZeroPoint]);
    auto p = [&](size_t i) { return static_cast<const float*>(in[i]); };
    const float *scale = p(kQgnScale), *bias = p(kQgnB), *gamma = p(kQgnGamma), *beta = p(kQgnBeta);
    const float eps = c.node.attrs.f("epsilon", 1e-5f);
    const void* xp = in[kQgnX];
    void* y = out[0];
    pthreadpool_t pool = c.threadpool;
    return [=] {
      norm->run(size_t(rows), size_t(groups), xp, x_q, scale, bias, gamma, beta, eps, y_q, y, scratch->data(), pool);
    };
  };
  return op;
}

}  // namespace

void register_qgroup_norm_op(OpTable& t) { t.emplace_back("QLinearGroupNorm", qgroup_norm_op()); }

}  // namespace octet
