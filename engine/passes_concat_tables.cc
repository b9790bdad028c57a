// A QLinearConcat input quantized with a scale or zero point of its own, written by a QLinearConv
// that nothing else reads, after fuse_conv_output_tables:
//
//   x ─ QLinearConv (y_scale s, y_zero_point z) ─ y ─ QLinearConcat (output scale S, zero point Z)
//
// The QLinearConcat requantizes y's bytes from (s, z) to (S, Z) through a lookup, a pass over y
// into scratch and a copy into its output. The conv can store (S, Z) bytes itself: it still
// requantizes its sums to (s, z) as before (so every byte is the one ONNX Runtime's conv writes),
// then looks the byte up in the Concat's requantization table (composed after the conv's own
// table, when it has one) as it stores its tile. The Concat's input then has the output's
// parameters, is copied as it is, and the plan lets the conv write it in its place
// (engine/plan_views.cc). The conv's output takes a new name: its bytes are no longer y's, and a
// comparison with ORT tensor by tensor (octet diff) must not pair them with y.
#include <cstddef>
#include <string>

#include "engine/graph_edit.h"
#include "engine/passes.h"
#include "kernels/ref/qmath.h"

namespace octet::passes {
namespace {

const ir::TensorData* constant(const ir::Graph& g, const std::string& name) {
  return !name.empty() && g.is_constant(name) ? &*g.value(name).constant : nullptr;
}

float scale_of(const ir::TensorData& t) { return t.as<float>()[0]; }  // float32: QuantizeLinear's y_scale
int32_t zero_point_of(const ir::TensorData& t) { return int32_t(t.to_i64()[0]); }

// table[b] = the byte the Concat writes for input byte `first[b]` (b itself without a first table).
template <class T>
ir::TensorData requantization(const ir::TensorData& x_scale, const ir::TensorData& x_zero_point,
                              const ir::TensorData& y_scale, const ir::TensorData& y_zero_point,
                              const ir::TensorData* first, ir::DType type) {
  ir::TensorData table = ir::TensorData::make(type, {256});
  auto* out = reinterpret_cast<T*>(table.bytes.data());
  const kernels::QuantParams from{scale_of(x_scale), zero_point_of(x_zero_point)};
  const kernels::QuantParams to{scale_of(y_scale), zero_point_of(y_zero_point)};
  for (int b = 0; b < 256; ++b) {
    const uint8_t byte = first ? uint8_t(first->bytes[size_t(b)]) : uint8_t(b);
    out[b] = kernels::requantize_code(static_cast<T>(byte), from, to);
  }
  return table;
}

bool same_bytes(const ir::TensorData* a, const ir::TensorData* b) {
  return a && b && a->dtype == b->dtype && a->bytes == b->bytes;
}

}  // namespace

int fuse_concat_requantization(ir::Graph& g) {
  int fused = 0;
  for (auto& concat : g.nodes) {
    if (concat.op != "QLinearConcat" || concat.inputs.size() < 5) continue;
    const ir::TensorData* y_scale = constant(g, concat.input(0));
    const ir::TensorData* y_zero_point = constant(g, concat.input(1));
    if (!y_scale || !y_zero_point || y_scale->count() != 1 || y_zero_point->count() != 1) continue;
    const ir::DType type = y_zero_point->dtype;
    if (type != ir::DType::u8 && type != ir::DType::s8) continue;
    for (size_t i = 2; i + 2 < concat.inputs.size(); i += 3) {
      const std::string x = concat.input(i);
      const ir::TensorData* x_scale = constant(g, concat.input(i + 1));
      const ir::TensorData* x_zero_point = constant(g, concat.input(i + 2));
      if (!x_scale || !x_zero_point || x_scale->count() != 1 || x_zero_point->count() != 1) continue;
      if (x_scale->dtype != ir::DType::f32 || y_scale->dtype != ir::DType::f32 || x_zero_point->dtype != type) continue;
      if (same_bytes(x_scale, y_scale) && same_bytes(x_zero_point, y_zero_point)) continue;  // copied as it is
      ir::Node* conv = graph_edit::producer_of(g, x);
      if (!conv || conv->op != "QLinearConv" || !conv->domain.empty() || conv->outputs.size() != 1 ||
          graph_edit::sole_consumer(g, x) != &concat)
        continue;
      const ir::TensorData* conv_zero_point = conv->has_input(7) ? constant(g, conv->input(7)) : nullptr;
      if (!conv_zero_point || conv_zero_point->dtype != type) continue;
      const ir::TensorData* first = conv->inputs.size() > 9 ? constant(g, conv->input(9)) : nullptr;
      if (conv->inputs.size() > 9 && (!first || first->dtype != type || first->count() != 256)) continue;
      ir::TensorData table = type == ir::DType::u8
                                 ? requantization<uint8_t>(*x_scale, *x_zero_point, *y_scale, *y_zero_point, first, type)
                                 : requantization<int8_t>(*x_scale, *x_zero_point, *y_scale, *y_zero_point, first, type);
      conv->inputs.resize(9);  // "" for an omitted bias
      conv->inputs.push_back(graph_edit::add_constant(g, conv->name + "_concat_table", std::move(table)));
      const std::string requantized = graph_edit::fresh_name(g, x + "_requantized");
      ir::Value v = g.value(x);
      v.name = requantized;
      g.values[requantized] = v;
      conv->outputs[0] = requantized;
      concat.inputs[i] = requantized;
      concat.inputs[i + 1] = concat.input(0);
      concat.inputs[i + 2] = concat.input(1);
      ++fused;
    }
  }
  return fused;
}

}  // namespace octet::passes
