#include "engine/graph_edit.h"

#include <vector>

#include "engine/op_registry.h"

namespace octet::graph_edit {

void replace_uses(ir::Graph& g, const std::string& from, const std::string& to) {
  for (auto& n : g.nodes)
    for (auto& in : n.inputs)
      if (in == from) in = to;
}

ir::Node* sole_consumer(ir::Graph& g, const std::string& name) {
  if (g.is_graph_output(name)) return nullptr;
  auto c = g.consumers(name);
  if (c.size() != 1) return nullptr;
  ir::Node& n = g.nodes[c[0]];
  int uses = 0;
  for (const auto& in : n.inputs) uses += in == name;
  return uses == 1 ? &n : nullptr;
}

ir::Node* producer_of(ir::Graph& g, const std::string& name) {
  for (auto& n : g.nodes)
    for (const auto& o : n.outputs)
      if (o == name) return &n;
  return nullptr;
}

const ir::Node* producer_of(const ir::Graph& g, const std::string& name) {
  return producer_of(const_cast<ir::Graph&>(g), name);
}

void erase_marked(ir::Graph& g, const std::set<const ir::Node*>& dead) {
  std::vector<ir::Node> kept;
  for (auto& n : g.nodes)
    if (!dead.count(&n)) kept.push_back(std::move(n));
  g.nodes = std::move(kept);
}

std::string fresh_name(const ir::Graph& g, const std::string& hint) {
  if (!g.values.count(hint)) return hint;
  for (int i = 1;; ++i) {
    std::string name = hint + "_" + std::to_string(i);
    if (!g.values.count(name)) return name;
  }
}

const ir::TensorData* float_constant(const ir::Graph& g, const std::string& name) {
  if (name.empty() || !g.is_constant(name)) return nullptr;
  const ir::TensorData& t = *g.value(name).constant;
  return t.dtype == ir::DType::f32 ? &t : nullptr;
}

std::string add_constant(ir::Graph& g, const std::string& hint, ir::TensorData data) {
  std::string name = fresh_name(g, hint);
  ir::Value v;
  v.name = name;
  v.dtype = data.dtype;
  v.dims = data.dims;
  v.constant = std::move(data);
  g.values[name] = std::move(v);
  return name;
}

bool is_pointwise_conv(const ir::Graph& g, const ir::Node* n) {
  if (!n || n->op != "Conv" || !n->domain.empty() || n->outputs.size() != 1) return false;
  if (!g.is_constant(n->input(1)) || (n->has_input(2) && !g.is_constant(n->input(2)))) return false;
  const auto& w = g.values.at(n->input(1)).constant;
  if (!w || w->dtype != ir::DType::f32 || w->dims.size() != 4 || w->dims[2] != 1 || w->dims[3] != 1) return false;
  if (n->attrs.i("group", 1) != 1) return false;
  for (const char* a : {"strides", "dilations", "pads"})
    if (n->attrs.has(a))
      for (int64_t v : n->attrs.ints(a))
        if (v != (std::string(a) == "pads" ? 0 : 1)) return false;
  return true;
}

bool per_tensor_quantization(const ir::Graph& g, const ir::Node& n) {
  if (!n.domain.empty() || n.inputs.size() < 2 || !g.is_constant(n.input(1)) ||
      g.value(n.input(1)).constant->count() != 1)
    return false;
  return !n.has_input(2) || (g.is_constant(n.input(2)) && g.value(n.input(2)).constant->count() == 1);
}

ir::DType zero_point_type(const ir::Graph& g, const ir::Node& n) {
  return n.has_input(2) ? g.value(n.input(2)).dtype : ir::DType::u8;
}

ir::TensorData every_byte_value(ir::DType type) {
  ir::TensorData bytes = ir::TensorData::make(type, {256});
  for (int b = 0; b < 256; ++b) bytes.bytes[size_t(b)] = static_cast<std::byte>(b);
  return bytes;
}

std::vector<ir::TensorData> evaluate_node(const ir::Graph& g, const ir::Node& n, size_t slot,
                                          const ir::TensorData* value) {
  const OpImpl* impl = find_op(n.op);
  if (!impl) return {};
  std::vector<const ir::TensorData*> data(n.inputs.size(), nullptr);
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (i == slot) data[i] = value;
    else if (!n.inputs[i].empty() && g.is_constant(n.inputs[i])) data[i] = &*g.value(n.inputs[i]).constant;
    else if (!n.inputs[i].empty()) return {};
  }
  std::vector<TensorInfo> infos(n.inputs.size());
  std::vector<const void*> ptrs(n.inputs.size(), nullptr);
  OpContext ctx{n, g.opset, {}, {}};
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (data[i]) {
      infos[i] = {data[i]->dtype, data[i]->dims, Layout::row_major};
      ptrs[i] = data[i]->bytes.data();
    }
    ctx.in.push_back(data[i] ? &infos[i] : nullptr);
    ctx.in_const.push_back(data[i]);
  }
  return evaluate_now(*impl, ctx, impl->infer(ctx), ptrs);
}

}  // namespace octet::graph_edit
