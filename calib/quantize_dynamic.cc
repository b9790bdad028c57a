// Dynamic quantization, written the way onnxruntime.quantization.quantize_dynamic writes it:
// no calibration; each Conv / MatMul / Gemm with constant weights becomes
//
//   x_q, x_scale, x_zp = DynamicQuantizeLinear(x)                (one per tensor, shared)
//   acc = ConvInteger(x_q, W_q, x_zp, W_zp)  |  MatMulInteger(x_q, W_q, x_zp, W_zp)
//   y = Mul(Cast(acc, float), Mul(x_scale, W_scale))  [+ Add(.., bias)]
//
// with int8 symmetric weights (zero point 0). Differences from ORT's tool, all so that the
// file means what the FP32 model meant: per-channel conv scales are written [C, 1, 1] (a [C]
// tensor would broadcast along the width), the conv bias as a [1, C, 1, 1] constant instead
// of a Reshape node, and Gemm (PyTorch's Linear, which ORT leaves in float) becomes
// MatMulInteger on B transposed to [K, N].
#include <map>

#include "calib/quantize.h"
#include "core/int8_ops.h"
#include "engine/graph_edit.h"
#include "engine/passes.h"

namespace octet::calib {
namespace {

using graph_edit::float_constant;

using graph_edit::add_constant;
using graph_edit::fresh_name;
using ir::DType;

// What the writer does with one node: the weights as [.., K, N] / conv [C, ...], the bias.
struct Plan {
  const ir::TensorData* w = nullptr;
  std::optional<ir::TensorData> transposed;  // Gemm with transB: B as [K, N]
  const ir::TensorData* bias = nullptr;
  const int8::Int8Op* form = nullptr;  // the integer op written (ConvInteger, MatMulInteger)
  bool conv = false;
  const ir::TensorData& weights() const { return transposed ? *transposed : *w; }
};

// The INT8 table says which integer op replaces the node and which rule applies.
std::optional<Plan> plan_node(const ir::Graph& g, const ir::Node& n, std::string& why) {
  if (!n.domain.empty()) return why = "foreign domain", std::nullopt;
  Plan p;
  p.form = int8::dynamic_form(n.op);
  const int8::QuantRule rule = p.form ? p.form->quantizer : int8::QuantRule::none;
  if (rule == int8::QuantRule::dynamic_conv) {
    p.conv = true;
    p.w = float_constant(g, n.input(1));
    if (!p.w || p.w->dims.size() != 4) return why = "weights are not a constant 2-D conv kernel", std::nullopt;
    if (n.has_input(2) && !(p.bias = float_constant(g, n.input(2)))) return why = "bias is not constant", std::nullopt;
    return p;
  }
  if (rule == int8::QuantRule::dynamic_matmul) {
    // MatMul has none of Gemm's attributes or its C input: their defaults are MatMul's product.
    p.w = float_constant(g, n.input(1));
    if (!p.w || p.w->dims.size() != 2) return why = "B is not a constant matrix", std::nullopt;
    if (n.attrs.i("transA", 0) || n.attrs.f("alpha", 1.0f) != 1.0f || n.attrs.f("beta", 1.0f) != 1.0f)
      return why = "transA, alpha or beta is not the default", std::nullopt;
    const bool trans_b = n.attrs.i("transB", 0) != 0;
    const int64_t cols = trans_b ? p.w->dims[0] : p.w->dims[1];
    if (n.has_input(2)) {
      p.bias = float_constant(g, n.input(2));
      if (!p.bias || p.bias->count() != cols) return why = "C is not a constant per-column bias", std::nullopt;
    }
    if (trans_b) {
      const int64_t rows = p.w->dims[1];
      ir::TensorData t = ir::TensorData::make(DType::f32, {rows, cols});
      for (int64_t k = 0; k < rows; ++k)
        for (int64_t c = 0; c < cols; ++c) t.as<float>()[k * cols + c] = p.w->as<float>()[c * rows + k];
      p.transposed = std::move(t);
    }
    return p;
  }
  return why = "no dynamic INT8 form (only Conv, MatMul and Gemm are quantized dynamically)", std::nullopt;
}

class DynamicWriter {
 public:
  DynamicWriter(const ir::Graph& g, const DynamicQuantizeOptions& o, QuantizeReport& r) : g_(g), opt_(o), report_(r) {}

  ir::Graph run() {
    for (const auto& n : g_.nodes) names_.insert(n.name);
    std::vector<ir::Node> nodes = std::move(g_.nodes);
    g_.nodes.clear();
    for (auto& n : nodes) {
      std::string why;
      std::optional<Plan> p = opt_.keep_float.count(n.op) ? (why = "kept in float (--keep-float)", std::nullopt)
                                                          : plan_node(g_, n, why);
      if (!p) {
        if (int8::dynamic_form(n.op))
          report_.float_ops.push_back(ir::Graph::describe(n) + ": " + why);
        g_.nodes.push_back(std::move(n));
        continue;
      }
      emit(n, *p);
      report_.quantized.push_back(ir::Graph::describe(n));
    }
    g_.opset = std::max<int64_t>(g_.opset, 11);  // DynamicQuantizeLinear
    passes::remove_unused(g_);
    return std::move(g_);
  }

 private:
  std::string node_name(const std::string& hint) {
    std::string name = hint;
    for (int i = 1; names_.count(name); ++i) name = hint + "_" + std::to_string(i);
    names_.insert(name);
    return name;
  }
  std::string value(const std::string& hint) {
    const std::string v = fresh_name(g_, hint);
    g_.values[v].name = v;
    return v;
  }
  void add(const std::string& op, const std::string& name, std::vector<std::string> in, std::vector<std::string> out,
           ir::Attrs attrs = {}) {
    ir::Node n;
    n.op = op;
    n.name = node_name(name);
    n.inputs = std::move(in);
    n.outputs = std::move(out);
    n.attrs = std::move(attrs);
    g_.nodes.push_back(std::move(n));
  }

  struct Quantized {
    std::string q, scale, zero_point;
  };
  // One DynamicQuantizeLinear per float tensor, shared by every layer that reads it.
  const Quantized& quantized_input(const std::string& x) {
    auto it = inputs_.find(x);
    if (it != inputs_.end()) return it->second;
    Quantized q{value(x + "_quantized"), value(x + "_scale"), value(x + "_zero_point")};
    add("DynamicQuantizeLinear", x + "_QuantizeLinear", {x}, {q.q, q.scale, q.zero_point});
    return inputs_[x] = q;
  }

  void emit(const ir::Node& n, const Plan& p) {
    const Quantized& x = quantized_input(n.input(0));
    const int64_t axis = p.conv ? 0 : 1;
    QuantizedWeights qw;
    try {
      qw = quantize_weights_s8(p.weights(), axis, opt_.per_channel);
    } catch (const ir::Error& e) {
      throw ir::Error(ir::Graph::describe(n) + ": " + e.what());
    }
    const int64_t channels = p.weights().dims[size_t(axis)];
    // Scales broadcast along the output channel: axis 1 of NCHW (hence [C, 1, 1]) or the last axis.
    const ir::Dims scale_dims = !opt_.per_channel ? ir::Dims{} : p.conv ? ir::Dims{channels, 1, 1} : ir::Dims{channels};
    const std::string base = n.input(1);
    const std::string w_q = add_constant(g_, base + "_quantized", std::move(qw.values));
    const std::string w_scale = add_constant(g_, base + "_scale", ir::TensorData::f32(scale_dims, qw.scales));
    const std::string w_zp = add_constant(g_, base + "_zero_point", ir::TensorData::make(DType::s8, {}));

    const std::string y = n.outputs[0];
    const std::string acc = value(y + "_output_quantized");
    ir::Attrs conv_attrs;
    if (p.conv) conv_attrs = n.attrs;
    add(p.form->op, n.name + "_quant", {x.q, w_q, x.zero_point, w_zp}, {acc},
        conv_attrs);
    const std::string cast = value(acc + "_cast_output");
    ir::Attrs to_float;
    to_float.set("to", int64_t{1});  // TensorProto FLOAT
    add("Cast", acc + "_cast", {acc}, {cast}, to_float);
    const std::string scales = value(n.name + "_scales_mul:0");
    add("Mul", n.name + "_scales_mul", {x.scale, w_scale}, {scales});
    if (!p.bias) {
      add("Mul", n.name + "_output_scale_mul", {cast, scales}, {y});
      return;
    }
    const std::string scaled = value(y + "_quant_scaled_output");
    add("Mul", n.name + "_output_scale_mul", {cast, scales}, {scaled});
    const ir::Dims bias_dims = p.conv ? ir::Dims{1, channels, 1, 1} : ir::Dims{channels};
    const std::string bias = add_constant(g_, n.input(2) + "_broadcast",
                                          ir::TensorData::f32(bias_dims, p.bias->values<float>()));
    add("Add", y + "_bias_add", {scaled, bias}, {y});
  }

  ir::Graph g_;
  const DynamicQuantizeOptions& opt_;
  QuantizeReport& report_;
  std::set<std::string> names_;
  std::map<std::string, Quantized> inputs_;
};

}  // namespace

ir::Graph quantize_dynamic(const ir::Graph& prepared, const DynamicQuantizeOptions& options, QuantizeReport* report) {
  QuantizeReport local;
  QuantizeReport& r = report ? *report : local;
  ir::Graph q = DynamicWriter(prepared, options, r).run();
  if (r.quantized.empty())
    throw ir::Error(prepared.source + ": nothing to quantize dynamically (no Conv, MatMul or Gemm with constant weights)");
  return q;
}

}  // namespace octet::calib
