#include "loader/importers.h"

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>

namespace octet::loader {
namespace {

using ir::AttrValue;
using ir::Error;
using ir::Node;
using ir::TensorData;

struct AttrSpec {
  std::string name;
  std::optional<AttrValue> dflt;  // nullopt: required
};

struct Importer {
  int64_t min_opset = 1;
  std::vector<AttrSpec> attrs;
  std::function<void(Node&, ImportContext&)> normalize;  // may be empty
};

AttrValue ints() { return std::vector<int64_t>{}; }
AttrValue str(const char* s) { return std::string(s); }
AttrValue i64(int64_t v) { return v; }
AttrValue f32(float v) { return v; }

// Moves an attribute that later opsets take as an input into that input slot.
void attr_to_input(Node& n, ImportContext& ctx, const std::string& attr, size_t slot,
                   TensorData data) {
  if (n.inputs.size() <= slot) n.inputs.resize(slot + 1);
  n.inputs[slot] = ctx.add_constant(n.name + "." + attr, std::move(data));
  n.attrs.erase(attr);
}

void axes_attr_to_input(Node& n, ImportContext& ctx) {
  if (!n.attrs.has("axes")) return;
  auto axes = n.attrs.ints("axes");
  attr_to_input(n, ctx, "axes", 1, TensorData::s64({int64_t(axes.size())}, axes));
}

void reject_unless(Node& n, const std::string& attr, int64_t allowed, const std::string& why) {
  if (n.attrs.has(attr) && n.attrs.i(attr) != allowed)
    throw Error(attr + "=" + std::to_string(n.attrs.i(attr)) + " is not supported (" + why + ")");
}

// BatchNormalization and Dropout before opset 7. Like ONNX's 6 -> 7 version converter, only an
// explicit is_test=0 means training; a missing is_test is taken as inference.
void drop_is_test(Node& n) {
  if (n.attrs.i("is_test") == 0) throw Error("is_test=0 is not supported (training mode; inference only)");
  n.attrs.erase("is_test");
}

const std::map<std::string, Importer>& importers() {
  static const std::map<std::string, Importer> table = [] {
    std::map<std::string, Importer> t;
    const std::vector<AttrSpec> conv_geometry = {{"auto_pad", str("NOTSET")}, {"dilations", ints()},
                                                 {"kernel_shape", ints()}, {"pads", ints()},
                                                 {"strides", ints()}};
    auto conv_attrs = conv_geometry;
    conv_attrs.push_back({"group", i64(1)});
    t["Conv"] = {1, conv_attrs, {}};

    t["BatchNormalization"] = {1,
                               {{"epsilon", f32(1e-5f)}, {"momentum", f32(0.9f)},
                                {"spatial", i64(1)}, {"training_mode", i64(0)},
                                {"is_test", i64(1)}, {"consumed_inputs", ints()}},
                               [](Node& n, ImportContext&) {
                                 drop_is_test(n);
                                 n.attrs.erase("consumed_inputs");
                                 reject_unless(n, "training_mode", 0, "inference only");
                                 reject_unless(n, "spatial", 1, "per-activation BatchNorm");
                                 if (n.outputs.size() > 1)
                                   for (size_t i = 1; i < n.outputs.size(); ++i)
                                     if (!n.outputs[i].empty())
                                       throw Error("training outputs (running mean/var) are not supported");
                               }};
    t["Relu"] = {1, {}, {}};
    t["Sigmoid"] = {1, {}, {}};
    t["HardSigmoid"] = {1, {{"alpha", f32(0.2f)}, {"beta", f32(0.5f)}}, {}};
    t["HardSwish"] = {14, {}, {}};
    t["Clip"] = {1,
                 {{"min", f32(-std::numeric_limits<float>::infinity())},
                  {"max", f32(std::numeric_limits<float>::infinity())}},
                 [](Node& n, ImportContext& ctx) {
                   // Before opset 11 the bounds are attributes; from 11 on they are optional inputs.
                   if (ctx.opset >= 11) {
                     n.attrs.erase("min");
                     n.attrs.erase("max");
                     return;
                   }
                   float lo = n.attrs.f("min"), hi = n.attrs.f("max");
                   attr_to_input(n, ctx, "min", 1, TensorData::f32({}, std::vector<float>{lo}));
                   attr_to_input(n, ctx, "max", 2, TensorData::f32({}, std::vector<float>{hi}));
                 }};
    for (const char* op : {"Add", "Sub", "Mul", "Div"}) t[op] = {7, {}, {}};
    t["GlobalAveragePool"] = {1, {}, {}};
    t["ReduceMean"] = {1,
                       {{"keepdims", i64(1)}, {"noop_with_empty_axes", i64(0)}, {"axes", ints()}},
                       [](Node& n, ImportContext& ctx) {
                         if (ctx.opset >= 18) n.attrs.erase("axes");
                         else if (n.attrs.ints("axes").empty()) n.attrs.erase("axes");
                         else axes_attr_to_input(n, ctx);
                       }};
    auto pool_attrs = conv_geometry;
    pool_attrs.push_back({"ceil_mode", i64(0)});
    auto avg_attrs = pool_attrs;
    avg_attrs.push_back({"count_include_pad", i64(0)});
    t["AveragePool"] = {1, avg_attrs, {}};  // opsets 1-6 only lack count_include_pad
    auto max_attrs = pool_attrs;
    max_attrs.push_back({"storage_order", i64(0)});
    t["MaxPool"] = {1, max_attrs, [](Node& n, ImportContext&) {
                      if (n.outputs.size() > 1 && !n.outputs[1].empty())
                        throw Error("the Indices output is not supported");
                    }};
    // Before opset 7 `broadcast` allows C to broadcast; octet always does (a superset).
    t["Gemm"] = {1,
                 {{"alpha", f32(1.0f)}, {"beta", f32(1.0f)}, {"transA", i64(0)}, {"transB", i64(0)},
                  {"broadcast", i64(0)}},
                 [](Node& n, ImportContext&) { n.attrs.erase("broadcast"); }};
    t["MatMul"] = {1, {}, {}};
    t["Flatten"] = {1, {{"axis", i64(1)}}, {}};
    t["Reshape"] = {5, {{"allowzero", i64(0)}}, {}};
    // Before opset 13 Softmax flattens the input to 2-D at `axis`, whose default is 1.
    t["Softmax"] = {1, {{"axis", i64(-1)}}, [](Node& n, ImportContext& ctx) {
                      n.attrs.set("coerce_2d", int64_t(ctx.opset < 13));
                    }};
    t["Pad"] = {2, {{"mode", str("constant")}, {"pads", ints()}, {"value", f32(0.0f)}},
                [](Node& n, ImportContext& ctx) {
                  if (ctx.opset < 11) {
                    auto pads = n.attrs.ints("pads");
                    attr_to_input(n, ctx, "pads", 1, TensorData::s64({int64_t(pads.size())}, pads));
                    float v = n.attrs.f("value");
                    attr_to_input(n, ctx, "value", 2, TensorData::f32({}, std::vector<float>{v}));
                  } else {
                    n.attrs.erase("pads");
                    n.attrs.erase("value");
                  }
                  const auto& mode = n.attrs.s("mode");
                  if (mode != "constant" && mode != "reflect" && mode != "edge")
                    throw Error("mode '" + mode + "' is not supported (constant, reflect, edge)");
                }};
    t["Concat"] = {4, {{"axis", std::nullopt}}, {}};
    t["Identity"] = {1, {}, {}};
    t["Dropout"] = {1,
                    {{"ratio", f32(0.5f)}, {"seed", i64(0)}, {"is_test", i64(1)}, {"consumed_inputs", ints()}},
                    [](Node& n, ImportContext& ctx) {
                      drop_is_test(n);
                      n.attrs.erase("consumed_inputs");
                      if (n.outputs.size() > 1 && !n.outputs[1].empty())
                        throw Error("the mask output is not supported (inference only)");
                      // From opset 12 training_mode is an input: only a known false is inference.
                      if (n.has_input(2)) {
                        auto it = ctx.graph.values.find(n.inputs[2]);
                        const auto* t = it != ctx.graph.values.end() && it->second.constant
                                            ? &*it->second.constant : nullptr;
                        if (!t || t->count() != 1 || t->to_i64()[0] != 0)
                          throw Error("training mode (training_mode input '" + n.inputs[2] +
                                      "' not a constant false) is not supported (inference only)");
                      }
                    }};
    t["Constant"] = {1,
                     {{"value", std::nullopt}},
                     {}};  // value_float & co. are turned into `value` before validation
    t["Shape"] = {1, {{"start", i64(0)}, {"end", i64(std::numeric_limits<int64_t>::max())}}, {}};
    t["Gather"] = {1, {{"axis", i64(0)}}, {}};
    t["Unsqueeze"] = {1, {{"axes", ints()}}, [](Node& n, ImportContext& ctx) {
                        if (ctx.opset >= 13) n.attrs.erase("axes");
                        else axes_attr_to_input(n, ctx);
                      }};
    t["Squeeze"] = {1, {{"axes", ints()}}, [](Node& n, ImportContext& ctx) {
                      if (ctx.opset >= 13) n.attrs.erase("axes");
                      else if (n.attrs.ints("axes").empty()) n.attrs.erase("axes");
                      else axes_attr_to_input(n, ctx);
                    }};
    return t;
  }();
  return table;
}

// Constant's value_float / value_ints / ... become one `value` tensor attribute.
void normalize_constant(Node& n) {
  const auto& a = n.attrs;
  std::optional<TensorData> v;
  if (a.has("value_float")) v = TensorData::f32({}, std::vector<float>{a.f("value_float")});
  else if (a.has("value_floats")) v = TensorData::f32({int64_t(a.floats("value_floats").size())}, a.floats("value_floats"));
  else if (a.has("value_int")) v = TensorData::s64({}, std::vector<int64_t>{a.i("value_int")});
  else if (a.has("value_ints")) v = TensorData::s64({int64_t(a.ints("value_ints").size())}, a.ints("value_ints"));
  for (const char* k : {"value_float", "value_floats", "value_int", "value_ints"}) n.attrs.erase(k);
  if (v) n.attrs.set("value", std::move(*v));
}

std::string type_name(const AttrValue& v) {
  static const char* names[] = {"int", "float", "string", "ints", "floats", "tensor"};
  return names[v.index()];
}

}  // namespace

std::string ImportContext::add_constant(const std::string& hint, ir::TensorData data) {
  std::string name = hint;
  for (int k = 1; graph.values.count(name); ++k) name = hint + "_" + std::to_string(k);
  ir::Value v;
  v.name = name;
  v.dtype = data.dtype;
  v.dims = data.dims;
  v.constant = std::move(data);
  graph.values[name] = std::move(v);
  return name;
}

void import_node(Node& node, ImportContext& ctx) {
  auto it = importers().find(node.op);
  if (it == importers().end()) throw Error("op type '" + node.op + "' is not supported");
  const Importer& imp = it->second;
  if (ctx.opset < imp.min_opset)
    throw Error(node.op + " before opset " + std::to_string(imp.min_opset) + " is not supported");

  if (node.op == "Constant") normalize_constant(node);
  if (node.op == "Softmax" && ctx.opset < 13 && !node.attrs.has("axis")) node.attrs.set("axis", int64_t(1));

  for (const auto& [name, value] : node.attrs.all()) {
    const AttrSpec* spec = nullptr;
    for (const auto& s : imp.attrs) if (s.name == name) spec = &s;
    if (!spec) throw Error("attribute '" + name + "' is not supported");
    const AttrValue& ref = spec->dflt ? *spec->dflt : value;
    // An empty list in the schema accepts ints; a float default accepts an int (ONNX writers vary).
    bool ok = ref.index() == value.index() ||
              (std::holds_alternative<float>(ref) && std::holds_alternative<int64_t>(value));
    if (!ok) throw Error("attribute '" + name + "' should be " + type_name(ref) + ", is " + type_name(value));
    if (std::holds_alternative<float>(ref) && std::holds_alternative<int64_t>(value))
      node.attrs.set(name, float(std::get<int64_t>(value)));
  }
  for (const auto& s : imp.attrs) {
    if (node.attrs.has(s.name)) continue;
    if (!s.dflt) throw Error("required attribute '" + s.name + "' is missing");
    node.attrs.set(s.name, *s.dflt);
  }
  if (imp.normalize) imp.normalize(node, ctx);
}

const std::vector<std::string>& supported_ops() {
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> v;
    for (const auto& [k, _] : importers()) v.push_back(k);
    return v;
  }();
  return ops;
}

}  // namespace octet::loader
