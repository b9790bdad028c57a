// com.microsoft.QLinearSoftmax (X, X_scale, [X_zero_point], Y_scale, [Y_zero_point]; attributes
// axis and opset), and so the QDQ unit DequantizeLinear -> Softmax -> QuantizeLinear that
// fuse_qdq turns into it: ONNX Runtime's lookup-table softmax, bit for bit
// (kernels/ref/qsoftmax.h), on the SIMD microkernels of kernels/elementwise/qsoftmax_list.h where the ISA
// cap allows (kernels::Q8Softmax). `opset` < 13 reduces over every dimension from `axis` on (the old
// Softmax's flattening), 13 and above over `axis` alone; axis defaults to -1 for every opset
// (ORT's schema default, so an opset-12 node without axis reduces over the last dimension).
#include <memory>

#include "engine/ops/batch_use.h"
#include "engine/ops/qparams.h"
#include "kernels/elementwise/softmax.h"
#include "kernels/ref/qsoftmax.h"

namespace octet {
namespace {

using ir::DType;

enum Input : size_t { kX, kXScale, kXZeroPoint, kYScale, kYZeroPoint };

struct Split {
  size_t outer = 1, d = 1, inner = 1;
};

Split softmax_split(const OpContext& c) {
  const TensorInfo& x = c.info(kX);
  const int64_t opset = c.node.attrs.i("opset", 13);
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  if (rank == 0) c.fail("X must have rank >= 1");
  const int64_t axis = normalize_axis(c, c.node.attrs.i("axis", -1), rank);
  Split s;
  for (int64_t i = 0; i < rank; ++i) {
    const size_t extent = static_cast<size_t>(x.dims[size_t(i)]);
    if (i < axis) s.outer *= extent;
    else if (i == axis || opset < 13) s.d *= extent;
    else s.inner *= extent;
  }
  return s;
}

std::vector<TensorInfo> infer(const OpContext& c) {
  ops::require_q8(c, kX, "X");
  if (!c.node.attrs.has("opset")) c.fail("the 'opset' attribute is required (the Softmax opset it stands for)");
  ops::require_scale(c, kXScale, "X_scale");
  ops::require_zero_point(c, kXZeroPoint, "X_zero_point", c.info(kX).dtype);
  ops::require_scale(c, kYScale, "Y_scale");
  ops::require_zero_point(c, kYZeroPoint, "Y_zero_point", c.info(kX).dtype);
  softmax_split(c);
  TensorInfo y = c.info(kX);
  y.layout = Layout::row_major;
  return {y};
}

struct Params {
  kernels::QSoftmaxTable table;
  float y_scale = 1.0f;
  int32_t y_zero_point = 0;
};

Kernel build(const OpContext& c, std::span<const void* const> in, std::span<void* const> out) {
  const Split s = softmax_split(c);
  if (s.outer * s.d * s.inner == 0) return [] {};
  const bool is_signed = c.info(kX).dtype == DType::s8;
  const void* x = in[kX];
  void* y = out[0];
  auto softmax = std::make_shared<const kernels::Q8Softmax>(is_signed, int64_t(s.outer), int64_t(s.d),
                                                            int64_t(s.inner), c.isa);
  c.report_kernel(softmax->kernel_id());
  pthreadpool_t pool = c.threadpool;
  return ops::with_params(
      c, in, {kXScale, kYScale, kYZeroPoint},
      [s, is_signed](const ops::ParamInputs& p) {
        return Params{kernels::qsoftmax_table(p[kXScale].scalar(), s.d, is_signed), p[kYScale].scalar(),
                      p[kYZeroPoint].int_scalar()};
      },
      [=](const Params& p) { softmax->run(x, y, p.table, p.y_scale, p.y_zero_point, pool); });
}

}  // namespace

void register_qsoftmax_op(OpTable& t) {
  OpImpl op;
  op.want_layout = want_row_major;
  op.infer = infer;
  // Along `axis` (and every axis after it before opset 13): apart unless that is the images'.
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) {
    const int64_t axis = normalize_axis(c, c.node.attrs.i("axis", -1), int64_t(c.info(kX).dims.size()));
    return ops::keeps_images_apart_if(axis != 0 && ops::per_image_with_constants(c) == BatchUse::keeps_images_apart);
  };
  op.build = build;
  t.emplace_back("QLinearSoftmax", op);
}

}  // namespace octet
