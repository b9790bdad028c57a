// ShuffleNet's channel shuffle into one ChannelShuffle node (engine/ops/transform_ops.cc):
//
//   x ─ Reshape(shape1) ─ Transpose(perm) ─ Reshape(shape2) ─ y
//
// with a rank-5 perm that keeps axis 0 and swaps two neighbours ([0, 2, 1, 3, 4] in PyTorch's
// export). The shapes are usually computed from Shape(x) and only known when a plan folds
// them, so the node keeps both and the op checks them there. Run as separate steps, the chain
// is a relayout of x to row-major (its producer, a Concat of conv outputs, is channels-last),
// two reshape copies and a transpose copy; as one node it is one copy that keeps x's layout.
//
// And any other Reshape read only by a Transpose, into one ReshapeTranspose node (the same op
// without the last shape): YOLOv5's head views each level's conv output [N, 3 * K, H, W] as
// [N, 3, K, H, W] and moves K innermost. Apart, the conv's channels-last output is relayouted
// to row-major and then transposed back, two transposes of the whole map; as one node, the
// [N, H, W, 3, K] view of the channels-last map is copied in runs of K.
#include "engine/graph_edit.h"
#include "engine/passes.h"

namespace octet::passes {
namespace {

using graph_edit::producer_of;
using graph_edit::sole_consumer;

bool plain_reshape(const ir::Node* n) {
  return n && n->op == "Reshape" && n->domain.empty() && n->inputs.size() == 2 && n->outputs.size() == 1 &&
         n->attrs.i("allowzero", 0) == 0;
}

bool swaps_two_inner_axes(const std::vector<int64_t>& perm) {
  if (perm.size() != 5 || perm[0] != 0) return false;
  int moved = 0;
  for (size_t k = 0; k < perm.size(); ++k) moved += perm[k] != int64_t(k);
  for (size_t k = 1; k + 1 < perm.size(); ++k)
    if (perm[k] == int64_t(k + 1) && perm[k + 1] == int64_t(k)) return moved == 2;
  return false;
}

}  // namespace

int fuse_channel_shuffle(ir::Graph& g) {
  std::set<const ir::Node*> dead;
  int fused = 0;
  for (auto& last : g.nodes) {
    if (!plain_reshape(&last) || dead.count(&last)) continue;
    ir::Node* transpose = producer_of(g, last.input(0));
    if (!transpose || transpose->op != "Transpose" || !transpose->domain.empty() ||
        !swaps_two_inner_axes(transpose->attrs.ints("perm")) || sole_consumer(g, transpose->outputs[0]) != &last)
      continue;
    ir::Node* first = producer_of(g, transpose->input(0));
    if (!plain_reshape(first) || sole_consumer(g, first->outputs[0]) != transpose || dead.count(first)) continue;

    ir::Node shuffle;
    shuffle.name = last.name;
    shuffle.op = "ChannelShuffle";
    shuffle.inputs = {first->input(0), first->input(1), last.input(1)};
    shuffle.outputs = last.outputs;
    shuffle.attrs.set("perm", transpose->attrs.ints("perm"));
    last = std::move(shuffle);  // the last Reshape's place: both shapes are computed by then
    dead.insert(first);
    dead.insert(transpose);
    ++fused;
  }
  graph_edit::erase_marked(g, dead);
  return fused;
}

int fuse_reshape_transpose(ir::Graph& g) {
  std::set<const ir::Node*> dead;
  int fused = 0;
  for (auto& transpose : g.nodes) {
    if (transpose.op != "Transpose" || !transpose.domain.empty() || transpose.inputs.size() != 1 ||
        !transpose.attrs.has("perm"))
      continue;
    ir::Node* reshape = producer_of(g, transpose.input(0));
    if (!plain_reshape(reshape) || sole_consumer(g, reshape->outputs[0]) != &transpose || dead.count(reshape)) continue;
    ir::Node fused_node;
    fused_node.name = transpose.name;
    fused_node.op = "ReshapeTranspose";
    fused_node.inputs = {reshape->input(0), reshape->input(1)};
    fused_node.outputs = transpose.outputs;
    fused_node.attrs.set("perm", transpose.attrs.ints("perm"));
    transpose = std::move(fused_node);
    dead.insert(reshape);
    ++fused;
  }
  graph_edit::erase_marked(g, dead);
  return fused;
}

}  // namespace octet::passes
