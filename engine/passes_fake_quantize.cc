// A QuantizeLinear read only by a DequantizeLinear of the same per-tensor scale and zero point,
//
//   x (float) ─ QuantizeLinear ─ q (8-bit) ─ DequantizeLinear ─ y (float)
//
// is a fake quantization: the QDQ model's float output (a segmentation net's upsampled logits,
// 5.7 M floats at DeepLabV3's 520x520). One QuantizeDequantize step (engine/ops/quantize_ops.cc)
// writes y from x with the codes kept in registers: the 8-bit map's trip through memory and a
// pass are gone, and the bits are the pair's (the same rounding, then the same dequantize). A
// float Resize read only by the pair takes it as attributes instead (fake_quantize_scale,
// _zero_point, _signed): it rewrites each output row as it writes it, while the row is in cache.
#include <cstring>

#include "core/int8_ops.h"
#include "engine/graph_edit.h"
#include "engine/passes.h"

namespace octet::passes {
namespace {

using graph_edit::per_tensor_quantization;
using graph_edit::sole_consumer;

// Same dtype and bytes (an omitted zero point: none on either side).
bool same_constant(const ir::Graph& g, const ir::Node& a, const ir::Node& b, size_t slot) {
  if (a.has_input(slot) != b.has_input(slot)) return false;
  if (!a.has_input(slot)) return true;
  const ir::TensorData& x = *g.value(a.input(slot)).constant;
  const ir::TensorData& y = *g.value(b.input(slot)).constant;
  return x.dtype == y.dtype && x.bytes.size() == y.bytes.size() &&
         std::memcmp(x.bytes.data(), y.bytes.data(), x.bytes.size()) == 0;
}

}  // namespace

int fuse_quantize_dequantize(ir::Graph& g) {
  std::set<const ir::Node*> dead;
  int fused = 0;
  for (auto& q : g.nodes) {
    if (q.op != "QuantizeLinear" || dead.count(&q) || q.outputs.size() != 1 || !per_tensor_quantization(g, q) ||
        !graph_edit::is_8bit(graph_edit::zero_point_type(g, q)))
      continue;
    ir::Node* dq = sole_consumer(g, q.outputs[0]);
    if (!dq || dq->op != "DequantizeLinear" || dq->outputs.size() != 1 || dq->input(0) != q.outputs[0] ||
        !per_tensor_quantization(g, *dq) || !same_constant(g, q, *dq, 1) || !same_constant(g, q, *dq, 2))
      continue;
    ir::Node* resize = graph_edit::producer_of(g, q.input(0));
    if (resize && resize->op == "Resize" && resize->domain.empty() && resize->outputs.size() == 1 &&
        sole_consumer(g, resize->outputs[0]) == &q && !resize->attrs.has("fake_quantize_scale")) {
      const ir::TensorData& scale = *g.value(q.input(1)).constant;
      const ir::DType type = graph_edit::zero_point_type(g, q);
      resize->attrs.set("fake_quantize_scale", scale.as<float>()[0]);
      resize->attrs.set("fake_quantize_zero_point", q.has_input(2) ? g.value(q.input(2)).constant->to_i64()[0] : int64_t{0});
      resize->attrs.set("fake_quantize_signed", int64_t{type == ir::DType::s8});
      resize->outputs = dq->outputs;
      dead.insert(&q);
    } else {
      q.op = "QuantizeDequantize";
      q.domain = int8::kOctetDomain;
      q.attrs = {};
      q.outputs = dq->outputs;
    }
    dead.insert(dq);
    ++fused;
  }
  graph_edit::erase_marked(g, dead);
  return fused;
}

}  // namespace octet::passes
