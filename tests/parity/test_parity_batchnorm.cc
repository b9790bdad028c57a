// A BatchNormalization no conv absorbs (DenseNet's pre-activations, a BN on a graph input or a
// Concat) is bit-identical to ONNX Runtime's at every ISA level: octet computes its scale and
// shift in float and applies a multiply then an add as ORT does, so the QuantizeLinear after a
// float BN in an INT8 model sees the same values and writes the same codes.
#include <gtest/gtest.h>

#include <cstring>

#include "engine/session.h"
#include "tests/parity/parity_fixture.h"
#include "io/tensor_io.h"

namespace octet::parity {
namespace batchnorm_parity {

using testing::ElemType;
using testing::OnnxBuilder;

// Runs `model` in octet at every level this CPU has and in ORT; every output must be
// bit-identical.
void expect_identical_at_every_level(const OnnxBuilder& model, const std::string& name, const ir::Dims& dims) {
  auto inputs = random_inputs({dims}, dims[0], 7);
  for (float& v : std::span(const_cast<float*>(inputs[0].as<float>()), size_t(inputs[0].count()))) v *= 3.0f;
  expect_ort_bytes_at_every_level(model, name, {{"x", inputs[0]}});
}

std::string batchnorm(OnnxBuilder& b, const std::string& x, int64_t c) {
  return b.node("BatchNormalization",
                {x, b.random_uniform_init("", {c}, 0.5f, 2.0f), b.random_normal_init("", {c}),
                 b.random_normal_init("", {c}), b.random_uniform_init("", {c}, 0.01f, 2.0f)},
                {{"epsilon", 1e-3f}});
}

TEST(BatchNormParity, Fp32IsBitIdenticalToOrt) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  const ir::Dims dims{3, 37, 9, 11};  // channels past every vector width, odd spatial sizes
  auto x = b.input("x", {-1, 37, 9, 11});
  b.output(batchnorm(b, x, 37));
  b.output(b.node("Relu", {batchnorm(b, x, 37)}));
  expect_identical_at_every_level(b, "batchnorm_fp32", dims);
}

// DequantizeLinear -> BatchNormalization -> QuantizeLinear: the codes after a float BN.
TEST(BatchNormParity, Int8CodesAfterAFloatBatchNormAreOrts) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  const ir::Dims dims{2, 24, 7, 5};
  auto x = b.input("x", {-1, 24, 7, 5});
  auto scale_in = b.initializer("s_in", {}, {0.05f});
  auto zp = b.initializer("zp", testing::TensorValue::u8({}, {128}));
  auto q = b.node("QuantizeLinear", {x, scale_in, zp});
  auto dq = b.node("DequantizeLinear", {q, scale_in, zp});
  auto y = b.node("QuantizeLinear", {batchnorm(b, dq, 24), b.initializer("s_out", {}, {0.04f}), zp});
  b.output(y, ElemType::u8);
  expect_identical_at_every_level(b, "batchnorm_qdq", dims);
}

// Parameters fed as graph inputs: the scale and shift come from each run's values, so two runs
// with different parameters through one session both match ORT.
TEST(BatchNormParity, ParametersFromGraphInputsAreReadEachRun) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  const int64_t c = 19;
  auto x = b.input("x", {-1, c, 5, 6});
  std::vector<std::string> params{"x"};
  for (const char* name : {"scale", "bias", "mean", "var"}) params.push_back(b.input(name, {c}));
  b.output(b.node("BatchNormalization", params, {{"epsilon", 1e-3f}}));
  ScratchDir dir;
  const std::string path = (dir.path() / "batchnorm_inputs.onnx").string();
  b.save(path);
  Session session = Session::load(path, SessionOptions{});
  for (uint32_t seed : {3u, 11u}) {
    auto inputs = random_inputs({{2, c, 5, 6}, {c}, {c}, {c}, {c}}, 2, seed);
    for (float& v : std::span(const_cast<float*>(inputs[4].as<float>()), size_t(c))) v = v * v + 0.01f;  // var >= 0
    std::map<std::string, npy::Array> feeds;
    for (size_t i = 0; i < params.size(); ++i) feeds[params[i]] = to_npy(inputs[i]);
    const auto theirs = testing::run_ort(path, feeds);
    const auto mine = session.run(inputs);
    EXPECT_EQ(differing_bytes(mine[0], theirs.at(session.outputs()[0].name)), 0) << "seed " << seed;
  }
}

}  // namespace batchnorm_parity
}  // namespace octet::parity
