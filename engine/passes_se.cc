// Squeeze-excitation blocks into one SqueezeExcite node:
//
//   x ─┬─ GlobalAveragePool ─ Conv 1x1 (+act) ─ Conv 1x1 (+gate act) ─┐
//      └───────────────────────────────────────────────────────────── Mul ─ y
//
// runs after fuse_activations (the two convs carry their activations as attributes). The
// pooled vector, the reduced vector and the gate are tiny: one node keeps them in its own
// scratch instead of four plan steps with an arena tensor each.
#include "engine/graph_edit.h"
#include "engine/passes.h"

namespace octet::passes {

using graph_edit::is_pointwise_conv;
using graph_edit::producer_of;
using graph_edit::sole_consumer;

int fuse_squeeze_excitation(ir::Graph& g) {
  std::set<const ir::Node*> dead;
  int fused = 0;
  for (auto& mul : g.nodes) {
    if (mul.op != "Mul" || !mul.domain.empty() || mul.inputs.size() != 2 || dead.count(&mul)) continue;
    for (int gate_side = 0; gate_side < 2; ++gate_side) {
      const std::string& x = mul.inputs[1 - gate_side];
      ir::Node* expand = producer_of(g, mul.inputs[gate_side]);
      if (!is_pointwise_conv(g, expand) || sole_consumer(g, expand->outputs[0]) != &mul) continue;
      const std::string gate_act = expand->attrs.has("fused_act") ? expand->attrs.s("fused_act") : "";
      if (gate_act != "Sigmoid" && gate_act != "HardSigmoid") continue;
      ir::Node* reduce = producer_of(g, expand->input(0));
      if (!is_pointwise_conv(g, reduce) || sole_consumer(g, reduce->outputs[0]) != expand) continue;
      ir::Node* pool = producer_of(g, reduce->input(0));
      if (!pool || pool->op != "GlobalAveragePool" || pool->input(0) != x ||
          sole_consumer(g, pool->outputs[0]) != reduce)
        continue;
      if (dead.count(expand) || dead.count(reduce) || dead.count(pool)) continue;

      ir::Node se;
      se.name = mul.name;
      se.op = "SqueezeExcite";
      se.inputs = {x, reduce->input(1), reduce->input(2), expand->input(1), expand->input(2)};
      se.outputs = mul.outputs;
      if (reduce->attrs.has("fused_act")) se.attrs.set("fused_act", reduce->attrs.s("fused_act"));
      if (reduce->attrs.has("fused_act_params")) se.attrs.set("fused_act_params", reduce->attrs.floats("fused_act_params"));
      se.attrs.set("gate_act", gate_act);
      if (expand->attrs.has("fused_act_params")) se.attrs.set("gate_act_params", expand->attrs.floats("fused_act_params"));
      mul = std::move(se);  // the Mul's place in the order: x and the weights are ready there
      dead.insert(pool);
      dead.insert(reduce);
      dead.insert(expand);
      ++fused;
      break;
    }
  }
  graph_edit::erase_marked(g, dead);
  return fused;
}

}  // namespace octet::passes
