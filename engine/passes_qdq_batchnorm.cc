// A float inference BatchNormalization (with the activation fuse_activations gave it) between
// a DequantizeLinear and a QuantizeLinear of a QDQ model, each link read only by the next:
//
//   x (8-bit) ─ DequantizeLinear ─ BatchNormalization [+ Relu] ─ QuantizeLinear ─ y (8-bit)
//
// (DenseNet's pre-activations: the quantizer leaves BN in float since no INT8 BN exists, and no
// conv precedes it to fold into) becomes one QLinearBatchNormalization step
// (engine/ops/qbatchnorm_op.cc) that runs the three steps' kernels chunk by chunk in the L1D:
// the same bits, without the float map's three trips through memory. The scale and shift stay
// per channel, so unlike fuse_qdq_float_chains no single 256-byte table holds the chain.
#include <set>
#include <string>
#include <vector>

#include "engine/graph_edit.h"
#include "engine/passes.h"

namespace octet::passes {

using graph_edit::is_8bit;
using graph_edit::per_tensor_quantization;
using graph_edit::producer_of;
using graph_edit::sole_consumer;
using graph_edit::zero_point_type;

namespace {

// The QuantizeLinear that ends a chain: per tensor, to an 8-bit type, one output.
bool ends_chain(const ir::Graph& g, const ir::Node& q, const std::set<const ir::Node*>& dead) {
  return q.op == "QuantizeLinear" && !dead.count(&q) && per_tensor_quantization(g, q) && q.outputs.size() == 1 &&
         q.attrs.i("output_dtype", 0) == 0 && is_8bit(zero_point_type(g, q));
}

// The DequantizeLinear that starts one: per tensor, of an 8-bit map (not a constant), read only
// by `reader` through `value`.
bool starts_chain(ir::Graph& g, const ir::Node* dq, const std::string& value, const ir::Node* reader,
                  const std::set<const ir::Node*>& dead) {
  return dq != nullptr && !dead.count(dq) && dq->op == "DequantizeLinear" && per_tensor_quantization(g, *dq) &&
         !g.is_constant(dq->input(0)) && is_8bit(zero_point_type(g, *dq)) && sole_consumer(g, value) == reader;
}

std::string optional_input(const ir::Node& n, size_t i) { return n.has_input(i) ? n.input(i) : std::string(); }

// The float node between dq and q becomes `op` on x (8-bit): inputs x, x_scale, x_zero_point,
// then `params`, then y_scale, y_zero_point; it writes q's output, and dq and q go.
void become_step(ir::Node& n, const char* op, const std::vector<std::string>& params, ir::Node& dq, ir::Node& q,
                 std::set<const ir::Node*>& dead) {
  std::vector<std::string> inputs = {dq.input(0), dq.input(1), optional_input(dq, 2)};
  inputs.insert(inputs.end(), params.begin(), params.end());
  inputs.push_back(q.input(1));
  inputs.push_back(optional_input(q, 2));
  n.op = op;
  n.inputs = std::move(inputs);
  n.outputs = q.outputs;
  dead.insert(&dq);
  dead.insert(&q);
}

}  // namespace

int fuse_qdq_batchnorm(ir::Graph& g) {
  std::set<const ir::Node*> dead;
  int fused = 0;
  for (auto& q : g.nodes) {
    if (!ends_chain(g, q, dead)) continue;
    ir::Node* bn = producer_of(g, q.input(0));
    if (bn == nullptr || dead.count(bn) || bn->op != "BatchNormalization" || !bn->domain.empty() ||
        bn->outputs.size() != 1 || bn->inputs.size() != 5 || sole_consumer(g, q.input(0)) != &q)
      continue;
    bool constants = true;
    for (size_t i = 1; i < 5; ++i) constants = constants && graph_edit::float_constant(g, bn->input(i)) != nullptr;
    ir::Node* dq = producer_of(g, bn->input(0));
    if (!constants || !starts_chain(g, dq, bn->input(0), bn, dead)) continue;
    become_step(*bn, "QLinearBatchNormalization", {bn->input(1), bn->input(2), bn->input(3), bn->input(4)}, *dq, q,
                dead);
    ++fused;
  }
  graph_edit::erase_marked(g, dead);
  return fused;
}

// A float Add of a constant row along the last axis between a DequantizeLinear and a
// QuantizeLinear, each link read only by the next:
//
//   x (8-bit) ─ DequantizeLinear ─ Add (B: [C] or [1, ..., 1, C]) ─ QuantizeLinear ─ y (8-bit)
//
// (the bias of a Linear that torch exports as MatMul + Add and the quantizer leaves in float:
// ConvNeXt's MLP, 1.2M elements a block at 56x56, three trips of a 4.8 MB float map through
// memory) becomes one QLinearBiasAdd step over the 8-bit tensor. Only where the Add's output
// has x's shape at both batches the Session plans (B broadcasts, x does not).
int fuse_qdq_bias_add(ir::Graph& g, const DimsAtBatches& dims_of) {
  std::set<const ir::Node*> dead;
  int fused = 0;
  for (auto& q : g.nodes) {
    if (!ends_chain(g, q, dead)) continue;
    ir::Node* add = producer_of(g, q.input(0));
    if (add == nullptr || dead.count(add) || add->op != "Add" || !add->domain.empty() || add->inputs.size() != 2 ||
        add->outputs.size() != 1 || sole_consumer(g, q.input(0)) != &q)
      continue;
    const ir::TensorData* b = graph_edit::float_constant(g, add->input(1));
    const int b_index = b != nullptr ? 1 : 0;
    if (b == nullptr) b = graph_edit::float_constant(g, add->input(0));
    ir::Node* dq = producer_of(g, add->input(1 - b_index));
    if (b == nullptr || b->dims.empty() || !starts_chain(g, dq, add->input(1 - b_index), add, dead)) continue;
    const int64_t c = b->dims.back();
    if (c < 1 || b->count() != c) continue;  // a row along the last axis, nothing else
    const auto xd = dims_of(dq->outputs[0]), yd = dims_of(add->outputs[0]);
    bool fits = xd && yd;
    for (size_t i = 0; fits && i < xd->size(); ++i)
      fits = (*xd)[i] == (*yd)[i] && !(*xd)[i].empty() && (*xd)[i].back() == c && b->dims.size() <= (*xd)[i].size();
    if (!fits) continue;
    become_step(*add, "QLinearBiasAdd", {add->input(b_index)}, *dq, q, dead);
    ++fused;
  }
  graph_edit::erase_marked(g, dead);
  return fused;
}

}  // namespace octet::passes
