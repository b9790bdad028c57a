// The dynamic quantization steps: an integer conv / matmul whose int32 result goes straight to
// float, ONNX Runtime's quantize_dynamic pattern
//   DynamicQuantizeLinear -> ConvInteger / MatMulInteger -> Cast(float) -> Mul(x_scale * w_scale)
//   -> Add(bias) -> activation (Relu, Clip, Sigmoid, SiLU, HardSwish, Tanh, GELU, ...)
// as one step (engine/passes_dynamic.cc builds it; com.microsoft.MatMulIntegerToFloat is the
// same step as ORT's fusion writes it into a file):
//   ConvIntegerToFloat   (x, w, x_scale, w_scale, [x_zero_point], [w_zero_point], [bias]) + Conv's attributes
//   MatMulIntegerToFloat (A, B, a_scale, b_scale, [a_zero_point], [b_zero_point], [bias])
// y = act(clamp(float(acc) * (x_scale * w_scale[c]) + bias[c])), acc = sum (x - x_zp) * (w - w_zp)
// (kernels/gemm/q8_float_output.h). x_scale and x_zero_point are read when the step runs: they
// come from a DynamicQuantizeLinear. Constant int8 weights with zero point 0 run on the INT8
// IGEMM microkernels (Q8Conv / Q8Gemm, dense convs) or, depthwise, on the FP32 depthwise
// microkernels with exact integer sums (Q8DequantizedDwConv); anything else on the reference
// kernels.

// The scale products are float steps; keep them as written.
#include "engine/ops/batch_use.h"
#include "kernels/ref/fp_contract_off.h"

#include "engine/ops/gemm_geometry.h"
#include "engine/ops/qparams.h"
#include "engine/ops/range_output.h"
#include "engine/ops/repeated_channels.h"
#include "engine/ops/strided_output.h"
#include "engine/ops/spatial.h"
#include "kernels/conv/q8_conv.h"
#include "kernels/conv/q8_dwconv_dequantized.h"
#include "kernels/conv/q8_grouped_conv.h"
#include "kernels/conv/q8_narrow_group_conv.h"
#include "kernels/fallback.h"
#include "kernels/gemm/q8_gemm.h"
#include "kernels/ref/qconv2d.h"
#include "kernels/ref/qgemm.h"
#include "kernels/ref/qlinear.h"

namespace octet {
namespace {

using ir::DType;

enum Input : size_t { kX, kW, kXScale, kWScale, kXZeroPoint, kWZeroPoint, kBias };

// The float side, from the constant weight scales and bias and the fused activation: Relu and
// Clip are the clamp, any other runs on the F32 epilogue microkernels after it.
kernels::DequantizedOutput dequantized_output(const OpContext& c, std::span<const void* const> in) {
  kernels::DequantizedOutput out;
  const ops::ParamInputs p(c, in);
  out.w_scale = p[kWScale].floats();
  if (c.has(kBias)) out.bias = p[kBias].floats();
  const kernels::Activation act = ops::fused_activation(c.node);
  if (act.kind == kernels::ActKind::relu) out.lo = 0.0f;
  if (act.kind == kernels::ActKind::clip) out.lo = act.min, out.hi = act.max;
  if (act.kind != kernels::ActKind::relu && act.kind != kernels::ActKind::clip) out.act = act;
  return out;
}

// " + <microkernel>" for the fused activation the epilogue runs after the clamp, if any.
kernels::KernelId activation_note(const OpContext& c, const kernels::DequantizedOutput& dq) {
  const kernels::F32Epilogue e(dq.act, c.isa);
  return e.active() ? " + " + e.kernel_id() : kernels::KernelId{};
}

// Checks shared by both ops: scales, zero points, bias; n = output channels / columns.
void check_float_output_inputs(const OpContext& c, int64_t n, const char* x_name, const char* w_name) {
  ops::require_q8(c, kX, x_name);
  ops::require_q8(c, kW, w_name);
  ops::require_scale(c, kXScale, "the activation scale");
  ops::require_scale(c, kWScale, "the weight scale", n);
  ops::require_zero_point(c, kXZeroPoint, "the activation zero point", c.info(kX).dtype);
  ops::require_zero_point(c, kWZeroPoint, "the weight zero point", c.info(kW).dtype, n);
  if (c.has(kBias)) {
    const TensorInfo& b = c.info(kBias);
    if (b.dtype != DType::f32 || b.count() != n)
      c.fail("bias must be float32 with " + std::to_string(n) + " values, got " + ir::dtype_name(b.dtype) + " " +
             ir::dims_str(b.dims));
  }
  for (size_t i : {kW, kWScale, kWZeroPoint, kBias})
    if (c.has(i) && c.in_const[i] == nullptr) c.fail("weights, weight scale, weight zero point and bias must be constants");
}

// The weights can go to the microkernels: int8 with zero point 0.
bool fast_weights(const OpContext& c, std::span<const void* const> in) {
  if (c.isa == kernels::Isa::scalar || c.info(kW).dtype != DType::s8) return false;
  for (int32_t zp : ops::ParamInputs(c, in)[kWZeroPoint].ints())
    if (zp != 0) return false;
  return true;
}

int32_t run_time_zero_point(const void* p, DType t) {
  if (p == nullptr) return 0;
  return t == DType::u8 ? *static_cast<const uint8_t*>(p) : *static_cast<const int8_t*>(p);
}

// ---- ConvIntegerToFloat

ops::ConvGeometry conv_geometry(const OpContext& c) {
  ops::ConvGeometry g = ops::conv_geometry(c, kX, kW, true);
  check_float_output_inputs(c, g.out_c, "x", "w");
  return g;
}

Kernel build_dynamic_conv(const OpContext& c, std::span<const void* const> in, std::span<void* const> out) {
  const kernels::Conv2dShape s = ops::conv2d_shape(conv_geometry(c));
  const DType tx = c.info(kX).dtype;
  const auto x_type = *ops::q8_tag(tx);
  const auto* x_scale = static_cast<const float*>(in[kXScale]);
  const void* x_zp = c.has(kXZeroPoint) ? in[kXZeroPoint] : nullptr;
  // A slice of a Concat's channels (never with a range output: OpImpl::strided_output): Q8Conv
  // writes it in place, the other drivers through a buffer.
  ops::StridedOutput output(s, sizeof(float), out[0], c);
  kernels::DequantizedOutput dq = dequantized_output(c, in);
  pthreadpool_t pool = c.threadpool;
  if (s.groups == 1 && fast_weights(c, in)) {
    if (const auto fast = kernels::make_fast<kernels::Q8Conv>(s, x_type, static_cast<const int8_t*>(in[kW]), dq,
                                                               c.isa, c.packed_cache)) {
      const auto conv = fast.driver;
      const void* x = in[kX];
      conv->bind(x);
      c.report_kernel(conv->kernel_id() + " (float out)" + activation_note(c, dq) + ops::range_note(c));
      auto* y = static_cast<float*>(output.placed());
      const size_t stride = output.stride();
      return ops::with_range_output(c, out, [=](kernels::OutputRange* range) {
        conv->run_dequantized(x, *x_scale, run_time_zero_point(x_zp, tx), y, pool, range, stride);
      });
    }
  }
  auto* y = static_cast<float*>(output.dense());
  const auto* x = static_cast<const uint8_t*>(in[kX]);
  // A depthwise conv, or one with a channel multiplier: the depthwise conv of x's channels
  // repeated (ops/repeated_channels.h), the repeat before each run.
  const std::optional<kernels::Conv2dShape> repeated = ops::repeated_depthwise_shape(s);
  const kernels::Conv2dShape& dw_shape = repeated ? *repeated : s;
  if (kernels::Q8DequantizedDwConv::supports(dw_shape) && fast_weights(c, in)) {
    auto conv = std::make_shared<kernels::Q8DequantizedDwConv>(dw_shape, x_type, static_cast<const int8_t*>(in[kW]),
                                                               dq, c.isa, c.packed_cache);
    if (conv->has_kernel()) {
      std::optional<ops::RepeatedChannels<uint8_t>> buffer;
      if (repeated) buffer.emplace(s);
      const uint8_t* dw_x = buffer ? buffer->data() : x;
      c.report_kernel((buffer ? kernels::portable_kernel("repeat_channels") + " + " : kernels::KernelId{}) +
                      conv->kernel_id() + " (exact integer sums in float)" + activation_note(c, dq) +
                      ops::range_note(c));
      return output.then_place(ops::with_range_output(c, out, [=](kernels::OutputRange* range) {
        if (buffer) buffer->fill(pool, x);
        conv->run(dw_x, *x_scale, run_time_zero_point(x_zp, tx), y, pool, range);
      }), pool);
    }
  }
  // Grouped: several narrow groups to a vector instruction where a kernel runs them, else one
  // IGEMM per group.
  const auto grouped = [&](const auto& fast) -> Kernel {
    const auto conv = fast.driver;
    conv->bind(x);
    c.report_kernel(conv->kernel_id() + " (float out)" + activation_note(c, dq) + ops::range_note(c));
    return output.then_place(ops::with_range_output(c, out, [=](kernels::OutputRange* range) {
      conv->run_dequantized(x, *x_scale, run_time_zero_point(x_zp, tx), y, pool, range);
    }), pool);
  };
  if (kernels::Q8NarrowGroupConv::runs(s, x_type, x_type, c.isa) && fast_weights(c, in))
    if (const auto fast = kernels::make_fast<kernels::Q8NarrowGroupConv>(
            s, x_type, static_cast<const int8_t*>(in[kW]), dq, c.isa, c.packed_cache))
      return grouped(fast);
  if (kernels::Q8GroupedConv::supports(s, x_type, x_type) && !kernels::Q8DequantizedDwConv::supports(dw_shape) &&
      fast_weights(c, in))
    if (const auto fast = kernels::make_fast<kernels::Q8GroupedConv>(s, x_type, static_cast<const int8_t*>(in[kW]),
                                                                      dq, c.isa, c.packed_cache))
      return grouped(fast);
  // Reference: the integer conv into int32 scratch, then the float epilogue.
  c.report_kernel(kernels::reference_kernel("q8_conv2d_nhwc_acc__ref") + activation_note(c, dq) + ops::range_note(c));
  const ops::ChannelsLastInput x_cl(c.info(kX), in[kX]);
  const void* w = in[kW];
  const std::vector<int32_t> w_zp = ops::ParamInputs(c, in)[kWZeroPoint].ints();
  const int64_t rows = static_cast<int64_t>(s.batch) * s.out_d * s.out_h * s.out_w;
  auto acc = std::make_shared<std::vector<int32_t>>(static_cast<size_t>(rows * s.out_c));
  auto dq_shared = std::make_shared<const kernels::DequantizedOutput>(std::move(dq));
  return ops::visit_q8_acc_types(tx, c.info(kW).dtype, [&](auto tx_tag, auto tw_tag) -> Kernel {
    using TX = decltype(tx_tag);
    using TW = decltype(tw_tag);
    return output.then_place(ops::with_range_output(c, out, [=](kernels::OutputRange* range) {
      kernels::q8_conv2d_nhwc_acc__ref(s, static_cast<const TX*>(x_cl.get()), run_time_zero_point(x_zp, tx),
                                       static_cast<const TW*>(w), w_zp, nullptr, acc->data());
      const kernels::DequantizedOutput& o = *dq_shared;
      kernels::dequantize_accumulators__ref(rows, s.out_c, acc->data(), *x_scale, o.w_scale, o.bias, o.lo, o.hi, y);
      kernels::apply_dequantized_activation__ref(o, rows * s.out_c, y);
      if (range) range->add(static_cast<size_t>(rows * s.out_c), y);
    }), pool);
  });
}

// ---- MatMulIntegerToFloat

ops::MatMulGeometry matmul_geometry(const OpContext& c) {
  ops::MatMulGeometry g = ops::matmul_geometry(c, kX, kW);
  check_float_output_inputs(c, g.n, "A", "B");
  return g;
}

Kernel build_dynamic_matmul(const OpContext& c, std::span<const void* const> in, std::span<void* const> out) {
  const ops::MatMulGeometry g = matmul_geometry(c);
  const DType ta = c.info(kX).dtype;
  const auto a_type = *ops::q8_tag(ta);
  const auto* a_scale = static_cast<const float*>(in[kXScale]);
  const void* a_zp = c.has(kXZeroPoint) ? in[kXZeroPoint] : nullptr;
  const void* a = in[kX];
  auto* y = static_cast<float*>(out[0]);
  kernels::DequantizedOutput dq = dequantized_output(c, in);
  pthreadpool_t pool = c.threadpool;
  // A constant 2-D B: every row of every batch of A is one row of a single GEMM.
  if (c.info(kW).dims.size() == 2 && fast_weights(c, in)) {
    if (const auto fast = kernels::make_fast<kernels::Q8Gemm>(g.k, g.n, a_type, static_cast<const int8_t*>(in[kW]),
                                                               false, dq, c.isa, c.packed_cache)) {
      const auto gemm = fast.driver;
      const int64_t m = g.batches() * g.m;
      c.report_kernel(gemm->kernel_id() + " (float out)" + activation_note(c, dq) + ops::range_note(c));
      return ops::with_range_output(c, out, [=](kernels::OutputRange* range) {
        gemm->run_dequantized(m, a, *a_scale, run_time_zero_point(a_zp, ta), y, pool, range);
      });
    }
  }
  c.report_kernel(kernels::reference_kernel("q8_gemm_int32__ref") + activation_note(c, dq) + ops::range_note(c));
  kernels::GemmShape s;
  s.m = static_cast<int>(g.m);
  s.n = static_cast<int>(g.n);
  s.k = static_cast<int>(g.k);
  const void* b = in[kW];
  const std::vector<int32_t> b_zp = ops::ParamInputs(c, in)[kWZeroPoint].ints();
  auto acc = std::make_shared<std::vector<int32_t>>(static_cast<size_t>(g.m * g.n));
  auto dq_shared = std::make_shared<const kernels::DequantizedOutput>(std::move(dq));
  return ops::visit_q8_acc_types(ta, c.info(kW).dtype, [&](auto ta_tag, auto tb_tag) -> Kernel {
    using TA = decltype(ta_tag);
    using TB = decltype(tb_tag);
    return ops::with_range_output(c, out, [=](kernels::OutputRange* range) {
      const int32_t zp[] = {run_time_zero_point(a_zp, ta)};
      const kernels::DequantizedOutput& o = *dq_shared;
      for (int64_t bi = 0; bi < g.batches(); ++bi) {
        const TA* ab = static_cast<const TA*>(a) + g.matrix_index(bi, g.a_batch_strides) * g.m * g.k;
        const TB* bb = static_cast<const TB*>(b) + g.matrix_index(bi, g.b_batch_strides) * g.k * g.n;
        kernels::q8_gemm_int32__ref(s, ab, zp, bb, b_zp, nullptr, 0, 0, acc->data());
        kernels::dequantize_accumulators__ref(g.m, g.n, acc->data(), *a_scale, o.w_scale, o.bias, o.lo, o.hi,
                                              y + bi * g.m * g.n);
      }
      kernels::apply_dequantized_activation__ref(o, g.batches() * g.m * g.n, y);
      if (range) range->add(static_cast<size_t>(g.batches() * g.m * g.n), y);
    });
  });
}

std::optional<Layout> want_x_channels_last(const OpContext&, size_t i) {
  return i == kX ? Layout::channels_last : Layout::row_major;
}

}  // namespace

void register_dynamic_ops(OpTable& t) {
  OpImpl conv;
  conv.want_layout = want_x_channels_last;
  conv.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    std::vector<TensorInfo> outs{{DType::f32, conv_geometry(c).out_dims(), Layout::channels_last}};
    ops::add_range_output_info(c, outs);
    return outs;
  };
  conv.build = build_dynamic_conv;
  conv.strided_output = [](const OpContext& c) { return !ops::has_range_output(c); };
  // x_scale comes from a DynamicQuantizeLinear (whose range spans the batch); a range output
  // spans the batch too.
  conv.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) {
    return ops::with_range_output(c, ops::per_image_with_constants(c, kX));
  };
  conv.macs = [](const OpContext& c, const std::vector<TensorInfo>& out) { return ops::conv_macs(c, kW, out[0]); };
  t.emplace_back("ConvIntegerToFloat", conv);

  OpImpl matmul;
  matmul.want_layout = want_row_major;
  matmul.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    std::vector<TensorInfo> outs{{DType::f32, matmul_geometry(c).out, Layout::row_major}};
    ops::add_range_output_info(c, outs);
    return outs;
  };
  matmul.build = build_dynamic_matmul;
  matmul.batch_use = [](const OpContext& c, const std::vector<TensorInfo>& out) {
    return ops::with_range_output(c, ops::matmul_per_image(c, out, kX, kW));
  };
  matmul.macs = [](const OpContext& c, const std::vector<TensorInfo>&) {
    const ops::MatMulGeometry g = matmul_geometry(c);
    return g.batches() * g.m * g.n * g.k;
  };
  t.emplace_back("MatMulIntegerToFloat", matmul);
}

}  // namespace octet
