// passes::fuse_group_norm and the GroupNorm op: torch's GroupNorm chain (Reshape [N, G, -1],
// InstanceNormalization of unit scale and zero bias, Reshape back, Mul gamma, Add beta) and the
// activation after it become one GroupNorm step on the channels-last map, in float graphs only,
// and compute what the chain computed: against the chain itself (the pass off) on ordinary maps,
// and against a double-precision GroupNorm on a map of mean 1000 and spread 0.01, where the
// chain's float statistics are the less accurate of the two.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "engine/session.h"
#include "loader/onnx_loader.h"
#include "tests/util/onnx_builder.h"
#include "tests/util/session_passes.h"

namespace octet::group_norm_fusion {
namespace {

using testing::OnnxBuilder;

constexpr const char* kPass = "fuse GroupNorm chains (float graphs)";

using testing::count_ops;

int fused(const Session& s) { return testing::pass_changed(s, kPass); }

struct Chain {
  std::vector<int64_t> x = {-1, 32, 9, 7};  // [N, C, spatial...]
  int64_t groups = 4;
  std::string act = "Silu";                 // "Silu" (Sigmoid, Mul), "Relu" or ""
  float scale = 1.0f;                       // the InstanceNormalization's scale (1: torch's)
  bool quantized_input = false;             // x through QuantizeLinear / DequantizeLinear first
};

std::string i64s(OnnxBuilder& b, std::vector<int64_t> v) { return b.initializer_i64("", {int64_t(v.size())}, v); }

OnnxBuilder chain_model(const Chain& ch) {
  OnnxBuilder b(13, "group_norm", 11);
  std::string x = b.input("x", ch.x);
  if (ch.quantized_input) {
    const std::string s = b.initializer("", {}, {0.05f});
    const std::string z = b.initializer("", testing::TensorValue::u8({}, {128}));
    x = b.node("DequantizeLinear", {b.node("QuantizeLinear", {x, s, z}), s, z});
  }
  const int64_t c = ch.x[1];
  std::vector<int64_t> param_dims = {c};
  param_dims.resize(ch.x.size() - 1, 1);
  auto grouped = b.node("Reshape", {x, i64s(b, {0, ch.groups, -1})});
  auto norm = b.node("InstanceNormalization", {grouped, b.initializer("", {ch.groups}, std::vector<float>(size_t(ch.groups), ch.scale)),
                                               b.initializer("", {ch.groups}, std::vector<float>(size_t(ch.groups), 0.0f))},
                     {{"epsilon", 1e-5f}});
  auto back = b.node("Reshape", {norm, b.node("Shape", {x})});
  auto y = b.node("Add", {b.node("Mul", {back, b.random_normal_init("", param_dims, 1.0f, 0.3f)}),
                          b.random_normal_init("", param_dims, 0.0f, 0.5f)});
  if (ch.act == "Silu") y = b.node("Mul", {y, b.node("Sigmoid", {y})});
  else if (!ch.act.empty()) y = b.node(ch.act, {y});
  b.output(y);
  return b;
}

std::vector<ir::TensorData> random_inputs(const Session& s, int64_t batch, float mean, float spread) {
  const ir::Dims dims = s.input_dims_at(batch)[0];
  std::vector<float> v = testing::random_normal(size_t(ir::element_count(dims)), uint32_t(41 + batch));
  for (float& e : v) e = mean + spread * e;
  return {ir::TensorData::f32(dims, v)};
}

// The fused session against the chain (the pass off), batches 1 and 3: within 2e-5 of the
// output's largest magnitude.
void expect_like_the_chain(const Chain& ch, int expected_fused) {
  SessionOptions off;
  off.passes.fuse_group_norm = false;
  Session with(loader::load_onnx_bytes(chain_model(ch).serialize(), "group_norm"));
  Session without(loader::load_onnx_bytes(chain_model(ch).serialize(), "group_norm"), off);
  EXPECT_EQ(fused(with), expected_fused);
  EXPECT_EQ(count_ops(with, "GroupNorm"), expected_fused);
  EXPECT_EQ(count_ops(with, "InstanceNormalization"), 1 - expected_fused);
  if (expected_fused) {
    EXPECT_EQ(count_ops(with, "Sigmoid") + count_ops(with, "Relu"), 0) << "the activation is fused";
  }
  for (int64_t batch : {1, 3}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    const auto in = random_inputs(with, batch, 0.3f, 1.5f);
    const auto a = with.run(in), b = without.run(in);
    ASSERT_EQ(a[0].dims, b[0].dims);
    float peak = 0.0f;
    for (float v : b[0].values<float>()) peak = std::max(peak, std::abs(v));
    const auto av = a[0].values<float>(), bv = b[0].values<float>();
    for (size_t i = 0; i < av.size(); ++i) ASSERT_NEAR(av[i], bv[i], 2e-5f * peak) << "at " << i;
  }
}

TEST(GroupNormFusion, TorchsChainWithItsSilu) { expect_like_the_chain({}, 1); }

TEST(GroupNormFusion, MapsOfEveryShape) {
  expect_like_the_chain({{-1, 96, 7, 7}, 12, "Silu"}, 1);   // 49 pixels, 8 channels a group
  expect_like_the_chain({{-1, 24, 30, 30}, 24, "Relu"}, 1);  // a group per channel, 900 pixels: several ranges
  expect_like_the_chain({{-1, 20, 11}, 5, ""}, 1);           // rank 3, 4 channels a group
  expect_like_the_chain({{-1, 48, 40, 40}, 2, "Silu"}, 1);   // 1600 pixels: 6 ranges, 24 channels a group
}

// The statistics' pixel ranges do not depend on the thread count: 1, 2 and 3 threads give the
// same bytes (a map of 1600 pixels: 6 ranges; batch 3).
TEST(GroupNormFusion, EveryThreadCountGivesTheSameBits) {
  const Chain ch{{-1, 48, 40, 40}, 6, "Silu"};
  std::vector<ir::TensorData> first;
  for (int threads : {1, 2, 3}) {
    SessionOptions o;
    o.threads = threads;
    Session s(loader::load_onnx_bytes(chain_model(ch).serialize(), "group_norm"), o);
    ASSERT_EQ(fused(s), 1);
    const auto out = s.run(random_inputs(s, 3, 0.2f, 1.0f));
    if (first.empty()) {
      first = out;
      continue;
    }
    EXPECT_EQ(out[0].bytes, first[0].bytes) << threads << " threads";
  }
}

// A scale other than 1 (no GroupNorm torch writes) and a graph that quantizes keep the chain.
TEST(GroupNormFusion, KeptOutsideTorchsFloatChain) {
  Chain scaled;
  scaled.scale = 2.0f;
  expect_like_the_chain(scaled, 0);
  Chain quantized;
  quantized.quantized_input = true;
  expect_like_the_chain(quantized, 0);
}

// A map of mean 1000 and spread 0.01: against GroupNorm computed in double here, the fused step
// is within 1e-4 of the unit-variance output.
TEST(GroupNormFusion, AccurateOnAMapFarFromZero) {
  Chain ch;
  ch.act = "";
  ch.x = {-1, 16, 12, 12};
  OnnxBuilder model = chain_model(ch);
  Session s(loader::load_onnx_bytes(model.serialize(), "group_norm"));
  ASSERT_EQ(fused(s), 1);
  const auto in = random_inputs(s, 2, 1000.0f, 0.01f);
  const auto out = s.run(in);
  // gamma and beta as the graph holds them.
  const ir::Graph& g = s.graph();
  const ir::Node* gn = nullptr;
  for (const auto& n : g.nodes)
    if (n.op == "GroupNorm") gn = &n;
  ASSERT_NE(gn, nullptr);
  const auto gamma = g.value(gn->inputs[1]).constant->values<float>();
  const auto beta = g.value(gn->inputs[2]).constant->values<float>();
  const int64_t images = 2, channels = 16, pixels = 144, per_group = 4;
  const auto x = in[0].values<float>(), y = out[0].values<float>();
  for (int64_t n = 0; n < images; ++n)
    for (int64_t grp = 0; grp < 4; ++grp) {
      double sum = 0, sq = 0;
      for (int64_t c = grp * per_group; c < (grp + 1) * per_group; ++c)
        for (int64_t p = 0; p < pixels; ++p) sum += x[size_t((n * channels + c) * pixels + p)];
      const double mean = sum / double(per_group * pixels);
      for (int64_t c = grp * per_group; c < (grp + 1) * per_group; ++c)
        for (int64_t p = 0; p < pixels; ++p) {
          const double d = x[size_t((n * channels + c) * pixels + p)] - mean;
          sq += d * d;
        }
      const double inv_std = 1.0 / std::sqrt(sq / double(per_group * pixels) + 1e-5);
      for (int64_t c = grp * per_group; c < (grp + 1) * per_group; ++c)
        for (int64_t p = 0; p < pixels; ++p) {
          const size_t i = size_t((n * channels + c) * pixels + p);
          const double want = (x[i] - mean) * inv_std * gamma[size_t(c)] + beta[size_t(c)];
          ASSERT_NEAR(y[i], want, 1e-4 * std::max(1.0, std::abs(double(gamma[size_t(c)]))))
              << "image " << n << " channel " << c << " pixel " << p;
        }
    }
}

}  // namespace
}  // namespace octet::group_norm_fusion
