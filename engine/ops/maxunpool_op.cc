// MaxUnpool (FP32): Y zero, then Y[I[i]] = X[i] in X's row-major order, I holding positions in
// the whole NCHW output (MaxPool's Indices), a later element winning a repeated index, as
// ONNX Runtime's kernel does. Y's shape is, per spatial axis, (in - 1) * stride + kernel -
// pad_begin - pad_end, or the output_shape input (a constant, or an integer graph input, whose
// values key the plan) when given. A scatter of whole values: one portable
// loop, no vector form helps it. The indices count from the batch's first image, so the step
// mixes the images.
#include <algorithm>
#include <cstring>
#include <vector>

#include "engine/op_registry.h"
#include "engine/ops/batch_use.h"

namespace octet {
namespace {

ir::Dims unpool_dims(const OpContext& c) {
  const TensorInfo& x = c.info(0);
  const TensorInfo& i = c.info(1);
  if (x.dtype != ir::DType::f32) c.fail(std::string(ir::dtype_name(x.dtype)) + " MaxUnpool is not supported (float32)");
  if (i.dtype != ir::DType::s64) c.fail("I must be int64, got " + std::string(ir::dtype_name(i.dtype)));
  if (i.dims != x.dims) c.fail("I " + ir::dims_str(i.dims) + " must have X's shape " + ir::dims_str(x.dims));
  if (x.dims.size() < 3) c.fail("X " + ir::dims_str(x.dims) + " must have rank 3 or more");
  const size_t spatial = x.dims.size() - 2;
  const std::vector<int64_t> kernel = c.node.attrs.ints("kernel_shape");
  if (kernel.size() != spatial) c.fail("kernel_shape needs " + std::to_string(spatial) + " values");
  std::vector<int64_t> strides = c.node.attrs.ints("strides"), pads = c.node.attrs.ints("pads");
  if (strides.empty()) strides.assign(spatial, 1);
  if (pads.empty()) pads.assign(2 * spatial, 0);
  if (strides.size() != spatial || pads.size() != 2 * spatial) c.fail("strides or pads do not match kernel_shape");
  ir::Dims d = {x.dims[0], x.dims[1]};
  for (size_t a = 0; a < spatial; ++a) {
    const int64_t e = (x.dims[a + 2] - 1) * strides[a] + kernel[a] - pads[a] - pads[a + spatial];
    if (e < 0) c.fail("the output's axis " + std::to_string(a + 2) + " would be negative");
    d.push_back(e);
  }
  if (!c.has(2)) return d;
  // ORT takes any shape of at least as many elements and scatters at the same flat positions
  // (ONNX's own test data moves them to the same coordinates instead).
  const ir::TensorData& shape = c.constant(2, "output_shape");
  if (shape.dtype != ir::DType::s64 || shape.dims.size() != 1) c.fail("output_shape must be a 1-D int64 tensor");
  const ir::Dims given(shape.as<int64_t>(), shape.as<int64_t>() + shape.dims[0]);
  for (int64_t e : given)
    if (e < 0) c.fail("output_shape " + ir::dims_str(given) + " has a negative extent");
  if (ir::element_count(given) < ir::element_count(d))
    c.fail("output_shape " + ir::dims_str(given) + " is smaller than the unpooled shape " + ir::dims_str(d));
  return given;
}

OpImpl maxunpool_op() {
  OpImpl op;
  op.want_layout = want_row_major;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    return {{ir::DType::f32, unpool_dims(c), Layout::row_major}};
  };
  op.batch_use = ops::mixes_images;
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const int64_t n = c.info(0).count(), total = ir::element_count(unpool_dims(c));
    auto x = static_cast<const float*>(in[0]);
    auto idx = static_cast<const int64_t*>(in[1]);
    auto y = static_cast<float*>(out[0]);
    const std::string where = ir::Graph::describe(c.node);
    c.report_kernel(kernels::portable_kernel("f32_maxunpool_scatter"));
    return [=] {
      std::fill(y, y + total, 0.0f);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t k = idx[i];
        if (k < 0 || k >= total)
          throw ir::Error(where + ": index " + std::to_string(k) + " is outside the output's " + std::to_string(total) +
                          " elements");
        y[k] = x[i];
      }
    };
  };
  return op;
}

}  // namespace

void register_maxunpool_op(OpTable& t) { t.emplace_back("MaxUnpool", maxunpool_op()); }

}  // namespace octet
