// passes::fold_pads_into_windows: a constant Pad by zeros of the spatial axes in front of a Conv
// or an AveragePool becomes the op's own padding (the pool then counts the pads). The folded
// graph must give the bits of the same graph written with the padding in the window op, and
// every Pad the pass must leave (MaxPool, a non-zero or -0 value, reflect, the channel axis, a
// pool with ceil_mode or its own pads not counted, two readers) must stay and still give the
// padded result. ONNX Runtime on the same graphs: the sweep's fp32/Pad+* cases.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <string>

#include "engine/session.h"
#include "loader/onnx_loader.h"
#include "tests/util/onnx_builder.h"

namespace octet::pad_folding {
namespace {

using testing::Attrs;
using testing::OnnxBuilder;
using testing::TensorValue;

struct Net {
  std::vector<int64_t> pads = {0, 0, 1, 2, 0, 0, 2, 1};
  std::string window = "AveragePool";
  Attrs window_attrs = {{"kernel_shape", {3, 3}}};
  std::string mode = "constant";
  float value = 0.0f;
  bool two_readers = false;
};

// x -> Pad -> window op (-> and Relu of the Pad as a second output when two_readers).
std::string padded(const Net& n) {
  OnnxBuilder b(13, "pad_fold", 5);
  const auto x = b.input("x", {-1, 6, 9, 8});
  std::vector<std::string> in = {x, b.initializer_i64("", {8}, n.pads)};
  if (n.value != 0.0f || std::signbit(n.value)) in.push_back(b.initializer("", TensorValue::scalar_f32(n.value)));
  const auto p = b.node("Pad", in, {{"mode", n.mode}});
  std::vector<std::string> win_in = {p};
  if (n.window == "Conv") win_in.push_back(b.random_normal_init("w", {4, 6, 3, 3}, 0.0f, 0.3f));
  b.output(b.node(n.window, win_in, n.window_attrs));
  if (n.two_readers) b.output(b.node("Relu", {p}));
  return b.serialize();
}

// The same window op with the Pad's spatial pads added to its own (and the pads counted).
std::string written_folded(const Net& n, const std::vector<int64_t>& own_pads) {
  OnnxBuilder b(13, "pad_fold", 5);
  const auto x = b.input("x", {-1, 6, 9, 8});
  std::vector<std::string> win_in = {x};
  if (n.window == "Conv") win_in.push_back(b.random_normal_init("w", {4, 6, 3, 3}, 0.0f, 0.3f));
  Attrs attrs = n.window_attrs;
  std::vector<int64_t> pads = own_pads;
  for (size_t i = 0; i < 2; ++i) pads[i] += n.pads[2 + i], pads[2 + i] += n.pads[6 + i];
  attrs.push_back({"pads", pads});
  if (n.window == "AveragePool") attrs.push_back({"count_include_pad", 1});
  b.output(b.node(n.window, win_in, attrs));
  return b.serialize();
}

int steps_of(Session& s, const std::string& op) {
  int count = 0;
  for (const auto& step : s.plan_for(s.input_dims_at(2)).steps()) count += step.op.rfind(op, 0) == 0;
  return count;
}

std::vector<ir::TensorData> run(Session& s) {
  const ir::Dims dims = s.input_dims_at(2)[0];
  // Negative values too: a window of the padding and negative inputs tells zeros from -inf.
  return s.run({ir::TensorData::f32(dims, testing::random_normal(size_t(ir::element_count(dims)), 11))});
}

void expect_same_bits(const ir::TensorData& a, const ir::TensorData& b) {
  ASSERT_EQ(a.dims, b.dims);
  for (int64_t i = 0; i < a.count(); ++i)
    ASSERT_EQ(std::bit_cast<uint32_t>(a.as<float>()[i]), std::bit_cast<uint32_t>(b.as<float>()[i])) << "element " << i;
}

TEST(PadFolding, ZerosBeforeAConvOrAnAveragePoolBecomeItsPadding) {
  Net conv;
  conv.window = "Conv";
  conv.window_attrs = {{"kernel_shape", {3, 3}}, {"pads", {1, 0, 0, 1}}, {"strides", {2, 1}}};
  Net pool;  // count_include_pad 0 and no pads of its own: the explicit zeros were counted
  Net counted;
  counted.window_attrs = {{"kernel_shape", {3, 3}}, {"pads", {1, 0, 0, 0}}, {"count_include_pad", 1}, {"strides", {2, 2}}};
  for (auto [net, own] : {std::pair{conv, std::vector<int64_t>{1, 0, 0, 1}}, std::pair{pool, std::vector<int64_t>(4, 0)},
                          std::pair{counted, std::vector<int64_t>{1, 0, 0, 0}}}) {
    SCOPED_TRACE(net.window);
    Session folded(loader::load_onnx_bytes(padded(net), "padded"));
    EXPECT_EQ(steps_of(folded, "Pad"), 0);
    EXPECT_EQ(steps_of(folded, "Relayout"), 1) << "only the input's";
    Session written(loader::load_onnx_bytes(written_folded(net, own), "written"));
    expect_same_bits(run(folded)[0], run(written)[0]);
  }
}

TEST(PadFolding, PadsThatAreNotTheWindowsOwnStay) {
  std::vector<Net> stay(7);
  stay[0].window = "MaxPool";  // implicit pads are -inf: a zero would win over negative inputs
  stay[1].value = 0.5f;
  stay[2].value = -0.0f;
  stay[3].mode = "reflect";
  stay[4].pads = {0, 1, 1, 1, 0, 0, 1, 1};  // the channel axis
  stay[5].window_attrs = {{"kernel_shape", {3, 3}}, {"ceil_mode", 1}, {"strides", {2, 2}}};
  stay[6].two_readers = true;
  stay.emplace_back().window_attrs = {{"kernel_shape", {3, 3}}, {"pads", {0, 1, 0, 0}}, {"count_include_pad", 1}};
  // ^ a pool whose pads would reach its kernel (1 + 2 columns of a 3-wide window)
  for (size_t i = 0; i < stay.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    Session s(loader::load_onnx_bytes(padded(stay[i]), "padded"));
    EXPECT_EQ(steps_of(s, "Pad"), 1);
  }
  // A pool whose own pads are not counted cannot take the Pad's (counted) zeros.
  Net uncounted;
  uncounted.window_attrs = {{"kernel_shape", {3, 3}}, {"pads", {1, 1, 1, 1}}};
  Session s(loader::load_onnx_bytes(padded(uncounted), "padded"));
  EXPECT_EQ(steps_of(s, "Pad"), 1);
}

}  // namespace
}  // namespace octet::pad_folding
