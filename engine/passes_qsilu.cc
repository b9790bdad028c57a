// SiLU and hard swish in a QDQ model, after fuse_qdq: QLinearSigmoid(x) or QLinearHardSigmoid(x)
// and a QLinearMul of its output with the same x,
//
//   x ─┬─ QLinearSigmoid / QLinearHardSigmoid ─ s ─┐
//      └─────────────────────────────────────── QLinearMul ─ y
//
// make y a function of x's byte alone. One QLinearSilu node (engine/ops/qelementwise_ops.cc;
// attribute gate "HardSigmoid" with its alpha and beta for the second) looks it up in a
// 256-entry table built by running both ops' own arithmetic on every byte, so its output is
// bit-identical to the pair's (and so to ONNX Runtime's): one pass over the map instead of
// three (the SiLU pair took 23% of EfficientNet-B0's INT8 run; MobileNetV3 exported below
// opset 14 writes its hard swish as HardSigmoid(x) * x).
#include "core/int8_ops.h"
#include "engine/graph_edit.h"
#include "engine/passes.h"

namespace octet::passes {
namespace {

using graph_edit::producer_of;
using graph_edit::sole_consumer;

bool is_op(const ir::Node* n, const char* op) { return n && n->op == op && n->outputs.size() == 1; }

}  // namespace

int fuse_qlinear_silu(ir::Graph& g) {
  std::set<const ir::Node*> dead;
  int fused = 0;
  for (auto& mul : g.nodes) {
    if (!is_op(&mul, "QLinearMul") || mul.inputs.size() < 7 || dead.count(&mul)) continue;
    // QLinearMul: A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale, C_zero_point.
    for (size_t gate_slot : {size_t(3), size_t(0)}) {
      const size_t x_slot = 3 - gate_slot;
      ir::Node* sigmoid = producer_of(g, mul.inputs[gate_slot]);
      const bool hard = is_op(sigmoid, "QLinearHardSigmoid");
      if ((!hard && !is_op(sigmoid, "QLinearSigmoid")) || dead.count(sigmoid) || sigmoid->inputs.empty() ||
          sigmoid->input(0) != mul.inputs[x_slot] || sole_consumer(g, sigmoid->outputs[0]) != &mul)
        continue;
      ir::Node silu;
      silu.name = mul.name;
      silu.op = "QLinearSilu";
      silu.domain = int8::kOctetDomain;
      // x, then the sigmoid's X_scale, X_zero_point, Y_scale, Y_zero_point, then the Mul's
      // parameters for x, for the sigmoid's output and for its own output.
      silu.inputs = {sigmoid->input(0)};
      for (size_t i = 1; i <= 4; ++i) silu.inputs.push_back(sigmoid->input(i));  // "" when omitted
      for (size_t i : {x_slot + 1, x_slot + 2, gate_slot + 1, gate_slot + 2, size_t(6), size_t(7)})
        silu.inputs.push_back(mul.input(i));
      silu.outputs = mul.outputs;
      if (hard) {
        silu.attrs.set("gate", std::string("HardSigmoid"));
        silu.attrs.set("alpha", sigmoid->attrs.f("alpha", 0.2f));
        silu.attrs.set("beta", sigmoid->attrs.f("beta", 0.5f));
      }
      mul = std::move(silu);
      dead.insert(sigmoid);
      ++fused;
      break;
    }
  }
  graph_edit::erase_marked(g, dead);
  return fused;
}

}  // namespace octet::passes
