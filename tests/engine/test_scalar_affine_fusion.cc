// passes::fuse_scalar_affine: a Mul and / or an Add or Sub by scalar constants after a conv (after
// its activation) run in the conv's epilogue; the outputs are the same bits as the separate steps.
// A per-channel constant, a scalar that widens the output's rank, a conv output read twice, c - y,
// and a residual Add (summed before the activation) stay as they are.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "engine/passes.h"
#include "engine/session.h"
#include "loader/onnx_loader.h"
#include "tests/util/onnx_builder.h"
#include "tests/util/session_passes.h"

namespace octet::scalar_affine {
namespace {

using testing::count_ops;
using testing::OnnxBuilder;

constexpr const char* kPass = "fuse a Mul / Add by scalars after a conv into its epilogue";

std::vector<float> ramp(size_t n, float step, float from) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = from + step * float(i % 23) - step * float(i % 7) * 1.5f;
  return v;
}

// x [N, 8, 9, 7] through a 3x3 conv of 8 -> 12 channels (a 1x1 conv of 8 -> 16 and a 3x3
// depthwise conv when `pair`), then `tail`.
OnnxBuilder conv_then(const std::function<std::string(OnnxBuilder&, const std::string&)>& tail, bool pair = false,
                      const char* act = "Relu") {
  OnnxBuilder b(14);
  auto x = b.input("x", {-1, 8, 9, 7});
  std::string y;
  if (pair) {
    auto w1 = b.initializer("w1", {16, 8, 1, 1}, ramp(16 * 8, 0.05f, -0.3f));
    auto w2 = b.initializer("w2", {16, 1, 3, 3}, ramp(16 * 9, 0.07f, -0.4f));
    auto pw = b.node("Conv", {x, w1});
    y = b.node("Conv", {pw, w2, b.initializer("b2", {16}, ramp(16, 0.1f, -0.5f))},
               {{"group", int64_t{16}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  } else {
    auto w = b.initializer("w", {12, 8, 3, 3}, ramp(12 * 8 * 9, 0.03f, -0.2f));
    y = b.node("Conv", {x, w, b.initializer("b", {12}, ramp(12, 0.1f, -0.5f))},
               {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  }
  if (act[0]) y = b.node(act, {y});
  b.output(tail(b, y));
  return b;
}

std::string scalar(OnnxBuilder& b, float v, std::vector<int64_t> dims = {1}) { return b.initializer("", dims, {v}); }

// With the pass and without: the same bytes in every output at batches 1 and 2. Returns the
// session with the pass.
Session expect_same_bits(const OnnxBuilder& model, int expected_fused) {
  SessionOptions off;
  off.passes.fuse_scalar_affine = false;
  Session with(loader::load_onnx_bytes(model.serialize(), "affine"));
  Session without(loader::load_onnx_bytes(model.serialize(), "affine"), off);
  EXPECT_EQ(testing::pass_changed(with, kPass), expected_fused);
  EXPECT_EQ(testing::pass_changed(without, kPass), -1);
  for (int64_t batch : {1, 2}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    const ir::Dims dims = with.input_dims_at(batch)[0];
    const std::vector<ir::TensorData> in = {
        ir::TensorData::f32(dims, testing::random_normal(size_t(ir::element_count(dims)), uint32_t(11 + batch)))};
    const auto a = with.run(in), b = without.run(in);
    EXPECT_EQ(a.size(), b.size());
    for (size_t o = 0; o < a.size() && o < b.size(); ++o) {
      EXPECT_EQ(a[o].dims, b[o].dims);
      EXPECT_TRUE(a[o].bytes.size() == b[o].bytes.size() &&
                  std::memcmp(a[o].bytes.data(), b[o].bytes.data(), a[o].bytes.size()) == 0)
          << "output " << o << " differs";
    }
  }
  return with;
}

// HGNetV2's learnable affine: Conv -> Relu -> Mul s -> Add b, the scalars of shape [1].
TEST(ScalarAffineFusion, HgNetAffineAfterARelu) {
  const Session s = expect_same_bits(
      conv_then([](OnnxBuilder& b, const std::string& y) {
        return b.node("Add", {b.node("Mul", {y, scalar(b, 1.375f)}), scalar(b, -0.3f)});
      }),
      2);
  EXPECT_EQ(count_ops(s, "Mul") + count_ops(s, "Add") + count_ops(s, "Relu"), 0);
}

// The constants on the left, of rank 0 and 4, after a SiLU; a Sub (y - b) alone; a Mul alone with
// no activation (NF-Net's gain).
TEST(ScalarAffineFusion, EitherOperandOrderAndEachOpAlone) {
  expect_same_bits(conv_then(
                       [](OnnxBuilder& b, const std::string& y) {
                         return b.node("Add", {scalar(b, 0.75f, {}), b.node("Mul", {scalar(b, -2.5f, {1, 1, 1, 1}), y})});
                       },
                       false, "HardSwish"),
                   2);
  expect_same_bits(conv_then([](OnnxBuilder& b, const std::string& y) { return b.node("Sub", {y, scalar(b, 0.125f)}); }),
                   1);
  expect_same_bits(
      conv_then([](OnnxBuilder& b, const std::string& y) { return b.node("Mul", {y, scalar(b, 1.7f)}); }, false, ""), 1);
}

// After the depthwise conv of a fused 1x1 + depthwise pair.
TEST(ScalarAffineFusion, AfterAFusedPair) {
  const Session s = expect_same_bits(
      conv_then(
          [](OnnxBuilder& b, const std::string& y) {
            return b.node("Add", {b.node("Mul", {y, scalar(b, 0.6f)}), scalar(b, 0.05f)});
          },
          true),
      2);
  EXPECT_EQ(count_ops(s, "PointwiseDepthwise"), 1);
}

// What the pass leaves: a per-channel Mul, a scalar of rank 5 (the output would widen), c - y,
// a conv output read twice; a residual Add after the scalar Mul stays a separate Add (only the
// Mul joins the conv).
TEST(ScalarAffineFusion, LeavesWhatIsNotAScalarAffineOfTheConvAlone) {
  expect_same_bits(conv_then([](OnnxBuilder& b, const std::string& y) {
                     return b.node("Mul", {y, b.initializer("", {1, 12, 1, 1}, ramp(12, 0.2f, 0.5f))});
                   }),
                   0);
  expect_same_bits(conv_then([](OnnxBuilder& b, const std::string& y) {
                     return b.node("Mul", {y, scalar(b, 2.0f, {1, 1, 1, 1, 1})});
                   }),
                   0);
  expect_same_bits(conv_then([](OnnxBuilder& b, const std::string& y) { return b.node("Sub", {scalar(b, 1.0f), y}); }),
                   0);
  expect_same_bits(conv_then([](OnnxBuilder& b, const std::string& y) {
                     return b.node("Add", {b.node("Mul", {y, scalar(b, 3.0f)}), b.node("Sigmoid", {y})});
                   }),
                   0);
  const Session residual = expect_same_bits(
      conv_then(
          [](OnnxBuilder& b, const std::string& y) {
            const std::string skip = b.node("Conv", {y, b.initializer("", {12, 12, 1, 1}, ramp(144, 0.02f, -0.1f))});
            return b.node("Relu", {b.node("Add", {b.node("Mul", {skip, scalar(b, 0.5f)}), y})});
          }),
      1);
  EXPECT_EQ(count_ops(residual, "Mul"), 0);
  EXPECT_EQ(count_ops(residual, "Add"), 1);
}

}  // namespace
}  // namespace octet::scalar_affine
