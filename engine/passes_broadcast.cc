// An Expand whose readers broadcast anyway (ECA's and GCNet's gates, exported as
//
//   gate [N, C, 1, 1] ─ Expand(Shape(x)) ─ Mul ─ y        y = x * gate
//                                 x ──────┘
//
// ) costs a full-size tensor written by the Expand, relayouted to channels-last for the Mul
// (the Expand's output follows the gate's row-major layout) and read again: on timm's
// ecaresnet26t at 224 px the Expand and its relayout took 0.64-0.66 ms in each 56x56 block
// against the Mul's 0.17, 0.15-0.31 ms in the smaller ones. Each reader that is a
// broadcasting element-wise op (Add, Sub, Mul, Div, Pow, and QLinearAdd / QLinearMul) whose
// output has the same dims with the Expand's input in its place reads that input instead: the
// same elements, the same arithmetic. The Expand, read by nothing then, goes with remove_unused.
#include <algorithm>
#include <map>

#include "engine/passes.h"

namespace octet::passes {
namespace {

// ONNX multidirectional (numpy) broadcasting of two shapes; nothing when they do not broadcast.
std::optional<ir::Dims> broadcast(const ir::Dims& a, const ir::Dims& b) {
  ir::Dims out(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[out.size() - 1 - i] = x == 1 ? y : x;
  }
  return out;
}

// The two data inputs of a broadcasting element-wise op, or {} for any other node.
std::vector<size_t> broadcast_operands(const ir::Node& n) {
  static const std::set<std::string> onnx = {"Add", "Sub", "Mul", "Div", "Pow"};
  if (n.domain.empty() && onnx.count(n.op) && n.inputs.size() == 2) return {0, 1};
  if (n.domain == "com.microsoft" && (n.op == "QLinearAdd" || n.op == "QLinearMul") && n.inputs.size() >= 7)
    return {0, 3};
  return {};
}

}  // namespace

int drop_broadcast_expands(ir::Graph& g, const DimsAtBatches& dims_of) {
  std::map<std::string, const ir::Node*> expands;  // an Expand's output -> the Expand
  for (const auto& n : g.nodes)
    if (n.op == "Expand" && n.domain.empty() && n.inputs.size() == 2 && n.outputs.size() == 1)
      expands[n.outputs[0]] = &n;
  int rewired = 0;
  for (auto& reader : g.nodes) {
    const std::vector<size_t> operands = broadcast_operands(reader);
    if (operands.empty() || reader.outputs.empty()) continue;
    for (size_t side = 0; side < 2; ++side) {
      const auto e = expands.find(reader.inputs[operands[side]]);
      if (e == expands.end()) continue;
      const std::string& small = e->second->inputs[0];
      const std::string& other = reader.inputs[operands[1 - side]];
      const auto small_dims = dims_of(small), other_dims = dims_of(other), out_dims = dims_of(reader.outputs[0]);
      if (!small_dims || !other_dims || !out_dims || small_dims->size() != out_dims->size() ||
          other_dims->size() != out_dims->size())
        continue;
      bool same = true;
      for (size_t b = 0; b < out_dims->size() && same; ++b) {
        const std::optional<ir::Dims> d = broadcast((*small_dims)[b], (*other_dims)[b]);
        same = d && *d == (*out_dims)[b];
      }
      if (!same) continue;
      reader.inputs[operands[side]] = small;
      ++rewired;
    }
  }
  if (rewired) remove_unused(g);
  return rewired;
}

}  // namespace octet::passes
