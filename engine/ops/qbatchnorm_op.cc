// QLinearBatchNormalization (octet's own, passes::fuse_qdq_batchnorm): a float inference
// BatchNormalization left between a DequantizeLinear and a QuantizeLinear of a QDQ model
// (DenseNet's pre-activations: DQ -> BN [+ Relu] -> Q), run as one step over the 8-bit map.
//
//   inputs: x (8-bit), x_scale, x_zero_point, scale, B, mean, var, y_scale, y_zero_point
//
// QLinearBiasAdd (octet's own, passes::fuse_qdq_bias_add): a float Add of a constant row over
// the last axis between a DequantizeLinear and a QuantizeLinear (the bias of a Linear torch
// exports as MatMul + Add, left in float by the quantizer: ConvNeXt's MLP), the same steps with
// a scale of 1 (x * 1 is x, so the add rounds as the Add alone did), over the row-major tensor.
//
//   inputs: x (8-bit), x_scale, x_zero_point, B (one float per element of x's last axis),
//           y_scale, y_zero_point
//
// Chunk by chunk of whole pixels. With no activation, a Relu or a Clip, one microkernel
// (q8_affine_quantize) dequantizes, multiplies, adds, clamps and quantizes in registers; other
// activations run the steps' own kernels in turn over a float scratch (dequantize, the BN's
// multiply, add and activation in place, quantize). Either way the bits are those of the steps
// apart, and so ONNX Runtime's. The scale and shift rows are laid out over a whole chunk, so
// both paths read them flat: read as a row per pixel (row stride 0), 24 channels ran the
// multiply and the add at about a cycle an element, and DenseNet-mini's 24-channel BN took
// longer fused than the three steps apart.
#include <algorithm>
#include <memory>
#include <vector>

#include "engine/op_registry.h"
#include "engine/ops/batch_use.h"
#include "engine/ops/batchnorm_affine.h"
#include "engine/ops/fused_activation.h"
#include "engine/ops/qparams.h"
#include "kernels/cache_budgets.h"
#include "kernels/elementwise/eltwise.h"
#include "kernels/quantize/quantize.h"

namespace octet {
namespace {

enum QbnInput : size_t { kQbnX, kQbnXScale, kQbnXZeroPoint, kQbnScale, kQbnB, kQbnMean, kQbnVar, kQbnYScale, kQbnYZeroPoint };
enum QbiasInput : size_t { kQbiasX, kQbiasXScale, kQbiasXZeroPoint, kQbiasB, kQbiasYScale, kQbiasYZeroPoint };

// Where an op's 8-bit ends are among its inputs.
struct QEnds {
  size_t x, x_scale, x_zero_point, y_scale, y_zero_point;
};
constexpr QEnds kQbnEnds{kQbnX, kQbnXScale, kQbnXZeroPoint, kQbnYScale, kQbnYZeroPoint};
constexpr QEnds kQbiasEnds{kQbiasX, kQbiasXScale, kQbiasXZeroPoint, kQbiasYScale, kQbiasYZeroPoint};

// The 8-bit ends and every float input one per channel (`channels` of them), all constant but x.
void check_q_affine(const OpContext& c, const QEnds& e, std::initializer_list<size_t> per_channel, int64_t channels) {
  const TensorInfo& x = c.info(e.x);
  ops::require_scale(c, e.x_scale, "x_scale");
  ops::require_zero_point(c, e.x_zero_point, "x_zero_point", x.dtype);
  ops::require_scale(c, e.y_scale, "y_scale");
  ops::quantized_output_type(c, e.y_zero_point);
  for (size_t i : per_channel) {
    if (!c.has(i) || c.info(i).dtype != ir::DType::f32 || c.info(i).count() != channels)
      c.fail("input " + std::to_string(i) + " must hold one float per channel (" + std::to_string(channels) + ")");
  }
  for (size_t i = 0; i < c.node.inputs.size(); ++i)
    if (i != e.x && c.has(i) && c.in_const[i] == nullptr) c.fail("input " + std::to_string(i) + " must be a constant");
}

void check_qbn(const OpContext& c) {
  ops::require_q8(c, kQbnX, "X");
  const TensorInfo& x = c.info(kQbnX);
  if (x.dims.size() < 2) c.fail("X must have rank >= 2, got " + ir::dims_str(x.dims));
  check_q_affine(c, kQbnEnds, {kQbnScale, kQbnB, kQbnMean, kQbnVar}, x.dims[1]);
}

void check_qbias(const OpContext& c) {
  ops::require_q8(c, kQbiasX, "X");
  const TensorInfo& x = c.info(kQbiasX);
  if (x.dims.empty()) c.fail("X must have rank >= 1");
  check_q_affine(c, kQbiasEnds, {kQbiasB}, x.dims.back());
}

struct QbnRun {
  const kernels::Q8QuantizeKernel* fast;  // nullptr: the reference quantize and dequantize
  bool x_signed;
  kernels::Q8 y_type;
  const uint8_t* x;
  uint8_t* y;
  kernels::QuantParams x_q, y_q;
  const float* affine;  // the scale row, then the shift row, each over a whole chunk
  int64_t channels, pixels, chunk_pixels, chunks, chunks_per_task;
  size_t chunk;  // floats of a whole chunk: where the shift row starts in affine
  const kernels::F32Binary* mul[2];  // a whole chunk, the last chunk
  const kernels::F32Binary* add[2];
  kernels::Activation act;
  const kernels::F32Unary* activation;  // nullptr: none
  float* scratch;                        // one chunk of floats per task; nullptr: in registers
  kernels::Q8AffineQuantize in_registers;

  static void task(void* context, size_t t) {
    const auto& r = *static_cast<const QbnRun*>(context);
    float* f = r.scratch + (r.scratch ? t * size_t(r.chunk_pixels * r.channels) : 0);
    const int64_t end = std::min(r.chunks, int64_t(t + 1) * r.chunks_per_task);
    for (int64_t i = int64_t(t) * r.chunks_per_task; i < end; ++i) {
      const bool last = i + 1 == r.chunks;
      const int64_t first = i * r.chunk_pixels;
      const size_t n = size_t((last ? r.pixels - first : r.chunk_pixels) * r.channels);
      if (!r.scratch) {
        r.fast->affine(n, r.x + first * r.channels, r.affine, r.affine + r.chunk, r.in_registers,
                       r.y + first * r.channels);
        continue;
      }
      kernels::q8_dequantize(r.fast, n, r.x + first * r.channels, r.x_signed, r.x_q.scale, r.x_q.zero_point, f, nullptr);
      r.mul[last]->run(f, r.affine, f, nullptr);
      r.add[last]->run(f, r.affine + r.chunk, f, nullptr);
      if (r.activation) r.activation->run(r.act, int64_t(n), f, f, nullptr);
      kernels::q8_quantize(r.fast, r.y_type, n, f, r.y_q.scale, r.y_q.zero_point, r.y + first * r.channels, nullptr);
    }
  }
};

// The run of either op: x dequantized, times the scale row, plus the shift row (row: the scale
// row, then the shift row, `channels` floats each, over x's innermost axis as it lies in
// memory), the activation, quantized; chunk by chunk of whole pixels.
Kernel build_q8_affine(const OpContext& c, std::span<const void* const> in, std::span<void* const> out, const QEnds& e,
                       const float* row, int64_t channels, const kernels::Activation& act) {
  const TensorInfo& x = c.info(e.x);
  const int64_t pixels = x.count() / std::max<int64_t>(1, channels);
  const ops::ParamInputs params(c, in);
  // Scratch and the scale and shift rows laid out over a chunk: a quarter of the L1D each.
  const int64_t chunk_pixels =
      std::clamp<int64_t>(int64_t(kernels::cache_sizes().l1d / 4) / int64_t(channels * sizeof(float)), 1, pixels);
  const size_t chunk = size_t(chunk_pixels * channels);
  auto affine = std::make_shared<std::vector<float>>(2 * chunk);
  ops::batchnorm_rows_over_chunk(row, channels, chunk, affine->data());
  const int64_t chunks = (pixels + chunk_pixels - 1) / chunk_pixels;
  const size_t threads = c.threadpool ? pthreadpool_get_threads_count(c.threadpool) : 1;
  const int64_t tasks = std::min<int64_t>(chunks, int64_t(threads));
  auto pass = [&](kernels::BinaryOp kind, int64_t rows) {
    const int64_t dims[] = {rows * channels}, strides[] = {1};
    return std::make_shared<const kernels::F32Binary>(kind, 1, dims, strides, strides, c.isa);
  };
  const int64_t tail_pixels = pixels - (chunks - 1) * chunk_pixels;
  auto mul = pass(kernels::BinaryOp::mul, chunk_pixels), add = pass(kernels::BinaryOp::add, chunk_pixels);
  auto mul_tail = tail_pixels == chunk_pixels ? mul : pass(kernels::BinaryOp::mul, tail_pixels);
  auto add_tail = tail_pixels == chunk_pixels ? add : pass(kernels::BinaryOp::add, tail_pixels);
  const kernels::Q8QuantizeKernel* fast = kernels::choose_q8_quantize(c.isa);
  const kernels::Q8 y_type =
      ops::quantized_output_type(c, e.y_zero_point) == ir::DType::s8 ? kernels::Q8::s8 : kernels::Q8::u8;
  const kernels::QuantParams x_q = params[e.x_scale].quant(params[e.x_zero_point]);
  const kernels::QuantParams y_q = params[e.y_scale].quant(params[e.y_zero_point]);
  kernels::Q8AffineQuantize in_registers{x.dtype == ir::DType::s8, x_q.scale, x_q.zero_point};
  in_registers.y_scale = y_q.scale;
  in_registers.y_zero_point = y_q.zero_point;
  in_registers.qmin = kernels::q8_min(y_type);
  in_registers.qmax = kernels::q8_max(y_type);
  if (act.kind == kernels::ActKind::relu || act.kind == kernels::ActKind::clip) {
    in_registers.lo = act.min;
    if (act.kind == kernels::ActKind::clip) in_registers.hi = act.max;
  }
  const bool registers = fast && (act.kind == kernels::ActKind::none || act.kind == kernels::ActKind::relu ||
                                  (act.kind == kernels::ActKind::clip && !(act.min > act.max)));
  auto activation = act.kind != kernels::ActKind::none && !registers
                        ? std::make_shared<const kernels::F32Unary>(act.kind, c.isa)
                        : nullptr;
  kernels::KernelId id;
  if (registers) {
    id = kernels::KernelId{fast->affine_name, fast->isa == kernels::Isa::scalar};
    if (act.kind != kernels::ActKind::none) id = id + (act.kind == kernels::ActKind::relu ? "+relu" : "+clip");
  } else {
    id = fast ? kernels::KernelId{fast->dequantize_name, fast->isa == kernels::Isa::scalar}
              : kernels::reference_kernel("q8_dequantize_linear__ref");
    id = id + " + " + mul->kernel_id() + " + " + add->kernel_id();
    if (activation) id = id + "+" + activation->kernel_id();
    id = id + " + " + (fast ? kernels::row_kernel(*fast) : kernels::reference_kernel("q8_quantize_linear__ref"));
  }
  c.report_kernel(id);
  auto scratch = std::make_shared<std::vector<float>>(registers ? 0 : size_t(tasks * chunk_pixels * channels));
  QbnRun r{fast,
           x.dtype == ir::DType::s8,
           y_type,
           static_cast<const uint8_t*>(in[e.x]),
           static_cast<uint8_t*>(out[0]),
           x_q,
           y_q,
           affine->data(),
           channels,
           pixels,
           chunk_pixels,
           chunks,
           (chunks + tasks - 1) / tasks,
           chunk,
           {mul.get(), mul_tail.get()},
           {add.get(), add_tail.get()},
           act,
           activation.get(),
           registers ? nullptr : scratch->data(),
           in_registers};
  pthreadpool_t pool = c.threadpool;
  return [=]() mutable {
    (void)affine, (void)mul, (void)add, (void)mul_tail, (void)add_tail, (void)activation, (void)scratch;  // kept alive
    pthreadpool_parallelize_1d(pool, QbnRun::task, &r, size_t(tasks), 0);
  };
}

OpImpl qbatchnorm_op() {
  OpImpl op;
  op.want_layout = channels_last_map;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    check_qbn(c);
    TensorInfo y = c.info(kQbnX);
    y.dtype = ops::quantized_output_type(c, kQbnYZeroPoint);
    return {y};
  };
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) { return ops::per_image_with_constants(c); };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    check_qbn(c);
    const int64_t channels = c.info(kQbnX).dims[1];
    auto p = [&](size_t i) { return static_cast<const float*>(in[i]); };
    std::vector<float> row(size_t(2 * channels));
    ops::batchnorm_affine(p(kQbnScale), p(kQbnB), p(kQbnMean), p(kQbnVar), c.node.attrs.f("epsilon"),
                          ops::batchnorm_as_ort_conv(c.node), channels, row.data());
    return build_q8_affine(c, in, out, kQbnEnds, row.data(), channels, ops::fused_activation(c.node));
  };
  return op;
}

OpImpl qbias_add_op() {
  OpImpl op;
  op.want_layout = want_row_major;  // the bias runs along the innermost axis in memory
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    check_qbias(c);
    TensorInfo y = c.info(kQbiasX);
    y.dtype = ops::quantized_output_type(c, kQbiasYZeroPoint);
    return {y};
  };
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) { return ops::per_image_with_constants(c); };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    check_qbias(c);
    const int64_t channels = c.info(kQbiasX).dims.back();
    const float* bias = static_cast<const float*>(in[kQbiasB]);
    std::vector<float> row(size_t(channels), 1.0f);
    row.insert(row.end(), bias, bias + channels);
    return build_q8_affine(c, in, out, kQbiasEnds, row.data(), channels, kernels::Activation{});
  };
  return op;
}

}  // namespace

void register_qbatchnorm_op(OpTable& t) {
  t.emplace_back("QLinearBatchNormalization", qbatchnorm_op());
  t.emplace_back("QLinearBiasAdd", qbias_add_op());
}

}  // namespace octet
