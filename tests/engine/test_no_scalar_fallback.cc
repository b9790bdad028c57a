// The layer patterns of the torchvision zoo (tools/zoo/export.py), one small graph each, built
// with the ONNX protobuf API: at every SIMD level this CPU runs from avx2 up, no plan step may
// run a scalar reference kernel (PlanStep::scalar), and the output must equal the scalar
// plan's within FP32 rounding. When a new op or fusion makes one of these fall back, the
// test names the step and its kernel.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "engine/session.h"
#include "kernels/isa.h"
#include "loader/onnx_loader.h"
#include "tests/util/onnx_builder.h"
#include "tests/util/skip_reasons.h"

namespace octet {
namespace {

using testing::OnnxBuilder;
using testing::TensorValue;

struct Pattern {
  const char* name;
  std::function<void(OnnxBuilder&)> build;  // declares input "x" and the outputs
  ir::Dims input;                           // at batch 2
};

std::string conv(OnnxBuilder& b, const std::string& x, int in_c, int out_c, int k, int stride = 1, int group = 1) {
  const int pad = k / 2;
  return b.node("Conv", {x, b.random_normal_init("", {out_c, in_c / group, k, k}, 0.0f, 0.3f),
                         b.random_normal_init("", {out_c}, 0.0f, 0.1f)},
                {{"kernel_shape", {k, k}}, {"pads", {pad, pad, pad, pad}}, {"strides", {stride, stride}},
                 {"group", group}});
}

std::vector<Pattern> patterns() {
  return {
      {"depthwise 5x5 stride 2 + HardSwish",
       [](OnnxBuilder& b) {
         auto x = b.input("x", {-1, 40, 14, 14});
         b.output(b.node("HardSwish", {conv(b, x, 40, 40, 5, 2, 40)}));
       },
       {2, 40, 14, 14}},
      {"depthwise 7x7 + HardSigmoid",
       [](OnnxBuilder& b) {
         auto x = b.input("x", {-1, 24, 9, 9});
         b.output(b.node("HardSigmoid", {conv(b, x, 24, 24, 7, 1, 24)}, {{"alpha", 0.2f}, {"beta", 0.5f}}));
       },
       {2, 24, 9, 9}},
      {"MobileNetV3 squeeze-excitation (HardSigmoid gate)",
       [](OnnxBuilder& b) {
         auto x = b.input("x", {-1, 48, 7, 7});
         auto r = b.node("Relu", {conv(b, b.node("GlobalAveragePool", {x}), 48, 16, 1)});
         auto g = b.node("HardSigmoid", {conv(b, r, 16, 48, 1)}, {{"alpha", 1.0f / 6.0f}, {"beta", 0.5f}});
         b.output(b.node("Mul", {g, x}));
       },
       {2, 48, 7, 7}},
      {"SqueezeNet fire module (Concat of two expand convs)",
       [](OnnxBuilder& b) {
         auto x = b.input("x", {-1, 64, 13, 13});
         auto s = b.node("Relu", {conv(b, x, 64, 16, 1)});
         auto e1 = b.node("Relu", {conv(b, s, 16, 64, 1)});
         auto e3 = b.node("Relu", {conv(b, s, 16, 64, 3)});
         b.output(b.node("Concat", {e1, e3}, {{"axis", 1}}));
       },
       {2, 64, 13, 13}},
      {"ShuffleNetV2 channel shuffle and chunk",
       [](OnnxBuilder& b) {
         auto x = b.input("x", {-1, 48, 8, 8});
         auto y = conv(b, x, 48, 48, 1);
         auto r = b.node("Reshape", {y, b.initializer_i64("s5", {5}, {-1, 2, 24, 8, 8})});
         auto t = b.node("Transpose", {r}, {{"perm", {0, 2, 1, 3, 4}}});
         auto z = b.node("Reshape", {t, b.initializer_i64("s4", {4}, {-1, 48, 8, 8})});
         auto halves = b.node_multi("Split", {z, b.initializer_i64("sp", {2}, {24, 24})}, 2, {{"axis", 1}});
         b.output(b.node("Relu", {conv(b, halves[1], 24, 24, 3, 1, 24)}));
         b.output(halves[0]);
       },
       {2, 48, 8, 8}},
      {"EfficientNet SiLU (Sigmoid * x)",
       [](OnnxBuilder& b) {
         auto x = b.input("x", {-1, 16, 10, 10});
         auto y = conv(b, x, 16, 32, 3);
         b.output(b.node("Mul", {y, b.node("Sigmoid", {y})}));
       },
       {2, 16, 10, 10}},
      {"ceil-mode MaxPool 3x3 stride 2",
       [](OnnxBuilder& b) {
         auto x = b.input("x", {-1, 32, 15, 15});
         b.output(b.node("MaxPool", {conv(b, x, 32, 32, 1)},
                         {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"ceil_mode", 1}}));
       },
       {2, 32, 15, 15}},
      {"padded MaxPool 3x3 stride 2 (ResNet stem)",
       [](OnnxBuilder& b) {
         auto x = b.input("x", {-1, 16, 16, 16});
         b.output(b.node("MaxPool", {x}, {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}}));
       },
       {2, 16, 16, 16}},
      {"ShuffleNetV2 head (ReduceMean over H and W, then the classifier)",
       [](OnnxBuilder& b) {
         auto x = b.input("x", {-1, 24, 7, 7});
         auto m = b.node("ReduceMean", {b.node("Relu", {conv(b, x, 24, 64, 1)})}, {{"axes", {2, 3}}, {"keepdims", 0}});
         b.output(b.node("Gemm", {m, b.random_normal_init("fc", {10, 64}, 0.0f, 0.3f), b.random_normal_init("fb", {10})},
                         {{"transB", 1}}));
       },
       {2, 24, 7, 7}},
      {"ConvNeXt block (permute to channels-last and back, layer scale, residual Add) at 4x4",
       [](OnnxBuilder& b) {
         auto x = b.input("x", {-1, 32, 4, 4});
         auto t = b.node("Transpose", {conv(b, x, 32, 32, 7, 1, 32)}, {{"perm", {0, 2, 3, 1}}});
         auto h = b.node("Relu", {b.node("MatMul", {t, b.random_normal_init("w1", {32, 64}, 0.0f, 0.2f)})});
         auto m = b.node("MatMul", {h, b.random_normal_init("w2", {64, 32}, 0.0f, 0.2f)});
         auto back = b.node("Transpose", {m}, {{"perm", {0, 3, 1, 2}}});
         auto scaled = b.node("Mul", {back, b.random_normal_init("gamma", {32, 1, 1}, 0.0f, 0.5f)});
         b.output(b.node("Add", {scaled, x}));
       },
       {2, 32, 4, 4}},
      {"512-channel 3x3 conv at 4x4",
       [](OnnxBuilder& b) {
         auto x = b.input("x", {-1, 512, 4, 4});
         b.output(b.node("Relu", {conv(b, x, 512, 512, 3)}));
       },
       {2, 512, 4, 4}},
  };
}

ir::Graph graph_of(const Pattern& p) {
  OnnxBuilder b(14, "pattern", 5);
  p.build(b);
  return loader::load_onnx_bytes(b.serialize(), p.name);
}

std::vector<kernels::Isa> simd_levels() {
  std::vector<kernels::Isa> out;
  for (kernels::Isa isa : kernels::runnable_isas())
    if (isa != kernels::Isa::scalar) out.push_back(isa);
  return out;
}

TEST(NoScalarFallback, EveryZooPatternRunsSimdKernelsAtEveryLevel) {
  const auto levels = simd_levels();
  if (levels.empty()) GTEST_SKIP() << testing::kIsaNotOnCpu << "this CPU runs no SIMD level octet has kernels for";
  for (const Pattern& p : patterns()) {
    SessionOptions scalar_options;
    scalar_options.isa = kernels::Isa::scalar;
    Session reference(graph_of(p), scalar_options);
    const auto x = ir::TensorData::f32(p.input, testing::random_normal(size_t(ir::element_count(p.input)), 9));
    const auto want = reference.run({x});
    for (kernels::Isa isa : levels) {
      SessionOptions o;
      o.isa = isa;
      Session session(graph_of(p), o);
      const Plan& plan = session.plan_for(std::vector<ir::Dims>{p.input});
      for (const PlanStep& s : plan.steps())
        EXPECT_FALSE(s.scalar()) << p.name << " at " << kernels::isa_name(isa) << ": step " << s.node << " runs "
                                 << s.kernel;
      const auto got = session.run({x});
      ASSERT_EQ(got.size(), want.size());
      for (size_t o_i = 0; o_i < got.size(); ++o_i) {
        ASSERT_EQ(got[o_i].dims, want[o_i].dims) << p.name;
        float scale = 0;
        for (int64_t i = 0; i < want[o_i].count(); ++i) scale = std::max(scale, std::fabs(want[o_i].as<float>()[i]));
        for (int64_t i = 0; i < got[o_i].count(); ++i)
          ASSERT_NEAR(got[o_i].as<float>()[i], want[o_i].as<float>()[i], 2e-5f * scale + 1e-6f)
              << p.name << " at " << kernels::isa_name(isa) << ", output " << o_i << " element " << i;
      }
    }
  }
}

}  // namespace
}  // namespace octet
