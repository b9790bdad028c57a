// GroupNorm as torch exports it, in a float graph, into one GroupNorm step:
//
//   x ─ Reshape [N, G, -1] ─ InstanceNormalization (scale 1, B 0) ─ Reshape (x's dims)
//     ─ Mul gamma [C, 1, 1] ─ Add beta [C, 1, 1] [─ activation]
//
// becomes GroupNorm(x, gamma, beta) with num_groups G (engine/ops/group_norm_op.cc), which
// runs on the channels-last map; the chain made the planner relayout every such map to
// row-major and back (timm's efficientnet_b0_gn: 99 relayouts, 3.6 ms of a 20 ms run on a
// Zen 4). Only in a graph that quantizes nothing: GroupNorm's statistics are accurate but not
// rounded as ONNX Runtime's InstanceNormalization rounds them, and a quantizer reading them
// (a QuantizeLinear, a DynamicQuantizeLinear) must see ORT's float values to give its codes.
#include <map>
#include <optional>
#include <set>

#include "core/int8_ops.h"
#include "engine/graph_edit.h"
#include "engine/passes.h"

namespace octet::passes {
namespace {

using graph_edit::is_8bit;
using graph_edit::per_tensor_quantization;
using graph_edit::producer_of;
using graph_edit::sole_consumer;
using graph_edit::zero_point_type;

// A node of a graph that quantizes, after optimize(): a quantizer or dequantizer left as it is,
// an op of the INT8 table (core/int8_ops.h: QLinearConv, QGemm, ConvIntegerToFloat, ...), or one
// of octet's own QLinear table ops (QLinearSilu, QLinearTable, QLinearBatchNormalization, ...).
bool quantizes(const ir::Node& n) {
  return n.op == "QuantizeLinear" || n.op == "DequantizeLinear" || n.op == "DynamicQuantizeLinear" ||
         int8::find(n.op) != nullptr || n.op.rfind("QLinear", 0) == 0;
}

bool all_equal(const ir::TensorData& t, float v) {
  for (float e : t.values<float>())
    if (e != v) return false;
  return true;
}

// The constant `name` as one value per channel of a rank-`rank` map with `channels` channels:
// dims [C, 1, ..., 1] of rank - 1 or [1, C, 1, ..., 1] of rank; nullptr otherwise.
const ir::TensorData* per_channel(const ir::Graph& g, const std::string& name, size_t rank, int64_t channels) {
  const ir::TensorData* t = graph_edit::float_constant(g, name);
  if (!t || t->count() != channels) return nullptr;
  ir::Dims d = t->dims;
  if (d.size() == rank && d[0] == 1) d.erase(d.begin());
  if (d.size() + 1 != rank || d.empty() || d[0] != channels) return nullptr;
  return t;
}

// The tail both chains share after the InstanceNormalization: a Reshape back, then a Mul and an
// Add (gamma and beta either side), each link read only by the next.
struct AffineTail {
  ir::Node *back = nullptr, *mul = nullptr, *add = nullptr;
  std::string gamma, beta;
};
std::optional<AffineTail> affine_tail(ir::Graph& g, const ir::Node& norm) {
  AffineTail t;
  t.back = sole_consumer(g, norm.outputs[0]);
  if (!t.back || t.back->op != "Reshape" || t.back->inputs[0] != norm.outputs[0]) return std::nullopt;
  t.mul = sole_consumer(g, t.back->outputs[0]);
  if (!t.mul || t.mul->op != "Mul" || !t.mul->domain.empty() || t.mul->inputs.size() != 2) return std::nullopt;
  t.gamma = t.mul->inputs[0] == t.back->outputs[0] ? t.mul->inputs[1] : t.mul->inputs[0];
  t.add = sole_consumer(g, t.mul->outputs[0]);
  if (!t.add || t.add->op != "Add" || !t.add->domain.empty() || t.add->inputs.size() != 2) return std::nullopt;
  t.beta = t.add->inputs[0] == t.mul->outputs[0] ? t.add->inputs[1] : t.add->inputs[0];
  return t;
}

}  // namespace

int fuse_group_norm(ir::Graph& g, const DimsAtBatches& dims_of) {
  for (const auto& n : g.nodes)
    if (quantizes(n)) return 0;
  std::set<const ir::Node*> dead;
  int fused = 0;
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    ir::Node& norm = g.nodes[k];
    if (norm.op != "InstanceNormalization" || !norm.domain.empty() || norm.inputs.size() != 3 || dead.count(&norm))
      continue;
    const ir::TensorData* scale = graph_edit::float_constant(g, norm.inputs[1]);
    const ir::TensorData* bias = graph_edit::float_constant(g, norm.inputs[2]);
    if (!scale || !bias || !all_equal(*scale, 1.0f) || !all_equal(*bias, 0.0f)) continue;
    const ir::Node* grouped = graph_edit::producer_of(g, norm.inputs[0]);
    if (!grouped || grouped->op != "Reshape" || sole_consumer(g, norm.inputs[0]) != &norm) continue;
    const std::string& x = grouped->inputs[0];
    const std::optional<AffineTail> tail = affine_tail(g, norm);
    if (!tail) continue;
    ir::Node *back = tail->back, *mul = tail->mul, *add = tail->add;
    const std::string &gamma_name = tail->gamma, &beta_name = tail->beta;
    // Shapes at both batches: x [N, C, spatial...], grouped [N, G, C / G * spatial], the chain's
    // results all x's dims.
    const auto xd = dims_of(x), gd = dims_of(norm.inputs[0]), yd = dims_of(add->outputs[0]);
    const auto bd = dims_of(back->outputs[0]);
    if (!xd || !gd || !yd || !bd || xd->size() != gd->size()) continue;
    const int64_t groups = scale->count();
    bool shapes = true;
    for (size_t b = 0; b < xd->size() && shapes; ++b) {
      const ir::Dims &xb = (*xd)[b], &gb = (*gd)[b];
      shapes = xb.size() >= 3 && gb.size() == 3 && gb[0] == xb[0] && gb[1] == groups && xb[1] % groups == 0 &&
               gb[2] * groups == ir::element_count(xb) / xb[0] && (*yd)[b] == xb && (*bd)[b] == xb;
    }
    if (!shapes) continue;
    const size_t rank = (*xd)[0].size();
    const int64_t channels = (*xd)[0][1];
    const ir::TensorData* gamma = per_channel(g, gamma_name, rank, channels);
    const ir::TensorData* beta = per_channel(g, beta_name, rank, channels);
    if (!gamma || !beta) continue;
    const std::string gamma_flat = graph_edit::add_constant(g, gamma_name + "_channels", ir::TensorData::f32({channels}, gamma->values<float>()));
    const std::string beta_flat = graph_edit::add_constant(g, beta_name + "_channels", ir::TensorData::f32({channels}, beta->values<float>()));
    // The Add becomes the GroupNorm (in its place, after every input it reads).
    const float eps = norm.attrs.f("epsilon", 1e-5f);
    ir::Node& gn = *add;
    gn.op = "GroupNorm";
    gn.name = norm.name.empty() ? add->name : norm.name;
    gn.inputs = {x, gamma_flat, beta_flat};
    gn.attrs = {};
    gn.attrs.set("num_groups", groups);
    gn.attrs.set("epsilon", eps);
    dead.insert(&norm);
    dead.insert(back);
    dead.insert(mul);
    fuse_activation_after(g, gn, dead);
    ++fused;
  }
  graph_edit::erase_marked(g, dead);
  if (fused) remove_unused(g);
  return fused;
}

// The same chain in a QDQ graph, left in float between a DequantizeLinear and a QuantizeLinear
// (the Reshape to groups runs on the 8-bit tensor, a view):
//
//   x (8-bit [N, G, L]) ─ DequantizeLinear ─ InstanceNormalization ─ Reshape (x's map [N, C, ...])
//     ─ Mul gamma [C, 1, 1] ─ Add beta [C, 1, 1] ─ QuantizeLinear
//
// becomes QLinearGroupNorm (engine/ops/qgroup_norm_op.cc: the five steps' float operations in
// order, row by row in a scratch, so ORT's codes) writing the 8-bit [N, G, L], and the Reshape back
// on its bytes. Any InstanceNormalization scale and bias (they are the op's inputs).
int fuse_qdq_group_norm(ir::Graph& g, const DimsAtBatches& dims_of) {
  std::set<const ir::Node*> dead;
  int fused = 0;
  for (ir::Node& norm : g.nodes) {
    if (norm.op != "InstanceNormalization" || !norm.domain.empty() || norm.inputs.size() != 3 || dead.count(&norm))
      continue;
    const ir::TensorData* scale = graph_edit::float_constant(g, norm.inputs[1]);
    const ir::TensorData* bias = graph_edit::float_constant(g, norm.inputs[2]);
    ir::Node* dq = producer_of(g, norm.inputs[0]);
    if (!scale || !bias || !dq || dead.count(dq) || dq->op != "DequantizeLinear" || !per_tensor_quantization(g, *dq) ||
        g.is_constant(dq->input(0)) || !is_8bit(zero_point_type(g, *dq)) || sole_consumer(g, norm.inputs[0]) != &norm)
      continue;
    const std::optional<AffineTail> tail = affine_tail(g, norm);
    if (!tail) continue;
    ir::Node *back = tail->back, *mul = tail->mul, *add = tail->add;
    const std::string &gamma_name = tail->gamma, &beta_name = tail->beta;
    ir::Node* q = sole_consumer(g, add->outputs[0]);
    if (!q || dead.count(q) || q->op != "QuantizeLinear" || q->input(0) != add->outputs[0] ||
        !per_tensor_quantization(g, *q) || q->outputs.size() != 1 || q->attrs.i("output_dtype", 0) != 0 ||
        !is_8bit(zero_point_type(g, *q)))
      continue;
    // Shapes at both batches: the normalized rows [N, G, L], the map back [N, C, spatial...] of
    // as many values, C a multiple of G, the Mul's and the Add's results the map's dims.
    const auto gd = dims_of(norm.inputs[0]), bd = dims_of(back->outputs[0]);
    const auto md = dims_of(mul->outputs[0]), ad = dims_of(add->outputs[0]);
    if (!gd || !bd || !md || !ad || gd->empty() || (*bd)[0].size() < 3) continue;
    const int64_t groups = scale->count(), channels = (*bd)[0][1];
    bool shapes = bias->count() == groups && groups > 0 && channels % groups == 0;
    for (size_t b = 0; b < gd->size() && shapes; ++b) {
      const ir::Dims &gb = (*gd)[b], &bb = (*bd)[b];
      shapes = gb.size() == 3 && gb[1] == groups && bb.size() == (*bd)[0].size() && bb[0] == gb[0] &&
               bb[1] == channels && ir::element_count(bb) == ir::element_count(gb) && (*md)[b] == bb && (*ad)[b] == bb;
    }
    if (!shapes) continue;
    const size_t rank = (*bd)[0].size();
    const ir::TensorData* gamma = per_channel(g, gamma_name, rank, channels);
    const ir::TensorData* beta = per_channel(g, beta_name, rank, channels);
    if (!gamma || !beta) continue;
    auto optional_input = [](const ir::Node& n, size_t i) { return n.has_input(i) ? n.input(i) : std::string(); };
    const std::string grouped = graph_edit::fresh_name(g, q->outputs[0] + "_grouped");
    ir::Value v = g.value(q->outputs[0]);
    v.name = grouped;
    v.dims.reset();
    g.values[grouped] = v;
    const std::string gamma_flat =
        graph_edit::add_constant(g, gamma_name + "_channels", ir::TensorData::f32({channels}, gamma->values<float>()));
    const std::string beta_flat =
        graph_edit::add_constant(g, beta_name + "_channels", ir::TensorData::f32({channels}, beta->values<float>()));
    const float eps = norm.attrs.f("epsilon", 1e-5f);
    norm.op = "QLinearGroupNorm";
    norm.inputs = {dq->input(0), dq->input(1), optional_input(*dq, 2), norm.inputs[1], norm.inputs[2],
                   gamma_flat,   beta_flat,    q->input(1),            optional_input(*q, 2)};
    norm.outputs = {grouped};
    norm.attrs = {};
    norm.attrs.set("epsilon", eps);
    back->inputs[0] = grouped;
    back->outputs = q->outputs;
    dead.insert(dq);
    dead.insert(mul);
    dead.insert(add);
    dead.insert(q);
    ++fused;
  }
  graph_edit::erase_marked(g, dead);
  if (fused) remove_unused(g);
  return fused;
}

}  // namespace octet::passes
