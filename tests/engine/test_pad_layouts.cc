// Pad takes its input in whatever layout it arrives: behind a Conv it pads the channels-last map
// where it lies (no relayout before or after it, the next Conv reads it as it is), and its step
// names its kernel, pad_rows. The values are pad__ref's on the row-major tensor, in every mode,
// with pads of the channel axis and negative pads, channels-last and row-major.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "engine/session.h"
#include "kernels/ref/copy.h"
#include "loader/onnx_loader.h"
#include "tests/util/onnx_builder.h"

namespace octet::pad_layouts {
namespace {

using testing::OnnxBuilder;
using testing::TensorValue;

struct PadNode {
  std::string mode = "reflect";
  std::vector<int64_t> pads = {0, 0, 1, 1, 0, 0, 1, 1};
  float value = 0.0f;
};

std::string add_pad(OnnxBuilder& b, const std::string& x, const PadNode& p) {
  std::vector<std::string> in = {x, b.initializer_i64("", {int64_t(p.pads.size())}, p.pads)};
  if (p.value != 0.0f) in.push_back(b.initializer("", TensorValue::scalar_f32(p.value)));
  return b.node("Pad", in, {{"mode", p.mode}});
}

// x -> Conv 3x3 -> [Pad] -> Conv 3x3 (the generator pattern of ReflectionPad2d between convs).
std::string conv_pad_conv(const PadNode* pad) {
  OnnxBuilder b(13, "conv_pad_conv", 7);
  const auto x = b.input("x", {-1, 4, 10, 9});
  auto t = b.node("Conv", {x, b.random_normal_init("w1", {8, 4, 3, 3}, 0.0f, 0.3f)});
  if (pad) t = add_pad(b, t, *pad);
  b.output(b.node("Conv", {t, b.random_normal_init("w2", {6, 8, 3, 3}, 0.0f, 0.3f)}));
  return b.serialize();
}

// x [-> Conv 1x1, so the Pad reads a channels-last map] -> Pad, or the Conv alone.
std::string maybe_conv_pad(bool conv, const PadNode* pad) {
  OnnxBuilder b(13, "pad", 7);
  auto t = b.input("x", {-1, 5, 7, 6});
  if (conv) t = b.node("Conv", {t, b.random_normal_init("w", {6, 5, 1, 1}, 0.0f, 0.3f)});
  b.output(pad ? add_pad(b, t, *pad) : t);
  return b.serialize();
}

std::string join(const std::vector<int64_t>& v) {
  std::string s;
  for (auto x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

std::vector<const PlanStep*> steps_of(Session& s, const std::string& op) {
  std::vector<const PlanStep*> found;
  for (const auto& step : s.plan_for(s.input_dims_at(2)).steps())
    if (step.op.rfind(op, 0) == 0) found.push_back(&step);
  return found;
}

ir::TensorData input_of(Session& s, uint64_t seed) {
  const ir::Dims dims = s.input_dims_at(2)[0];
  return ir::TensorData::f32(dims, testing::random_normal(size_t(ir::element_count(dims)), seed));
}

TEST(PadLayouts, NoRelayoutAroundAPadBetweenConvs) {
  PadNode reflect;
  Session plain(loader::load_onnx_bytes(conv_pad_conv(nullptr), "plain"));
  Session padded(loader::load_onnx_bytes(conv_pad_conv(&reflect), "padded"));
  EXPECT_EQ(steps_of(padded, "Relayout").size(), steps_of(plain, "Relayout").size());
  const auto pads = steps_of(padded, "Pad");
  ASSERT_EQ(pads.size(), 1u);
  EXPECT_EQ(pads[0]->kernel, "pad_rows");
  EXPECT_FALSE(pads[0]->kernel_scalar);
  const auto y = padded.run({input_of(padded, 3)});
  EXPECT_EQ(y[0].dims, (ir::Dims{2, 6, 8, 7}));
}

// The Pad's output in both layouts against pad__ref on the row-major tensor it reads.
TEST(PadLayouts, ValuesInBothLayoutsAreTheReferences) {
  const std::vector<PadNode> nodes = {
      {"reflect", {0, 0, 1, 2, 0, 0, 2, 1}, 0.0f},   {"reflect", {0, 2, 0, 1, 0, 3, 1, 0}, 0.0f},
      {"edge", {0, 1, 3, 0, 0, 0, 1, 2}, 0.0f},      {"constant", {0, 2, 1, 1, 0, 1, 1, 3}, 0.5f},
      {"constant", {0, -1, -2, 1, 0, 1, 2, -1}, -2.0f}, {"edge", {1, 0, 0, 1, 0, 0, 2, 0}, 0.0f},
      {"reflect", {0, 0, -1, 2, 0, -2, 3, -1}, 0.0f},
  };
  for (bool conv : {false, true})
    for (const PadNode& p : nodes) {
      SCOPED_TRACE(p.mode + (conv ? " of a channels-last conv map" : " of a row-major input") + " pads " +
                   join(p.pads));
      Session padded(loader::load_onnx_bytes(maybe_conv_pad(conv, &p), "padded"));
      const auto pad_steps = steps_of(padded, "Pad");
      ASSERT_EQ(pad_steps.size(), 1u);
      EXPECT_EQ(pad_steps[0]->kernel, "pad_rows");
      const ir::TensorData x = input_of(padded, 5);
      ir::TensorData t = x;  // what the Pad reads, row-major
      if (conv) {
        Session before(loader::load_onnx_bytes(maybe_conv_pad(conv, nullptr), "before"));
        EXPECT_EQ(steps_of(padded, "Relayout").size(), steps_of(before, "Relayout").size());
        t = before.run({x})[0];
      } else {
        EXPECT_TRUE(steps_of(padded, "Relayout").empty());
      }
      const ir::TensorData y = padded.run({x})[0];
      const int rank = int(t.dims.size());
      std::vector<int64_t> begin(p.pads.begin(), p.pads.begin() + rank), end(p.pads.begin() + rank, p.pads.end());
      ir::Dims out;
      for (int i = 0; i < rank; ++i) out.push_back(t.dims[size_t(i)] + begin[size_t(i)] + end[size_t(i)]);
      ASSERT_EQ(y.dims, out);
      std::vector<float> want(size_t(ir::element_count(out)));
      kernels::pad__ref(4, rank, t.dims.data(), begin.data(), end.data(),
                        p.mode == "reflect" ? kernels::PadMode::reflect
                        : p.mode == "edge"  ? kernels::PadMode::edge
                                            : kernels::PadMode::constant,
                        &p.value, t.bytes.data(), want.data());
      ASSERT_EQ(std::memcmp(want.data(), y.bytes.data(), want.size() * sizeof(float)), 0);
    }
}

}  // namespace
}  // namespace octet::pad_layouts
