// Loader and Session error handling and the importers' defaults. Models are written with
// the protobuf API directly, because most of them are deliberately malformed.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>

#include "engine/session.h"
#include "loader/onnx_loader.h"
#include "tests/util/cli_runner.h"

namespace octet {
namespace {

// A model with one float input x [N, 2, 4, 4] and the given nodes; `out` is the output.
onnx::ModelProto model_with(int opset, const std::vector<onnx::NodeProto>& nodes, const std::string& out = "y") {
  onnx::ModelProto m;
  m.set_ir_version(7);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto add_vi = [](onnx::ValueInfoProto* vi, const std::string& name, std::vector<int64_t> dims) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) {
      auto* dim = tt->mutable_shape()->add_dim();
      if (d < 0) dim->set_dim_param("N");
      else dim->set_dim_value(d);
    }
  };
  add_vi(g->add_input(), "x", {-1, 2, 4, 4});
  add_vi(g->add_output(), out, {});
  g->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  for (const auto& n : nodes) *g->add_node() = n;
  return m;
}

onnx::NodeProto node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out,
                     const std::string& name = "") {
  onnx::NodeProto n;
  n.set_op_type(op);
  n.set_name(name.empty() ? op + "_node" : name);
  for (auto& i : in) n.add_input(i);
  for (auto& o : out) n.add_output(o);
  return n;
}

void add_int_attr(onnx::NodeProto& n, const std::string& k, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(k);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void add_float_attr(onnx::NodeProto& n, const std::string& k, float v) {
  auto* a = n.add_attribute();
  a->set_name(k);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

void add_ints_attr(onnx::NodeProto& n, const std::string& k, std::vector<int64_t> v) {
  auto* a = n.add_attribute();
  a->set_name(k);
  a->set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}

onnx::TensorProto float_tensor(const std::string& name, std::vector<int64_t> dims, float fill) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (auto d : dims) { t.add_dims(d); n *= d; }
  for (int64_t i = 0; i < n; ++i) t.add_float_data(fill);
  return t;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ir::Error& e) {
    return e.what();
  }
  return "(no error)";
}

ir::Graph load(const onnx::ModelProto& m) { return loader::load_onnx_bytes(m.SerializeAsString(), "test.onnx"); }

const ir::Node& only_node(const ir::Graph& g, const std::string& op) {
  for (const auto& n : g.nodes) if (n.op == op) return n;
  throw std::runtime_error("no " + op);
}

// ---- files that are not (complete) ONNX models ----

TEST(LoaderErrors, EmptyFile) {
  EXPECT_NE(message_of([] { loader::load_onnx_bytes("", "empty.onnx"); }).find("empty.onnx: file is empty"),
            std::string::npos);
}

TEST(LoaderErrors, NotOnnx) {
  auto msg = message_of([] { loader::load_onnx_bytes("hello, this is a text file\n", "notes.txt"); });
  EXPECT_NE(msg.find("notes.txt"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not"), std::string::npos) << msg;
}

TEST(LoaderErrors, TruncatedFile) {
  auto relu = node("Relu", {"x"}, {"y"});
  std::string bytes = model_with(13, {relu}).SerializeAsString();
  for (size_t cut : {bytes.size() / 2, bytes.size() - 3}) {
    auto msg = message_of([&] { loader::load_onnx_bytes(bytes.substr(0, cut), "cut.onnx"); });
    EXPECT_NE(msg.find("cut.onnx"), std::string::npos) << msg;
    EXPECT_NE(msg, "(no error)");
  }
}

TEST(LoaderErrors, MissingFile) {
  auto msg = message_of([] { loader::load_onnx("/nonexistent/model.onnx"); });
  EXPECT_NE(msg.find("/nonexistent/model.onnx: cannot open"), std::string::npos) << msg;
}

// ---- models octet cannot run ----

TEST(LoaderErrors, UnsupportedOpNamesNodeOpAndOpset) {
  auto n = node("Acosh", {"x"}, {"y"}, "my_acosh");
  auto msg = message_of([&] { load(model_with(13, {n})); });
  EXPECT_NE(msg.find("node 'my_acosh'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Acosh"), std::string::npos) << msg;
  EXPECT_NE(msg.find("opset 13"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not supported"), std::string::npos) << msg;
}

TEST(LoaderErrors, ForeignDomain) {
  auto n = node("FusedConv", {"x"}, {"y"});
  n.set_domain("com.microsoft");
  auto msg = message_of([&] { load(model_with(13, {n})); });
  EXPECT_NE(msg.find("domain 'com.microsoft'"), std::string::npos) << msg;
}

TEST(LoaderErrors, UnknownAttribute) {
  auto n = node("Relu", {"x"}, {"y"});
  add_int_attr(n, "frobnicate", 1);
  auto msg = message_of([&] { load(model_with(13, {n})); });
  EXPECT_NE(msg.find("attribute 'frobnicate'"), std::string::npos) << msg;
}

TEST(LoaderErrors, WrongAttributeType) {
  auto n = node("Conv", {"x", "w"}, {"y"});
  add_float_attr(n, "group", 1.0f);
  auto m = model_with(13, {n});
  *m.mutable_graph()->add_initializer() = float_tensor("w", {2, 2, 1, 1}, 1.0f);
  auto msg = message_of([&] { load(m); });
  EXPECT_NE(msg.find("'group' should be int"), std::string::npos) << msg;
}

TEST(LoaderErrors, MissingRequiredAttribute) {
  auto n = node("Concat", {"x", "x"}, {"y"});
  auto msg = message_of([&] { load(model_with(13, {n})); });
  EXPECT_NE(msg.find("required attribute 'axis'"), std::string::npos) << msg;
}

TEST(LoaderErrors, MissingInitializer) {
  auto n = node("Conv", {"x", "conv.weight"}, {"y"}, "conv1");
  auto msg = message_of([&] { load(model_with(13, {n})); });
  EXPECT_NE(msg.find("node 'conv1'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'conv.weight'"), std::string::npos) << msg;
}

TEST(LoaderErrors, UnsupportedDtype) {
  auto n = node("Add", {"x", "b"}, {"y"});
  auto m = model_with(13, {n});
  onnx::TensorProto b;
  b.set_name("b");
  b.set_data_type(onnx::TensorProto::FLOAT16);
  b.add_dims(1);
  b.add_int32_data(0);
  *m.mutable_graph()->add_initializer() = b;
  auto msg = message_of([&] { load(m); });
  EXPECT_NE(msg.find("initializer 'b'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("FLOAT16"), std::string::npos) << msg;
}

TEST(LoaderErrors, ExternalData) {
  auto n = node("Add", {"x", "b"}, {"y"});
  auto m = model_with(13, {n});
  onnx::TensorProto b;
  b.set_name("b");
  b.set_data_type(onnx::TensorProto::FLOAT);
  b.add_dims(1);
  b.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = b.add_external_data();
  e->set_key("location");
  e->set_value("weights.bin");
  *m.mutable_graph()->add_initializer() = b;
  auto msg = message_of([&] { load(m); });
  EXPECT_NE(msg.find("external"), std::string::npos) << msg;
}

TEST(LoaderErrors, InitializerSizeMismatch) {
  auto n = node("Add", {"x", "b"}, {"y"});
  auto m = model_with(13, {n});
  auto b = float_tensor("b", {4}, 1.0f);
  b.add_float_data(2.0f);  // 5 values for 4 elements
  *m.mutable_graph()->add_initializer() = b;
  auto msg = message_of([&] { load(m); });
  EXPECT_NE(msg.find("initializer 'b'"), std::string::npos) << msg;
}

TEST(LoaderErrors, TrainingModeBatchNorm) {
  auto n = node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y"}, "bn");
  add_int_attr(n, "training_mode", 1);
  auto m = model_with(15, {n});
  for (const char* p : {"s", "b", "m", "v"}) *m.mutable_graph()->add_initializer() = float_tensor(p, {2}, 1.0f);
  auto msg = message_of([&] { load(m); });
  EXPECT_NE(msg.find("training_mode=1"), std::string::npos) << msg;
}

TEST(LoaderErrors, BadShapeIsCaughtAtLoad) {
  // W expects 3 input channels, x has 2: the session checks the graph once at load.
  auto n = node("Conv", {"x", "w"}, {"y"}, "conv");
  auto m = model_with(13, {n});
  *m.mutable_graph()->add_initializer() = float_tensor("w", {4, 3, 3, 3}, 1.0f);
  auto msg = message_of([&] { Session s(load(m)); });
  EXPECT_NE(msg.find("node 'conv' (Conv)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("input channels"), std::string::npos) << msg;
}

// ---- run-time input checks ----

TEST(SessionErrors, WrongInputShapeAndDtype) {
  Session s(load(model_with(13, {node("Relu", {"x"}, {"y"})})));
  auto good = ir::TensorData::make(ir::DType::f32, {3, 2, 4, 4});
  EXPECT_NO_THROW(s.run({good}));
  auto msg = message_of([&] { s.run({ir::TensorData::make(ir::DType::f32, {1, 2, 4, 5})}); });
  EXPECT_NE(msg.find("input 'x' expects float32 [N,2,4,4], got float32 [1,2,4,5]"), std::string::npos) << msg;
  msg = message_of([&] { s.run({ir::TensorData::make(ir::DType::s64, {1, 2, 4, 4})}); });
  EXPECT_NE(msg.find("got int64"), std::string::npos) << msg;
  msg = message_of([&] { s.run({ir::TensorData::make(ir::DType::f32, {2, 4, 4})}); });
  EXPECT_NE(msg.find("expects float32 [N,2,4,4]"), std::string::npos) << msg;
  msg = message_of([&] { s.run({}); });
  EXPECT_NE(msg.find("takes 1 input(s), got 0"), std::string::npos) << msg;
}

TEST(SessionErrors, AnyBatchSizeRuns) {
  Session s(load(model_with(13, {node("Relu", {"x"}, {"y"})})));
  for (int64_t batch : {1, 7, 2}) {
    auto in = ir::TensorData::make(ir::DType::f32, {batch, 2, 4, 4});
    for (int64_t i = 0; i < in.count(); ++i) in.as<float>()[i] = float(i % 5) - 2.0f;
    auto out = s.run({in});
    ASSERT_EQ(out[0].dims, (ir::Dims{batch, 2, 4, 4}));
    for (int64_t i = 0; i < in.count(); ++i) ASSERT_EQ(out[0].as<float>()[i], std::max(0.0f, in.as<float>()[i]));
  }
}

// ---- importers: defaults and opset normalisation ----

TEST(Importers, ConvDefaults) {
  auto m = model_with(13, {node("Conv", {"x", "w"}, {"y"})});
  *m.mutable_graph()->add_initializer() = float_tensor("w", {2, 2, 1, 1}, 1.0f);
  auto g = load(m);
  const auto& c = only_node(g, "Conv");
  EXPECT_EQ(c.attrs.i("group"), 1);
  EXPECT_EQ(c.attrs.s("auto_pad"), "NOTSET");
  EXPECT_TRUE(c.attrs.ints("pads").empty());
  EXPECT_TRUE(c.attrs.ints("strides").empty());
}

TEST(Importers, GemmAndPoolDefaults) {
  auto mp = node("MaxPool", {"x"}, {"p"});
  add_ints_attr(mp, "kernel_shape", {2, 2});
  auto g = load(model_with(13, {mp, node("Flatten", {"p"}, {"f"}), node("Gemm", {"f", "f"}, {"y"})}));
  const auto& gemm = only_node(g, "Gemm");
  EXPECT_EQ(gemm.attrs.f("alpha"), 1.0f);
  EXPECT_EQ(gemm.attrs.f("beta"), 1.0f);
  EXPECT_EQ(gemm.attrs.i("transA"), 0);
  EXPECT_EQ(gemm.attrs.i("transB"), 0);
  const auto& pool = only_node(g, "MaxPool");
  EXPECT_EQ(pool.attrs.i("ceil_mode"), 0);
  EXPECT_EQ(pool.attrs.i("storage_order"), 0);
  EXPECT_EQ(only_node(g, "Flatten").attrs.i("axis"), 1);
}

TEST(Importers, ClipBoundsMoveFromAttributesToInputsBeforeOpset11) {
  auto clip = node("Clip", {"x"}, {"y"});
  add_float_attr(clip, "min", 0.0f);
  add_float_attr(clip, "max", 6.0f);
  auto g = load(model_with(10, {clip}));
  const auto& c = only_node(g, "Clip");
  ASSERT_EQ(c.inputs.size(), 3u);
  EXPECT_EQ(g.value(c.inputs[1]).constant->as<float>()[0], 0.0f);
  EXPECT_EQ(g.value(c.inputs[2]).constant->as<float>()[0], 6.0f);
  EXPECT_FALSE(c.attrs.has("min"));

  // Opset 10 default bounds are +-inf: a Clip with no attributes passes values through.
  Session s(load(model_with(10, {node("Clip", {"x"}, {"y"})})));
  auto in = ir::TensorData::make(ir::DType::f32, {1, 2, 4, 4});
  in.as<float>()[0] = -1e30f;
  in.as<float>()[1] = 1e30f;
  auto out = s.run({in});
  EXPECT_EQ(out[0].as<float>()[0], -1e30f);
  EXPECT_EQ(out[0].as<float>()[1], 1e30f);
}

TEST(Importers, ClipAttributesAreRejectedFromOpset11) {
  auto clip = node("Clip", {"x"}, {"y"});
  add_float_attr(clip, "min", 0.0f);
  // From opset 11 min/max are inputs; an attribute is ignored by the spec, and octet drops it.
  auto g = load(model_with(11, {clip}));
  EXPECT_EQ(only_node(g, "Clip").inputs.size(), 1u);
}

TEST(Importers, SoftmaxAxisDefaultDependsOnOpset) {
  auto g11 = load(model_with(11, {node("Softmax", {"x"}, {"y"})}));
  EXPECT_EQ(only_node(g11, "Softmax").attrs.i("axis"), 1);
  EXPECT_EQ(only_node(g11, "Softmax").attrs.i("coerce_2d"), 1);
  auto g13 = load(model_with(13, {node("Softmax", {"x"}, {"y"})}));
  EXPECT_EQ(only_node(g13, "Softmax").attrs.i("axis"), -1);
  EXPECT_EQ(only_node(g13, "Softmax").attrs.i("coerce_2d"), 0);
}

TEST(Importers, UnsqueezeAxesAttributeBecomesInput) {
  auto u = node("Unsqueeze", {"x"}, {"y"});
  add_ints_attr(u, "axes", {0});
  auto g = load(model_with(11, {u}));
  const auto& n = only_node(g, "Unsqueeze");
  ASSERT_EQ(n.inputs.size(), 2u);
  EXPECT_EQ(g.value(n.inputs[1]).constant->to_i64(), std::vector<int64_t>{0});
  Session s(load(model_with(11, {u})));
  auto out = s.run({ir::TensorData::make(ir::DType::f32, {3, 2, 4, 4})});
  EXPECT_EQ(out[0].dims, (ir::Dims{1, 3, 2, 4, 4}));
}

TEST(Importers, ReduceMeanAxesAttribute) {
  auto r = node("ReduceMean", {"x"}, {"y"});
  add_ints_attr(r, "axes", {2, 3});
  add_int_attr(r, "keepdims", 0);
  Session s(load(model_with(13, {r})));
  auto in = ir::TensorData::make(ir::DType::f32, {1, 2, 4, 4});
  for (int64_t i = 0; i < in.count(); ++i) in.as<float>()[i] = i < 16 ? 1.0f : 3.0f;
  auto out = s.run({in});
  ASSERT_EQ(out[0].dims, (ir::Dims{1, 2}));
  EXPECT_FLOAT_EQ(out[0].as<float>()[0], 1.0f);
  EXPECT_FLOAT_EQ(out[0].as<float>()[1], 3.0f);
}

TEST(Importers, PadAttributesBecomeInputsBeforeOpset11) {
  auto p = node("Pad", {"x"}, {"y"});
  add_ints_attr(p, "pads", {0, 0, 1, 1, 0, 0, 1, 1});
  add_float_attr(p, "value", 7.0f);
  Session s(load(model_with(2, {p})));
  auto out = s.run({ir::TensorData::make(ir::DType::f32, {1, 2, 4, 4})});
  ASSERT_EQ(out[0].dims, (ir::Dims{1, 2, 6, 6}));
  EXPECT_EQ(out[0].as<float>()[0], 7.0f);
  EXPECT_EQ(out[0].as<float>()[7], 0.0f);  // row 1, column 1: the first input element
}

TEST(Importers, ConstantValueFloatBecomesTensor) {
  auto c = node("Constant", {}, {"k"});
  add_float_attr(c, "value_float", 2.5f);
  auto g = load(model_with(13, {c, node("Mul", {"x", "k"}, {"y"})}));
  EXPECT_EQ(only_node(g, "Constant").attrs.t("value").as<float>()[0], 2.5f);
  Session s(std::move(g));
  auto in = ir::TensorData::make(ir::DType::f32, {1, 2, 4, 4});
  in.as<float>()[3] = 2.0f;
  EXPECT_EQ(s.run({in})[0].as<float>()[3], 5.0f);
}

// ---- the CLI turns every error into one line and a non-zero exit ----

using testing::run_cli;

TEST(Cli, ErrorsAreOneLineWithNonZeroExit) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("octet_cli_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(dir / name, std::ios::binary) << bytes;
    return (dir / name).string();
  };
  std::string good = model_with(13, {node("Relu", {"x"}, {"y"})}).SerializeAsString();
  std::vector<std::string> bad = {
      write("truncated.onnx", good.substr(0, good.size() / 2)),
      write("text.onnx", "not a model\n"),
      write("acosh.onnx", model_with(13, {node("Acosh", {"x"}, {"y"})}).SerializeAsString()),
  };
  for (const auto& path : bad) {
    for (const std::string& cmd : {"info " + path, "run " + path + " --random"}) {
      auto r = run_cli(cmd, true);
      EXPECT_EQ(r.status, 1) << cmd << "\n" << r.output;
      EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << cmd << "\n" << r.output;
      EXPECT_EQ(r.output.rfind("octet: error: ", 0), 0u) << r.output;
    }
  }
  auto missing = run_cli("info " + (dir / "missing.onnx").string(), true);
  EXPECT_NE(missing.status, 0) << missing.output;
  auto ok = run_cli("run " + write("relu.onnx", good) + " --random --batch 2", true);
  EXPECT_EQ(ok.status, 0) << ok.output;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace octet
