// QLinearConv and ConvInteger (ONNX opset 10) in integers, NHWC activations, ONNX-ordered
// weights: the scalar INT8 reference kernels (kernels/ref/qconv2d.h) behind the planner.
// Bit-exact with ONNX Runtime: int32 accumulation with the input zero point as the padding
// value, then MLAS's requantization (docs/requantization.md sections 5 to 7).

// Quantization parameters are derived in float here; keep every float step as written.
#include "engine/ops/batch_use.h"
#include "kernels/ref/fp_contract_off.h"

#include "engine/ops/qparams.h"
#include "engine/ops/repeated_channels.h"
#include "engine/ops/spatial.h"
#include "engine/ops/strided_output.h"
#include "kernels/conv/q8_conv.h"
#include "kernels/conv/q8_dwconv.h"
#include "kernels/conv/q8_grouped_conv.h"
#include "kernels/conv/q8_narrow_group_conv.h"
#include "kernels/fallback.h"
#include "kernels/quantize/lookup.h"
#include "kernels/ref/qconv2d.h"
#include "kernels/ref/qelementwise.h"

namespace octet {
namespace {

using ir::DType;

// ---- QLinearConv: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, [B],
// and octet's [output_table] (engine/passes_output_table.cc: 256 entries of y's type that every
// output byte is looked up in, a fused QLinearSigmoid / QLinearSilu / ...).

enum QLinearConvInput : size_t {
  kX, kXScale, kXZeroPoint, kW, kWScale, kWZeroPoint, kYScale, kYZeroPoint, kBias, kOutputTable
};

ops::ConvGeometry qlinearconv_geometry(const OpContext& c) {
  ops::ConvGeometry g = ops::conv_geometry(c, kX, kW, true);
  ops::require_q8(c, kX, "x");
  ops::require_q8(c, kW, "w");
  // x and y are per tensor; w per tensor or per output channel (ONNX allows unequal
  // per-channel weight zero points; ONNX Runtime does not, the reference kernel does).
  ops::require_scale(c, kXScale, "x_scale");
  ops::require_zero_point(c, kXZeroPoint, "x_zero_point", c.info(kX).dtype);
  ops::require_scale(c, kWScale, "w_scale", g.out_c);
  ops::require_zero_point(c, kWZeroPoint, "w_zero_point", c.info(kW).dtype, g.out_c);
  ops::require_scale(c, kYScale, "y_scale");
  ops::quantized_output_type(c, kYZeroPoint);
  if (c.has(kBias)) {
    const TensorInfo& b = c.info(kBias);
    if (b.dtype != DType::s32 || b.count() != g.out_c)
      c.fail("B must be int32 with one value per output channel (" + std::to_string(g.out_c) + "), got " +
             ir::dtype_name(b.dtype) + " " + ir::dims_str(b.dims));
  }
  ops::require_clamp_activation(c);
  if (c.has(kOutputTable)) {
    const TensorInfo& t = c.info(kOutputTable);
    if (t.dtype != ops::quantized_output_type(c, kYZeroPoint) || t.count() != 256 || c.in_const[kOutputTable] == nullptr)
      c.fail(std::string("the output table must be a constant of 256 values of y's type, got ") + ir::dtype_name(t.dtype) + " " +
             ir::dims_str(t.dims));
  }
  return g;
}

int64_t output_count(const kernels::Conv2dShape& s) {
  return int64_t(s.batch) * s.out_d * s.out_h * s.out_w * s.out_c;
}

// The fused lookup's table (kOutputTable), or nullptr.
const uint8_t* output_table(const OpContext& c) {
  return c.has(kOutputTable) ? reinterpret_cast<const uint8_t*>(c.in_const[kOutputTable]->bytes.data()) : nullptr;
}

// y[i] = table[y[i]] over a whole output, in place, on the fastest lookup of the level.
Kernel then_look_up(const OpContext& c, Kernel conv, void* y, int64_t count, const uint8_t* table,
                    kernels::KernelId* name) {
  const kernels::Q8LookupKernel* lookup = kernels::choose_q8_lookup(c.isa);
  *name = *name + "+" + (lookup ? kernels::row_kernel(*lookup) : kernels::reference_kernel("q8_lookup__ref"));
  pthreadpool_t pool = c.threadpool;
  auto* bytes = static_cast<uint8_t*>(y);
  return [conv, lookup, bytes, count, table, pool] {
    conv();
    if (lookup) kernels::q8_lookup(*lookup, size_t(count), bytes, table, bytes, pool);
    else kernels::q8_lookup__ref(count, bytes, table, bytes);
  };
}

std::vector<TensorInfo> infer_qlinearconv(const OpContext& c) {
  ops::ConvGeometry g = qlinearconv_geometry(c);
  return {{ops::quantized_output_type(c, kYZeroPoint), g.out_dims(), Layout::channels_last}};
}

// Everything QLinearConv derives from its quantization parameters.
struct QConvParams {
  int32_t x_zero_point = 0;
  std::vector<int32_t> w_zero_point;  // 1 or out_c values
  std::vector<float> multiplier;      // 1 or out_c values: (x_scale * w_scale[c]) / y_scale
  int32_t y_zero_point = 0, qmin = 0, qmax = 0;
};

template <class TY>
QConvParams derive_qconv_params(const kernels::Activation& act, const ops::ParamInputs& p) {
  QConvParams q;
  q.x_zero_point = p[kXZeroPoint].int_scalar();
  q.w_zero_point = p[kWZeroPoint].ints();
  const float x_scale = p[kXScale].scalar(), y_scale = p[kYScale].scalar();
  for (float w_scale : p[kWScale].floats())
    q.multiplier.push_back(kernels::requant_multiplier(x_scale, w_scale, y_scale));
  q.y_zero_point = p[kYZeroPoint].int_scalar();
  ops::output_clamp<TY>(act, {y_scale, q.y_zero_point}, &q.qmin, &q.qmax);
  return q;
}

// The SIMD kernels take everything but x at plan time: constant weights, bias and
// quantization parameters, s8 weights with zero point 0 (what ONNX Runtime's quantizer and
// octet's write). An empty Kernel when something does not fit: the reference kernel runs.
template <class FastConv>
Kernel fast_qconv(const OpContext& c, std::span<const void* const> in, ops::StridedOutput& output,
                  const kernels::Conv2dShape& s, kernels::Q8 tx, kernels::Q8 ty) {
  if (!FastConv::supports(s, tx, ty)) return c.no_fast_kernel("shape not supported");
  const ops::ParamInputs p(c, in);
  const kernels::Activation act = ops::fused_activation(c.node);
  const QConvParams q = ty == kernels::Q8::u8 ? derive_qconv_params<uint8_t>(act, p) : derive_qconv_params<int8_t>(act, p);
  for (int32_t zp : q.w_zero_point)
    if (zp != 0) return c.no_fast_kernel("weight zero point != 0 (the SIMD kernels take symmetric int8 weights)");
  const kernels::Requantization rq{q.multiplier, q.y_zero_point, q.qmin, q.qmax};
  const auto* bias = c.has(kBias) ? static_cast<const int32_t*>(in[kBias]) : nullptr;
  const kernels::FastDriver<FastConv> fast =
      kernels::make_fast<FastConv>(s, tx, q.x_zero_point, static_cast<const int8_t*>(in[kW]), bias, rq, ty, c.isa,
                                   c.packed_cache);
  if (!fast) return c.no_fast_kernel(fast.why_not);
  const std::shared_ptr<FastConv> conv = fast.driver;
  const void* x = in[kX];
  conv->bind(x);
  pthreadpool_t pool = c.threadpool;
  const uint8_t* table = output_table(c);
  if constexpr (std::is_same_v<FastConv, kernels::Q8Conv>) {
    // Each tile looked up as it is stored, in its place.
    if (table) conv->set_output_table(table, c.isa);
    c.report_kernel(conv->kernel_id());
    void* y = output.placed();
    const size_t stride = output.stride();
    return [conv, x, y, pool, stride] { conv->run(x, y, pool, stride); };
  }
  void* y = output.dense();
  if (table) {
    kernels::KernelId name = conv->kernel_id();
    Kernel k = then_look_up(c, [conv, x, y, pool] { conv->run(x, y, pool); }, y, output_count(s), table, &name);
    c.report_kernel(name);
    return output.then_place(std::move(k), pool);
  }
  c.report_kernel(conv->kernel_id());
  return output.then_place([conv, x, y, pool] { conv->run(x, y, pool); }, pool);
}

Kernel build_fast_qlinearconv(const OpContext& c, std::span<const void* const> in, ops::StridedOutput& y,
                              const kernels::Conv2dShape& s) {
  if (c.isa == kernels::Isa::scalar) return c.no_fast_kernel("--isa scalar");
  if (c.info(kW).dtype != DType::s8) return c.no_fast_kernel("uint8 weights (the SIMD kernels take int8 weights)");
  for (size_t i : {kXScale, kXZeroPoint, kW, kWScale, kWZeroPoint, kYScale, kYZeroPoint})
    if (!c.has(i) || c.in_const[i] == nullptr) return c.no_fast_kernel("weights or quantization parameters not constant");
  if (c.has(kBias) && c.in_const[kBias] == nullptr) return c.no_fast_kernel("bias not constant");
  const auto tx = ops::q8_tag(c.info(kX).dtype), ty = ops::q8_tag(ops::quantized_output_type(c, kYZeroPoint));
  if (!tx || !ty) return {};
  // A 3-D depthwise conv runs grouped (the depthwise kernels are 2-D).
  const bool depthwise = s.groups > 1 && s.groups == s.in_c && s.out_c == s.in_c && !s.has_depth();
  if (depthwise) return fast_qconv<kernels::Q8DwConv>(c, in, y, s, *tx, *ty);
  if (const std::optional<kernels::Conv2dShape> repeated = ops::repeated_depthwise_shape(s)) {
    // A channel multiplier: the depthwise conv of x's channels repeated (ops/repeated_channels.h).
    const ops::RepeatedChannels<uint8_t> buffer(s);
    std::vector<const void*> repeated_in(in.begin(), in.end());
    repeated_in[kX] = buffer.data();
    if (Kernel conv = fast_qconv<kernels::Q8DwConv>(c, repeated_in, y, *repeated, *tx, *ty)) {
      if (c.kernel_name) c.report_kernel(kernels::portable_kernel("repeat_channels") + " + " + *c.kernel_name);
      return buffer.then(c.threadpool, static_cast<const uint8_t*>(in[kX]), std::move(conv));
    }
  }
  if (s.groups == 1) return fast_qconv<kernels::Q8Conv>(c, in, y, s, *tx, *ty);
  if (kernels::Q8NarrowGroupConv::runs(s, *tx, *ty, c.isa))
    return fast_qconv<kernels::Q8NarrowGroupConv>(c, in, y, s, *tx, *ty);
  return fast_qconv<kernels::Q8GroupedConv>(c, in, y, s, *tx, *ty);
}

Kernel build_qlinearconv(const OpContext& c, std::span<const void* const> in, std::span<void* const> out) {
  const kernels::Conv2dShape s = ops::conv2d_shape(qlinearconv_geometry(c));
  ops::StridedOutput output(s, ir::dtype_size(ops::quantized_output_type(c, kYZeroPoint)), out[0], c);
  if (Kernel fast = build_fast_qlinearconv(c, in, output, s)) return fast;
  c.report_kernel(kernels::reference_kernel("q8_conv2d_nhwc__ref"));
  const ops::ChannelsLastInput x(c.info(kX), in[kX]);
  const void* w = in[kW];
  const auto* bias = c.has(kBias) ? static_cast<const int32_t*>(in[kBias]) : nullptr;
  void* y = output.dense();
  const DType tx = c.info(kX).dtype, tw = c.info(kW).dtype, ty = ops::quantized_output_type(c, kYZeroPoint);
  Kernel k = ops::visit_q8_req_types(tx, tw, ty, [&](auto tx_tag, auto tw_tag, auto ty_tag) -> Kernel {
    using TX = decltype(tx_tag);
    using TW = decltype(tw_tag);
    using TY = decltype(ty_tag);
    const kernels::Activation act = ops::fused_activation(c.node);
    return ops::with_params(
        c, in, {kXScale, kXZeroPoint, kWScale, kWZeroPoint, kYScale, kYZeroPoint},
        [act](const ops::ParamInputs& p) { return derive_qconv_params<TY>(act, p); },
        [=](const QConvParams& q) {
          const kernels::Requantization rq{q.multiplier, q.y_zero_point, q.qmin, q.qmax};
          kernels::q8_conv2d_nhwc__ref(s, static_cast<const TX*>(x.get()), q.x_zero_point,
                                       static_cast<const TW*>(w), q.w_zero_point, bias, rq, static_cast<TY*>(y));
        });
  });
  if (!k)
    c.fail(std::string("x ") + ir::dtype_name(tx) + ", w " + ir::dtype_name(tw) + ", y " + ir::dtype_name(ty) +
           " is not supported; octet runs " + ops::q8_req_type_list());
  if (const uint8_t* table = output_table(c)) {
    kernels::KernelId name = kernels::reference_kernel("q8_conv2d_nhwc__ref");
    k = then_look_up(c, std::move(k), y, output_count(s), table, &name);
    c.report_kernel(name);
  }
  return output.then_place(std::move(k), c.threadpool);
}

// ---- ConvInteger: x, w, [x_zero_point], [w_zero_point] -> int32

enum ConvIntegerInput : size_t { kIntX, kIntW, kIntXZeroPoint, kIntWZeroPoint };

ops::ConvGeometry convinteger_geometry(const OpContext& c) {
  ops::ConvGeometry g = ops::conv_geometry(c, kIntX, kIntW, true);
  ops::require_q8(c, kIntX, "x");
  ops::require_q8(c, kIntW, "w");
  ops::require_zero_point(c, kIntXZeroPoint, "x_zero_point", c.info(kIntX).dtype);
  ops::require_zero_point(c, kIntWZeroPoint, "w_zero_point", c.info(kIntW).dtype, g.out_c);
  return g;
}

struct ConvIntegerParams {
  int32_t x_zero_point = 0;
  std::vector<int32_t> w_zero_point;
};

Kernel build_convinteger(const OpContext& c, std::span<const void* const> in, std::span<void* const> out) {
  const kernels::Conv2dShape s = ops::conv2d_shape(convinteger_geometry(c));
  const ops::ChannelsLastInput x(c.info(kIntX), in[kIntX]);
  const void* w = in[kIntW];
  auto* y = static_cast<int32_t*>(out[0]);
  const DType tx = c.info(kIntX).dtype, tw = c.info(kIntW).dtype;
  c.report_kernel(kernels::reference_kernel("q8_conv2d_nhwc_acc__ref"));
  if (c.isa != kernels::Isa::scalar) c.report_fallback("ConvInteger alone (not fused with its float tail) has no SIMD driver");
  Kernel k = ops::visit_q8_acc_types(tx, tw, [&](auto tx_tag, auto tw_tag) -> Kernel {
    using TX = decltype(tx_tag);
    using TW = decltype(tw_tag);
    // The zero points may come from a DynamicQuantizeLinear, i.e. only at run time.
    return ops::with_params(
        c, in, {kIntXZeroPoint, kIntWZeroPoint},
        [](const ops::ParamInputs& p) {
          return ConvIntegerParams{p[kIntXZeroPoint].int_scalar(), p[kIntWZeroPoint].ints()};
        },
        [=](const ConvIntegerParams& q) {
          kernels::q8_conv2d_nhwc_acc__ref(s, static_cast<const TX*>(x.get()), q.x_zero_point,
                                           static_cast<const TW*>(w), q.w_zero_point, nullptr, y);
        });
  });
  if (!k) c.fail(std::string("x ") + ir::dtype_name(tx) + " with w " + ir::dtype_name(tw) + " is not supported");
  return k;
}

// Activations channels-last, everything else (weights in ONNX order, parameters) row-major.
std::optional<Layout> want_x_channels_last(const OpContext&, size_t i) {
  return i == 0 ? Layout::channels_last : Layout::row_major;
}

}  // namespace

void register_qconv_ops(OpTable& t) {
  OpImpl qconv;
  qconv.want_layout = want_x_channels_last;
  qconv.infer = infer_qlinearconv;
  qconv.build = build_qlinearconv;
  qconv.strided_output = [](const OpContext&) { return true; };  // in place (Q8Conv) or through a buffer
  qconv.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) { return ops::per_image_with_constants(c); };
  qconv.macs = [](const OpContext& c, const std::vector<TensorInfo>& out) { return ops::conv_macs(c, kW, out[0]); };
  t.emplace_back("QLinearConv", qconv);

  OpImpl convint;
  convint.want_layout = want_x_channels_last;
  convint.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    return {{DType::s32, convinteger_geometry(c).out_dims(), Layout::channels_last}};
  };
  convint.build = build_convinteger;
  convint.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) { return ops::per_image_with_constants(c); };
  convint.macs = [](const OpContext& c, const std::vector<TensorInfo>& out) {
    return ops::conv_macs(c, kIntW, out[0]);
  };
  t.emplace_back("ConvInteger", convint);
}

}  // namespace octet
