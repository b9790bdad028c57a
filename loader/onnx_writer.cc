#include "loader/onnx_writer.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <limits>
#include <set>
#include <type_traits>
#include <variant>

#include "core/int8_ops.h"
#include "io/output_file.h"

namespace octet::loader {
namespace {

using ir::AttrValue;
using ir::DType;
using ir::Error;
using ir::Node;

// ONNX Runtime 1.30 reads IR version 8 (and later) files; 8 is enough for everything written here.
constexpr int64_t kIrVersion = 8;
// The loader normalises ops to the input-based forms of opset 13 (Clip, Squeeze, Unsqueeze, Pad,
// Dropout), so that is the oldest opset a graph can be written at.
constexpr int64_t kMinOpset = 13;
constexpr int64_t kNoEnd = std::numeric_limits<int64_t>::max();
const std::string kMicrosoftDomain = "com.microsoft";

int onnx_type(DType t) {
  switch (t) {
    case DType::f32: return onnx::TensorProto::FLOAT;
    case DType::f64: return onnx::TensorProto::DOUBLE;
    case DType::u8: return onnx::TensorProto::UINT8;
    case DType::s8: return onnx::TensorProto::INT8;
    case DType::s32: return onnx::TensorProto::INT32;
    case DType::s64: return onnx::TensorProto::INT64;
    case DType::b8: return onnx::TensorProto::BOOL;
  }
  throw std::logic_error("onnx_type: unknown ir::DType");
}

// raw_data is little-endian by the ONNX spec, which is also how TensorData holds its bytes on
// every platform octet builds for; bool is one byte per element on both sides.
void fill_tensor(onnx::TensorProto& t, const ir::TensorData& d) {
  for (int64_t e : d.dims) t.add_dims(e);
  t.set_data_type(onnx_type(d.dtype));
  t.set_raw_data(reinterpret_cast<const char*>(d.bytes.data()), d.bytes.size());
}

// Unknown extents get symbolic names: "N" for the leading (batch) axis, a name of their own
// elsewhere, so that ONNX Runtime's shape inference does not take two of them for the same size.
void fill_value_info(onnx::ValueInfoProto& vi, const ir::Value& v) {
  vi.set_name(v.name);
  auto* tt = vi.mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx_type(v.dtype));
  if (!v.dims) return;
  auto* shape = tt->mutable_shape();
  for (size_t axis = 0; axis < v.dims->size(); ++axis) {
    auto* dim = shape->add_dim();
    const int64_t e = (*v.dims)[axis];
    if (e >= 0) dim->set_dim_value(e);
    else dim->set_dim_param(axis == 0 ? "N" : v.name + "_dim" + std::to_string(axis));
  }
}

void add_attribute(onnx::NodeProto& np, const std::string& name, const AttrValue& value) {
  auto* a = np.add_attribute();
  a->set_name(name);
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          a->set_type(onnx::AttributeProto::INT);
          a->set_i(v);
        } else if constexpr (std::is_same_v<T, float>) {
          a->set_type(onnx::AttributeProto::FLOAT);
          a->set_f(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          a->set_type(onnx::AttributeProto::STRING);
          a->set_s(v);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          a->set_type(onnx::AttributeProto::INTS);
          for (int64_t x : v) a->add_ints(x);
        } else if constexpr (std::is_same_v<T, std::vector<float>>) {
          a->set_type(onnx::AttributeProto::FLOATS);
          for (float x : v) a->add_floats(x);
        } else {
          a->set_type(onnx::AttributeProto::TENSOR);
          fill_tensor(*a->mutable_t(), v);
        }
      },
      value);
}

bool is_empty_list(const AttrValue& v) {
  if (auto* ints = std::get_if<std::vector<int64_t>>(&v)) return ints->empty();
  if (auto* floats = std::get_if<std::vector<float>>(&v)) return floats->empty();
  return false;
}

// ---------------------------------------------------------------------------------------------
// Attributes that exist only in some versions of their op. The importers fill every attribute
// of their schema with its default whatever the opset, so a graph loaded at opset 13 carries
// e.g. Reshape's allowzero=0, which opset 13 does not know. Outside its window an attribute is
// dropped when its value changes nothing there; any other value cannot be written.

using DropTest = bool (*)(const Node&, const AttrValue&);

template <int64_t V> bool equals(const Node&, const AttrValue& v) {
  auto* i = std::get_if<int64_t>(&v);
  return i && *i == V;
}
bool always(const Node&, const AttrValue&) { return true; }
bool all_ones(const Node&, const AttrValue& v) {
  auto* ints = std::get_if<std::vector<int64_t>>(&v);
  return ints && std::all_of(ints->begin(), ints->end(), [](int64_t x) { return x == 1; });
}
// Before opset 21 QuantizeLinear's output type is y_zero_point's type (uint8 when absent).
bool output_type_implied(const Node& n, const AttrValue& v) {
  return equals<0>(n, v) || n.has_input(2) || equals<onnx::TensorProto::UINT8>(n, v);
}
// A float type attribute octet can only hold as float32 (0: unset): the same as leaving it out,
// since octet's scales are float32.
bool zero_or_float(const Node& n, const AttrValue& v) {
  return equals<0>(n, v) || equals<onnx::TensorProto::FLOAT>(n, v);
}
// noop_with_empty_axes only matters when there are no axes.
bool axes_given(const Node& n, const AttrValue& v) { return equals<0>(n, v) || n.attrs.has("axes"); }
bool stretch(const Node&, const AttrValue& v) {
  auto* s = std::get_if<std::string>(&v);
  return s && *s == "stretch";
}

struct AttrWindow {
  const char* domain;
  const char* op;
  const char* attr;
  int64_t since, until;  // the attribute exists in opsets [since, until)
  DropTest droppable;    // may it be left out outside that window?
};

const AttrWindow kAttrWindows[] = {
    {"", "BatchNormalization", "is_test", 1, 7, equals<1>},
    {"", "BatchNormalization", "spatial", 1, 9, equals<1>},
    {"", "BatchNormalization", "training_mode", 14, kNoEnd, equals<0>},
    {"", "Dropout", "is_test", 1, 7, equals<1>},
    {"", "Dropout", "ratio", 1, 12, always},  // from 12 an input; inference ignores it anyway
    {"", "ReduceMean", "noop_with_empty_axes", 18, kNoEnd, axes_given},
    {"", "ReduceSum", "noop_with_empty_axes", 13, kNoEnd, axes_given},
    {"", "Resize", "antialias", 18, kNoEnd, equals<0>},
    {"", "Split", "num_outputs", 18, kNoEnd, equals<0>},
    {"", "Resize", "keep_aspect_ratio_policy", 18, kNoEnd, stretch},
    {"", "AveragePool", "dilations", 19, kNoEnd, all_ones},
    {"", "Reshape", "allowzero", 14, kNoEnd, equals<0>},
    {"", "Shape", "start", 15, kNoEnd, equals<0>},
    {"", "Shape", "end", 15, kNoEnd, equals<kNoEnd>},
    // saturate only concerns float8 outputs, which octet does not produce.
    {"", "QuantizeLinear", "saturate", 19, kNoEnd, always},
    {"", "QuantizeLinear", "block_size", 21, kNoEnd, equals<0>},
    {"", "QuantizeLinear", "output_dtype", 21, kNoEnd, output_type_implied},
    {"", "DequantizeLinear", "block_size", 21, kNoEnd, equals<0>},
    {"", "QuantizeLinear", "precision", 25, kNoEnd, zero_or_float},
    {"", "DequantizeLinear", "output_dtype", 25, kNoEnd, zero_or_float},
    // Both only concern float8 targets, which octet does not produce.
    {"", "Cast", "saturate", 19, kNoEnd, always},
    {"", "Cast", "round_mode", 25, kNoEnd, always},
    // ONNX Runtime's contrib QLinearAveragePool has no dilations at all.
    {"com.microsoft", "QLinearAveragePool", "dilations", 1, 1, all_ones},
};

const AttrWindow* window_of(const Node& n, const std::string& attr) {
  for (const auto& w : kAttrWindows)
    if (n.domain == w.domain && n.op == w.op && attr == w.attr) return &w;
  return nullptr;
}

int64_t opset_for(const Node& n, int64_t onnx_opset) { return n.domain.empty() ? onnx_opset : 1; }

// The attributes octet's passes add for the engine, meaningless to anyone else.
void reject_internal_attributes(const Node& n) {
  for (const char* attr : {"fused_act", "fused_act_params", "range_output", int8::kZeroCodeAttr})
    if (n.attrs.has(attr))
      throw Error(ir::Graph::describe(n) + " carries octet's internal attribute '" + attr +
                  "' (added by octet's fusion passes), which ONNX cannot express; "
                  "write the graph before fusion");
}

void drop_attributes_outside_their_opset(Node& n, int64_t onnx_opset) {
  const int64_t opset = opset_for(n, onnx_opset);
  std::vector<std::string> drop;
  for (const auto& [name, value] : n.attrs.all()) {
    if (is_empty_list(value)) {  // ONNX reads an empty list as "not given": leave it out
      drop.push_back(name);
      continue;
    }
    const AttrWindow* w = window_of(n, name);
    if (!w || (opset >= w->since && opset < w->until)) continue;
    if (!w->droppable(n, value))
      throw Error(ir::Graph::describe(n) + ": attribute '" + name + "' has a value that " +
                  (n.domain.empty() ? "opset " + std::to_string(opset) : n.domain) +
                  " cannot express (the attribute does not exist there)");
    drop.push_back(name);
  }
  for (const auto& name : drop) n.attrs.erase(name);
}

// ---------------------------------------------------------------------------------------------
// Ops whose inputs or meaning changed between opsets.

// Names no value of the graph or of the written nodes has yet.
class NameSource {
 public:
  explicit NameSource(const ir::Graph& g) {
    for (const auto& [name, v] : g.values) used_.insert(name);
    for (const auto& n : g.nodes) used_.insert(n.outputs.begin(), n.outputs.end());
  }
  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int k = 1; used_.count(name); ++k) name = base + "_" + std::to_string(k);
    used_.insert(name);
    return name;
  }

 private:
  std::set<std::string> used_;
};

// Before opset 18 ReduceMean (13 ReduceSum) takes its axes as an attribute; the loader moved them to input 1.
void reduce_axes_to_attribute(Node& n, const ir::Graph& g) {
  if (!n.has_input(1)) {
    n.inputs.resize(std::min<size_t>(n.inputs.size(), 1));
    return;
  }
  const std::string& axes = n.inputs[1];
  auto it = g.values.find(axes);
  if (it == g.values.end() || !it->second.constant)
    throw Error(ir::Graph::describe(n) + ": its axes input '" + axes +
                "' is not a constant, and " + n.op + " at this opset takes axes as an attribute");
  n.attrs.set("axes", it->second.constant->to_i64());
  n.inputs.resize(1);
}

// Softmax (and LogSoftmax) before opset 13 (coerce_2d=1, set by the importer) flattens its input to 2-D at
// `axis` and normalises each row; from opset 13 it normalises along `axis` alone. Both agree
// when `axis` is the last one; otherwise the old meaning is spelled out as
// Flatten(axis) -> Softmax(axis=1) -> Reshape(Shape(x)).
std::vector<Node> lower_softmax(Node n, const ir::Graph& g, NameSource& names) {
  const bool coerce = n.attrs.i("coerce_2d", 0) != 0;
  n.attrs.erase("coerce_2d");
  if (!coerce) return {n};
  const int64_t axis = n.attrs.i("axis", 1);
  const std::string& x = n.input(0);
  auto it = g.values.find(x);
  if (it != g.values.end() && it->second.dims) {
    const int64_t rank = int64_t(it->second.dims->size());
    if ((axis < 0 ? axis + rank : axis) == rank - 1) return {n};
  }
  Node flatten{n.name + "/flatten", "Flatten", "", {x}, {names.fresh(x + "/flattened")}, {}};
  flatten.attrs.set("axis", axis);
  Node shape{n.name + "/shape", "Shape", "", {x}, {names.fresh(x + "/shape")}, {}};
  Node softmax{n.name, n.op, "", {flatten.outputs[0]}, {names.fresh(n.outputs.at(0) + "/2d")}, {}};
  softmax.attrs.set("axis", int64_t(1));
  Node reshape{n.name + "/reshape", "Reshape", "", {softmax.outputs[0], shape.outputs[0]}, {n.outputs[0]}, {}};
  return {flatten, shape, softmax, reshape};
}

// Resize-10 and Upsample (which the loader turned into Resize's inputs with nearest_mode
// "simple": truncation when enlarging, ceil when shrinking) written as a Resize of opset 13+:
// "simple" becomes floor when no axis shrinks (asymmetric coordinates are never negative, so
// truncation is floor) and ceil when none enlarges; a resize that does both cannot be written.
Node lower_resize(Node n, const ir::Graph& g) {
  n.op = "Resize";
  if (!n.attrs.has("nearest_mode") || n.attrs.s("nearest_mode") != "simple") return n;
  if (n.attrs.s("mode") != "nearest") {
    n.attrs.erase("nearest_mode");
    return n;
  }
  auto it = n.has_input(2) ? g.values.find(n.input(2)) : g.values.end();
  if (it == g.values.end() || !it->second.constant)
    throw Error(ir::Graph::describe(n) + ": Resize-10's rounding needs constant scales to be written at opset 13");
  bool enlarges = false, shrinks = false;
  for (float s : it->second.constant->values<float>()) {
    enlarges = enlarges || s > 1;
    shrinks = shrinks || s < 1;
  }
  if (enlarges && shrinks)
    throw Error(ir::Graph::describe(n) + ": Resize-10 / Upsample rounding that enlarges some axes and shrinks "
                "others has no nearest_mode at opset 13");
  n.attrs.set("nearest_mode", std::string(shrinks ? "ceil" : "floor"));
  return n;
}

// The node(s) that express `n` at `onnx_opset`.
std::vector<Node> lower_node(const Node& n, const ir::Graph& g, int64_t onnx_opset, NameSource& names) {
  reject_internal_attributes(n);
  if (!n.domain.empty() && n.domain != kMicrosoftDomain)
    throw Error(ir::Graph::describe(n) + ": domain '" + n.domain +
                "' cannot be written (only the default ONNX domain and com.microsoft)");
  std::vector<Node> out = {n};
  if (n.domain.empty()) {
    if (n.op == "Softmax" || n.op == "LogSoftmax") out = lower_softmax(n, g, names);
    else if (n.op == "ReduceMean" && onnx_opset < 18) reduce_axes_to_attribute(out[0], g);
    else if (n.op == "ReduceSum" && onnx_opset < 13) reduce_axes_to_attribute(out[0], g);
    else if (n.op == "Resize" || n.op == "Upsample") out = {lower_resize(n, g)};
  }
  for (auto& m : out) {
    m.attrs.erase(ir::kShapeKnownToOrtAttr);
    m.attrs.erase(ir::kOrtNchwcBlocksAttr);
    m.attrs.erase(ir::kOrtChannelsLastAttr);
    drop_attributes_outside_their_opset(m, onnx_opset);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

void fill_node(onnx::NodeProto& np, const Node& n) {
  np.set_name(n.name);
  np.set_op_type(n.op);
  if (!n.domain.empty()) np.set_domain(n.domain);
  for (const auto& in : n.inputs) np.add_input(in);
  for (const auto& out : n.outputs) np.add_output(out);
  for (const auto& [name, value] : n.attrs.all()) add_attribute(np, name, value);
}

std::string graph_name(const ir::Graph& g) {
  std::string stem = std::filesystem::path(g.source).stem().string();
  return stem.empty() ? "octet" : stem;
}

onnx::ModelProto build_model(const ir::Graph& g, const WriteOptions& o) {
  const int64_t opset = std::max(g.opset, kMinOpset);
  NameSource names(g);
  std::vector<Node> nodes;
  for (const auto& n : g.nodes) {
    auto lowered = lower_node(n, g, opset, names);
    nodes.insert(nodes.end(), std::make_move_iterator(lowered.begin()), std::make_move_iterator(lowered.end()));
  }

  onnx::ModelProto m;
  m.set_ir_version(kIrVersion);
  m.set_producer_name(o.producer);
  if (!o.doc.empty()) m.set_doc_string(o.doc);
  auto* onnx_domain = m.add_opset_import();
  onnx_domain->set_domain("");
  onnx_domain->set_version(opset);
  if (std::any_of(nodes.begin(), nodes.end(), [](const Node& n) { return n.domain == kMicrosoftDomain; })) {
    auto* ms = m.add_opset_import();
    ms->set_domain(kMicrosoftDomain);
    ms->set_version(1);
  }

  auto& gp = *m.mutable_graph();
  gp.set_name(graph_name(g));

  // Every constant becomes an initializer, except those only the nodes rewritten above read
  // (ReduceMean's axes turned attribute): reloading re-creates them under the same name.
  std::set<std::string> read_before, read_now, produced;
  for (const auto& n : g.nodes) read_before.insert(n.inputs.begin(), n.inputs.end());
  for (const auto& n : nodes) {
    read_now.insert(n.inputs.begin(), n.inputs.end());
    produced.insert(n.outputs.begin(), n.outputs.end());
  }
  read_now.insert(g.outputs.begin(), g.outputs.end());
  for (const auto& [name, v] : g.values) {
    if (!v.constant || produced.count(name)) continue;  // a folded node output stays the node's
    if (read_before.count(name) && !read_now.count(name)) continue;
    auto* t = gp.add_initializer();
    t->set_name(name);
    fill_tensor(*t, *v.constant);
  }

  for (const auto& name : g.inputs) fill_value_info(*gp.add_input(), g.value(name));
  for (const auto& name : g.outputs) fill_value_info(*gp.add_output(), g.value(name));
  for (const auto& n : nodes) fill_node(*gp.add_node(), n);
  return m;
}

}  // namespace

std::string save_onnx_bytes(const ir::Graph& g, const WriteOptions& o) {
  const onnx::ModelProto m = build_model(g, o);
  // protobuf cannot serialize a message of 2 GB or more.
  if (m.ByteSizeLong() > size_t(INT_MAX))
    throw Error("the model needs " + std::to_string(m.ByteSizeLong()) +
                " bytes, more than the 2 GB a single ONNX protobuf file can hold");
  std::string bytes;
  if (!m.SerializeToString(&bytes)) throw Error("protobuf failed to serialize the model");
  return bytes;
}

void save_onnx(const ir::Graph& g, const std::string& path, const WriteOptions& o) {
  auto as_error = [](const std::runtime_error& e) { return Error(std::string("cannot write the model: ") + e.what()); };
  try {
    check_output_path(path);  // a device or folder named as the output fails before the work
  } catch (const std::runtime_error& e) {
    throw as_error(e);
  }
  const std::string bytes = save_onnx_bytes(g, o);  // any graph error surfaces before the disk is touched
  try {
    write_file_atomically(path, std::string_view(bytes));
  } catch (const std::runtime_error& e) {
    throw as_error(e);
  }
}

}  // namespace octet::loader
