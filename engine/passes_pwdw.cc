// A 1x1 Conv whose only reader is a depthwise Conv into one PointwiseDepthwise node:
//
//   x ─ Conv 1x1 (+act) ─ Conv depthwise (+act) ─ y
//
// the expand and depthwise layers of inverted-residual blocks (MobileNetV2 / V3, EfficientNet).
// After fuse_activations, so both convs carry their activations. The op (engine/ops/
// pwdw_op.cc) never writes the wide intermediate to memory: kernels/conv/f32_pwdw_conv.h.
#include "engine/graph_edit.h"
#include "engine/passes.h"

namespace octet::passes {
namespace {

// A depthwise Conv (group == channels, multiplier 1) with constant weights (and bias) over `c`
// channels.
bool is_depthwise_conv(const ir::Graph& g, const ir::Node& n, int64_t c) {
  if (n.op != "Conv" || !n.domain.empty() || n.outputs.size() != 1) return false;
  if (!g.is_constant(n.input(1)) || (n.has_input(2) && !g.is_constant(n.input(2)))) return false;
  const auto& w = g.values.at(n.input(1)).constant;
  if (!w || w->dtype != ir::DType::f32 || w->dims.size() != 4 || w->dims[0] != c || w->dims[1] != 1) return false;
  return n.attrs.i("group", 1) == c;
}

}  // namespace

int fuse_pointwise_depthwise(ir::Graph& g) {
  std::set<const ir::Node*> dead;
  int fused = 0;
  for (auto& dw : g.nodes) {
    if (dw.op != "Conv" || dw.inputs.empty()) continue;
    ir::Node* pw = graph_edit::producer_of(g, dw.inputs[0]);
    if (!graph_edit::is_pointwise_conv(g, pw) || dead.count(pw)) continue;
    if (graph_edit::sole_consumer(g, pw->outputs[0]) != &dw) continue;
    const int64_t mid = g.values.at(pw->input(1)).constant->dims[0];
    if (!is_depthwise_conv(g, dw, mid)) continue;

    ir::Node node;
    node.name = pw->name + "+" + dw.name;
    node.op = "PointwiseDepthwise";
    node.inputs = {pw->input(0), pw->input(1), pw->input(2), dw.input(1), dw.input(2)};
    node.outputs = dw.outputs;
    node.attrs = dw.attrs;  // the depthwise window and its activation ("fused_act")
    if (pw->attrs.has("fused_act")) node.attrs.set("pw_act", pw->attrs.s("fused_act"));
    if (pw->attrs.has("fused_act_params")) node.attrs.set("pw_act_params", pw->attrs.floats("fused_act_params"));
    dw = std::move(node);  // the depthwise conv's place in the order: x is ready there
    dead.insert(pw);
    ++fused;
  }
  graph_edit::erase_marked(g, dead);
  return fused;
}

}  // namespace octet::passes
