// passes::drop_broadcast_expands: an Expand read by an element-wise op that broadcasts its input
// to the same output anyway (ECA's gate [N, C, 1, 1] expanded to the map, then multiplied) is
// skipped, the reader taking the Expand's input; the outputs are the same bits. Where the
// Expand widens the result (a larger batch, an axis the other operand lacks) or feeds another
// op, the graph keeps it.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "engine/session.h"
#include "loader/onnx_loader.h"
#include "tests/util/onnx_builder.h"
#include "tests/util/session_passes.h"

namespace octet::broadcast_expand {
namespace {

using testing::OnnxBuilder;

constexpr const char* kPass = "read an Expand's input where its reader broadcasts it anyway";

using testing::count_ops;

int rewired(const Session& s) { return testing::pass_changed(s, kPass); }

std::string i64s(OnnxBuilder& b, std::vector<int64_t> v) { return b.initializer_i64("", {int64_t(v.size())}, v); }

// The graph with the pass and without; the same bytes in every output at batches 1 and 3.
// Returns the session with the pass.
Session expect_same_bits(const std::function<OnnxBuilder()>& build, int expected_rewired, int expected_expands) {
  SessionOptions off;
  off.passes.drop_broadcast_expands = false;
  Session with(loader::load_onnx_bytes(build().serialize(), "expand"));
  Session without(loader::load_onnx_bytes(build().serialize(), "expand"), off);
  EXPECT_EQ(rewired(with), expected_rewired);
  EXPECT_EQ(rewired(without), -1);
  EXPECT_EQ(count_ops(with, "Expand"), expected_expands);
  for (int64_t batch : {1, 3}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    std::vector<ir::TensorData> in;
    const std::vector<ir::Dims> dims = with.input_dims_at(batch);
    for (size_t i = 0; i < dims.size(); ++i)
      in.push_back(ir::TensorData::f32(dims[i], testing::random_normal(size_t(ir::element_count(dims[i])),
                                                                       uint32_t(5 + 7 * i + batch))));
    const auto a = with.run(in), b = without.run(in);
    EXPECT_EQ(a.size(), b.size());
    for (size_t o = 0; o < a.size() && o < b.size(); ++o) {
      EXPECT_EQ(a[o].dims, b[o].dims) << "output " << o;
      EXPECT_EQ(a[o].bytes.size(), b[o].bytes.size());
      EXPECT_TRUE(a[o].bytes.size() == b[o].bytes.size() &&
                  std::memcmp(a[o].bytes.data(), b[o].bytes.data(), a[o].bytes.size()) == 0)
          << "output " << o << " differs";
    }
  }
  return with;
}

// ECA's gate: x * Expand(Sigmoid(mean of x), Shape(x)), and the same gate on the left of a Sub
// and a Div (the operand order kept).
TEST(BroadcastExpand, GateReadsItsInputOnEitherSide) {
  expect_same_bits(
      [] {
        OnnxBuilder b(13);
        auto x = b.input("x", {-1, 24, 6, 5});
        auto gate = b.node("Sigmoid", {b.node("GlobalAveragePool", {x})});
        auto spread = b.node("Expand", {gate, b.node("Shape", {x})});
        b.output(b.node("Mul", {x, spread}));
        b.output(b.node("Sub", {spread, x}));
        b.output(b.node("Div", {spread, b.node("Relu", {x})}));
        return b;
      },
      3, 0);
}

// A gate [N, C, 1, 1] expanded to [N, C, H, W] times a map [N, 1, H, W]: the Mul broadcasts both
// to the Expand's shape, so the Expand adds nothing.
TEST(BroadcastExpand, BothOperandsBroadcast) {
  expect_same_bits(
      [] {
        OnnxBuilder b(13);
        auto x = b.input("x", {-1, 16, 7, 4});
        auto gate = b.node("GlobalAveragePool", {x});
        auto map = b.node("ReduceMean", {x}, {{"axes", {1}}, {"keepdims", 1}});
        b.output(b.node("Mul", {map, b.node("Expand", {gate, b.node("Shape", {x})})}));
        return b;
      },
      1, 0);
}

// Kept: the Expand makes the result larger than the reader's broadcast would (H it lacks, a batch
// of 2 over a batch of one), it feeds a Relu as well, or it is a graph output.
TEST(BroadcastExpand, KeptWhereItWidensTheResultOrHasOtherReaders) {
  expect_same_bits(
      [] {
        OnnxBuilder b(13);
        auto x = b.input("x", {-1, 8, 1, 5});
        auto gate = b.node("GlobalAveragePool", {x});
        b.output(b.node("Mul", {x, b.node("Expand", {gate, i64s(b, {1, 8, 3, 5})})}));
        return b;
      },
      0, 1);
  expect_same_bits(
      [] {
        OnnxBuilder b(13);
        auto x = b.input("x", {1, 8, 3, 5});
        auto gate = b.node("GlobalAveragePool", {x});
        b.output(b.node("Add", {x, b.node("Expand", {gate, i64s(b, {2, 8, 3, 5})})}));
        return b;
      },
      0, 1);
  // The Mul takes the gate; the Relu still reads the Expand, which stays, as does the output.
  expect_same_bits(
      [] {
        OnnxBuilder b(13);
        auto x = b.input("x", {-1, 8, 3, 5});
        auto spread = b.node("Expand", {b.node("GlobalAveragePool", {x}), b.node("Shape", {x})});
        b.output(b.node("Mul", {x, spread}));
        b.output(b.node("Relu", {spread}));
        return b;
      },
      1, 1);
  expect_same_bits(
      [] {
        OnnxBuilder b(13);
        auto x = b.input("x", {-1, 8, 3, 5});
        auto spread = b.node("Expand", {b.node("GlobalAveragePool", {x}), b.node("Shape", {x})});
        b.output(b.node("Mul", {x, spread}));
        b.output(spread);
        return b;
      },
      1, 1);
}

// A static INT8 gate as ONNX Runtime's quantizer writes it (QDQ pairs on both sides of the
// Expand): the Mul becomes a QLinearMul reading the uint8 Expand; it reads the gate's codes
// instead, the same bytes out.
TEST(BroadcastExpand, QLinearMulReadsTheGateCodes) {
  const Session s = expect_same_bits(
      [] {
        OnnxBuilder b(13);
        // A scale and a uint8 zero point.
        auto qparams = [&](float scale, int64_t zero) {
          const std::string sc = b.initializer("", {}, {scale});
          const std::string zp = b.initializer("", testing::TensorValue::u8({}, {zero}));
          return std::pair{sc, zp};
        };
        auto x = b.input("x", {-1, 16, 6, 6});
        const auto [xs, xz] = qparams(0.03f, 128);
        auto dx = b.node("DequantizeLinear", {b.node("QuantizeLinear", {x, xs, xz}), xs, xz});
        auto gate = b.node("Sigmoid", {b.node("GlobalAveragePool", {dx})});
        const auto [gs, gz] = qparams(1.0f / 255, 0);
        auto dg = b.node("DequantizeLinear", {b.node("QuantizeLinear", {gate, gs, gz}), gs, gz});
        auto spread = b.node("Expand", {dg, b.node("Shape", {x})});
        auto y = b.node("Mul", {dx, b.node("DequantizeLinear", {b.node("QuantizeLinear", {spread, gs, gz}), gs, gz})});
        const auto [ys, yz] = qparams(0.02f, 120);
        b.output(b.node("DequantizeLinear", {b.node("QuantizeLinear", {y, ys, yz}), ys, yz}));
        return b;
      },
      1, 0);
  EXPECT_EQ(count_ops(s, "QLinearMul"), 1);
}

}  // namespace
}  // namespace octet::broadcast_expand
