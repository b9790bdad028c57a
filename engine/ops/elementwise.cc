// Element-wise FP32 ops: activations, broadcasting arithmetic and inference BatchNorm.
// Relu, Clip, Sigmoid, Gelu, the activations of kernels/elementwise/activation_list.h, Add, Mul and PRelu
// (Add's broadcasting, a slope per channel or per element) run on the SIMD kernels of
// kernels/elementwise/eltwise.h when the shapes fit (that driver falls back to the ref kernels
// otherwise).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "engine/ops/batch_use.h"
#include "engine/ops/batchnorm_affine.h"
#include "engine/ops/broadcast.h"
#include "engine/ops/fused_activation.h"
#include "engine/ops/range_output.h"
#include "engine/ops/typed_broadcast.h"
#include "kernels/cache_budgets.h"
#include "kernels/elementwise/eltwise.h"
#include "kernels/pool/pool2d.h"
#include "kernels/ref/elementwise.h"

namespace octet {
namespace {

using kernels::Activation;

void require_f32(const OpContext& c, size_t i) {
  if (c.info(i).dtype != ir::DType::f32)
    c.fail(std::string(ir::dtype_name(c.info(i).dtype)) + " " + c.node.op + " (input " + std::to_string(i) +
           ") is not supported (only float32)");
}

bool is_constant(const OpContext& c, size_t i) { return i < c.in_const.size() && c.in_const[i]; }

// A bound known at plan time, or `dflt` when absent or computed at run time (see runtime_bound).
float scalar_input(const OpContext& c, size_t i, const char* what, float dflt) {
  if (!c.has(i)) return dflt;
  if (c.info(i).dtype != ir::DType::f32 || c.info(i).count() != 1)
    c.fail(std::string(what) + " must be a float32 scalar");
  return is_constant(c, i) ? c.in_const[i]->as<float>()[0] : dflt;
}

// Where the kernel reads a bound that is only known at run time; nullptr otherwise.
const float* runtime_bound(const OpContext& c, size_t i, std::span<const void* const> in) {
  return c.has(i) && !is_constant(c, i) ? static_cast<const float*>(in[i]) : nullptr;
}

Activation unary_activation(const OpContext& c) {
  const std::string& op = c.node.op;
  if (op == "Relu") return Activation::relu();
  if (op == "Sigmoid")  // passes::fuse_standalone_silu: x * sigmoid(x) in one pass
    return c.node.attrs.has("fused_act") && c.node.attrs.s("fused_act") == "Silu" ? Activation::silu()
                                                                                 : Activation::sigmoid();
  if (const kernels::ActivationRow* row = kernels::activation_row(op)) {
    float p[2];
    for (int i = 0; i < 2; ++i) p[i] = row->attr[i] ? c.node.attrs.f(row->attr[i]) : row->dflt[i];
    return Activation{row->kind, 0, 0, p[0], p[1]};
  }
  if (op == "Gelu") {
    const std::string approximate = c.node.attrs.has("approximate") ? c.node.attrs.s("approximate") : "none";
    if (approximate == "tanh") return Activation::gelu_tanh();
    if (approximate != "none") c.fail("approximate='" + approximate + "' is not one of 'none', 'tanh'");
    return Activation::gelu();
  }
  const float inf = std::numeric_limits<float>::infinity();
  return Activation::clip(scalar_input(c, 1, "min", -inf), scalar_input(c, 2, "max", inf));
}

bool is_integer_clip(const OpContext& c) {
  const ir::DType t = c.info(0).dtype;
  return c.node.op == "Clip" &&
         (t == ir::DType::u8 || t == ir::DType::s8 || t == ir::DType::s32 || t == ir::DType::s64);
}

// An integer Clip, min(max(x, lo), hi) as ONNX Runtime clamps, its bounds read at each run
// (constants or not); an absent bound is the type's limit.
template <class T>
Kernel integer_clip(const OpContext& c, std::span<const void* const> in, void* out) {
  const int64_t n = c.info(0).count();
  auto x = static_cast<const T*>(in[0]);
  auto y = static_cast<T*>(out);
  const T* lo = c.has(1) ? static_cast<const T*>(in[1]) : nullptr;
  const T* hi = c.has(2) ? static_cast<const T*>(in[2]) : nullptr;
  c.report_kernel(kernels::portable_kernel(std::string(ops::type_tag(c.info(0).dtype)) + "_clip"));
  return [=] {
    const T l = lo ? *lo : std::numeric_limits<T>::lowest(), h = hi ? *hi : std::numeric_limits<T>::max();
    for (int64_t i = 0; i < n; ++i) {
      const T v = x[i] < l ? l : x[i];
      y[i] = h < v ? h : v;
    }
  };
}

// Neg and Abs on integers (the index arithmetic of expanded LayerNormalization and of detector
// decodes): two's complement as ORT computes them, so the lowest value maps to itself. ONNX has no
// uint8 Neg.
bool is_integer_sign_op(const OpContext& c) {
  const ir::DType t = c.info(0).dtype;
  if (c.node.op != "Neg" && c.node.op != "Abs") return false;
  return t == ir::DType::s8 || t == ir::DType::s32 || t == ir::DType::s64 || (t == ir::DType::u8 && c.node.op == "Abs");
}

template <class T>
Kernel integer_sign_op(const OpContext& c, const void* in, void* out) {
  const int64_t n = c.info(0).count();
  auto x = static_cast<const T*>(in);
  auto y = static_cast<T*>(out);
  const bool neg = c.node.op == "Neg";
  c.report_kernel(kernels::portable_kernel(std::string(ops::type_tag(c.info(0).dtype)) + (neg ? "_neg" : "_abs")));
  using U = std::make_unsigned_t<T>;
  return [=] {
    for (int64_t i = 0; i < n; ++i) {
      const bool flip = neg || (std::is_signed_v<T> && x[i] < 0);
      y[i] = flip ? T(U(0) - U(x[i])) : x[i];
    }
  };
}

OpImpl unary_op() {
  OpImpl u;
  u.want_layout = any_layout;
  u.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    if (is_integer_sign_op(c)) return {c.info(0)};
    if (is_integer_clip(c)) {
      for (size_t i = 1; i <= 2; ++i)
        if (c.has(i) && (c.info(i).dtype != c.info(0).dtype || c.info(i).count() != 1))
          c.fail(std::string(i == 1 ? "min" : "max") + " must be a " + ir::dtype_name(c.info(0).dtype) + " scalar");
      return {c.info(0)};
    }
    require_f32(c, 0);
    unary_activation(c);  // validates Clip's bounds
    return {c.info(0)};
  };
  u.batch_use = ops::broadcast_per_image;  // Clip's bounds: constants, or a rank-0 activation that mixes
  u.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    if (is_integer_sign_op(c)) {
      switch (c.info(0).dtype) {
        case ir::DType::u8: return integer_sign_op<uint8_t>(c, in[0], out[0]);
        case ir::DType::s8: return integer_sign_op<int8_t>(c, in[0], out[0]);
        case ir::DType::s32: return integer_sign_op<int32_t>(c, in[0], out[0]);
        default: return integer_sign_op<int64_t>(c, in[0], out[0]);
      }
    }
    if (is_integer_clip(c))
      return ops::with_type(c, c.info(0).dtype, [&](auto t) { return integer_clip<decltype(t)>(c, in, out[0]); });
    const auto act = unary_activation(c);
    int64_t n = c.info(0).count();
    auto x = static_cast<const float*>(in[0]);
    auto y = static_cast<float*>(out[0]);
    const float* lo = c.node.op == "Clip" ? runtime_bound(c, 1, in) : nullptr;
    const float* hi = c.node.op == "Clip" ? runtime_bound(c, 2, in) : nullptr;
    auto unary = std::make_shared<const kernels::F32Unary>(act.kind, c.isa);
    c.report_kernel(unary->kernel_id());
    pthreadpool_t pool = c.threadpool;
    if (lo || hi)
      return [=] {
        const auto a = kernels::Activation::clip(lo ? *lo : act.min, hi ? *hi : act.max);
        unary->run(a, n, x, y, pool);
      };
    return [=] { unary->run(act, n, x, y, pool); };
  };
  return u;
}

// Input 1 as the op broadcasts it: before opset 7 a PRelu slope of shape [C] is per channel of an
// [N, C, ...] x (the same memory viewed as [C, 1, ...]); from 7 it broadcasts like numpy.
TensorInfo operand_b(const OpContext& c) {
  TensorInfo b = c.info(1);
  const ir::Dims& x = c.info(0).dims;
  if (c.node.op == "PRelu" && c.opset < 7 && b.dims.size() == 1 && x.size() >= 3 && b.dims[0] == x[1]) {
    b.dims.assign(x.size() - 1, 1);
    b.dims[0] = x[1];
    b.layout = Layout::row_major;
  }
  return b;
}

ir::Dims broadcast_dims(const OpContext& c) { return ops::broadcast_dims(c, c.info(0).dims, operand_b(c).dims); }

kernels::BinaryOp binary_kind(const std::string& op) {
  if (op == "Add") return kernels::BinaryOp::add;
  if (op == "Sub") return kernels::BinaryOp::sub;
  if (op == "Mul") return kernels::BinaryOp::mul;
  if (op == "PRelu") return kernels::BinaryOp::prelu;
  return kernels::BinaryOp::div;
}

// Integer arithmetic (uint8, int8, int32, int64): the shape computations of dynamic-batch
// exports (Shape -> Gather -> Div -> Cast -> Concat -> Reshape), which constant folding runs
// once at plan time, and small integer tensors, as ONNX Runtime computes them.
bool is_integer_arithmetic(const OpContext& c) {
  if (c.node.op == "PRelu") return false;
  const ir::DType a = c.info(0).dtype, b = c.info(1).dtype;
  if (a != ir::DType::s64 && a != ir::DType::s32 && a != ir::DType::u8 && a != ir::DType::s8) return false;
  if (a != b) c.fail(std::string(ir::dtype_name(a)) + " and " + ir::dtype_name(b) + " operands do not match");
  return true;
}

template <class T>
T integer_op(kernels::BinaryOp op, T a, T b, const std::string& where) {
  switch (op) {
    case kernels::BinaryOp::add: return T(uint64_t(a) + uint64_t(b));  // wraps like ORT, no UB
    case kernels::BinaryOp::sub: return T(uint64_t(a) - uint64_t(b));
    case kernels::BinaryOp::mul: return T(uint64_t(a) * uint64_t(b));
    default:
      // Integer Div truncates toward zero (C++ semantics, as ONNX Runtime computes it).
      if (b == 0) throw ir::Error(where + ": integer division by zero");
      if (std::is_signed_v<T> && b == T(-1)) return T(uint64_t(0) - uint64_t(a));
      return T(a / b);
  }
}

template <class T>
Kernel integer_binary(const OpContext& c, std::shared_ptr<const ops::TypedBroadcast> w, const void* a, const void* b,
                      void* y) {
  const auto op = binary_kind(c.node.op);
  const std::string where = ir::Graph::describe(c.node);
  return [=] {
    const T* pa = static_cast<const T*>(a);
    const T* pb = static_cast<const T*>(b);
    T* py = static_cast<T*>(y);
    ops::for_each_run(*w, [&](int64_t o, int64_t len, const int64_t* off, const int64_t* inner) {
      const T* x = pa + off[0];
      const T* z = pb + off[1];
      for (int64_t i = 0; i < len; ++i) py[o + i] = integer_op<T>(op, x[i * inner[0]], z[i * inner[1]], where);
    });
  };
}

Kernel integer_binary_kernel(const OpContext& c, std::span<const void* const> in, std::span<void* const> out) {
  auto w = std::make_shared<const ops::TypedBroadcast>(ops::typed_broadcast(c, {0, 1}));
  const ir::DType t = c.info(0).dtype;
  std::string op = c.node.op;
  for (char& ch : op) ch = char(std::tolower(ch));
  c.report_kernel(kernels::portable_kernel(std::string(ops::type_tag(t)) + "_" + op + "_runs"));
  switch (t) {
    case ir::DType::s64: return integer_binary<int64_t>(c, w, in[0], in[1], out[0]);
    case ir::DType::s32: return integer_binary<int32_t>(c, w, in[0], in[1], out[0]);
    case ir::DType::u8: return integer_binary<uint8_t>(c, w, in[0], in[1], out[0]);
    default: return integer_binary<int8_t>(c, w, in[0], in[1], out[0]);
  }
}

OpImpl binary_op() {
  OpImpl b;
  b.want_layout = any_layout;
  b.inputs_share_layout = true;
  b.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    if (is_integer_arithmetic(c)) {
      if (ops::has_range_output(c)) c.fail("an output range is gathered only from float results");
      return {{c.info(0).dtype, broadcast_dims(c), Layout::row_major}};
    }
    require_f32(c, 0);
    require_f32(c, 1);
    ir::Dims out = broadcast_dims(c);
    // PRelu's slope broadcasts to X (unidirectionally): the output is X's shape.
    if (c.node.op == "PRelu" && out != c.info(0).dims)
      c.fail("slope " + ir::dims_str(c.info(1).dims) + " does not broadcast to X " + ir::dims_str(c.info(0).dims));
    std::vector<TensorInfo> outs{{ir::DType::f32, out, ops::broadcast_layout(c.info(0), operand_b(c), out)}};
    ops::add_range_output_info(c, outs);
    return outs;
  };
  // A range output spans the images of the run (a lockstep run combines it over its threads).
  b.batch_use = [](const OpContext& c, const std::vector<TensorInfo>& out) {
    return ops::with_range_output(c, ops::broadcast_per_image(c, out));
  };
  b.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    if (is_integer_arithmetic(c)) return integer_binary_kernel(c, in, out);
    ir::Dims dims = broadcast_dims(c);
    if (int(dims.size()) > kernels::kMaxRank) c.fail("rank above 8 is not supported");
    TensorInfo b_info = operand_b(c);
    const float* b_data = static_cast<const float*>(in[1]);
    // A constant PRelu slope of x's full shape is laid out like x once, here, so a channels-last
    // x reads both through the microkernel rather than the strided reference.
    std::shared_ptr<std::vector<float>> relaid;
    if (c.node.op == "PRelu" && is_constant(c, 1) && b_info.dims == c.info(0).dims && b_info.layout != c.info(0).layout &&
        !same_memory(b_info.dims, b_info.layout, c.info(0).layout)) {
      relaid = std::make_shared<std::vector<float>>(size_t(b_info.count()));
      relayout(b_info, b_data, c.info(0).layout, relaid->data());
      b_info.layout = c.info(0).layout;
      b_data = relaid->data();
    }
    const auto box = ops::strided_broadcast(c.info(0), b_info, dims, ops::broadcast_layout(c.info(0), b_info, dims));
    auto binary = std::make_shared<const kernels::F32Binary>(binary_kind(c.node.op), box.rank, box.dims.data(),
                                                             box.a_strides.data(), box.b_strides.data(), c.isa);
    c.report_kernel(binary->kernel_id() + ops::range_note(c));
    auto a = static_cast<const float*>(in[0]);
    auto bp = b_data;
    auto y = static_cast<float*>(out[0]);
    pthreadpool_t pool = c.threadpool;
    return ops::with_range_output(c, out, [=](kernels::OutputRange* range) {
      (void)relaid;  // keeps the relaid slope alive
      binary->run(a, bp, y, pool, range);
    });
  };
  return b;
}

OpImpl batchnorm_op() {
  OpImpl bn;
  bn.want_layout = channels_last_map;
  bn.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    require_f32(c, 0);
    const auto& x = c.info(0);
    if (x.dims.size() < 2) c.fail("X must have rank >= 2, got " + ir::dims_str(x.dims));
    for (size_t i = 1; i <= 4; ++i) {
      require_f32(c, i);
      if (c.info(i).count() != x.dims[1])
        c.fail("input " + std::to_string(i) + " must hold one value per channel (" + std::to_string(x.dims[1]) + ")");
    }
    return {x};
  };
  bn.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) { return ops::per_image_with_constants(c); };
  bn.strided_input = [](const OpContext&, size_t input) { return input == 0; };
  // A BatchNormalization no conv could absorb (DenseNet's pre-activations, a BN on a Concat or
  // a graph input) is a per-channel scale and shift over [pixels][channels]: the SIMD binary
  // Mul and Add with the channel row repeated (row stride 0). The scale and shift are computed
  // in float and applied as a multiply then an add, two roundings, as ONNX Runtime computes
  // them (inv_std = 1 / sqrt(var + eps), scale' = inv_std * scale, shift' = B - mean * scale'):
  // a float BN inside a QDQ unit must round as ORT does or the next QuantizeLinear flips codes.
  // Where ORT's NCHWc pass rewrites the BN into a 1x1 depthwise conv (the loader's hint
  // ir::kOrtNchwcBlocksAttr holds this CPU's block: a BN on a pool, a Concat of pools or an
  // activation after a float conv), the conv's weight is scale / sqrt(var + eps), one rounding,
  // and its output x * w then + shift: octet takes that weight there. The block is ORT's on this
  // CPU, whatever level octet runs at.
  bn.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const auto& x = c.info(0);
    const int64_t channels = x.dims[1];
    const int64_t pixels = x.count() / std::max<int64_t>(1, channels);
    // x's pixels are its channels apart, or more in a view of a wider map (OpImpl::strided_input).
    const int64_t x_stride = !c.in_row_stride.empty() && c.in_row_stride[0] != 0 ? c.in_row_stride[0] : channels;
    const float eps = c.node.attrs.f("epsilon");
    auto p = [&](size_t i) { return static_cast<const float*>(in[i]); };
    const float *scale = p(1), *bias = p(2), *mean = p(3), *var = p(4);
    const bool ort_conv = ops::batchnorm_as_ort_conv(c.node);
    // A dense x (no view of a wider map) reads the scale and shift laid out flat over a chunk
    // (batchnorm_rows_over_chunk): RepGhostNet's 4- to 60-channel BNs ran a row per pixel at
    // about a cycle an element. A view (DenseNet's BN over a prefix of a concat buffer, hundreds
    // of channels) reads a row per pixel (row stride 0).
    const bool flat = x_stride == channels;
    // Chunks of whole pixels: the multiply, the add and a fused activation (passes::fuse_activations:
    // DenseNet's pre-activation BN + Relu) pass over a chunk while it is in the L1D, one trip
    // through memory instead of one per pass. Half the L1D a chunk, a quarter with the flat rows.
    const int64_t chunk_pixels = std::clamp<int64_t>(
        int64_t(kernels::cache_sizes().l1d / (flat ? 4 : 2)) / int64_t(channels * sizeof(float)), 1, pixels);
    const size_t row_floats = flat ? size_t(chunk_pixels * channels) : size_t(channels);
    // scale', then shift': once here when the parameters are constants (the usual case), else
    // at each run, from graph inputs. (One plan runs one call at a time, so the buffers are its own.)
    auto affine = std::make_shared<std::vector<float>>(2 * row_floats);
    auto row = std::make_shared<std::vector<float>>(flat ? size_t(2 * channels) : 0);
    auto prepare = [=] {
      ops::batchnorm_affine(scale, bias, mean, var, eps, ort_conv, channels, flat ? row->data() : affine->data());
      if (flat) ops::batchnorm_rows_over_chunk(row->data(), channels, row_floats, affine->data());
    };
    const int64_t chunks = (pixels + chunk_pixels - 1) / chunk_pixels;
    const int64_t tail_pixels = pixels - (chunks - 1) * chunk_pixels;
    struct Pass {
      std::shared_ptr<const kernels::F32Binary> mul, add;
    };
    auto pass = [&](int64_t rows) {
      if (flat) {
        const int64_t dims[] = {rows * channels}, strides[] = {1};
        return Pass{std::make_shared<const kernels::F32Binary>(kernels::BinaryOp::mul, 1, dims, strides, strides, c.isa),
                    std::make_shared<const kernels::F32Binary>(kernels::BinaryOp::add, 1, dims, strides, strides, c.isa)};
      }
      // The multiply reads x (its pixels x_stride apart), the add y (dense).
      const int64_t dims[] = {rows, channels}, x_strides[] = {x_stride, 1}, y_strides[] = {channels, 1},
                    row_strides[] = {0, 1};
      return Pass{std::make_shared<const kernels::F32Binary>(kernels::BinaryOp::mul, 2, dims, x_strides, row_strides, c.isa),
                  std::make_shared<const kernels::F32Binary>(kernels::BinaryOp::add, 2, dims, y_strides, row_strides, c.isa)};
    };
    const Pass whole = pass(chunk_pixels), tail = tail_pixels == chunk_pixels ? whole : pass(tail_pixels);
    const Activation act = ops::fused_activation(c.node);
    auto activation =
        act.kind != kernels::ActKind::none ? std::make_shared<const kernels::F32Unary>(act.kind, c.isa) : nullptr;
    kernels::KernelId id = whole.mul->kernel_id() + " + " + whole.add->kernel_id();
    if (activation) id = id + "+" + activation->kernel_id();
    c.report_kernel(id);
    auto xs = p(0);
    auto y = static_cast<float*>(out[0]);
    bool constant = true;
    for (size_t i = 1; i <= 4; ++i) constant = constant && c.in_const[i] != nullptr;
    if (constant) prepare();
    struct Run {
      const float* x;
      float* y;
      const float *scale, *shift;
      int64_t channels, x_stride, chunk_pixels, chunks, tail_pixels;
      const Pass* whole;
      const Pass* tail;
      Activation act;
      const kernels::F32Unary* activation;  // nullptr: none
      static void chunk(void* context, size_t i) {
        const auto& r = *static_cast<const Run*>(context);
        const bool last = int64_t(i) + 1 == r.chunks;
        const Pass& pass = last ? *r.tail : *r.whole;
        const int64_t first = int64_t(i) * r.chunk_pixels;
        const int64_t n = (last ? r.tail_pixels : r.chunk_pixels) * r.channels;
        float* y = r.y + first * r.channels;
        pass.mul->run(r.x + first * r.x_stride, r.scale, y, nullptr);
        pass.add->run(y, r.shift, y, nullptr);
        if (r.activation) r.activation->run(r.act, n, y, y, nullptr);
      }
    };
    pthreadpool_t pool = c.threadpool;
    return [=] {
      if (!constant) prepare();
      Run r{xs, y, affine->data(), affine->data() + row_floats, channels, x_stride, chunk_pixels, chunks,
            tail_pixels, &whole, &tail, act, activation.get()};
      pthreadpool_parallelize_1d(pool, Run::chunk, &r, size_t(chunks), 0);
    };
  };
  return bn;
}

}  // namespace

void register_elementwise_ops(OpTable& t) {
  for (const char* op : {"Relu", "Sigmoid", "Clip", "Gelu"}) t.emplace_back(op, unary_op());
  for (const kernels::ActivationRow& row : kernels::kActivationRows) t.emplace_back(row.op, unary_op());
  for (const char* op : {"Add", "Sub", "Mul", "Div", "PRelu"}) t.emplace_back(op, binary_op());
  t.emplace_back("BatchNormalization", batchnorm_op());
}

}  // namespace octet
