// A Conv whose only reader is an Add with a tensor of the same shape (a ResNet block's sum of
// its last conv and its shortcut), and the activation after the Add, into the Conv:
//
//   x ─ Conv ─ Add ─ Relu ─ y          y = Conv(x, residual) with fused_act Relu
//        residual ─┘
//
// The residual becomes the Conv's fourth input (engine/ops/conv.cc), added to each output tile
// while it is in cache: the Add and the activation no longer read and write the whole map.
// When both operands are conv outputs, the conv that runs last takes the other's output.
#include <map>

#include "engine/graph_edit.h"
#include "engine/passes.h"

namespace octet::passes {

int fuse_residual_adds(ir::Graph& g, const SameShape& same_shape) {
  std::map<std::string, size_t> producer;  // value -> index of the node that writes it
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& o : g.nodes[i].outputs) producer[o] = i;
  std::set<const ir::Node*> dead;
  int fused = 0;
  for (auto& add : g.nodes) {
    if (add.op != "Add" || !add.domain.empty() || add.inputs.size() != 2 || add.outputs.size() != 1) continue;
    ir::Node* conv = nullptr;
    size_t conv_index = 0;
    std::string residual;
    for (size_t side = 0; side < 2 && !conv; ++side) {
      const std::string &t = add.inputs[side], &other = add.inputs[1 - side];
      const auto p = producer.find(t);
      if (p == producer.end() || t == other || g.is_constant(other)) continue;
      ir::Node& candidate = g.nodes[p->second];
      if (candidate.op != "Conv" || !candidate.domain.empty() || candidate.outputs.size() != 1 ||
          candidate.inputs.size() > 3 || candidate.attrs.has("fused_act") || dead.count(&candidate))
        continue;
      if (graph_edit::sole_consumer(g, t) != &add) continue;
      // The conv reads the residual where it runs: a graph input, or written before that. So
      // of two convs, only the one that runs last can take the other's output.
      const auto q = producer.find(other);
      const bool ready = q == producer.end() || q->second < p->second;
      if (!ready || !same_shape(t, other)) continue;
      conv = &candidate;
      conv_index = p->second;
      residual = other;
    }
    if (!conv) continue;
    conv->inputs.resize(3);  // "" where the bias is absent
    conv->inputs.push_back(residual);
    conv->outputs[0] = add.outputs[0];
    dead.insert(&add);
    fuse_activation_after(g, *conv, dead);
    producer[conv->outputs[0]] = conv_index;
    ++fused;
  }
  graph_edit::erase_marked(g, dead);
  return fused;
}

}  // namespace octet::passes
