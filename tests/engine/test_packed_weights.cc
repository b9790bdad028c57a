// Packed weights are held once per Session: every plan (batch 1, a slice, a last partial slice,
// another batch) reuses the packing of the same bytes with the same parameters. The key is the
// contents, so a different weight array with equal bytes shares and a changed byte does not.
// The cache reaches the drivers only as an argument (OpContext::packed_cache, then each
// driver's constructor), so every op that packs is checked here: a plan whose packing drivers
// did not all ask the cache makes fewer requests than it has packing steps.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/session.h"
#include "kernels/conv/f32_conv.h"
#include "kernels/gemm/f32_gemm.h"
#include "kernels/packed_cache.h"
#include "loader/onnx_loader.h"
#include "tests/util/onnx_builder.h"
#include "tests/util/qdq_patterns.h"
#include "tests/util/skip_reasons.h"

namespace octet {
namespace packed_weights_test {

using testing::ElemType;
using testing::OnnxBuilder;
using testing::QParams;

TEST(PackedCache, SameRecipeSharesOneCopyAndContentsDecide) {
  kernels::PackedCache cache;
  std::vector<float> w(64 * 32), copy;
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(i % 13) - 6.0f;
  copy = w;  // equal contents at another address
  const kernels::Activation none;
  const kernels::Isa isa = kernels::active_isa();
  kernels::F32Gemm a(64, 32, w.data(), false, nullptr, none, isa, &cache);
  kernels::F32Gemm b(64, 32, copy.data(), false, nullptr, none, isa, &cache);
  if (isa == kernels::Isa::scalar) GTEST_SKIP() << testing::kIsaNotOnCpu << "no SIMD GEMM on this CPU: nothing is packed";
  EXPECT_EQ(cache.entries(), 1u);
  EXPECT_EQ(cache.hits(), 1u);
  const size_t one = cache.bytes();
  EXPECT_GE(one, w.size() * sizeof(float));
  copy[7] += 1.0f;  // one weight differs: its own packing
  kernels::F32Gemm c(64, 32, copy.data(), false, nullptr, none, isa, &cache);
  EXPECT_EQ(cache.entries(), 2u);
  EXPECT_EQ(cache.bytes(), 2 * one);
  // The transposed reading of the same bytes is another packing.
  kernels::F32Gemm d(32, 64, w.data(), true, nullptr, none, isa, &cache);
  EXPECT_EQ(cache.entries(), 3u);
  // And the shared copy computes what a private one does.
  std::vector<float> x(3 * 64, 0.5f), y1(3 * 32), y2(3 * 32);
  a.run(3, x.data(), y1.data(), nullptr);
  kernels::F32Gemm own(64, 32, w.data(), false, nullptr, none, isa);  // no cache: a private copy
  own.run(3, x.data(), y2.data(), nullptr);
  EXPECT_EQ(std::memcmp(y1.data(), y2.data(), y1.size() * sizeof(float)), 0);
  EXPECT_EQ(cache.entries(), 3u);
  EXPECT_EQ(cache.hits(), 1u);
}

// How many packings a plan step of each op asks for on SIMD kernels (one thread): one per
// weight array, and the fused steps' two (the depthwise conv of PointwiseDepthwise packs once a
// ring, and a one-thread session has one ring).
const std::map<std::string, size_t> kPackingsOf = {
    {"Conv", 1},          {"Gemm", 1},  {"MatMul", 1}, {"QLinearConv", 1}, {"QGemm", 1}, {"QLinearMatMul", 1},
    {"ConvIntegerToFloat", 1}, {"MatMulIntegerToFloat", 1}, {"SqueezeExcite", 2}, {"PointwiseDepthwise", 2}};

struct PackingSteps {
  size_t count = 0;                              // packings the plan's steps ask for
  std::map<std::string, std::string> kernel_of;  // node -> kernel
};

PackingSteps packing_steps(const Plan& plan) {
  PackingSteps p;
  for (const auto& s : plan.steps()) {
    auto it = kPackingsOf.find(s.op);
    if (it == kPackingsOf.end() || s.kernel_scalar) continue;
    p.count += it->second;
    p.kernel_of[s.node] = s.kernel;
  }
  return p;
}

size_t requests(const kernels::PackedCache& c) { return c.entries() + c.hits(); }

// Every plan of the session asks the cache once per packing step, and shares what an earlier
// plan packed: a plan adds a packing only where its step chose another kernel (an INT8 conv's
// tile depends on the batch's pixels). Returns the kernels of the batch-1 plan's packing steps.
std::set<std::string> expect_every_plan_shares(ir::Graph graph, const std::vector<int64_t>& batches) {
  SessionOptions o;
  o.batch_slice = 3;
  Session s(std::move(graph), o);
  const kernels::PackedCache& cache = s.packed_weights();
  const PackingSteps first = packing_steps(s.plan_for(s.input_dims_at(1)));  // built at load
  EXPECT_GE(first.count, 3u);
  EXPECT_EQ(requests(cache), first.count) << "a packing driver of the batch-1 plan did not get the Session's cache";
  EXPECT_EQ(cache.entries(), first.count);
  for (int64_t batch : batches) {
    const size_t entries = cache.entries(), asked = requests(cache);
    const PackingSteps p = packing_steps(s.plan_for(s.input_dims_at(batch)));
    EXPECT_EQ(p.count, first.count) << "batch " << batch;
    EXPECT_EQ(requests(cache) - asked, p.count) << "batch " << batch << ": a packing driver did not get the cache";
    size_t other_kernels = 0;
    for (const auto& [node, kernel] : p.kernel_of) other_kernels += first.kernel_of.at(node) != kernel;
    EXPECT_LE(cache.entries() - entries, other_kernels) << "batch " << batch << ": a packing was not shared";
  }
  std::printf("%zu packings asked for by a plan; after batches 1", first.count);
  for (int64_t batch : batches) std::printf(", %lld", static_cast<long long>(batch));
  std::printf(": %zu packings, %zu reuses, %zu bytes\n", cache.entries(), cache.hits(), cache.bytes());
  std::set<std::string> kernels;
  for (const auto& [node, kernel] : first.kernel_of) kernels.insert(kernel);
  return kernels;
}

bool any_contains(const std::set<std::string>& names, const std::string& part) {
  for (const auto& n : names)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

// FP32: a Winograd 3x3, a depthwise 3x3, a strided (IGEMM) 3x3, a 1x1 (GEMM) and a classifier.
ir::Graph fp32_model() {
  OnnxBuilder b(13, "packed_fp32", 4);
  auto x = b.input("x", {-1, 8, 12, 12});
  auto y = b.node("Relu", {b.node("Conv", {x, b.random_normal_init("w1", {16, 8, 3, 3}), b.random_normal_init("b1", {16})},
                                  {{"pads", {1, 1, 1, 1}}})});
  y = b.node("Conv", {y, b.random_normal_init("dw", {16, 1, 3, 3}), b.random_normal_init("db", {16})},
             {{"group", 16}, {"pads", {1, 1, 1, 1}}});
  y = b.node("Conv", {y, b.random_normal_init("w2", {16, 16, 3, 3})}, {{"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}});
  y = b.node("Conv", {y, b.random_normal_init("w3", {16, 16, 1, 1}), b.random_normal_init("b3", {16})});
  b.output(b.node("Gemm", {b.node("Flatten", {b.node("GlobalAveragePool", {y})}), b.random_normal_init("fc", {10, 16})},
                  {{"transB", 1}}));
  return loader::load_onnx_bytes(b.serialize(), "packed_fp32");
}

TEST(PackedWeights, EveryFp32PlanOfASessionSharesThem) {
  if (kernels::active_isa() == kernels::Isa::scalar) GTEST_SKIP() << testing::kIsaNotOnCpu << "no SIMD kernels on this CPU: nothing is packed";
  // The FP32 drivers choose their tiles per image: a new batch packs nothing.
  const auto kernels = expect_every_plan_shares(fp32_model(), {2, 3, 32});
  EXPECT_TRUE(any_contains(kernels, "winograd"));
  EXPECT_TRUE(any_contains(kernels, "dwconv"));
}

TEST(PackedWeights, ARunInSlicesPacksNothingNew) {
  if (kernels::active_isa() == kernels::Isa::scalar) GTEST_SKIP() << testing::kIsaNotOnCpu << "no SIMD kernels on this CPU: nothing is packed";
  SessionOptions o;
  o.batch_slice = 3;
  Session s(fp32_model(), o);
  const size_t entries = s.packed_weights().entries(), bytes = s.packed_weights().bytes();
  // Batch 7 runs slices of 3 and a last slice of 1 (the batch-1 plan).
  auto in = ir::TensorData::f32({7, 8, 12, 12}, testing::random_normal(7 * 8 * 144, 4));
  s.run({in});
  EXPECT_EQ(s.packed_weights().entries(), entries);
  EXPECT_EQ(s.packed_weights().bytes(), bytes);
  EXPECT_GE(s.packed_weights().hits(), entries);  // the slice plan of 3 reuses every packing
}

// The FP32 steps octet's passes fuse: a 1x1 expand + depthwise 3x3 (PointwiseDepthwise) and a
// squeeze-excitation block (SqueezeExcite: two GEMMs).
ir::Graph fused_fp32_model() {
  OnnxBuilder b(13, "packed_fused", 7);
  auto y = b.node("Relu", {b.node("Conv", {b.input("x", {-1, 16, 8, 8}), b.random_normal_init("pw", {32, 16, 1, 1}),
                                           b.random_normal_init("pb", {32})})});
  y = b.node("Conv", {y, b.random_normal_init("dw", {32, 1, 3, 3}), b.random_normal_init("db", {32})},
             {{"group", 32}, {"pads", {1, 1, 1, 1}}});
  auto se = b.node("GlobalAveragePool", {y});
  se = b.node("Relu", {b.node("Conv", {se, b.random_normal_init("s1", {8, 32, 1, 1}), b.random_normal_init("c1", {8})})});
  se = b.node("Sigmoid", {b.node("Conv", {se, b.random_normal_init("s2", {32, 8, 1, 1}), b.random_normal_init("c2", {32})})});
  b.output(b.node("Mul", {y, se}));
  return loader::load_onnx_bytes(b.serialize(), "packed_fused");
}

TEST(PackedWeights, EveryFusedFp32PlanOfASessionSharesThem) {
  if (kernels::active_isa() == kernels::Isa::scalar) GTEST_SKIP() << testing::kIsaNotOnCpu << "no SIMD kernels on this CPU: nothing is packed";
  const auto kernels = expect_every_plan_shares(fused_fp32_model(), {2, 3, 32});
  EXPECT_TRUE(any_contains(kernels, "pwdw("));
  EXPECT_TRUE(any_contains(kernels, "se("));
}

// Static INT8 (QDQ, fused into QLinearConv / QGemm): a dense 3x3, a depthwise 3x3 and a Gemm.
ir::Graph qdq_model() {
  const QParams act{0.05f, 128, ElemType::u8};
  OnnxBuilder b(13, "packed_qdq", 5);
  auto conv = [&](const std::string& x, std::vector<int64_t> dims, int64_t group) {
    auto w = testing::qdq_weights(b, dims, true);
    auto y = b.node("Conv", {x, w.dq, testing::qdq_bias(b, dims[0], act.scale, w.scales)},
                    {{"group", group}, {"pads", {1, 1, 1, 1}}});
    return testing::qdq(b, y, act);
  };
  auto y = conv(testing::qdq(b, b.input("x", {-1, 16, 8, 8}), act), {16, 16, 3, 3}, 1);
  b.output(conv(y, {16, 1, 3, 3}, 16));
  auto w = testing::qdq_weights(b, {32, 64}, true);
  auto v = b.node("Gemm", {testing::qdq(b, b.input("v", {-1, 64}), act), w.dq, testing::qdq_bias(b, 32, act.scale, w.scales)},
                  {{"transB", 1}});
  b.output(testing::qdq(b, v, act));
  return loader::load_onnx_bytes(b.serialize(), "packed_qdq");
}

TEST(PackedWeights, EveryInt8PlanOfASessionSharesThem) {
  if (kernels::active_isa() == kernels::Isa::scalar) GTEST_SKIP() << testing::kIsaNotOnCpu << "no SIMD kernels on this CPU: nothing is packed";
  const auto kernels = expect_every_plan_shares(qdq_model(), {2, 3, 32});
  EXPECT_TRUE(any_contains(kernels, "dwconv"));
}

// Dynamic INT8 (ConvIntegerToFloat / MatMulIntegerToFloat): a dense 3x3, a depthwise 3x3 (on
// the FP32 depthwise microkernels) and a MatMul.
ir::Graph dynamic_model() {
  OnnxBuilder b(13, "packed_dynamic", 6);
  auto y = testing::dynamic_conv(b, b.input("x", {-1, 16, 8, 8}), {16, 16, 3, 3}, {{"pads", {1, 1, 1, 1}}}, true);
  b.output(testing::dynamic_conv(b, y, {16, 1, 3, 3}, {{"group", 16}, {"pads", {1, 1, 1, 1}}}, true));
  b.output(testing::dynamic_matmul(b, b.input("v", {-1, 64}), 64, 32, true));
  return loader::load_onnx_bytes(b.serialize(), "packed_dynamic");
}

TEST(PackedWeights, EveryDynamicInt8PlanOfASessionSharesThem) {
  if (kernels::active_isa() == kernels::Isa::scalar) GTEST_SKIP() << testing::kIsaNotOnCpu << "no SIMD kernels on this CPU: nothing is packed";
  const auto kernels = expect_every_plan_shares(dynamic_model(), {2, 3, 32});
  EXPECT_TRUE(any_contains(kernels, "dwconv"));
}

}  // namespace packed_weights_test
}  // namespace octet
