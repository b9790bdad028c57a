// Dynamic quantization as ONNX Runtime's quantize_dynamic writes it, into one step per layer:
//
//   x_q, x_scale, x_zp = DynamicQuantizeLinear(x)
//   acc = ConvInteger(x_q, W, x_zp, [W_zp])        or MatMulInteger(x_q, W, x_zp, [W_zp])
//   y   = Add(Mul(Cast(acc, float), Mul(x_scale, W_scale)), bias)     (the Add is optional)
//   ->  y = ConvIntegerToFloat(x_q, W, x_scale, W_scale, x_zp, W_zp, bias)   (MatMulIntegerToFloat)
//
// The DynamicQuantizeLinear stays a step of its own (one range and quantize pass per tensor,
// shared by every layer that reads it). W, W_scale, W_zp and bias must be constants, and
// W_scale and bias may vary only along the output channel (Conv: axis 1 of the NCHW result;
// MatMul: the last axis): anything else is left as it is and runs op by op. The activation
// after the step (Relu, Clip, SiLU, Sigmoid, ...) is fused by fuse_activations. engine/ops/dynamic_ops.cc runs the result.
// com.microsoft.DynamicQuantizeMatMul (ORT's own fusion of the MatMul case, as its optimizer
// may save it) is the same step: it becomes DynamicQuantizeLinear + MatMulIntegerToFloat.
#include <map>

#include "core/int8_ops.h"
#include "engine/graph_edit.h"
#include "engine/ops/range_output.h"
#include "engine/passes.h"

namespace octet::passes {
namespace {

using graph_edit::producer_of;
using graph_edit::sole_consumer;

// A constant whose values, broadcast against an output of rank `out_rank` with `channels`
// values along `axis`, vary at most along that axis. Returns its values (1 or channels of
// them), or nothing.
std::optional<std::vector<float>> per_channel_constant(const ir::Graph& g, const std::string& name,
                                                       size_t out_rank, size_t axis, int64_t channels) {
  if (!g.is_constant(name)) return std::nullopt;
  const ir::TensorData& t = *g.values.at(name).constant;
  if (t.dtype != ir::DType::f32 || t.dims.size() > out_rank) return std::nullopt;
  const size_t lead = out_rank - t.dims.size();  // numpy broadcasting aligns to the right
  for (size_t d = 0; d < t.dims.size(); ++d) {
    const bool channel_axis = lead + d == axis;
    if (t.dims[d] != 1 && !(channel_axis && t.dims[d] == channels)) return std::nullopt;
  }
  const float* v = t.as<float>();
  return std::vector<float>(v, v + t.count());
}

// The other operand of a two-input node, given one of them; "" when `known` is not an input.
std::string other_input(const ir::Node& n, const std::string& known) {
  if (n.inputs.size() != 2) return "";
  if (n.inputs[0] == known) return n.inputs[1];
  if (n.inputs[1] == known) return n.inputs[0];
  return "";
}

bool zero_or_absent(const ir::Graph& g, const ir::Node& n, size_t i) {
  if (!n.has_input(i)) return true;
  if (!g.is_constant(n.input(i))) return false;
  const ir::TensorData& t = *g.values.at(n.input(i)).constant;
  if (t.dtype != ir::DType::s8 && t.dtype != ir::DType::u8) return false;
  for (std::byte b : t.bytes)
    if (b != std::byte{0}) return false;
  return true;
}

// The producers that can gather the range of their float output as they write it (the
// drivers' OutputRange, kernels/elementwise/output_range.h).
bool computes_output_range(const ir::Node& n) {
  if (n.outputs.size() != 1) return false;
  if (n.op == "ConvIntegerToFloat" && n.domain.empty()) return true;
  if (n.op == "MatMulIntegerToFloat" && n.domain == int8::kMicrosoftDomain) return true;
  return (n.op == "Add" || n.op == "Mul") && n.domain.empty();
}

}  // namespace

int expand_dynamic_quantize_matmul(ir::Graph& g) {
  std::vector<ir::Node> out;
  int expanded = 0;
  for (auto& n : g.nodes) {
    if (n.op != "DynamicQuantizeMatMul" || n.domain != int8::kMicrosoftDomain) {
      out.push_back(std::move(n));
      continue;
    }
    ir::Node dq;
    dq.name = graph_edit::fresh_name(g, n.name + ".quantize_a");
    dq.op = "DynamicQuantizeLinear";
    const std::string a = n.input(0);
    for (const char* part : {"_quantized", "_scale", "_zero_point"}) {
      const std::string v = graph_edit::fresh_name(g, a + part);
      g.values[v].name = v;
      dq.outputs.push_back(v);
    }
    dq.inputs = {a};
    ir::Node mm;
    mm.name = n.name;
    mm.op = "MatMulIntegerToFloat";
    mm.domain = int8::find(mm.op)->domain;
    // DynamicQuantizeMatMul: A, B, b_scale, [b_zero_point], [bias].
    mm.inputs = {dq.outputs[0], n.input(1), dq.outputs[1], n.input(2), dq.outputs[2],
                 n.has_input(3) ? n.input(3) : "", n.has_input(4) ? n.input(4) : ""};
    while (mm.inputs.back().empty()) mm.inputs.pop_back();
    mm.outputs = n.outputs;
    out.push_back(std::move(dq));
    out.push_back(std::move(mm));
    ++expanded;
  }
  g.nodes = std::move(out);
  return expanded;
}

int fuse_dynamic_quantization(ir::Graph& g) {
  std::set<const ir::Node*> dead;
  int fused = 0;
  for (auto& n : g.nodes) {
    const bool conv = n.op == "ConvInteger";
    if ((!conv && n.op != "MatMulInteger") || !n.domain.empty() || n.outputs.size() != 1) continue;
    const ir::Node* dq = producer_of(g, n.input(0));
    if (!dq || dq->op != "DynamicQuantizeLinear" || dq->outputs.size() < 2 || dq->outputs[0] != n.input(0)) continue;
    if (n.has_input(2) && (dq->outputs.size() < 3 || n.input(2) != dq->outputs[2])) continue;
    if (!g.is_constant(n.input(1))) continue;
    const ir::TensorData& w = *g.values.at(n.input(1)).constant;
    if (w.dtype != ir::DType::s8 || !zero_or_absent(g, n, 3)) continue;
    if (conv ? w.dims.size() != 4 && w.dims.size() != 5 : w.dims.size() != 2) continue;
    const int64_t channels = conv ? w.dims[0] : w.dims[1];
    // The result's rank: a 2-D conv's is 4, a 3-D one's 5 (the weights' rank). A MatMul's
    // depends on A, so its scale and bias must be rank <= 1 (a scalar or [N] never widens it).
    const size_t rank = conv ? w.dims.size() : 1;
    const size_t axis = conv ? 1 : 0;

    ir::Node* cast = sole_consumer(g, n.outputs[0]);
    if (!cast || cast->op != "Cast" || cast->attrs.i("to", 0) != 1 /* FLOAT */) continue;
    ir::Node* mul = sole_consumer(g, cast->outputs[0]);
    if (!mul || mul->op != "Mul" || !mul->domain.empty()) continue;
    const std::string scales = other_input(*mul, cast->outputs[0]);
    const ir::Node* scale_mul = producer_of(g, scales);
    if (!scale_mul || scale_mul->op != "Mul") continue;
    const std::string w_scale_name = other_input(*scale_mul, dq->outputs[1]);
    if (w_scale_name.empty()) continue;
    const auto w_scale = per_channel_constant(g, w_scale_name, rank, axis, channels);
    if (!w_scale) continue;

    // The optional bias.
    ir::Node* last = mul;
    std::optional<std::vector<float>> bias;
    if (ir::Node* add = sole_consumer(g, mul->outputs[0]); add && add->op == "Add" && add->domain.empty()) {
      bias = per_channel_constant(g, other_input(*add, mul->outputs[0]), rank, axis, channels);
      if (bias) last = add;
    }
    if (bias && bias->size() == 1) bias->assign(static_cast<size_t>(channels), (*bias)[0]);

    ir::Node step;
    step.name = n.name;
    step.op = conv ? "ConvIntegerToFloat" : "MatMulIntegerToFloat";
    step.domain = int8::find(step.op)->domain;
    step.attrs = n.attrs;
    const std::string scale_const = graph_edit::add_constant(
        g, n.name + ".w_scale", ir::TensorData::f32({static_cast<int64_t>(w_scale->size())}, *w_scale));
    std::string bias_const;
    if (bias) bias_const = graph_edit::add_constant(g, n.name + ".bias", ir::TensorData::f32({channels}, *bias));
    step.inputs = {n.input(0), n.input(1), dq->outputs[1], scale_const,
                   n.has_input(2) ? n.input(2) : "", n.has_input(3) ? n.input(3) : "", bias_const};
    while (!step.inputs.empty() && step.inputs.back().empty()) step.inputs.pop_back();
    step.outputs = last->outputs;
    dead.insert(cast);
    dead.insert(mul);
    if (last != mul) dead.insert(last);
    n = std::move(step);  // x_q, x_scale and the constants are all ready at n's place
    ++fused;
  }
  graph_edit::erase_marked(g, dead);
  return fused;
}

int compute_ranges_in_producers(ir::Graph& g) {
  std::map<std::string, std::string> range_of;  // producer output -> its range value
  int moved = 0;
  for (auto& n : g.nodes) {
    if (n.op != "DynamicQuantizeLinear" || !n.domain.empty() || n.inputs.size() != 1) continue;
    const std::string& x = n.input(0);
    auto known = range_of.find(x);
    if (known == range_of.end()) {
      ir::Node* p = producer_of(g, x);
      if (!p || !computes_output_range(*p)) continue;
      const std::string r = graph_edit::fresh_name(g, x + ".range");
      g.values[r].name = r;
      p->outputs.push_back(r);
      p->attrs.set(ops::kRangeOutputAttr, int64_t{1});
      known = range_of.emplace(x, r).first;
    }
    n.inputs.push_back(known->second);
    ++moved;
  }
  return moved;
}

}  // namespace octet::passes
