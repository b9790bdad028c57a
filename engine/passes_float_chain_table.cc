// A chain of float element-wise ops between a DequantizeLinear and a QuantizeLinear in a QDQ
// model, left in float by fuse_qdq (no INT8 form):
//
//   x (8-bit) ─ DequantizeLinear ─ Div(·, c) ─ Erf ─ Add(·, 1) ─ QuantizeLinear ─ y (8-bit)
//
// (ConvNeXt's GELU, whose quantizer puts no Q/DQ pair between its Div, Erf and Add; the
// DequantizeLinear also feeds GELU's final Mul, and stays for it) maps each
// byte of x to a byte of y: one QLinearTable lookup instead of five passes over a float tensor.
// The table comes from running the nodes themselves on the 256 byte values, so y keeps their
// bits, and ONNX Runtime's where they had them. Only ops whose result for an element does not
// depend on the ISA level are taken (their level-by-level identity is tested elsewhere: Erf in
// test_parity_erf_gelu.cc, IEEE arithmetic by a scalar constant exact everywhere), so a table
// built on the reference kernels is what every level would have computed.
#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/graph_edit.h"
#include "engine/passes.h"

namespace octet::passes {
namespace {

using graph_edit::per_tensor_quantization;
using graph_edit::producer_of;
using graph_edit::sole_consumer;
using graph_edit::zero_point_type;

bool scalar_constant(const ir::Graph& g, const std::string& name) {
  const ir::TensorData* t = graph_edit::float_constant(g, name);
  return t != nullptr && t->count() == 1;
}

// The input slot of n that carries the chain, when n is an op the chain may hold: a unary op
// exact at every level, or arithmetic with a float scalar constant as its other operand.
std::optional<size_t> chain_slot(const ir::Graph& g, const ir::Node& n) {
  static const std::set<std::string> kUnary = {"Erf", "Relu", "Neg", "Abs"};
  static const std::set<std::string> kBinary = {"Add", "Sub", "Mul", "Div"};
  if (!n.domain.empty() || n.outputs.size() != 1) return std::nullopt;
  if (kUnary.count(n.op) && n.inputs.size() == 1) return 0;
  if (kBinary.count(n.op) && n.inputs.size() == 2) {
    if (scalar_constant(g, n.input(1)) && !g.is_constant(n.input(0))) return 0;
    if (scalar_constant(g, n.input(0)) && !g.is_constant(n.input(1))) return 1;
  }
  return std::nullopt;
}

}  // namespace

int fuse_qdq_float_chains(ir::Graph& g) {
  std::set<const ir::Node*> dead;
  int fused = 0;
  for (auto& q : g.nodes) {
    if (q.op != "QuantizeLinear" || dead.count(&q) || !per_tensor_quantization(g, q) || q.outputs.size() != 1) continue;
    // Walk back from the QuantizeLinear while each link is read only by the next one.
    std::vector<std::pair<ir::Node*, size_t>> chain;  // (node, slot of its chain input), last first
    const ir::Node* next = &q;
    std::string value = q.input(0);
    ir::Node* n = producer_of(g, value);
    while (n != nullptr && !dead.count(n) && sole_consumer(g, value) == next) {
      const std::optional<size_t> slot = chain_slot(g, *n);
      if (!slot) break;
      chain.emplace_back(n, *slot);
      next = n;
      value = n->input(*slot);
      n = producer_of(g, value);
    }
    ir::Node* dq = n;
    if (chain.empty() || dq == nullptr || dq->op != "DequantizeLinear" || dead.count(dq) || !per_tensor_quantization(g, *dq) ||
        g.is_constant(dq->input(0)))
      continue;
    // The DequantizeLinear may have other readers (GELU's x * ...): it then stays for them.
    const bool dq_shared = sole_consumer(g, value) != next;
    // The 8-bit types from the zero points (the values' own are known only once planned).
    const ir::DType type = zero_point_type(g, *dq);
    if (!graph_edit::is_8bit(type) || zero_point_type(g, q) != type) continue;
    const ir::TensorData values = graph_edit::every_byte_value(type);
    std::vector<ir::TensorData> out;
    try {
      out = graph_edit::evaluate_node(g, *dq, 0, &values);
      for (auto it = chain.rbegin(); it != chain.rend() && out.size() == 1; ++it)
        out = graph_edit::evaluate_node(g, *it->first, it->second, &out[0]);
      if (out.size() == 1) out = graph_edit::evaluate_node(g, q, 0, &out[0]);
    } catch (const ir::Error&) {
      continue;  // a node octet cannot run on its own: left for the plan to report
    }
    if (out.size() != 1 || out[0].dtype != type || out[0].count() != 256) continue;
    // The QuantizeLinear becomes the lookup, in its place in the node order.
    const std::string x = dq->input(0);
    q.op = "QLinearTable";
    q.attrs = {};
    q.inputs = {x, graph_edit::add_constant(g, q.name + "_table", std::move(out[0]))};
    if (!dq_shared) dead.insert(dq);
    for (const auto& link : chain) dead.insert(link.first);
    ++fused;
  }
  graph_edit::erase_marked(g, dead);
  return fused;
}

}  // namespace octet::passes
