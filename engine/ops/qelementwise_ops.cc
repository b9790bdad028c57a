// ONNX Runtime's com.microsoft INT8 element-wise and pooling ops: QLinearAdd, QLinearMul (numpy
// broadcast, any layout), QLinearSigmoid and QLinearLeakyRelu (256-entry tables),
// QLinearGlobalAveragePool and QLinearAveragePool (channels-last), QLinearReduceMean (any axes). Every scale and zero point
// is per tensor; the output has the input's element type. Formulas: docs/requantization.md
// sections 9 to 11. Add, Mul and the global average run on the SIMD kernels of
// kernels/elementwise/eltwise.h (bit-exact with the ref kernels named below, which they fall
// back to for shapes they do not take); the table lookups and windowed average on the refs.

// The lookup tables are computed in float here; keep every float step as written.
#include "engine/ops/batch_use.h"
#include "kernels/ref/fp_contract_off.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <memory>

#include "engine/ops/broadcast.h"
#include "engine/ops/qparams.h"
#include "engine/ops/spatial.h"
#include "kernels/elementwise/eltwise.h"
#include "kernels/quantize/lookup.h"
#include "kernels/pool/pool2d.h"
#include "kernels/ref/qelementwise.h"
#include "kernels/ref/qpool2d.h"
#include "kernels/ref/qreduce.h"

namespace octet {
namespace {

using ir::DType;
using kernels::QuantParams;

// ---- QLinearAdd, QLinearMul: A, A_scale, [A_zero_point], B, B_scale, [B_zero_point], C_scale, [C_zero_point]

enum BinaryInput : size_t { kA, kAScale, kAZeroPoint, kB, kBScale, kBZeroPoint, kCScale, kCZeroPoint };

ir::Dims qbinary_dims(const OpContext& c) {
  ops::require_q8(c, kA, "A");
  const DType t = c.info(kA).dtype;
  if (c.info(kB).dtype != t)
    c.fail(std::string("A is ") + ir::dtype_name(t) + " and B " + ir::dtype_name(c.info(kB).dtype) +
           "; both must have the same type");
  ops::require_scale(c, kAScale, "A_scale");
  ops::require_zero_point(c, kAZeroPoint, "A_zero_point", t);
  ops::require_scale(c, kBScale, "B_scale");
  ops::require_zero_point(c, kBZeroPoint, "B_zero_point", t);
  ops::require_scale(c, kCScale, "C_scale");
  ops::require_zero_point(c, kCZeroPoint, "C_zero_point", t);
  return ops::broadcast_dims(c, c.info(kA).dims, c.info(kB).dims);
}

struct BinaryParams {
  QuantParams a, b, y;
};

Kernel build_qbinary(const OpContext& c, std::span<const void* const> in, std::span<void* const> out) {
  const ir::Dims dims = qbinary_dims(c);
  const ops::StridedBroadcast box =
      ops::strided_broadcast(c.info(kA), c.info(kB), dims, ops::broadcast_layout(c.info(kA), c.info(kB), dims));
  // ORT's recipes, not the Q/DQ graph's: octet's target is bit-parity with ORT. Add is MLAS's
  // AVX2 kernel (q8_add_ratio_fma_strided__ref: ratios to the output scale, zero points folded
  // before rounding, FMAs); Mul is MLAS's x86 / NEON kernel (q8_mul_ratio_strided__ref). They
  // can differ from DQ -> op -> Q by 1 on near-ties; ORT's scalar-operand shortcut in Add is
  // not modelled (see the doc).
  const auto kind = c.node.op == "QLinearAdd" ? kernels::Q8Binary::Kind::add : kernels::Q8Binary::Kind::mul;
  const kernels::Q8 type = c.info(kA).dtype == DType::u8 ? kernels::Q8::u8 : kernels::Q8::s8;
  auto binary = std::make_shared<const kernels::Q8Binary>(kind, type, box.rank, box.dims.data(), box.a_strides.data(),
                                                          box.b_strides.data(), c.isa);
  c.report_kernel(binary->kernel_id());
  const int32_t lo = kernels::q8_min(type), hi = kernels::q8_max(type);
  const void* a = in[kA];
  const void* b = in[kB];
  void* y = out[0];
  pthreadpool_t pool = c.threadpool;
  return ops::with_params(
      c, in, {kAScale, kAZeroPoint, kBScale, kBZeroPoint, kCScale, kCZeroPoint},
      [](const ops::ParamInputs& p) {
        return BinaryParams{p[kAScale].quant(p[kAZeroPoint]), p[kBScale].quant(p[kBZeroPoint]),
                            p[kCScale].quant(p[kCZeroPoint])};
      },
      [=](const BinaryParams& p) { binary->run(a, p.a, b, p.b, p.y, lo, hi, y, pool); });
}

OpImpl qbinary_op() {
  OpImpl op;
  op.want_layout = any_layout;
  op.inputs_share_layout = true;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    const ir::Dims out = qbinary_dims(c);
    return {{c.info(kA).dtype, out, ops::broadcast_layout(c.info(kA), c.info(kB), out)}};
  };
  op.batch_use = ops::broadcast_per_image;  // the scales and zero points are constants (rank 0 or 1)
  op.build = build_qbinary;
  return op;
}

// ---- Unary: X, X_scale, [X_zero_point], Y_scale, [Y_zero_point] (+ pooling attributes)

enum UnaryInput : size_t { kX, kXScale, kXZeroPoint, kYScale, kYZeroPoint };

void check_qunary(const OpContext& c) {
  ops::require_q8(c, kX, "X");
  const DType t = c.info(kX).dtype;
  ops::require_scale(c, kXScale, "X_scale");
  ops::require_zero_point(c, kXZeroPoint, "X_zero_point", t);
  ops::require_scale(c, kYScale, "Y_scale");
  ops::require_zero_point(c, kYZeroPoint, "Y_zero_point", t);
}

struct UnaryParams {
  QuantParams x, y;
};

UnaryParams derive_unary(const ops::ParamInputs& p) {
  return {p[kXScale].quant(p[kXZeroPoint]), p[kYScale].quant(p[kYZeroPoint])};
}

constexpr std::initializer_list<size_t> kUnaryParams = {kXScale, kXZeroPoint, kYScale, kYZeroPoint};

// QLinearSigmoid, QLinearLeakyRelu: table[byte] = Q(f(DQ(byte))), built from the parameters.
template <class T>
std::array<T, 256> activation_table(const std::string& op, float alpha, float beta, const UnaryParams& q) {
  std::array<T, 256> table;
  if (op == "QLinearSigmoid" || op == "QLinearHardSwish" || op == "QLinearHardSigmoid") {
    const kernels::Activation act = op == "QLinearSigmoid"     ? kernels::Activation::sigmoid()
                                    : op == "QLinearHardSwish" ? kernels::Activation::hard_swish()
                                                               : kernels::Activation::hard_sigmoid(alpha, beta);
    kernels::q8_activation_table__ref(act, q.x, q.y, table.data());
    return table;
  }
  // LeakyRelu is not one of the FP32 activations; its table is built the same way as
  // q8_activation_table__ref builds one (ORT's QLinearLeakyRelu does the same).
  for (int byte = 0; byte < 256; ++byte) {
    const T v = static_cast<T>(static_cast<uint8_t>(byte));
    const float x = kernels::dequantize_value(v, q.x.scale, q.x.zero_point);
    const float f = x >= 0.0f ? x : alpha * x;
    table[size_t(byte)] = kernels::quantize_one<T>(f, q.y.scale, q.y.zero_point);
  }
  return table;
}

// y[i] = table[x[i]] over input 0, the table made by make_table(T{}, parameter inputs) from
// the inputs `slots` (once when they are constants, else on every run).
template <class MakeTable>
Kernel lookup_kernel(const OpContext& c, std::span<const void* const> in, std::span<void* const> out,
                     std::initializer_list<size_t> slots, MakeTable make_table) {
  const int64_t count = c.info(0).count();
  const void* x = in[0];
  void* y = out[0];
  const kernels::Q8LookupKernel* fast = kernels::choose_q8_lookup(c.isa);
  c.report_kernel(fast != nullptr ? kernels::row_kernel(*fast) : kernels::reference_kernel("q8_lookup__ref"));
  pthreadpool_t pool = c.threadpool;
  return ops::visit_q8_type(c.info(0).dtype, [&](auto tag) -> Kernel {
    using T = decltype(tag);
    return ops::with_params(
        c, in, slots, [make_table](const ops::ParamInputs& p) { return make_table(T{}, p); },
        [=](const std::array<T, 256>& table) {
          if (fast != nullptr)
            kernels::q8_lookup(*fast, size_t(count), static_cast<const uint8_t*>(x),
                               reinterpret_cast<const uint8_t*>(table.data()), static_cast<uint8_t*>(y), pool);
          else
            kernels::q8_lookup__ref(count, static_cast<const T*>(x), table.data(), static_cast<T*>(y));
        });
  });
}

// An op that maps every element of input 0 through a table: output type and shape of input 0.
OpImpl lookup_op(void (*check)(const OpContext&), decltype(OpImpl::build) build) {
  OpImpl op;
  op.want_layout = any_layout;
  op.infer = [check](const OpContext& c) -> std::vector<TensorInfo> {
    check(c);
    return {c.info(0)};
  };
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) { return ops::per_image_with_constants(c); };
  op.build = std::move(build);
  return op;
}

OpImpl qlookup_op() {
  return lookup_op(check_qunary, [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) {
    check_qunary(c);
    const std::string op_type = c.node.op;
    // LeakyRelu's alpha defaults to 0.01, HardSigmoid's alpha and beta to 0.2 and 0.5.
    const bool hard_sigmoid = op_type == "QLinearHardSigmoid";
    const float alpha = c.node.attrs.f("alpha", hard_sigmoid ? 0.2f : 0.01f);
    const float beta = c.node.attrs.f("beta", 0.5f);
    return lookup_kernel(c, in, out, kUnaryParams, [op_type, alpha, beta](auto tag, const ops::ParamInputs& p) {
      return activation_table<decltype(tag)>(op_type, alpha, beta, derive_unary(p));
    });
  });
}

// ---- QLinearTable (passes::fuse_qdq_float_chains): y[i] = table[x[i]], the table a constant
// input 1 of 256 values of x's type.

void check_qtable(const OpContext& c) {
  ops::require_q8(c, 0, "X");
  if (!c.has(1) || c.in_const.size() < 2 || c.in_const[1] == nullptr || c.info(1).dtype != c.info(0).dtype ||
      c.info(1).count() != 256)
    c.fail("the table (input 1) must be a constant of 256 values of X's type");
}

OpImpl qtable_op() {
  return lookup_op(check_qtable, [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) {
    check_qtable(c);
    return lookup_kernel(c, in, out, {1}, [](auto tag, const ops::ParamInputs& p) {
      std::array<decltype(tag), 256> table;
      std::memcpy(table.data(), p[1].data, sizeof(table));
      return table;
    });
  });
}

// ---- QLinearSilu (engine/passes_qsilu.cc): x, then QLinearSigmoid's X_scale, X_zero_point,
// Y_scale, Y_zero_point, then QLinearMul's scale and zero point for x, for the sigmoid's output
// and for its own output (the zero points may be omitted, ""). Attribute gate: "Sigmoid"
// (default) or "HardSigmoid" (a QDQ hard swish), whose alpha and beta the node carries.

enum SiluInput : size_t {
  kSiluX,
  kSigmoidXScale, kSigmoidXZeroPoint, kSigmoidYScale, kSigmoidYZeroPoint,
  kMulXScale, kMulXZeroPoint, kMulGateScale, kMulGateZeroPoint, kMulYScale, kMulYZeroPoint,
};
constexpr std::initializer_list<size_t> kSiluParams = {
    kSigmoidXScale, kSigmoidXZeroPoint, kSigmoidYScale, kSigmoidYZeroPoint, kMulXScale,
    kMulXZeroPoint, kMulGateScale,      kMulGateZeroPoint, kMulYScale,      kMulYZeroPoint};

void check_qsilu(const OpContext& c) {
  ops::require_q8(c, kSiluX, "x");
  const DType t = c.info(kSiluX).dtype;
  ops::require_scale(c, kSigmoidXScale, "the sigmoid's X_scale");
  ops::require_zero_point(c, kSigmoidXZeroPoint, "the sigmoid's X_zero_point", t);
  ops::require_scale(c, kSigmoidYScale, "the sigmoid's Y_scale");
  ops::require_zero_point(c, kSigmoidYZeroPoint, "the sigmoid's Y_zero_point", t);
  ops::require_scale(c, kMulXScale, "the Mul's scale for x");
  ops::require_zero_point(c, kMulXZeroPoint, "the Mul's zero point for x", t);
  ops::require_scale(c, kMulGateScale, "the Mul's scale for the sigmoid");
  ops::require_zero_point(c, kMulGateZeroPoint, "the Mul's zero point for the sigmoid", t);
  ops::require_scale(c, kMulYScale, "C_scale");
  ops::require_zero_point(c, kMulYZeroPoint, "C_zero_point", t);
}

// table[byte] = QLinearMul(byte, sigmoid_table[byte]) with the pair's own arithmetic (the
// sigmoid's table, then MLAS's Mul recipe), so a lookup gives the pair's bits.
struct SiluGate {
  std::string op = "QLinearSigmoid";  // the gate's table op
  float alpha = 0.0f, beta = 0.0f;
};

SiluGate silu_gate(const OpContext& c) {
  const std::string gate = c.node.attrs.has("gate") ? c.node.attrs.s("gate") : "Sigmoid";
  if (gate == "Sigmoid") return {};
  if (gate != "HardSigmoid") c.fail("gate must be Sigmoid or HardSigmoid, got " + gate);
  return {"QLinearHardSigmoid", c.node.attrs.f("alpha", 0.2f), c.node.attrs.f("beta", 0.5f)};
}

template <class T>
std::array<T, 256> silu_table(const SiluGate& g, const ops::ParamInputs& p) {
  const UnaryParams sigmoid{p[kSigmoidXScale].quant(p[kSigmoidXZeroPoint]),
                            p[kSigmoidYScale].quant(p[kSigmoidYZeroPoint])};
  const std::array<T, 256> gate = activation_table<T>(g.op, g.alpha, g.beta, sigmoid);
  std::array<T, 256> x, y;
  for (int byte = 0; byte < 256; ++byte) x[size_t(byte)] = static_cast<T>(static_cast<uint8_t>(byte));
  const int64_t dims[1] = {256}, strides[1] = {1};
  kernels::q8_mul_ratio_strided__ref<T>(1, dims, x.data(), strides, p[kMulXScale].quant(p[kMulXZeroPoint]),
                                        gate.data(), strides, p[kMulGateScale].quant(p[kMulGateZeroPoint]),
                                        p[kMulYScale].quant(p[kMulYZeroPoint]), std::numeric_limits<T>::min(),
                                        std::numeric_limits<T>::max(), y.data());
  return y;
}

OpImpl qsilu_op() {
  return lookup_op(check_qsilu, [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) {
    check_qsilu(c);
    const SiluGate gate = silu_gate(c);
    return lookup_kernel(c, in, out, kSiluParams,
                         [gate](auto tag, const ops::ParamInputs& p) { return silu_table<decltype(tag)>(gate, p); });
  });
}

// QLinearGlobalAveragePool on x [batch][hw][channels] (channels-last), bit-exact with
// q8_global_avgpool_nhwc__ref.
Kernel global_avgpool_kernel(const OpContext& c, std::span<const void* const> in, std::span<void* const> out,
                             int batch, int hw, int channels) {
  const kernels::Q8 type = c.info(kX).dtype == DType::u8 ? kernels::Q8::u8 : kernels::Q8::s8;
  auto gap = std::make_shared<const kernels::Q8GlobalAvgPool>(type, batch, hw, channels, c.isa);
  c.report_kernel(gap->kernel_id());
  const ops::ChannelsLastInput x(c.info(kX), in[kX]);
  void* y = out[0];
  pthreadpool_t pool = c.threadpool;
  return ops::with_params(c, in, kUnaryParams, derive_unary,
                          [=](const UnaryParams& p) { gap->run(x.get(), p.x, p.y, y, pool); });
}

// The NCHW form only: octet keeps the data channels-last in memory anyway.
void require_nchw_form(const OpContext& c) {
  if (c.node.attrs.i("channels_last", 0) != 0) c.fail("channels_last=1 is not supported");
}

OpImpl qglobal_avgpool_op() {
  OpImpl op;
  op.want_layout = channels_last_map;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    check_qunary(c);
    require_nchw_form(c);
    return {ops::global_pool_output(c, kX)};
  };
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) { return ops::per_image_with_constants(c); };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const auto& d = c.info(kX).dims;
    const int batch = int(d[0]), channels = int(d[1]);
    const int hw = int(ir::element_count(d) / std::max<int64_t>(1, d[0] * d[1]));
    return global_avgpool_kernel(c, in, out, batch, hw, channels);
  };
  return op;
}

OpImpl qavgpool_op() {
  OpImpl op;
  op.want_layout = channels_last_map;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    check_qunary(c);
    require_nchw_form(c);
    const ops::Window w = ops::pool_window(c, true);
    ir::Dims out = {c.info(kX).dims[0], c.info(kX).dims[1]};
    out.insert(out.end(), w.out.begin(), w.out.end());
    return {{c.info(kX).dtype, out, Layout::channels_last}};
  };
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) {
    return ops::per_image_with_constants(c);
  };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const kernels::Pool2dShape s = ops::pool2d_shape(c, ops::pool_window(c, true));
    // A window that is the whole unpadded input: ORT (and the ref) switch to the global
    // pool's integer formula.
    if (s.kernel_h == s.in_h && s.kernel_w == s.in_w && s.dilation_h == 1 && s.dilation_w == 1 && s.pad_top == 0 &&
        s.pad_left == 0 && s.pad_bottom == 0 && s.pad_right == 0 && s.kernel_d == s.in_d && s.dilation_d == 1 &&
        s.pad_front == 0 && s.pad_back == 0)
      return global_avgpool_kernel(c, in, out, s.batch, s.in_d * s.in_h * s.in_w, s.channels);
    const bool include_pad = c.node.attrs.i("count_include_pad", 0) != 0;
    void* y = out[0];
    bool constant_params = true;
    for (size_t i : kUnaryParams) constant_params = constant_params && c.in_const[i] != nullptr;
    if (c.isa != kernels::Isa::scalar && constant_params && c.info(kX).layout == Layout::channels_last) {
      const UnaryParams q = derive_unary(ops::ParamInputs(c, in));
      const kernels::Q8 type = c.info(kX).dtype == DType::u8 ? kernels::Q8::u8 : kernels::Q8::s8;
      const kernels::Q8AvgPoolParams params{q.x.scale, q.x.zero_point, q.y.scale, q.y.zero_point,
                                            kernels::q8_min(type), kernels::q8_max(type)};
      auto pool_driver = std::make_shared<kernels::Q8AvgPool2d>(type, s, include_pad, params, c.isa);
      const void* x = in[kX];
      pool_driver->bind(x);
      c.report_kernel(pool_driver->kernel_id());
      pthreadpool_t pool = c.threadpool;
      return [=] { pool_driver->run(x, y, pool); };
    }
    const ops::ChannelsLastInput x(c.info(kX), in[kX]);
    c.report_kernel(kernels::reference_kernel("q8_avgpool2d_nhwc__ref"));
    return ops::visit_q8_type(c.info(kX).dtype, [&](auto tag) -> Kernel {
      using T = decltype(tag);
      return ops::with_params(c, in, kUnaryParams, derive_unary, [=](const UnaryParams& p) {
        kernels::q8_avgpool2d_nhwc__ref(s, include_pad, static_cast<const T*>(x.get()), p.x, p.y, static_cast<T*>(y));
      });
    });
  };
  return op;
}

// ---- QLinearReduceMean (com.microsoft): X, X_scale, X_zero_point, Y_scale, Y_zero_point;
// attributes axes and keepdims. DequantizeLinear, float ReduceMean and QuantizeLinear as ONNX
// Runtime runs the QDQ unit (kernels/ref/qreduce.h), over any axes and layout on
// kernels::Q8ReduceMean's SIMD passes.

std::vector<bool> reduced_axes(const OpContext& c) {
  const int64_t rank = int64_t(c.info(kX).dims.size());
  if (!c.node.attrs.has("axes") || c.node.attrs.ints("axes").empty()) c.fail("axes must list at least one axis");
  std::vector<bool> reduced(size_t(rank), false);
  for (int64_t a : c.node.attrs.ints("axes")) {
    const size_t i = size_t(normalize_axis(c, a, rank));
    if (reduced[i]) c.fail("axis " + std::to_string(a) + " is listed twice in axes");
    reduced[i] = true;
  }
  return reduced;
}

OpImpl qreduce_mean_op() {
  OpImpl op;
  op.want_layout = any_layout;  // read through strides
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) {
    // ORT sums a batch of NHWC images in another order than one image (ir::kOrtChannelsLastAttr):
    // the whole batch has to run as one, never in slices.
    return ops::keeps_images_apart_if(ops::per_image_with_constants(c) == BatchUse::keeps_images_apart &&
                                      !reduced_axes(c).at(0) && c.node.attrs.i(ir::kOrtChannelsLastAttr, 0) == 0);
  };
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    check_qunary(c);
    const auto reduced = reduced_axes(c);
    const bool keep = c.node.attrs.i("keepdims", 1) != 0;
    ir::Dims out;
    for (size_t i = 0; i < reduced.size(); ++i)
      if (!reduced[i]) out.push_back(c.info(kX).dims[i]);
      else if (keep) out.push_back(1);
    return {{c.info(kX).dtype, out, Layout::row_major}};
  };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const TensorInfo& x = c.info(kX);
    const auto reduced = reduced_axes(c);
    const ir::Dims dims = x.dims;
    if (dims.size() > size_t(kernels::kMaxRank)) c.fail("rank above 8 is not supported");
    const auto strides = x.strides();
    std::unique_ptr<bool[]> flags(new bool[dims.size()]);  // vector<bool> has no data()
    for (size_t i = 0; i < dims.size(); ++i) flags[i] = reduced[i];
    const kernels::Q8 type = x.dtype == DType::u8 ? kernels::Q8::u8 : kernels::Q8::s8;
    auto mean = std::make_shared<const kernels::Q8ReduceMean>(type, int(dims.size()), dims.data(), strides.data(),
                                                              flags.get(), c.isa,
                                                              c.node.attrs.i(ir::kOrtChannelsLastAttr, 0) != 0);
    c.report_kernel(mean->kernel_id());
    const void* xp = in[kX];
    void* y = out[0];
    pthreadpool_t pool = c.threadpool;
    return ops::with_params(c, in, kUnaryParams, derive_unary,
                            [=](const UnaryParams& p) { mean->run(xp, p.x, p.y, y, pool); });
  };
  return op;
}

}  // namespace

void register_qelementwise_ops(OpTable& t) {
  t.emplace_back("QLinearAdd", qbinary_op());
  t.emplace_back("QLinearMul", qbinary_op());
  t.emplace_back("QLinearSigmoid", qlookup_op());
  t.emplace_back("QLinearHardSwish", qlookup_op());    // octet's own (fuse_qdq): no ORT op
  t.emplace_back("QLinearSilu", qsilu_op());          // octet's own (fuse_qlinear_silu): no ORT op
  t.emplace_back("QLinearHardSigmoid", qlookup_op());
  t.emplace_back("QLinearLeakyRelu", qlookup_op());
  t.emplace_back("QLinearTable", qtable_op());  // octet's own (fuse_qdq_float_chains): no ORT op
  t.emplace_back("QLinearGlobalAveragePool", qglobal_avgpool_op());
  t.emplace_back("QLinearAveragePool", qavgpool_op());
  t.emplace_back("QLinearReduceMean", qreduce_mean_op());
}

}  // namespace octet
