// Packed weights are held once per Session: every plan (batch 1, a slice, a last partial slice,
// another batch) reuses the packing of the same bytes with the same parameters. The key is the
// contents, so a different weight array with equal bytes shares and a changed byte does not.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "engine/session.h"
#include "kernels/conv/f32_conv.h"
#include "kernels/gemm/f32_gemm.h"
#include "kernels/packed_cache.h"
#include "loader/onnx_loader.h"
#include "tests/util/onnx_builder.h"
#include "tests/util/skip_reasons.h"

namespace octet {
namespace {

using testing::OnnxBuilder;

TEST(PackedCache, SameRecipeSharesOneCopyAndContentsDecide) {
  kernels::PackedCache cache;
  std::vector<float> w(64 * 32), copy;
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(i % 13) - 6.0f;
  copy = w;  // equal contents at another address
  const kernels::Activation none;
  kernels::F32Gemm a(64, 32, w.data(), false, nullptr, none, kernels::active_isa(), &cache);
  kernels::F32Gemm b(64, 32, copy.data(), false, nullptr, none, kernels::active_isa(), &cache);
  if (kernels::active_isa() == kernels::Isa::scalar) GTEST_SKIP() << testing::kIsaNotOnCpu << "no SIMD GEMM on this CPU: nothing is packed";
  EXPECT_EQ(cache.entries(), 1u);
  EXPECT_EQ(cache.hits(), 1u);
  const size_t one = cache.bytes();
  EXPECT_GE(one, w.size() * sizeof(float));
  copy[7] += 1.0f;  // one weight differs: its own packing
  kernels::F32Gemm c(64, 32, copy.data(), false, nullptr, none, kernels::active_isa(), &cache);
  EXPECT_EQ(cache.entries(), 2u);
  EXPECT_EQ(cache.bytes(), 2 * one);
  // The transposed reading of the same bytes is another packing.
  kernels::F32Gemm d(32, 64, w.data(), true, nullptr, none, kernels::active_isa(), &cache);
  EXPECT_EQ(cache.entries(), 3u);
  // And the shared copy computes what a private one does.
  std::vector<float> x(3 * 64, 0.5f), y1(3 * 32), y2(3 * 32);
  a.run(3, x.data(), y1.data(), nullptr);
  kernels::F32Gemm own(64, 32, w.data(), false, nullptr, none, kernels::active_isa());  // no cache: its own copy
  own.run(3, x.data(), y2.data(), nullptr);
  EXPECT_EQ(std::memcmp(y1.data(), y2.data(), y1.size() * sizeof(float)), 0);
  EXPECT_EQ(cache.entries(), 3u);  // the driver without a cache packed its own copy
}

ir::Graph two_convs() {
  OnnxBuilder b(13, "packed", 4);
  auto x = b.input("x", {-1, 8, 12, 12});
  auto y = b.node("Relu", {b.node("Conv", {x, b.random_normal_init("w1", {16, 8, 3, 3}), b.random_normal_init("b1", {16})},
                                  {{"pads", {1, 1, 1, 1}}})});
  y = b.node("Conv", {y, b.random_normal_init("w2", {16, 16, 1, 1}), b.random_normal_init("b2", {16})});
  b.output(b.node("Gemm", {b.node("Flatten", {b.node("GlobalAveragePool", {y})}), b.random_normal_init("fc", {10, 16})},
                  {{"transB", 1}}));
  return loader::load_onnx_bytes(b.serialize(), "packed");
}

TEST(PackedWeights, EveryPlanOfASessionSharesThem) {
  if (kernels::active_isa() == kernels::Isa::scalar) GTEST_SKIP() << testing::kIsaNotOnCpu << "no SIMD kernels on this CPU: nothing is packed";
  SessionOptions o;
  o.batch_slice = 3;
  Session s(two_convs(), o);
  const size_t entries = s.packed_weights().entries(), bytes = s.packed_weights().bytes();
  EXPECT_GE(entries, 3u);  // the two convs and the classifier (batch 1, built at load)
  // Batch 7 runs slices of 3 and a last slice of 1 (plus the batch-2 probe of slicing).
  auto in = ir::TensorData::f32({7, 8, 12, 12}, testing::random_normal(7 * 8 * 144, 4));
  s.run({in});
  s.plan_for(s.input_dims_at(32));
  // A larger batch may choose a GEMM tile of another width (its own packing); most are shared.
  EXPECT_LE(s.packed_weights().bytes(), bytes + bytes / 2);
  EXPECT_GE(s.packed_weights().hits(), 2 * entries);  // batch 2, the slice of 3 and batch 32 reuse them
  std::printf("packed weights: %zu packings at load, %zu after 4 more plans, %zu reuses\n", entries,
              s.packed_weights().entries(), s.packed_weights().hits());
}

}  // namespace
}  // namespace octet
