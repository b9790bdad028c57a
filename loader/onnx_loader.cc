#include "loader/onnx_loader.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "loader/importers.h"
#include "loader/ort_nchwc.h"
#include "loader/ort_nhwc.h"
#include "loader/ort_shapes.h"

namespace octet::loader {
namespace {

using ir::DType;
using ir::Error;

// A model is a regular file no larger than protobuf can parse (2 GiB): sized and checked
// before a byte is read, so /dev/zero, a FIFO or a huge sparse file fail at once.
constexpr uintmax_t kMaxModelBytes = uintmax_t{2} << 30;

// The newest formats whose rules the importers implement (opset 21: QuantizeLinear's
// output_dtype; IR version 10 is the one ONNX pairs with opset 21). A newer file may change an
// operator's meaning in ways octet would silently miss, so it is refused as ORT's checker does.
constexpr int64_t kMaxOpset = 21;
constexpr int64_t kMaxIrVersion = 10;

std::string read_file(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw Error(path + ": cannot open file (it does not exist)");
  if (!std::filesystem::is_regular_file(status))
    throw Error(path + ": not a regular file (a model must be a file, not a device, FIFO or folder)");
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) throw Error(path + ": cannot read its size: " + ec.message());
  if (size > kMaxModelBytes)
    throw Error(path + ": " + std::to_string(size >> 20) + " MiB, more than the 2 GiB a serialized ONNX model can hold");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(path + ": cannot open file");
  std::string bytes(size, '\0');
  f.read(bytes.data(), std::streamsize(size));
  if (static_cast<uintmax_t>(f.gcount()) != size) throw Error(path + ": could not read the whole file");
  return bytes;
}

DType convert_dtype(int t) {
  switch (t) {
    case onnx::TensorProto::FLOAT: return DType::f32;
    case onnx::TensorProto::DOUBLE: return DType::f64;
    case onnx::TensorProto::UINT8: return DType::u8;
    case onnx::TensorProto::INT8: return DType::s8;
    case onnx::TensorProto::INT32: return DType::s32;
    case onnx::TensorProto::INT64: return DType::s64;
    case onnx::TensorProto::BOOL: return DType::b8;
    default:
      throw Error("data type " + onnx_type_name(t) +
                  " is not supported (float, double, uint8, int8, int32, int64, bool)");
  }
}

// Copies a typed repeated field into the tensor, narrowing to the element type.
template <class Dst, class Field>
void copy_field(const Field& field, ir::TensorData& td) {
  if (field.size() != td.count())
    throw Error("holds " + std::to_string(field.size()) + " values, its shape needs " +
                std::to_string(td.count()));
  Dst* out = td.as<Dst>();
  for (int i = 0; i < field.size(); ++i) out[i] = static_cast<Dst>(field.Get(i));
}

ir::TensorData convert_tensor(const onnx::TensorProto& t) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL)
    throw Error("its data is stored in an external file; octet needs self-contained models "
                "(re-save with onnx.save_model(..., save_as_external_data=False))");
  if (t.has_segment()) throw Error("segmented tensors are not supported");
  ir::Dims dims(t.dims().begin(), t.dims().end());
  for (int64_t d : dims) if (d < 0) throw Error("has a negative dimension");
  // The data in the file bounds the tensor: compare before allocating anything.
  const DType dtype = convert_dtype(t.data_type());
  const int64_t count = ir::element_count(dims);  // ir::Error on overflow
  if (t.has_raw_data()) {
    const size_t have = t.raw_data().size(), elem = ir::dtype_size(dtype);
    if (have % elem != 0 || have / elem != uint64_t(count))
      throw Error("raw data has " + std::to_string(have) + " bytes, its shape " + ir::dims_str(dims) + " needs " +
                  std::to_string(count) + " values of " + std::to_string(elem) + " bytes");
  } else {
    int64_t values = 0;
    switch (dtype) {
      case DType::f32: values = t.float_data_size(); break;
      case DType::f64: values = t.double_data_size(); break;
      case DType::s64: values = t.int64_data_size(); break;
      default: values = t.int32_data_size(); break;
    }
    if (values != count)
      throw Error("holds " + std::to_string(values) + " values, its shape " + ir::dims_str(dims) + " needs " +
                  std::to_string(count));
  }
  ir::TensorData td = ir::TensorData::make(dtype, dims);
  if (t.has_raw_data()) {
    ir::copy_bytes(td.bytes.data(), t.raw_data().data(), td.bytes.size());
    return td;
  }
  switch (td.dtype) {
    case DType::f32: copy_field<float>(t.float_data(), td); break;
    case DType::f64: copy_field<double>(t.double_data(), td); break;
    case DType::s64: copy_field<int64_t>(t.int64_data(), td); break;
    case DType::s32: copy_field<int32_t>(t.int32_data(), td); break;
    case DType::u8: copy_field<uint8_t>(t.int32_data(), td); break;
    case DType::s8: copy_field<int8_t>(t.int32_data(), td); break;
    case DType::b8: copy_field<uint8_t>(t.int32_data(), td); break;
  }
  return td;
}

ir::AttrValue convert_attribute(const onnx::AttributeProto& a) {
  switch (a.type()) {
    case onnx::AttributeProto::INT: return int64_t(a.i());
    case onnx::AttributeProto::FLOAT: return a.f();
    case onnx::AttributeProto::STRING: return a.s();
    case onnx::AttributeProto::INTS: return std::vector<int64_t>(a.ints().begin(), a.ints().end());
    case onnx::AttributeProto::FLOATS: return std::vector<float>(a.floats().begin(), a.floats().end());
    case onnx::AttributeProto::TENSOR: return convert_tensor(a.t());
    default:
      throw Error("attribute '" + a.name() + "' has type " +
                  onnx::AttributeProto_AttributeType_Name(a.type()) + ", which is not supported");
  }
}

// Reads a value_info entry: element type and shape, unknown extents as -1.
ir::Value convert_value_info(const onnx::ValueInfoProto& vi) {
  ir::Value v;
  v.name = vi.name();
  if (!vi.type().has_tensor_type()) throw Error("'" + vi.name() + "' is not a tensor");
  const auto& tt = vi.type().tensor_type();
  try {
    v.dtype = convert_dtype(tt.elem_type());
  } catch (const Error& e) {
    throw Error("'" + vi.name() + "': " + e.what());
  }
  if (tt.has_shape()) {
    ir::Dims dims;
    for (const auto& d : tt.shape().dim()) {
      // -1 is how some converters write an unknown extent; anything lower is a broken file, not
      // a second way to say "batch".
      if (d.has_dim_value() && d.dim_value() < -1)
        throw Error("'" + vi.name() + "' declares an extent of " + std::to_string(d.dim_value()) + " at axis " +
                    std::to_string(dims.size()) + "; extents are 0 or more (an unknown one is a dim_param)");
      dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
    }
    v.dims = dims;
  }
  return v;
}

int64_t default_opset(const onnx::ModelProto& m, const std::string& source) {
  for (const auto& o : m.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
  if (m.opset_import_size() == 0) return 1;  // IR version 2 files carry no opset_import
  throw Error(source + ": the model imports no default ONNX opset");
}

void check_versions(const onnx::ModelProto& m, int64_t opset, const std::string& source) {
  if (m.ir_version() > kMaxIrVersion)
    throw Error(source + ": IR version " + std::to_string(m.ir_version()) + " is newer than octet reads (up to " +
                std::to_string(kMaxIrVersion) + ")");
  if (opset > kMaxOpset)
    throw Error(source + ": ONNX opset " + std::to_string(opset) + " is newer than octet supports (up to " +
                std::to_string(kMaxOpset) + "); export with an older opset, e.g. torch.onnx.export(..., opset_version=17)");
  if (opset < 1) throw Error(source + ": ONNX opset " + std::to_string(opset) + " does not exist");
}

// BatchNormalization's outputs 1-4 (the running and saved mean and variance of training mode),
// which torch's export declares for a batch_norm it calls with training=True on constants
// (weight standardisation): inference computes Y alone, so unread ones are dropped and a read
// one is refused.
void drop_unread_batchnorm_statistics(ir::Graph& g, const std::string& source) {
  for (ir::Node& n : g.nodes) {
    if (n.op != "BatchNormalization" || n.outputs.size() < 2) continue;
    for (size_t i = 1; i < n.outputs.size(); ++i) {
      const std::string name = n.outputs[i];
      if (name.empty()) continue;
      if (g.is_graph_output(name) || !g.consumers(name).empty())
        throw Error(source + ": node '" + n.name + "' (BatchNormalization): output " + std::to_string(i) + " '" + name +
                    "' (a training statistic) is read by the graph: training mode is not supported (inference only)");
      g.values.erase(name);
    }
    n.outputs.resize(1);
  }
}

// The float AveragePools whose input shape ONNX Runtime knows (ir::kShapeKnownToOrtAttr), by
// their input's name. A node of another domain has shapes only ORT's own schemas infer: then
// every pool counts as known, the order octet followed before it asked.
std::set<std::string> pool_inputs_of_known_shape(const onnx::ModelProto& model,
                                                 const std::map<std::string, int64_t>& pool_channels) {
  std::set<std::string> pools;
  const bool foreign = std::any_of(model.graph().node().begin(), model.graph().node().end(), [](const auto& np) {
    return !np.domain().empty() && np.domain() != "ai.onnx";
  });
  for (const auto& n : model.graph().node())
    if (n.op_type() == "AveragePool" && n.input_size() > 0 && (foreign || pool_channels.count(n.input(0))))
      pools.insert(n.input(0));
  return pools;
}

ir::Graph build_graph(const onnx::ModelProto& model, const std::string& source) {
  ir::Graph g;
  g.source = source;
  g.opset = default_opset(model, source);
  check_versions(model, g.opset, source);
  const auto& gp = model.graph();

  for (const auto& init : gp.initializer()) {
    ir::Value v;
    v.name = init.name();
    try {
      v.constant = convert_tensor(init);
    } catch (const Error& e) {
      throw Error(source + ": initializer '" + init.name() + "': " + e.what());
    }
    v.dtype = v.constant->dtype;
    v.dims = v.constant->dims;
    g.values[v.name] = std::move(v);
  }
  auto declare = [&](const onnx::ValueInfoProto& vi) {
    ir::Value v;
    try {
      v = convert_value_info(vi);
    } catch (const Error& e) {
      throw Error(source + ": " + e.what());
    }
    auto it = g.values.find(v.name);
    if (it == g.values.end()) g.values[v.name] = std::move(v);
    else if (!it->second.dims) it->second.dims = v.dims;
  };
  for (const auto& in : gp.input()) {
    bool is_init = g.values.count(in.name()) && g.values[in.name()].constant;
    declare(in);
    if (!is_init) g.inputs.push_back(in.name());
  }
  for (const auto& out : gp.output()) {
    declare(out);
    g.outputs.push_back(out.name());
  }
  for (const auto& vi : gp.value_info()) {
    try {
      declare(vi);
    } catch (const Error&) {
      // value_info is only a hint; an exotic type there does not stop the model.
    }
  }

  // Who produces each value: a graph input, an initializer or one node. ONNX graphs are in SSA
  // form; a second producer would make the result depend on the order octet happens to run.
  std::map<std::string, std::string> producer;
  for (const auto& in : g.inputs) producer[in] = "graph input";
  for (const auto& [name, v] : g.values) if (v.constant) producer.emplace(name, "initializer");
  ImportContext ctx{g, g.opset};
  // One shape resolution serves both ORT rules: AveragePool's summing order and NCHWc BNs.
  const std::map<std::string, int64_t> pool_channels =
      input_channels_ort_knows(model, {std::begin(kOrtNchwcPools), std::end(kOrtNchwcPools)});
  const std::set<std::string> pools_known = pool_inputs_of_known_shape(model, pool_channels);
  const std::map<std::string, std::vector<int64_t>> batchnorms_blocked = batchnorms_ort_rewrites(model, pool_channels);
  const std::set<std::string> channels_last_means = reduce_means_ort_runs_channels_last(model);
  for (int idx = 0; idx < gp.node_size(); ++idx) {
    const auto& np = gp.node(idx);
    ir::Node n;
    n.op = np.op_type();
    n.name = np.name().empty() ? n.op + "_" + std::to_string(idx) : np.name();
    n.inputs.assign(np.input().begin(), np.input().end());
    n.outputs.assign(np.output().begin(), np.output().end());
    auto where = [&] {
      return source + ": node '" + n.name + "' (" + n.op + ", opset " + std::to_string(g.opset) + "): ";
    };
    if (np.domain() == kMicrosoftDomain) n.domain = kMicrosoftDomain;
    else if (!np.domain().empty() && np.domain() != "ai.onnx")
      throw Error(where() + "domain '" + np.domain() + "' is not supported");
    try {
      for (const auto& a : np.attribute()) n.attrs.set(a.name(), convert_attribute(a));
      import_node(n, ctx);
      if (n.op == "AveragePool" && n.domain.empty() && !n.inputs.empty())
        n.attrs.set(ir::kShapeKnownToOrtAttr, int64_t{pools_known.count(n.inputs[0]) ? 1 : 0});
      if (n.op == "BatchNormalization" && n.domain.empty())
        if (auto it = batchnorms_blocked.find(n.outputs[0]); it != batchnorms_blocked.end())
          n.attrs.set(ir::kOrtNchwcBlocksAttr, it->second);
      if (n.op == "ReduceMean" && n.domain.empty() && channels_last_means.count(n.outputs[0]))
        n.attrs.set(ir::kOrtChannelsLastAttr, int64_t{1});
    } catch (const Error& e) {
      throw Error(where() + e.what());
    }
    for (const auto& in : n.inputs)
      if (!in.empty() && !producer.count(in) && !g.is_constant(in))
        throw Error(where() + "input '" + in + "' is neither a graph input, an initializer nor an "
                    "earlier node's output (missing initializer or nodes out of order)");
    for (const auto& out : n.outputs) {
      if (out.empty()) continue;
      auto [it, fresh] = producer.emplace(out, "node '" + n.name + "'");
      if (!fresh)
        throw Error(where() + "output '" + out + "' is already produced by " +
                    (it->second.rfind("node", 0) == 0 ? "" : "the ") + it->second +
                    " (each value must have exactly one producer)");
      if (!g.values.count(out)) g.values[out].name = out;
    }
    g.nodes.push_back(std::move(n));
  }
  for (const auto& out : g.outputs)
    if (!producer.count(out)) throw Error(source + ": graph output '" + out + "' is never produced");
  drop_unread_batchnorm_statistics(g, source);
  for (auto& [name, v] : g.values)
    if (v.constant) v.dims = v.constant->dims;
  return g;
}

}  // namespace

ir::Graph load_onnx_bytes(const std::string& bytes, const std::string& source) {
  onnx::ModelProto model;
  if (bytes.empty()) throw Error(source + ": file is empty, not an ONNX model");
  if (!model.ParseFromString(bytes))
    throw Error(source + ": not a valid ONNX model (protobuf parse failed: truncated or not ONNX)");
  if (!model.has_graph() || model.graph().node_size() == 0)
    throw Error(source + ": not an ONNX model (no graph or an empty graph)");
  if (model.graph().output_size() == 0) throw Error(source + ": the graph has no outputs");
  return build_graph(model, source);
}

ir::Graph load_onnx(const std::string& path) { return load_onnx_bytes(read_file(path), path); }

ir::TensorData load_tensor_pb(const std::string& path) {
  onnx::TensorProto t;
  std::string bytes = read_file(path);
  if (!t.ParseFromString(bytes)) throw Error(path + ": not a serialized onnx.TensorProto");
  try {
    return convert_tensor(t);
  } catch (const Error& e) {
    throw Error(path + ": tensor '" + t.name() + "' " + e.what());
  }
}

}  // namespace octet::loader
