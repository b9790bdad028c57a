// The ONNX Runtime oracle end to end: a model written here with the ONNX protobuf API (octet's
// loader is not involved), run through tools/ort/ort_run.mjs, outputs checked exactly.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "tests/util/ort_oracle.h"

namespace fs = std::filesystem;
using octet::npy::Array;
using octet::npy::DType;
using octet::testing::OrtOptions;
using octet::testing::run_ort;

namespace {

#define SKIP_WITHOUT_ORT()                                                                   \
  if (std::string why = octet::testing::ort_unavailable_reason(); !why.empty()) GTEST_SKIP() << why

using Dim = std::variant<int64_t, std::string>;  // a size or a symbolic name

void set_type(onnx::ValueInfoProto* vi, const std::string& name, int elem_type, const std::vector<Dim>& dims) {
  vi->set_name(name);
  auto* t = vi->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem_type);
  auto* shape = t->mutable_shape();
  for (const Dim& d : dims) {
    if (std::holds_alternative<int64_t>(d)) shape->add_dim()->set_dim_value(std::get<int64_t>(d));
    else shape->add_dim()->set_dim_param(std::get<std::string>(d));
  }
}

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, std::vector<std::string> in,
                          std::vector<std::string> out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(op + "_" + std::to_string(g->node_size()));
  for (auto& s : in) n->add_input(s);
  for (auto& s : out) n->add_output(s);
  return n;
}

// relu/out = Relu(x:0 + b); gt = x:0 > b; idx = Cast<int64>(relu/out)   with x:0 [N, 3], b [3]
// Names with ':' and '/' exercise the runner's file-name sanitizing.
std::string write_oracle_model(const fs::path& dir) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("octet-tests");
  auto* opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("add_relu");
  set_type(g->add_input(), "x:0", onnx::TensorProto::FLOAT, {std::string("N"), int64_t{3}});
  set_type(g->add_input(), "b", onnx::TensorProto::FLOAT, {int64_t{3}});
  add_node(g, "Add", {"x:0", "b"}, {"sum"});
  add_node(g, "Relu", {"sum"}, {"relu/out"});
  add_node(g, "Greater", {"x:0", "b"}, {"gt"});
  auto* cast = add_node(g, "Cast", {"relu/out"}, {"idx"});
  auto* to = cast->add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(onnx::TensorProto::INT64);
  set_type(g->add_output(), "relu/out", onnx::TensorProto::FLOAT, {std::string("N"), int64_t{3}});
  set_type(g->add_output(), "gt", onnx::TensorProto::BOOL, {std::string("N"), int64_t{3}});
  set_type(g->add_output(), "idx", onnx::TensorProto::INT64, {std::string("N"), int64_t{3}});

  const fs::path path = dir / "add_relu.onnx";
  std::ofstream out(path, std::ios::binary);
  if (!m.SerializeToOstream(&out)) throw std::runtime_error("cannot write " + path.string());
  return path.string();
}

class OrtOracle : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "octet-oracle-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    model_ = write_oracle_model(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
  std::string model_;
};

TEST_F(OrtOracle, RunsAModelAndReturnsEveryOutputExactly) {
  SKIP_WITHOUT_ORT();
  const auto out = run_ort(model_, {{"x:0", octet::npy::make_f32({2, 3}, {1, -2, 3, 4, -5, 0.25f})},
                                    {"b", octet::npy::make_f32({3}, {0.5f, 1, -1})}});
  ASSERT_EQ(out.size(), 3u);

  const Array& relu = out.at("relu/out");
  ASSERT_EQ(relu.dtype, DType::f32);
  EXPECT_EQ(relu.shape, (std::vector<int64_t>{2, 3}));
  const std::vector<float> relu_want = {1.5f, 0, 2, 4.5f, 0, 0};
  EXPECT_EQ(std::vector<float>(relu.as<float>(), relu.as<float>() + 6), relu_want);

  const Array& gt = out.at("gt");
  ASSERT_EQ(gt.dtype, DType::b8);
  const std::vector<uint8_t> gt_want = {1, 0, 1, 1, 0, 1};
  EXPECT_EQ(std::vector<uint8_t>(gt.as<uint8_t>(), gt.as<uint8_t>() + 6), gt_want);

  const Array& idx = out.at("idx");
  ASSERT_EQ(idx.dtype, DType::s64);
  const std::vector<int64_t> idx_want = {1, 0, 2, 4, 0, 0};
  EXPECT_EQ(std::vector<int64_t>(idx.as<int64_t>(), idx.as<int64_t>() + 6), idx_want);

  std::cout << "[ INFO     ] ONNX Runtime " << octet::testing::ort_version() << "\n";
}

TEST_F(OrtOracle, OptionsDoNotChangeTheResult) {
  SKIP_WITHOUT_ORT();
  std::map<std::string, Array> in = {{"x:0", octet::npy::make_f32({1, 3}, {-1, 2, 3})},
                                     {"b", octet::npy::make_f32({3}, {0, 0, -4})}};
  const auto a = run_ort(model_, in);
  const auto b = run_ort(model_, in, OrtOptions{.threads = 2, .graph_opt = "disabled"});
  for (const auto& [name, arr] : a) {
    EXPECT_EQ(arr.shape, b.at(name).shape) << name;
    EXPECT_EQ(arr.data, b.at(name).data) << name;
  }
}

TEST_F(OrtOracle, ZeroSizeBatch) {
  SKIP_WITHOUT_ORT();
  const auto out = run_ort(model_, {{"x:0", octet::npy::make(DType::f32, {0, 3})},
                                    {"b", octet::npy::make_f32({3}, {1, 2, 3})}});
  EXPECT_EQ(out.at("relu/out").shape, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(out.at("idx").count(), 0);
}

TEST_F(OrtOracle, FailuresCarryOrtsMessage) {
  SKIP_WITHOUT_ORT();
  // run_ort works under $TMPDIR: point it at a folder of ours to see that failures clean up.
  const fs::path tmp = dir_ / "tmp";
  fs::create_directory(tmp);
  ::setenv("TMPDIR", tmp.c_str(), 1);
  try {
    run_ort(model_, {{"x:0", octet::npy::make(DType::f64, {1, 3})}, {"b", octet::npy::make(DType::f32, {3})}});
    ADD_FAILURE() << "a float64 input to a float32 model ran";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("tensor(double)"), std::string::npos) << e.what();
  }
  try {
    run_ort(model_, {{"x:0", octet::npy::make(DType::f32, {1, 3})}});
    ADD_FAILURE() << "ran without input b";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no --input given for b"), std::string::npos) << e.what();
  }
  EXPECT_THROW(run_ort((dir_ / "missing.onnx").string(), {}), std::runtime_error);
  EXPECT_THROW(run_ort(model_, {{"a=b", octet::npy::make(DType::f32, {3})}}), std::invalid_argument);

  for (const auto& e : fs::recursive_directory_iterator(tmp)) ADD_FAILURE() << "a failed run left " << e.path();
  ::unsetenv("TMPDIR");
}

}  // namespace
