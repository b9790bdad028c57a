// A Mul and / or an Add (or Sub) by scalar constants right after a conv, as HGNetV2's
// learnable affine writes it after every activation (Conv -> Relu -> Mul s -> Add b) and NF-Nets
// their gains (Conv -> Mul g): each a full pass over the conv's output, 62 steps and 470 us of
// timm's hgnetv2_b0 at 224 px (6.5% of its run, Zen 4). The conv's epilogue applies them instead,
// while each tile is in L1 (Activation::scale_shift), as y * s, rounded, then + b, rounded:
// the two ops' own arithmetic, bit for bit.
#include <set>

#include "engine/graph_edit.h"
#include "engine/ops/fused_activation.h"
#include "engine/passes.h"

namespace octet::passes {
namespace {

using graph_edit::erase_marked;
using graph_edit::float_constant;
using graph_edit::sole_consumer;
using ops::kScaleShiftAttr;

// The float32 constant of one element that node n (two inputs, one of them `x`) combines x with,
// when its broadcast leaves x's shape as it is (rank at most x's); nullptr otherwise.
const ir::TensorData* scalar_operand(const ir::Graph& g, const ir::Node& n, const std::string& x, size_t x_rank,
                                     bool x_first_only) {
  if (!n.domain.empty() || n.inputs.size() != 2 || n.outputs.size() != 1) return nullptr;
  if (n.inputs[0] != x && (x_first_only || n.inputs[1] != x)) return nullptr;
  if (n.inputs[0] == x && n.inputs[1] == x) return nullptr;
  const ir::TensorData* c = float_constant(g, n.inputs[0] == x ? n.inputs[1] : n.inputs[0]);
  return c && c->count() == 1 && c->dims.size() <= x_rank ? c : nullptr;
}

float only_value(const ir::TensorData& t) { return t.values<float>()[0]; }

// The rank of a conv's output: its weights' (Conv), 4 (PointwiseDepthwise).
size_t output_rank(const ir::Graph& g, const ir::Node& conv) {
  if (conv.op == "PointwiseDepthwise") return 4;
  const ir::TensorData* w = conv.inputs.size() > 1 ? float_constant(g, conv.inputs[1]) : nullptr;
  return w ? w->dims.size() : 0;
}

}  // namespace

int fuse_scalar_affine(ir::Graph& g) {
  std::set<const ir::Node*> dead;
  for (auto& conv : g.nodes) {
    if ((conv.op != "Conv" && conv.op != "PointwiseDepthwise") || conv.outputs.size() != 1 ||
        conv.attrs.has(kScaleShiftAttr) || g.value(conv.outputs[0]).dtype != ir::DType::f32)
      continue;
    const size_t rank = output_rank(g, conv);
    if (rank == 0) continue;
    float scale = 1.0f, shift = 0.0f;
    bool any = false;
    ir::Node* next = sole_consumer(g, conv.outputs[0]);
    if (next && next->op == "Mul") {
      if (const ir::TensorData* s = scalar_operand(g, *next, conv.outputs[0], rank, false)) {
        scale = only_value(*s);
        conv.outputs[0] = next->outputs[0];
        dead.insert(next);
        any = true;
        next = sole_consumer(g, conv.outputs[0]);
      }
    }
    if (next && (next->op == "Add" || next->op == "Sub")) {
      const bool sub = next->op == "Sub";  // y - b is y + (-b), exactly
      if (const ir::TensorData* b = scalar_operand(g, *next, conv.outputs[0], rank, sub)) {
        shift = sub ? -only_value(*b) : only_value(*b);
        conv.outputs[0] = next->outputs[0];
        dead.insert(next);
        any = true;
      }
    }
    if (any) conv.attrs.set(kScaleShiftAttr, std::vector<float>{scale, shift});
  }
  erase_marked(g, dead);
  return int(dead.size());
}

}  // namespace octet::passes
