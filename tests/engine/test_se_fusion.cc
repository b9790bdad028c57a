// passes::fuse_squeeze_excitation and the SqueezeExcite op: the block
//   x -> GlobalAveragePool -> Conv 1x1 + Relu -> Conv 1x1 + Sigmoid -> Mul(x, gate)
// becomes one node, and the fused node computes what the four ops computed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "engine/session.h"
#include "kernels/isa.h"
#include "loader/onnx_loader.h"
#include "tests/util/onnx_builder.h"
#include "tests/util/skip_reasons.h"

namespace octet {
namespace {

using testing::OnnxBuilder;

// An SE block on [batch, c, h, w]; `gate_first` puts the gate as Mul's first input;
// `extra_reader` lets the pooled vector escape as a second output (fusion must then not fire).
ir::Graph se_block(int c, int mid, int hw, bool gate_first, bool extra_reader, const char* gate_act = "Sigmoid") {
  OnnxBuilder b(13, "se", 7);
  auto x = b.input("x", {-1, c, hw, hw});
  auto pooled = b.node("GlobalAveragePool", {x});
  auto r = b.node("Relu", {b.node("Conv", {pooled, b.random_normal_init("w1", {mid, c, 1, 1}),
                                           b.random_normal_init("b1", {mid})})});
  auto s = b.node(gate_act, {b.node("Conv", {r, b.random_normal_init("w2", {c, mid, 1, 1}),
                                              b.random_normal_init("b2", {c})})});
  b.output(gate_first ? b.node("Mul", {s, x}) : b.node("Mul", {x, s}));
  if (extra_reader) b.output(pooled);
  return loader::load_onnx_bytes(b.serialize(), "se");
}

int fused_count(const Session& s) {
  for (const auto& p : s.pass_report())
    if (p.pass == "fuse squeeze-excitation blocks") return p.changed;
  return -1;
}

void expect_fused_matches_unfused(int c, int mid, int hw, int batch, bool gate_first, const char* gate_act) {
  SessionOptions unfused;
  unfused.passes.fuse_squeeze_excitation = false;
  Session fused_session(se_block(c, mid, hw, gate_first, false, gate_act));
  Session plain_session(se_block(c, mid, hw, gate_first, false, gate_act), unfused);
  ASSERT_EQ(fused_count(fused_session), 1);
  ASSERT_EQ(fused_count(plain_session), -1);
  ir::Dims dims = {batch, c, hw, hw};
  auto values = testing::random_normal(size_t(batch) * c * hw * hw, 3);
  auto in = ir::TensorData::f32(dims, values);
  auto a = fused_session.run({in});
  auto b = plain_session.run({in});
  ASSERT_EQ(a[0].dims, b[0].dims);
  for (int64_t i = 0; i < a[0].count(); ++i) {
    const float ref = b[0].as<float>()[i];
    ASSERT_NEAR(a[0].as<float>()[i], ref, 1e-5f * std::fabs(ref) + 1e-6f) << "at " << i;
  }
}

TEST(SqueezeExcite, FusedBlockMatchesTheFourOps) {
  expect_fused_matches_unfused(48, 12, 28, 1, false, "Sigmoid");
  expect_fused_matches_unfused(17, 5, 3, 3, true, "Sigmoid");  // odd channels, gate first, batch 3
  expect_fused_matches_unfused(72, 18, 1, 2, false, "HardSigmoid");
  expect_fused_matches_unfused(960, 240, 7, 2, false, "HardSigmoid");  // MobileNetV3-Large's last blocks
}

// The fused block's two fully connected layers run on the SIMD GEMM at every level above
// scalar (the kernel name says which), and agree with the reference loops of --isa scalar.
TEST(SqueezeExcite, FullyConnectedLayersRunOnTheGemmAtEveryLevel) {
  ir::Dims dims = {2, 960, 7, 7};
  auto in = ir::TensorData::f32(dims, testing::random_normal(size_t(2) * 960 * 49, 5));
  SessionOptions scalar;
  scalar.isa = kernels::Isa::scalar;
  Session reference(se_block(960, 240, 7, false, false, "HardSigmoid"), scalar);
  const auto want = reference.run({in});
  int levels = 0;
  for (kernels::Isa isa : kernels::runnable_isas()) {
    if (isa == kernels::Isa::scalar) continue;
    SessionOptions o;
    o.isa = isa;
    Session s(se_block(960, 240, 7, false, false, "HardSigmoid"), o);
    bool found = false;
    for (const PlanStep& step : s.plan_for(std::vector<ir::Dims>{dims}).steps())
      if (step.op == "SqueezeExcite") {
        found = true;
        EXPECT_FALSE(step.scalar()) << step.kernel;
        EXPECT_NE(step.kernel.find("f32_gemm_"), std::string::npos) << step.kernel;
      }
    EXPECT_TRUE(found) << kernels::isa_name(isa);
    // The GEMM sums in another order than the loops: within 1e-5 of the largest output, as
    // the parity tests compare with ONNX Runtime (the gate's 240-term sums cancel).
    const auto got = s.run({in});
    float largest = 0.0f;
    for (int64_t i = 0; i < want[0].count(); ++i) largest = std::max(largest, std::fabs(want[0].as<float>()[i]));
    for (int64_t i = 0; i < got[0].count(); ++i)
      ASSERT_NEAR(got[0].as<float>()[i], want[0].as<float>()[i], 1e-5f * largest) << kernels::isa_name(isa) << " at " << i;
    ++levels;
  }
  if (levels == 0) GTEST_SKIP() << testing::kIsaNotOnCpu << "this CPU runs no SIMD level";
}

TEST(SqueezeExcite, NotFusedWhenAnIntermediateIsReadElsewhere) {
  Session s(se_block(16, 4, 5, false, true));
  EXPECT_EQ(fused_count(s), 0);
  for (const auto& n : s.graph().nodes) EXPECT_NE(n.op, "SqueezeExcite");
}

TEST(SqueezeExcite, TheBundledTinyNetFusesEveryBlock) {
  const std::string path = std::string(OCTET_SOURCE_DIR) + "/models/tinynet.onnx";
  Session s = Session::load(path);
  EXPECT_EQ(fused_count(s), 7);  // one SE block per inverted-residual block
}

}  // namespace
}  // namespace octet
