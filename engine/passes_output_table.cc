// An 8-bit table lookup read only from a QLinearConv's output, after fuse_qdq and
// fuse_qlinear_silu:
//
//   x ─ QLinearConv ─ y ─ QLinearSilu / QLinearSigmoid / QLinearHardSwish / ... ─ z
//
// Each is a function of y's byte alone, so the conv can look every byte up as it stores its
// tile, while the tile is still in cache: one step instead of two, and on threads no second
// pass over an output that the other core wrote half of. The table (the conv's input 9, 256
// bytes) comes from running the lookup node itself on every byte value, so z keeps the pair's
// bits, and so ONNX Runtime's.
#include <cstddef>
#include <set>
#include <string>

#include "engine/graph_edit.h"
#include "engine/passes.h"

namespace octet::passes {
namespace {

using graph_edit::sole_consumer;

bool is_table_lookup(const ir::Node& n) {
  static const std::set<std::string> kLookups = {"QLinearSigmoid", "QLinearHardSwish", "QLinearHardSigmoid",
                                                 "QLinearLeakyRelu", "QLinearSilu", "QLinearTable"};
  return kLookups.count(n.op) && n.outputs.size() == 1 && !n.inputs.empty();
}

// The conv's output type: its y_zero_point's, uint8 when that is omitted (ONNX's default).
ir::DType conv_output_type(const ir::Graph& g, const ir::Node& conv) {
  if (!conv.has_input(7)) return ir::DType::u8;
  return g.value(conv.input(7)).dtype;
}

}  // namespace

int fuse_conv_output_tables(ir::Graph& g) {
  std::set<const ir::Node*> dead;
  int fused = 0;
  for (auto& conv : g.nodes) {
    if (conv.op != "QLinearConv" || !conv.domain.empty() || conv.outputs.size() != 1 || conv.inputs.size() > 9 ||
        dead.count(&conv))
      continue;
    ir::Node* lookup = sole_consumer(g, conv.outputs[0]);
    if (!lookup || !is_table_lookup(*lookup) || lookup->input(0) != conv.outputs[0]) continue;
    const ir::DType type = conv_output_type(g, conv);
    if (type != ir::DType::u8 && type != ir::DType::s8) continue;
    const ir::TensorData bytes = graph_edit::every_byte_value(type);
    std::vector<ir::TensorData> table;
    try {
      table = graph_edit::evaluate_node(g, *lookup, 0, &bytes);
    } catch (const ir::Error&) {
      continue;  // a lookup octet cannot run on its own either: left for the plan to report
    }
    if (table.size() != 1 || table[0].dtype != type || table[0].count() != 256) continue;
    conv.inputs.resize(9);  // "" for an omitted bias
    conv.inputs.push_back(graph_edit::add_constant(g, conv.name + "_output_table", std::move(table[0])));
    conv.outputs = lookup->outputs;
    dead.insert(lookup);
    ++fused;
  }
  graph_edit::erase_marked(g, dead);
  return fused;
}

}  // namespace octet::passes
