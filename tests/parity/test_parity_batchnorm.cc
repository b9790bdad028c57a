// A BatchNormalization no conv absorbs (DenseNet's pre-activations, a BN on a graph input or a
// Concat) is bit-identical to ONNX Runtime's at every ISA level: octet computes its scale and
// shift in float and applies a multiply then an add as ORT does, so the QuantizeLinear after a
// float BN in an INT8 model sees the same values and writes the same codes.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <utility>
#include <vector>

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

// ORT's NCHWc layout pass (8 floats with AVX2, 16 with AVX-512F) rewrites a BN whose input it
// holds blocked into a 1x1 depthwise conv of weight scale / sqrt(var + eps): one rounding fewer
// than its plain kernel's, so about a sixth of the outputs move by an ulp. The loader marks which
// BNs (loader/ort_nchwc.h); each output below goes one way or the other, checked against ORT.
std::string maxpool(OnnxBuilder& b, const std::string& x) {
  return b.node("MaxPool", {x}, {{"kernel_shape", {3, 3}}, {"pads", {1, 1, 1, 1}}});
}

std::map<std::string, ir::TensorData> scaled_inputs(const std::vector<std::pair<std::string, ir::Dims>>& specs) {
  std::vector<ir::Dims> dims;
  for (const auto& [name, d] : specs) dims.push_back(d);
  auto inputs = random_inputs(dims, dims[0][0], 7);
  std::map<std::string, ir::TensorData> feeds;
  for (size_t i = 0; i < specs.size(); ++i) {
    for (float& v : std::span(const_cast<float*>(inputs[i].as<float>()), size_t(inputs[i].count()))) v *= 3.0f;
    feeds[specs[i].first] = inputs[i];
  }
  return feeds;
}

TEST(BatchNormParity, AfterWhatOrtHoldsBlockedRoundsAsItsNchwcConv) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 48, 9, 11});  // a multiple of both blocks
  auto x24 = b.input("x24", {-1, 24, 9, 11});  // of 8 only
  auto x1 = b.input("x1", {-1, 1, 9, 11});
  const auto pooled = maxpool(b, x);
  b.output(batchnorm(b, pooled, 48));
  b.output(batchnorm(b, b.node("Concat", {pooled}, {{"axis", int64_t{1}}}), 48));  // DenseNet's first layer
  b.output(batchnorm(b, b.node("Concat", {maxpool(b, x24), maxpool(b, x24)}, {{"axis", int64_t{1}}}), 48));
  // A float conv of any channel count (1x1 on one channel, so that both engines write x * w):
  // its Relu keeps the layout, and ORT folds no BN across it.
  const auto conv = b.node("Conv", {x1, b.random_normal_init("", {20, 1, 1, 1})});
  b.output(batchnorm(b, b.node("Relu", {conv}), 20));
  // A conv with a second reader (here the graph's output): neither engine folds the BN into it.
  const auto shared = b.node("Conv", {x1, b.random_normal_init("", {20, 1, 1, 1})});
  b.output(shared);
  b.output(batchnorm(b, shared, 20));
  b.output(batchnorm(b, b.node("Add", {pooled, maxpool(b, x)}), 48));
  b.output(batchnorm(b, b.node("Mul", {pooled, pooled}), 48));
  b.output(batchnorm(b, b.node("Identity", {pooled}), 48));  // ORT drops it first
  b.output(b.node("BatchNormalization",  // no epsilon: ORT's graph resolution writes the default in
                  {pooled, b.random_uniform_init("", {48}, 0.5f, 2.0f), b.random_normal_init("", {48}),
                   b.random_normal_init("", {48}), b.random_uniform_init("", {48}, 0.01f, 2.0f)}));
  expect_ort_bytes_at_every_level(b, "batchnorm_nchwc",
                                  scaled_inputs({{"x", {2, 48, 9, 11}}, {"x24", {2, 24, 9, 11}}, {"x1", {2, 1, 9, 11}}}));
}

TEST(BatchNormParity, WhereOrtKeepsThePlainLayoutItsPlainKernelRounds) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 48, 9, 11});
  auto x20 = b.input("x20", {-1, 20, 9, 11});  // a multiple of neither block: the pool stays plain
  const auto pooled = maxpool(b, x);
  b.output(batchnorm(b, maxpool(b, x20), 20));
  b.output(batchnorm(b, b.node("Concat", {pooled, x}, {{"axis", int64_t{1}}}), 96));  // one input plain
  b.output(batchnorm(b, b.node("Concat", {pooled}, {{"axis", int64_t{-3}}}), 48));  // ORT wants axis 1
  b.output(batchnorm(b, b.node("Neg", {pooled}), 48));  // an op the pass does not take
  b.output(batchnorm(b, b.node("Add", {pooled, b.random_normal_init("", {48, 1, 1})}), 48));  // a constant operand
  expect_ort_bytes_at_every_level(b, "batchnorm_plain", scaled_inputs({{"x", {2, 48, 9, 11}}, {"x20", {2, 20, 9, 11}}}));
}

// An activation after a standalone BN runs in the BN's step (passes::fuse_activations), applied
// chunk by chunk after the multiply and the add: a map of many chunks, DenseNet's pre-activation
// BN + Relu among them, still bit-identical to ORT, with no step left for the activations.
TEST(BatchNormParity, AnActivationAfterItRunsInItsStepChunkByChunk) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  const ir::Dims dims{2, 37, 40, 41};  // 1640 pixels of 37 channels: tens of chunks, a short last one
  auto x = b.input("x", {-1, 37, 40, 41});
  b.output(b.node("Relu", {batchnorm(b, x, 37)}));
  b.output(b.node("Clip", {batchnorm(b, x, 37), b.initializer("lo", {}, {-0.5f}), b.initializer("hi", {}, {1.5f})}));
  b.output(b.node("LeakyRelu", {batchnorm(b, x, 37)}, {{"alpha", 0.1f}}));
  const auto pooled = maxpool(b, x);  // one ORT rewrites into its NCHWc conv, with the Relu after
  b.output(b.node("Relu", {batchnorm(b, b.node("Concat", {pooled}, {{"axis", int64_t{1}}}), 37)}));
  expect_ort_bytes_at_every_level(b, "batchnorm_act", scaled_inputs({{"x", dims}}));
  ScratchDir dir;
  const std::string path = (dir.path() / "batchnorm_act.onnx").string();
  b.save(path);
  for (kernels::Isa isa : kernels::runnable_isas()) {
    SessionOptions o;
    o.isa = isa;
    Session session = Session::load(path, o);
    int batchnorms = 0;
    for (const PlanStep& s : session.plan_for(std::vector<ir::Dims>{dims}).steps()) {
      EXPECT_TRUE(s.op != "Relu" && s.op != "Clip" && s.op != "LeakyRelu") << s.node << " left apart at " << kernels::isa_name(isa);
      if (s.op != "BatchNormalization") continue;
      ++batchnorms;
      if (isa != kernels::Isa::scalar) {
        EXPECT_FALSE(s.scalar()) << s.node << " runs " << s.kernel;
      }
    }
    EXPECT_EQ(batchnorms, 4) << kernels::isa_name(isa);
  }
}

}  // namespace batchnorm_parity
}  // namespace octet::parity
