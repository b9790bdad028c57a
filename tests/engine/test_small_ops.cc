// The integer and run-time forms of the small ops (engine/ops/where_op.cc, pow_op.cc,
// elementwise.cc's integer arithmetic and Clip, misc_ops.cc's Min / Max / Pad): the edge
// semantics ONNX Runtime has and the sweep's random inputs rarely reach (uint8 wrap-around,
// division truncating toward zero, INT8_MIN / -1, a run-constant square wrapping, an absent
// bound), and the errors a user sees.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "engine/session.h"
#include "loader/onnx_loader.h"
#include "tests/util/onnx_builder.h"

namespace octet {
namespace {

using testing::ElemType;
using testing::OnnxBuilder;
using testing::TensorValue;

template <class T>
ir::TensorData tensor(ir::DType t, ir::Dims d, std::vector<T> v) {
  ir::TensorData x = ir::TensorData::make(t, std::move(d));
  std::memcpy(x.bytes.data(), v.data(), v.size() * sizeof(T));
  return x;
}

template <class T>
std::vector<T> values(const ir::TensorData& t) {
  std::vector<T> v(size_t(t.count()));
  std::memcpy(v.data(), t.bytes.data(), v.size() * sizeof(T));
  return v;
}

// y = op(a, b) over two inputs of one type.
std::vector<ir::TensorData> run_binary(const std::string& op, ElemType type, ir::TensorData a, ir::TensorData b) {
  OnnxBuilder g(17, "small", 1);
  g.output(g.node(op, {g.input("a", a.dims, type), g.input("b", b.dims, type)}), type);
  Session s{loader::load_onnx_bytes(g.serialize(), "small")};
  return s.run({std::move(a), std::move(b)});
}

TEST(SmallOps, Uint8ArithmeticWrapsAndDivisionTruncates) {
  const auto u8 = ir::DType::u8;
  auto a = [&] { return tensor<uint8_t>(u8, {4}, {200, 3, 16, 7}); };
  auto b = [&] { return tensor<uint8_t>(u8, {4}, {100, 5, 17, 2}); };
  EXPECT_EQ(values<uint8_t>(run_binary("Add", ElemType::u8, a(), b())[0]), (std::vector<uint8_t>{44, 8, 33, 9}));
  EXPECT_EQ(values<uint8_t>(run_binary("Sub", ElemType::u8, a(), b())[0]), (std::vector<uint8_t>{100, 254, 255, 5}));
  EXPECT_EQ(values<uint8_t>(run_binary("Mul", ElemType::u8, a(), b())[0]), (std::vector<uint8_t>{32, 15, 16, 14}));
  EXPECT_EQ(values<uint8_t>(run_binary("Div", ElemType::u8, a(), b())[0]), (std::vector<uint8_t>{2, 0, 0, 3}));
}

TEST(SmallOps, Int8DivisionTruncatesTowardZeroAndWrapsTheLowestByMinusOne) {
  const auto s8 = ir::DType::s8;
  auto y = run_binary("Div", ElemType::s8, tensor<int8_t>(s8, {4}, {-7, 7, -128, -128}),
                      tensor<int8_t>(s8, {4}, {2, -2, -1, 3}))[0];
  EXPECT_EQ(values<int8_t>(y), (std::vector<int8_t>{-3, -3, -128, -42}));
}

TEST(SmallOps, IntegerDivisionByZeroIsAnErrorNamingTheNode) {
  const auto s32 = ir::DType::s32;
  try {
    run_binary("Div", ElemType::s32, tensor<int32_t>(s32, {2}, {1, 2}), tensor<int32_t>(s32, {2}, {1, 0}));
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("integer division by zero"), std::string::npos) << e.what();
  }
}

TEST(SmallOps, MinMaxOfIntegersBroadcastOverEveryInput) {
  OnnxBuilder g(17, "small", 1);
  g.output(g.node("Max", {g.input("a", {2, 1}, ElemType::s64), g.input("b", {3}, ElemType::s64),
                          g.input("c", {}, ElemType::s64)}), ElemType::s64);
  Session s{loader::load_onnx_bytes(g.serialize(), "small")};
  const auto s64 = ir::DType::s64;
  auto y = s.run({tensor<int64_t>(s64, {2, 1}, {-5, 9}), tensor<int64_t>(s64, {3}, {1, -9, 4}),
                  tensor<int64_t>(s64, {}, {2})})[0];
  EXPECT_EQ(y.dims, (ir::Dims{2, 3}));
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{2, 2, 4, 9, 9, 9}));
}

TEST(SmallOps, WhereBroadcastsInt64AndRefusesMixedTypes) {
  OnnxBuilder g(17, "small", 1);
  g.output(g.node("Where", {g.input("c", {2, 1}, ElemType::b8), g.input("x", {3}, ElemType::s64),
                            g.initializer("", TensorValue::ints(ElemType::s64, {}, {-1}))}), ElemType::s64);
  Session s{loader::load_onnx_bytes(g.serialize(), "small")};
  auto y = s.run({tensor<uint8_t>(ir::DType::b8, {2, 1}, {1, 0}), tensor<int64_t>(ir::DType::s64, {3}, {7, 8, 9})})[0];
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{7, 8, 9, -1, -1, -1}));

  OnnxBuilder bad(17, "small", 1);
  bad.output(bad.node("Where", {bad.input("c", {3}, ElemType::b8), bad.input("x", {3}),
                                bad.input("y", {3}, ElemType::s32)}));
  try {
    Session b{loader::load_onnx_bytes(bad.serialize(), "small")};
    b.run({tensor<uint8_t>(ir::DType::b8, {3}, {1, 0, 1}), ir::TensorData::f32({3}, std::vector<float>{1, 2, 3}),
           tensor<int32_t>(ir::DType::s32, {3}, {4, 5, 6})});
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("X and Y differ in type"), std::string::npos) << e.what();
  }
}

// ORT squares an exponent constant along the run in the base type (wrapping); other exponents go
// through std::pow in double and back.
TEST(SmallOps, IntegerPowSquaresInTheBaseTypeAndPowsOtherwise) {
  OnnxBuilder g(17, "small", 1);
  g.output(g.node("Pow", {g.input("x", {3}, ElemType::s32), g.input("e", {}, ElemType::s32)}), ElemType::s32);
  Session s{loader::load_onnx_bytes(g.serialize(), "small")};
  const auto s32 = ir::DType::s32;
  auto sq = s.run({tensor<int32_t>(s32, {3}, {65536, -3, 7}), tensor<int32_t>(s32, {}, {2})})[0];
  EXPECT_EQ(values<int32_t>(sq), (std::vector<int32_t>{0, 9, 49}));
  auto p = s.run({tensor<int32_t>(s32, {3}, {2, -3, 1}), tensor<int32_t>(s32, {}, {10})})[0];
  EXPECT_EQ(values<int32_t>(p), (std::vector<int32_t>{1024, 59049, 1}));
  // Out of int32's range: the lowest value, as x86's conversion (and so ORT there) gives.
  auto big = s.run({tensor<int32_t>(s32, {3}, {2, -3, 1}), tensor<int32_t>(s32, {}, {40})})[0];
  EXPECT_EQ(values<int32_t>(big), (std::vector<int32_t>{INT32_MIN, INT32_MIN, 1}));
}

TEST(SmallOps, Int8ClipWithOnlyAMaximumAndPadWithARunTimeValue) {
  OnnxBuilder g(17, "small", 1);
  const std::string hi = g.initializer("", TensorValue::ints(ElemType::s8, {}, {5}));
  g.output(g.node("Clip", {g.input("x", {4}, ElemType::s8), "", hi}), ElemType::s8);
  Session s{loader::load_onnx_bytes(g.serialize(), "small")};
  auto y = s.run({tensor<int8_t>(ir::DType::s8, {4}, {-128, 4, 5, 127})})[0];
  EXPECT_EQ(values<int8_t>(y), (std::vector<int8_t>{-128, 4, 5, 5}));

  OnnxBuilder p(17, "small", 1);
  const std::string pads = p.initializer_i64("", {2}, {1, 2});
  p.output(p.node("Pad", {p.input("x", {2}, ElemType::s32), pads, p.input("v", {}, ElemType::s32)}), ElemType::s32);
  Session pad{loader::load_onnx_bytes(p.serialize(), "small")};
  auto z = pad.run({tensor<int32_t>(ir::DType::s32, {2}, {3, 4}), tensor<int32_t>(ir::DType::s32, {}, {-9})})[0];
  EXPECT_EQ(values<int32_t>(z), (std::vector<int32_t>{-9, 3, 4, -9, -9}));
}

}  // namespace
}  // namespace octet
