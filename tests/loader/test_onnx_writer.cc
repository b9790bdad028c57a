// The ONNX writer: what it writes loads back as the same graph, passes ONNX's own checker, runs in
// ONNX Runtime with the same results as the original file (also for models loaded at an old opset,
// which it writes at opset 13), and its errors name the node or path and leave nothing behind.
#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/int8_ops.h"
#include "engine/passes.h"
#include "loader/onnx_loader.h"
#include "loader/onnx_writer.h"
#include "tests/util/onnx_builder.h"
#include "tests/util/ort_oracle.h"

namespace octet {
namespace {

namespace fs = std::filesystem;
using ir::DType;
using loader::load_onnx;
using loader::load_onnx_bytes;
using loader::save_onnx;
using loader::save_onnx_bytes;
using testing::OnnxBuilder;
using testing::TensorValue;

#define SKIP_WITHOUT_ORT() \
  if (std::string why = ::octet::testing::ort_unavailable_reason(); !why.empty()) GTEST_SKIP() << why

// ---------------------------------------------------------------------------------------------
// Helpers

fs::path source_dir() { return fs::path(OCTET_SOURCE_DIR); }
fs::path shared_resnet8() { return source_dir() / ".." / "shared" / "models" / "resnet8_cifar10_fp32.onnx"; }

std::vector<fs::path> bundled_models() {
  std::vector<fs::path> v;
  for (const auto& e : fs::directory_iterator(source_dir() / "models"))
    if (e.path().extension() == ".onnx") v.push_back(e.path());
  std::sort(v.begin(), v.end());
  return v;
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "octet-writer-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("cannot create a temporary directory");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::vector<std::string> entries() const {
    std::vector<std::string> v;
    for (const auto& e : fs::directory_iterator(path_)) v.push_back(e.path().filename().string());
    std::sort(v.begin(), v.end());
    return v;
  }

 private:
  fs::path path_;
};

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

onnx::ModelProto parse(const std::string& bytes) {
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(bytes)) << "the writer's output does not parse as a ModelProto";
  return m;
}

// ONNX's own checker (libonnx): node attributes against the operator schemas at the model's
// opset, SSA form, initializers, opset imports. It also wants a shape on every graph input and
// output, so models checked here declare their outputs' shapes.
void expect_onnx_valid(const std::string& bytes, const std::string& what) {
  try {
    onnx::checker::check_model(parse(bytes));
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": onnx::checker rejects the written model: " << e.what();
  }
}

template <class T>
ir::TensorData tensor(DType t, ir::Dims dims, std::vector<T> values) {
  ir::TensorData d = ir::TensorData::make(t, std::move(dims));
  EXPECT_EQ(d.bytes.size(), values.size() * sizeof(T));
  std::memcpy(d.bytes.data(), values.data(), d.bytes.size());
  return d;
}

void add_constant(ir::Graph& g, const std::string& name, ir::TensorData t) {
  ir::Value v;
  v.name = name;
  v.dtype = t.dtype;
  v.dims = t.dims;
  v.constant = std::move(t);
  g.values[name] = std::move(v);
}

void add_input(ir::Graph& g, const std::string& name, DType t, ir::Dims dims) {
  g.values[name] = ir::Value{name, t, dims, std::nullopt};
  g.inputs.push_back(name);
}

void add_output(ir::Graph& g, const std::string& name, DType t, std::optional<ir::Dims> dims) {
  g.values[name] = ir::Value{name, t, dims, std::nullopt};
  g.outputs.push_back(name);
}

ir::Node& add_node(ir::Graph& g, const std::string& name, const std::string& op, std::vector<std::string> in,
                   std::vector<std::string> out, const std::string& domain = "") {
  g.nodes.push_back(ir::Node{name, op, domain, std::move(in), std::move(out), {}});
  for (const auto& o : g.nodes.back().outputs)
    if (!g.values.count(o)) g.values[o] = ir::Value{o, DType::f32, std::nullopt, std::nullopt};
  return g.nodes.back();
}

// ---------------------------------------------------------------------------------------------
// Graph comparison: nodes (order, names, ops, domains, inputs, outputs, attributes), graph inputs
// and outputs with their types and shapes, and every constant byte for byte.

bool same_tensor(const ir::TensorData& a, const ir::TensorData& b) {
  return a.dtype == b.dtype && a.dims == b.dims && a.bytes == b.bytes;
}

bool same_attr(const ir::AttrValue& a, const ir::AttrValue& b) {
  if (a.index() != b.index()) return false;
  if (auto* t = std::get_if<ir::TensorData>(&a)) return same_tensor(*t, std::get<ir::TensorData>(b));
  // Floats bit for bit: the writer must not round anything.
  if (auto* f = std::get_if<float>(&a)) return std::memcmp(f, &std::get<float>(b), sizeof(float)) == 0;
  if (auto* fs = std::get_if<std::vector<float>>(&a)) {
    const auto& gs = std::get<std::vector<float>>(b);
    return fs->size() == gs.size() && std::memcmp(fs->data(), gs.data(), fs->size() * sizeof(float)) == 0;
  }
  if (auto* i = std::get_if<int64_t>(&a)) return *i == std::get<int64_t>(b);
  if (auto* s = std::get_if<std::string>(&a)) return *s == std::get<std::string>(b);
  return std::get<std::vector<int64_t>>(a) == std::get<std::vector<int64_t>>(b);
}

std::set<std::string> constant_names(const ir::Graph& g) {
  std::set<std::string> s;
  for (const auto& [name, v] : g.values) if (v.constant) s.insert(name);
  return s;
}

// `got` holds every attribute of `want` with the same value; with `exact`, nothing more.
void expect_same_attrs(const ir::Node& want, const ir::Node& got, bool exact) {
  for (const auto& [k, v] : want.attrs.all()) {
    ASSERT_TRUE(got.attrs.has(k)) << ir::Graph::describe(want) << " lost attribute '" << k << "'";
    EXPECT_TRUE(same_attr(v, got.attrs.all().at(k))) << ir::Graph::describe(want) << " attribute '" << k << "' changed";
  }
  if (!exact) return;
  for (const auto& [k, v] : got.attrs.all())
    EXPECT_TRUE(want.attrs.has(k)) << ir::Graph::describe(want) << " gained attribute '" << k << "'";
}

void expect_same_io(const ir::Graph& want, const ir::Graph& got) {
  EXPECT_EQ(want.inputs, got.inputs);
  EXPECT_EQ(want.outputs, got.outputs);
  for (const auto* names : {&want.inputs, &want.outputs})
    for (const auto& name : *names) {
      if (!got.values.count(name)) continue;  // already reported by the name lists
      const ir::Value& a = want.value(name);
      const ir::Value& b = got.value(name);
      EXPECT_EQ(a.dtype, b.dtype) << "graph input/output '" << name << "'";
      EXPECT_EQ(a.dims.has_value(), b.dims.has_value()) << "graph input/output '" << name << "'";
      if (a.dims && b.dims) {
        EXPECT_EQ(*a.dims, *b.dims) << "graph input/output '" << name << "'";
      }
    }
}

void expect_same_constants(const ir::Graph& want, const ir::Graph& got) {
  EXPECT_EQ(constant_names(want), constant_names(got));
  for (const auto& name : constant_names(want)) {
    auto it = got.values.find(name);
    if (it == got.values.end() || !it->second.constant) continue;
    EXPECT_TRUE(same_tensor(*want.value(name).constant, *it->second.constant)) << "constant '" << name << "' changed";
  }
}

void expect_same_graph(const ir::Graph& want, const ir::Graph& got, bool exact_attrs = true) {
  EXPECT_EQ(got.opset, std::max<int64_t>(want.opset, 13));
  ASSERT_EQ(want.nodes.size(), got.nodes.size());
  for (size_t i = 0; i < want.nodes.size(); ++i) {
    const ir::Node& a = want.nodes[i];
    const ir::Node& b = got.nodes[i];
    SCOPED_TRACE("node " + std::to_string(i) + " " + ir::Graph::describe(a));
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.op, b.op);
    EXPECT_EQ(a.domain, b.domain);
    EXPECT_EQ(a.inputs, b.inputs);
    EXPECT_EQ(a.outputs, b.outputs);
    expect_same_attrs(a, b, exact_attrs);
  }
  expect_same_io(want, got);
  expect_same_constants(want, got);
}

// ---------------------------------------------------------------------------------------------
// Running models in ONNX Runtime

std::map<std::string, npy::Array> random_feed(const ir::Graph& g, int64_t batch, uint32_t seed) {
  std::map<std::string, npy::Array> feed;
  for (const auto& name : g.inputs) {
    const ir::Value& v = g.value(name);
    EXPECT_EQ(v.dtype, DType::f32) << "input '" << name << "'";
    EXPECT_TRUE(v.dims.has_value()) << "input '" << name << "'";
    std::vector<int64_t> dims = v.dims.value_or(ir::Dims{});
    for (auto& d : dims) if (d < 0) d = batch;
    feed[name] = npy::make_f32(dims, testing::random_normal(size_t(ir::element_count(dims)), seed++));
  }
  return feed;
}

// ORT's outputs of the written model against ORT's outputs of the original file. With
// rel_tolerance 0 they must be identical bit for bit (same graph, same ORT, same inputs).
void expect_same_ort_outputs(const std::string& original, const std::string& written,
                             const std::map<std::string, npy::Array>& feed, double rel_tolerance) {
  const auto want = testing::run_ort(original, feed);
  const auto got = testing::run_ort(written, feed);
  ASSERT_EQ(want.size(), got.size());
  for (const auto& [name, a] : want) {
    SCOPED_TRACE("output '" + name + "'");
    auto it = got.find(name);
    ASSERT_NE(it, got.end());
    const npy::Array& b = it->second;
    ASSERT_EQ(a.dtype, b.dtype);
    ASSERT_EQ(a.shape, b.shape);
    if (rel_tolerance == 0) {
      EXPECT_EQ(a.data, b.data) << "outputs differ";
      continue;
    }
    ASSERT_EQ(a.dtype, npy::DType::f32);
    double max_ref = 0, max_diff = 0;
    for (int64_t i = 0; i < a.count(); ++i) {
      max_ref = std::max(max_ref, std::fabs(double(a.as<float>()[i])));
      max_diff = std::max(max_diff, std::fabs(double(a.as<float>()[i]) - double(b.as<float>()[i])));
    }
    EXPECT_GT(max_ref, 0.0) << "a degenerate output proves nothing";
    EXPECT_LE(max_diff, rel_tolerance * max_ref) << "max |diff| " << max_diff << ", max |ORT| " << max_ref;
  }
}

// ---------------------------------------------------------------------------------------------
// Round trips through the loader

void expect_round_trip(const fs::path& model) {
  SCOPED_TRACE(model.string());
  const ir::Graph g = load_onnx(model.string());
  const std::string bytes = save_onnx_bytes(g);
  expect_onnx_valid(bytes, model.filename().string());
  expect_same_graph(g, load_onnx_bytes(bytes, "written " + model.filename().string()));
}

TEST(OnnxWriterRoundTrip, BundledModels) {
  const auto models = bundled_models();
  ASSERT_FALSE(models.empty()) << "no models/*.onnx in " << source_dir();
  for (const auto& m : models) expect_round_trip(m);
}

TEST(OnnxWriterRoundTrip, SharedResNet8) {
  if (!fs::exists(shared_resnet8())) GTEST_SKIP() << shared_resnet8() << " is absent (../shared not available)";
  expect_round_trip(shared_resnet8());
}

// A QDQ-style graph written by hand (not by the loader): u8/s8/s32 constants, scalars among them,
// and ONNX Runtime's com.microsoft QGemm between a QuantizeLinear and a DequantizeLinear.
ir::Graph quantized_graph() {
  ir::Graph g;
  g.source = "quantized.onnx";
  g.opset = 13;
  add_input(g, "x", DType::f32, {-1, 4});
  add_constant(g, "x_scale", ir::TensorData::f32({}, std::vector<float>{0.05f}));
  add_constant(g, "x_zp", tensor<uint8_t>(DType::u8, {}, {128}));
  add_constant(g, "w", tensor<int8_t>(DType::s8, {3, 4}, {-127, -64, -1, 0, 1, 2, 3, 127, 50, -50, 25, -25}));
  add_constant(g, "w_scale", ir::TensorData::f32({}, std::vector<float>{0.01f}));
  add_constant(g, "w_zp", tensor<int8_t>(DType::s8, {}, {0}));
  add_constant(g, "bias", tensor<int32_t>(DType::s32, {3}, {-1000, 0, 12345}));
  add_constant(g, "y_scale", ir::TensorData::f32({}, std::vector<float>{0.1f}));
  add_constant(g, "y_zp", tensor<uint8_t>(DType::u8, {}, {100}));
  add_node(g, "quantize", "QuantizeLinear", {"x", "x_scale", "x_zp"}, {"xq"}).attrs.set("axis", int64_t(1));
  auto& gemm = add_node(g, "qgemm", "QGemm",
                        {"xq", "x_scale", "x_zp", "w", "w_scale", "w_zp", "bias", "y_scale", "y_zp"}, {"yq"},
                        "com.microsoft");
  gemm.attrs.set("transB", int64_t(1));
  gemm.attrs.set("alpha", 1.0f);
  add_node(g, "dequantize", "DequantizeLinear", {"yq", "y_scale", "y_zp"}, {"y"}).attrs.set("axis", int64_t(1));
  add_output(g, "y", DType::f32, ir::Dims{-1, 3});
  return g;
}

TEST(OnnxWriterRoundTrip, QuantizedConstantsAndContribNode) {
  const ir::Graph g0 = quantized_graph();
  const std::string bytes = save_onnx_bytes(g0);
  expect_onnx_valid(bytes, "quantized graph");
  // The first load adds the importers' attribute defaults; everything else must be as written.
  const ir::Graph g1 = load_onnx_bytes(bytes, "written quantized.onnx");
  expect_same_graph(g0, g1, /*exact_attrs=*/false);
  // From then on the round trip is exact.
  expect_same_graph(g1, load_onnx_bytes(save_onnx_bytes(g1), "rewritten quantized.onnx"));
}

// ---------------------------------------------------------------------------------------------
// What reaches the protobuf

const onnx::TensorProto* find_initializer(const onnx::ModelProto& m, const std::string& name) {
  for (const auto& t : m.graph().initializer()) if (t.name() == name) return &t;
  return nullptr;
}

const onnx::AttributeProto* find_attribute(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute()) if (a.name() == name) return &a;
  return nullptr;
}

std::map<std::string, int64_t> opset_imports(const onnx::ModelProto& m) {
  std::map<std::string, int64_t> v;
  for (const auto& o : m.opset_import()) v[o.domain()] = o.version();
  return v;
}

TEST(OnnxWriterProto, EveryDTypeAndAttributeKind) {
  ir::Graph g;
  g.source = "every_kind.onnx";
  g.opset = 13;
  add_input(g, "x", DType::f32, {-1, 3, -1});
  add_constant(g, "c_f32", ir::TensorData::f32({2}, std::vector<float>{1.5f, -2.0f}));
  add_constant(g, "c_f64", tensor<double>(DType::f64, {}, {3.25}));
  add_constant(g, "c_u8", tensor<uint8_t>(DType::u8, {3}, {0, 128, 255}));
  add_constant(g, "c_s8", tensor<int8_t>(DType::s8, {2, 2}, {-128, -1, 0, 127}));
  add_constant(g, "c_s32", tensor<int32_t>(DType::s32, {2}, {INT32_MIN, 7}));
  add_constant(g, "c_s64", ir::TensorData::s64({}, std::vector<int64_t>{-5}));
  add_constant(g, "c_b8", tensor<uint8_t>(DType::b8, {2}, {1, 0}));
  add_constant(g, "c_empty", ir::TensorData::f32({0, 4}, std::vector<float>{}));
  auto& n = add_node(g, "custom", "OctetTestOp",
                     {"x", "c_f32", "c_f64", "c_u8", "", "c_s8", "c_s32", "c_s64", "c_b8", "c_empty"}, {"y", "z"},
                     "com.microsoft");
  n.attrs.set("an_int", int64_t(-3));
  n.attrs.set("a_float", 0.25f);
  n.attrs.set("a_string", std::string("text"));
  n.attrs.set("some_ints", std::vector<int64_t>{1, -2});
  n.attrs.set("some_floats", std::vector<float>{0.5f, -1.5f});
  n.attrs.set("a_tensor", tensor<int8_t>(DType::s8, {2}, {-7, 9}));
  add_output(g, "y", DType::f32, std::nullopt);
  add_output(g, "z", DType::u8, ir::Dims{-1, 2});

  const onnx::ModelProto m = parse(save_onnx_bytes(g, {.producer = "octet-test", .doc = "a doc"}));
  EXPECT_EQ(m.ir_version(), 8);
  EXPECT_EQ(m.producer_name(), "octet-test");
  EXPECT_EQ(m.doc_string(), "a doc");
  EXPECT_EQ(opset_imports(m), (std::map<std::string, int64_t>{{"", 13}, {"com.microsoft", 1}}));

  struct Expected {
    const char* name;
    int type;
    std::vector<int64_t> dims;
    std::string raw;
  };
  const Expected expected[] = {
      {"c_f32", onnx::TensorProto::FLOAT, {2}, std::string("\x00\x00\xc0\x3f\x00\x00\x00\xc0", 8)},
      {"c_f64", onnx::TensorProto::DOUBLE, {}, std::string("\x00\x00\x00\x00\x00\x00\x0a\x40", 8)},
      {"c_u8", onnx::TensorProto::UINT8, {3}, std::string("\x00\x80\xff", 3)},
      {"c_s8", onnx::TensorProto::INT8, {2, 2}, std::string("\x80\xff\x00\x7f", 4)},
      {"c_s32", onnx::TensorProto::INT32, {2}, std::string("\x00\x00\x00\x80\x07\x00\x00\x00", 8)},
      {"c_s64", onnx::TensorProto::INT64, {}, std::string("\xfb\xff\xff\xff\xff\xff\xff\xff", 8)},
      {"c_b8", onnx::TensorProto::BOOL, {2}, std::string("\x01\x00", 2)},
      {"c_empty", onnx::TensorProto::FLOAT, {0, 4}, std::string()},
  };
  EXPECT_EQ(m.graph().initializer_size(), int(std::size(expected)));
  for (const auto& e : expected) {
    SCOPED_TRACE(e.name);
    const auto* t = find_initializer(m, e.name);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->data_type(), e.type);
    EXPECT_EQ(std::vector<int64_t>(t->dims().begin(), t->dims().end()), e.dims);
    EXPECT_TRUE(t->has_raw_data());
    EXPECT_EQ(t->raw_data(), e.raw);
  }

  ASSERT_EQ(m.graph().input_size(), 1);
  const auto& in = m.graph().input(0);
  EXPECT_EQ(in.name(), "x");
  EXPECT_EQ(in.type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
  const auto& shape = in.type().tensor_type().shape();
  ASSERT_EQ(shape.dim_size(), 3);
  EXPECT_EQ(shape.dim(0).dim_param(), "N");
  EXPECT_EQ(shape.dim(1).dim_value(), 3);
  EXPECT_TRUE(shape.dim(2).has_dim_param());
  EXPECT_NE(shape.dim(2).dim_param(), "N") << "two unknown extents must not claim to be equal";

  ASSERT_EQ(m.graph().output_size(), 2);
  EXPECT_EQ(m.graph().output(0).name(), "y");
  EXPECT_FALSE(m.graph().output(0).type().tensor_type().has_shape());
  EXPECT_EQ(m.graph().output(1).name(), "z");
  EXPECT_EQ(m.graph().output(1).type().tensor_type().elem_type(), onnx::TensorProto::UINT8);
  ASSERT_EQ(m.graph().output(1).type().tensor_type().shape().dim_size(), 2);
  EXPECT_EQ(m.graph().output(1).type().tensor_type().shape().dim(1).dim_value(), 2);
  EXPECT_EQ(m.graph().value_info_size(), 0);

  ASSERT_EQ(m.graph().node_size(), 1);
  const auto& np = m.graph().node(0);
  EXPECT_EQ(np.name(), "custom");
  EXPECT_EQ(np.op_type(), "OctetTestOp");
  EXPECT_EQ(np.domain(), "com.microsoft");
  EXPECT_EQ(std::vector<std::string>(np.input().begin(), np.input().end()),
            (std::vector<std::string>{"x", "c_f32", "c_f64", "c_u8", "", "c_s8", "c_s32", "c_s64", "c_b8", "c_empty"}));
  EXPECT_EQ(std::vector<std::string>(np.output().begin(), np.output().end()), (std::vector<std::string>{"y", "z"}));
  EXPECT_EQ(np.attribute_size(), 6);
  const auto* a = find_attribute(np, "an_int");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->type(), onnx::AttributeProto::INT);
  EXPECT_EQ(a->i(), -3);
  a = find_attribute(np, "a_float");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->type(), onnx::AttributeProto::FLOAT);
  EXPECT_EQ(a->f(), 0.25f);
  a = find_attribute(np, "a_string");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->type(), onnx::AttributeProto::STRING);
  EXPECT_EQ(a->s(), "text");
  a = find_attribute(np, "some_ints");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->type(), onnx::AttributeProto::INTS);
  EXPECT_EQ(std::vector<int64_t>(a->ints().begin(), a->ints().end()), (std::vector<int64_t>{1, -2}));
  a = find_attribute(np, "some_floats");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->type(), onnx::AttributeProto::FLOATS);
  EXPECT_EQ(std::vector<float>(a->floats().begin(), a->floats().end()), (std::vector<float>{0.5f, -1.5f}));
  a = find_attribute(np, "a_tensor");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->type(), onnx::AttributeProto::TENSOR);
  EXPECT_EQ(a->t().data_type(), onnx::TensorProto::INT8);
  EXPECT_EQ(a->t().raw_data(), std::string("\xf9\x09", 2));
}

// A one-node graph x -> op -> y at `opset`.
ir::Graph single_node(int64_t opset, const std::string& op, std::vector<std::string> extra_inputs = {}) {
  ir::Graph g;
  g.source = "single.onnx";
  g.opset = opset;
  add_input(g, "x", DType::f32, {-1, 10});
  std::vector<std::string> in = {"x"};
  in.insert(in.end(), extra_inputs.begin(), extra_inputs.end());
  add_node(g, "the_node", op, in, {"y"});
  add_output(g, "y", DType::f32, std::nullopt);
  return g;
}

TEST(OnnxWriterProto, OpsetIsAtLeast13AndContribImportOnlyWhenUsed) {
  EXPECT_EQ(opset_imports(parse(save_onnx_bytes(single_node(11, "Relu")))), (std::map<std::string, int64_t>{{"", 13}}));
  EXPECT_EQ(opset_imports(parse(save_onnx_bytes(single_node(17, "Relu")))), (std::map<std::string, int64_t>{{"", 17}}));
}

TEST(OnnxWriterProto, AttributesAreWrittenInTheFormOfTheTargetOpset) {
  // Reshape's allowzero exists from opset 14; the importers fill it in at every opset.
  auto g = single_node(13, "Reshape", {"shape"});
  add_constant(g, "shape", ir::TensorData::s64({2}, std::vector<int64_t>{-1, 5}));
  g.nodes[0].attrs.set("allowzero", int64_t(0));
  auto m = parse(save_onnx_bytes(g));
  EXPECT_EQ(find_attribute(m.graph().node(0), "allowzero"), nullptr);
  g.opset = 14;
  m = parse(save_onnx_bytes(g));
  ASSERT_NE(find_attribute(m.graph().node(0), "allowzero"), nullptr);

  // allowzero=1 changes the meaning, and opset 13 has no way to say it.
  g.opset = 13;
  g.nodes[0].attrs.set("allowzero", int64_t(1));
  try {
    save_onnx_bytes(g);
    ADD_FAILURE() << "allowzero=1 written at opset 13";
  } catch (const ir::Error& e) {
    EXPECT_NE(std::string(e.what()).find("the_node"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("allowzero"), std::string::npos) << e.what();
  }

  // Empty lists mean "not given" and are left out (an empty kernel_shape would be an error).
  auto c = single_node(13, "Conv", {"w"});
  add_constant(c, "w", ir::TensorData::f32({1, 10, 1}, std::vector<float>(10, 1.0f)));
  c.nodes[0].attrs.set("kernel_shape", std::vector<int64_t>{});
  c.nodes[0].attrs.set("group", int64_t(1));
  m = parse(save_onnx_bytes(c));
  EXPECT_EQ(find_attribute(m.graph().node(0), "kernel_shape"), nullptr);
  EXPECT_NE(find_attribute(m.graph().node(0), "group"), nullptr);
}

TEST(OnnxWriterProto, ReduceMeanAxesBecomeAnAttributeBeforeOpset18) {
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 3, 4, 4});
  b.output(b.node("ReduceMean", {x}, {{"axes", {2, 3}}, {"keepdims", 0}}, "mean"), {-1, 3});
  const ir::Graph g = load_onnx_bytes(b.serialize(), "reducemean13.onnx");
  ASSERT_EQ(g.nodes[0].inputs.size(), 2u) << "the importer moves axes to an input";
  const std::string axes_constant = g.nodes[0].inputs[1];

  const std::string bytes = save_onnx_bytes(g);
  expect_onnx_valid(bytes, "ReduceMean at opset 13");
  const auto m = parse(bytes);
  const auto& np = m.graph().node(0);
  EXPECT_EQ(np.input_size(), 1);
  const auto* axes = find_attribute(np, "axes");
  ASSERT_NE(axes, nullptr);
  EXPECT_EQ(std::vector<int64_t>(axes->ints().begin(), axes->ints().end()), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(find_attribute(np, "noop_with_empty_axes"), nullptr) << "opset 18's attribute at opset 13";
  EXPECT_EQ(find_initializer(m, axes_constant), nullptr) << "the axes constant nothing reads any more";
  expect_same_graph(g, load_onnx_bytes(bytes, "written reducemean13.onnx"));

  OnnxBuilder b18(18);
  auto x18 = b18.input("x", {-1, 3, 4, 4});
  auto axes18 = b18.initializer_i64("axes", {2}, {2, 3});
  b18.output(b18.node("ReduceMean", {x18, axes18}, {{"keepdims", 0}}, "mean"), {-1, 3});
  const ir::Graph g18 = load_onnx_bytes(b18.serialize(), "reducemean18.onnx");
  const std::string bytes18 = save_onnx_bytes(g18);
  const auto m18 = parse(bytes18);
  EXPECT_EQ(m18.graph().node(0).input_size(), 2);
  EXPECT_EQ(find_attribute(m18.graph().node(0), "axes"), nullptr);
  expect_same_graph(g18, load_onnx_bytes(bytes18, "written reducemean18.onnx"));
}

TEST(OnnxWriterProto, OldSoftmaxKeepsItsMeaning) {
  // Rank known and axis the last one: the two definitions agree, one node suffices.
  OnnxBuilder b(11);
  auto x = b.input("x", {-1, 10});
  b.output(b.node("Softmax", {x}, {}, "softmax"));
  auto m = parse(save_onnx_bytes(load_onnx_bytes(b.serialize(), "softmax11.onnx")));
  ASSERT_EQ(m.graph().node_size(), 1);
  EXPECT_EQ(m.graph().node(0).op_type(), "Softmax");

  // Axis 1 of a rank-4 tensor: opset 11 normalises over C*H*W, opset 13 over C alone.
  OnnxBuilder b4(11);
  auto x4 = b4.input("x", {-1, 2, 3, 3});
  b4.output(b4.node("Softmax", {x4}, {{"axis", 1}}, "softmax"), {-1, 2, 3, 3});
  const std::string bytes = save_onnx_bytes(load_onnx_bytes(b4.serialize(), "softmax11_4d.onnx"));
  expect_onnx_valid(bytes, "Softmax rank 4 at opset 11");
  m = parse(bytes);
  std::vector<std::string> ops;
  for (const auto& n : m.graph().node()) ops.push_back(n.op_type());
  EXPECT_EQ(ops, (std::vector<std::string>{"Flatten", "Shape", "Softmax", "Reshape"}));
  EXPECT_EQ(m.graph().node(3).output(0), m.graph().output(0).name());
}

// ---------------------------------------------------------------------------------------------
// ONNX Runtime runs what the writer wrote

TEST(OnnxWriterOrt, BundledModelsGiveTheSameOutputs) {
  SKIP_WITHOUT_ORT();
  TempDir dir;
  std::vector<fs::path> models = bundled_models();
  if (fs::exists(shared_resnet8())) models.push_back(shared_resnet8());
  for (const auto& model : models) {
    SCOPED_TRACE(model.string());
    const ir::Graph g = load_onnx(model.string());
    const std::string written = dir.file("written_" + model.filename().string());
    save_onnx(g, written);
    expect_same_ort_outputs(model.string(), written, random_feed(g, 3, 11), 0.0);
  }
}

// Opset 11: Clip bounds as inputs, Unsqueeze/Squeeze/ReduceMean axes as attributes, Softmax with
// its pre-13 meaning on a rank-4 tensor and on a rank-2 one whose rank octet does not know.
OnnxBuilder opset11_model() {
  OnnxBuilder b(11, "old11", 5);
  auto x = b.input("x", {-1, 3, 6, 6});
  auto w = b.random_normal_init("conv.weight", {4, 3, 3, 3}, 0.0f, 0.4f);
  auto bias = b.random_normal_init("conv.bias", {4}, 0.0f, 0.1f);
  auto pads = b.initializer_i64("pads", {8}, {0, 0, 1, 0, 0, 0, 0, 1});
  auto padded = b.node("Pad", {x, pads}, {{"mode", "reflect"}});
  auto c = b.node("Conv", {padded, w, bias}, {{"kernel_shape", {3, 3}}, {"pads", {1, 1, 1, 1}}});
  auto lo = b.constant(TensorValue::scalar_f32(-0.5f));
  auto hi = b.constant(TensorValue::scalar_f32(1.5f));
  auto clipped = b.node("Clip", {c, lo, hi});
  auto mean = b.node("ReduceMean", {clipped}, {{"axes", {2, 3}}, {"keepdims", 0}});
  auto unsq = b.node("Unsqueeze", {mean}, {{"axes", {2, 3}}});
  auto sq = b.node("Squeeze", {unsq}, {{"axes", {3}}});
  auto flat = b.node("Flatten", {sq}, {{"axis", 1}});
  b.output(b.node("Softmax", {flat}, {{"axis", 1}}, "softmax_2d"), {-1, 4});
  b.output(b.node("Softmax", {clipped}, {{"axis", 1}}, "softmax_4d"), {-1, 4, 6, 6});
  b.output(unsq, {-1, 4, 1, 1});
  return b;
}

// Opset 8: Clip bounds, Pad pads/value and Unsqueeze axes as attributes, BatchNormalization's
// spatial, Dropout's ratio, Softmax's default axis 1.
OnnxBuilder opset8_model() {
  OnnxBuilder b(8, "old8", 6);
  auto x = b.input("x", {-1, 3, 6, 6});
  auto padded = b.node("Pad", {x}, {{"pads", {0, 0, 1, 1, 0, 0, 1, 1}}, {"value", 0.5f}});
  auto w = b.random_normal_init("conv.weight", {4, 3, 3, 3}, 0.0f, 0.4f);
  auto c = b.node("Conv", {padded, w}, {{"kernel_shape", {3, 3}}});
  auto scale = b.random_uniform_init("bn.scale", {4}, 0.5f, 1.5f);
  auto shift = b.random_normal_init("bn.bias", {4}, 0.0f, 0.2f);
  auto mu = b.random_normal_init("bn.mean", {4}, 0.0f, 0.2f);
  auto var = b.random_uniform_init("bn.var", {4}, 0.5f, 2.0f);
  auto bn = b.node("BatchNormalization", {c, scale, shift, mu, var}, {{"epsilon", 1e-3f}, {"spatial", 1}});
  auto clipped = b.node("Clip", {bn}, {{"min", 0.0f}, {"max", 1.0f}});
  auto dropped = b.node("Dropout", {clipped}, {{"ratio", 0.3f}});
  auto pooled = b.node("MaxPool", {dropped}, {{"kernel_shape", {2, 2}}, {"strides", {2, 2}}});
  auto gap = b.node("GlobalAveragePool", {pooled});
  auto flat = b.node("Flatten", {gap});
  auto fc_w = b.random_normal_init("fc.weight", {5, 4}, 0.0f, 1.0f);
  auto fc_b = b.random_normal_init("fc.bias", {5}, 0.0f, 0.1f);
  auto logits = b.node("Gemm", {flat, fc_w, fc_b}, {{"transB", 1}});
  b.output(b.node("Softmax", {logits}, {}, "probabilities"), {-1, 5});
  b.output(b.node("Unsqueeze", {logits}, {{"axes", {0}}}), {1, -1, 5});
  return b;
}

void expect_old_model_runs_the_same(const OnnxBuilder& b, const std::string& name) {
  TempDir dir;
  const std::string original = dir.file(name + ".onnx");
  b.save(original);
  const ir::Graph g = load_onnx(original);
  const std::string written = dir.file(name + "_written.onnx");
  save_onnx(g, written);
  const auto m = parse(read_bytes(written));
  EXPECT_EQ(opset_imports(m), (std::map<std::string, int64_t>{{"", 13}}));
  expect_onnx_valid(read_bytes(written), name);
  // The written model is a different graph where Softmax was spelled out: a few ULPs apart at most.
  expect_same_ort_outputs(original, written, random_feed(g, 2, 3), 1e-6);
}

TEST(OnnxWriterOrt, Opset11ModelWrittenAtOpset13) {
  SKIP_WITHOUT_ORT();
  expect_old_model_runs_the_same(opset11_model(), "opset11");
}

TEST(OnnxWriterOrt, Opset8ModelWrittenAtOpset13) {
  SKIP_WITHOUT_ORT();
  expect_old_model_runs_the_same(opset8_model(), "opset8");
}

TEST(OnnxWriterOrt, QuantizedGraphWithContribNodeRuns) {
  SKIP_WITHOUT_ORT();
  TempDir dir;
  const std::string path = dir.file("quantized.onnx");
  save_onnx(quantized_graph(), path);
  // x = 0.05 * (q - 128) quantizes back to q exactly, so the QGemm result can be computed here:
  // acc = sum_k (q_k - 128) * w[n][k] + bias[n], requantized with the float multiplier
  // x_scale * w_scale / y_scale and y_zp 100, then dequantized.
  const std::vector<int64_t> xq = {118, 120, 131, 137, 128, 129, 127, 133};
  std::vector<float> x;
  for (int64_t q : xq) x.push_back(0.05f * float(q - 128));
  const auto out = testing::run_ort(path, {{"x", npy::make_f32({2, 4}, x)}});
  ASSERT_EQ(out.count("y"), 1u);
  const npy::Array& y = out.at("y");
  ASSERT_EQ(y.shape, (std::vector<int64_t>{2, 3}));
  const int w[3][4] = {{-127, -64, -1, 0}, {1, 2, 3, 127}, {50, -50, 25, -25}};
  const int64_t bias[3] = {-1000, 0, 12345};
  const float multiplier = 0.05f * 0.01f / 0.1f;
  for (int m = 0; m < 2; ++m)
    for (int n = 0; n < 3; ++n) {
      int64_t acc = bias[n];
      for (int k = 0; k < 4; ++k) acc += (xq[size_t(m * 4 + k)] - 128) * w[n][k];
      const float q = std::clamp(std::nearbyint(float(acc) * multiplier) + 100.0f, 0.0f, 255.0f);
      EXPECT_EQ(y.as<float>()[m * 3 + n], (q - 100.0f) * 0.1f) << "row " << m << " column " << n << ", acc " << acc;
    }
}

// ---------------------------------------------------------------------------------------------
// Errors

// A Trilu that runs on the codes carries its zero point's code for the engine: no ONNX form.
TEST(OnnxWriterErrors, TriluOnTheCodesIsNotWritten) {
  ir::Graph g = single_node(14, "Trilu");
  EXPECT_NO_THROW(save_onnx_bytes(g));
  g.nodes[0].attrs.set(int8::kZeroCodeAttr, int64_t{128});
  try {
    save_onnx_bytes(g);
    FAIL() << "a Trilu on the codes was written";
  } catch (const ir::Error& e) {
    EXPECT_NE(std::string(e.what()).find(int8::kZeroCodeAttr), std::string::npos) << e.what();
  }
}

TEST(OnnxWriterErrors, FusedActivationNamesTheNode) {
  ir::Graph g = load_onnx((source_dir() / "models" / "resnet8.onnx").string());
  ASSERT_GT(passes::fuse_activations(g), 0);
  std::string fused;
  for (const auto& n : g.nodes)
    if (n.attrs.has("fused_act")) {
      fused = n.name;
      break;
    }
  ASSERT_FALSE(fused.empty());
  try {
    save_onnx_bytes(g);
    FAIL() << "a graph with fused activations was written";
  } catch (const ir::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'" + fused + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("fused_act"), std::string::npos) << msg;
  }
  TempDir dir;
  EXPECT_THROW(save_onnx(g, dir.file("fused.onnx")), ir::Error);
  EXPECT_TRUE(dir.entries().empty()) << "a failed save left files behind";
}

TEST(OnnxWriterErrors, MissingDirectoryNamesThePathAndLeavesNothing) {
  TempDir dir;
  const std::string path = (dir.path() / "no_such_dir" / "model.onnx").string();
  try {
    save_onnx(single_node(13, "Relu"), path);
    FAIL() << "wrote into a directory that does not exist";
  } catch (const ir::Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_TRUE(dir.entries().empty());
}

TEST(OnnxWriterErrors, PathThatIsADirectoryIsLeftAlone) {
  TempDir dir;
  const std::string path = dir.file("model.onnx");
  fs::create_directory(path);
  std::ofstream(dir.file("model.onnx/keep.txt")) << "keep";
  EXPECT_THROW(save_onnx(single_node(13, "Relu"), path), ir::Error);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"model.onnx"}) << "no temporary file may stay behind";
  EXPECT_EQ(read_bytes(dir.file("model.onnx/keep.txt")), "keep");
}

TEST(OnnxWriterErrors, ExistingFileIsReplacedWholeOrNotAtAll) {
  TempDir dir;
  const std::string path = dir.file("model.onnx");
  const ir::Graph relu = single_node(13, "Relu");
  const ir::Graph sigmoid = single_node(13, "Sigmoid");
  save_onnx(relu, path);
  EXPECT_EQ(read_bytes(path), save_onnx_bytes(relu));
  save_onnx(sigmoid, path);
  EXPECT_EQ(read_bytes(path), save_onnx_bytes(sigmoid));
  EXPECT_EQ(load_onnx(path).nodes.at(0).op, "Sigmoid");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"model.onnx"});

  // A graph that cannot be written leaves the previous file as it was.
  ir::Graph fused = single_node(13, "Conv");
  fused.nodes[0].attrs.set("fused_act", std::string("Relu"));
  EXPECT_THROW(save_onnx(fused, path), ir::Error);
  EXPECT_EQ(read_bytes(path), save_onnx_bytes(sigmoid));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"model.onnx"});
}

}  // namespace
}  // namespace octet
