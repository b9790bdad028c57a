// The comparison, logic, classification, Sign, Shrink, Mod and n-ary Sum / Mean / Max / Min ops
// against ONNX Runtime byte for byte at every runnable level: bools as ORT's bytes, floats bit for
// bit (Sign's +-0 and NaN, Sum's left-to-right order, Mean's multiply by 1 / count, which of
// equal zeros Max / Min pick), over broadcast operands
// holding NaN, +-inf and +-0 among random values.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

#include "engine/session.h"
#include "io/tensor_io.h"
#include "kernels/isa.h"
#include "tests/parity/parity_fixture.h"

namespace octet::parity {
namespace compare_parity {

using testing::ElemType;
using testing::OnnxBuilder;

// Random values in [-2, 2] rounded to quarters (so that operands are often equal), with NaN,
// +-inf and +-0 at scattered places.
ir::TensorData values(const ir::Dims& dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> q(-8, 8);
  std::vector<float> v(size_t(ir::element_count(dims)));
  for (float& x : v) x = float(q(rng)) / 4.0f;
  const float specials[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f};
  for (size_t i = 0; i < v.size(); i += 1 + rng() % 9) v[i] = specials[rng() % std::size(specials)];
  return ir::TensorData::f32(dims, v);
}


TEST(CompareParity, ComparisonsLogicAndClassificationAreOrtsBytes) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  const auto x = b.input("x", {3, 1037}), y = b.input("y", {1, 1037}), z = b.input("z", {3, 1});
  for (const char* op : {"Equal", "Greater", "Less"}) {
    b.output(b.node(op, {x, y}), ElemType::b8);
    b.output(b.node(op, {z, x}), ElemType::b8);
  }
  const auto gt = b.node("Greater", {x, z}), eq = b.node("Equal", {x, y});
  b.output(b.node("And", {gt, eq}), ElemType::b8);
  b.output(b.node("Or", {gt, eq}), ElemType::b8);
  b.output(b.node("Xor", {gt, eq}), ElemType::b8);
  b.output(b.node("Not", {gt}), ElemType::b8);
  b.output(b.node("IsNaN", {x}), ElemType::b8);
  b.output(b.node("IsInf", {x}), ElemType::b8);
  b.output(b.node("IsInf", {x}, {{"detect_negative", int64_t(0)}}), ElemType::b8);
  b.output(b.node("IsInf", {x}, {{"detect_positive", int64_t(0)}}), ElemType::b8);
  expect_ort_bytes_at_every_level(b, "compare", {{"x", values({3, 1037}, 1)}, {"y", values({1, 1037}, 2)}, {"z", values({3, 1}, 3)}});
}

TEST(CompareParity, OrEqualComparisonsAreOrtsBytes) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(16);
  const auto x = b.input("x", {3, 1037}), y = b.input("y", {1, 1037});
  b.output(b.node("GreaterOrEqual", {x, y}), ElemType::b8);
  b.output(b.node("LessOrEqual", {x, y}), ElemType::b8);
  b.output(b.node("LessOrEqual", {y, x}), ElemType::b8);
  expect_ort_bytes_at_every_level(b, "compare_or_equal", {{"x", values({3, 1037}, 4)}, {"y", values({1, 1037}, 5)}});
}

TEST(CompareParity, SignShrinkModSumAndMeanAreOrtsBits) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  const auto x = b.input("x", {2, 4, 131}), y = b.input("y", {4, 1}), z = b.input("z", {131});
  b.output(b.node("Sign", {x}));
  b.output(b.node("Shrink", {x}));
  b.output(b.node("Shrink", {x}, {{"lambd", 0.25f}, {"bias", 0.75f}}));
  b.output(b.node("Mod", {x, y}, {{"fmod", int64_t(1)}}));
  b.output(b.node("Sum", {x}));
  b.output(b.node("Sum", {x, y, z}));
  b.output(b.node("Sum", {y, z, x, x}));
  b.output(b.node("Mean", {x, y, z}));
  b.output(b.node("Mean", {z, x}));
  // Random sums, not quarters: the order of the adds shows in their roundings.
  ir::TensorData xv = values({2, 4, 131}, 6);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  float* p = const_cast<float*>(xv.as<float>());
  for (int64_t i = 0; i < xv.count(); ++i)
    if (std::isfinite(p[i]) && p[i] != 0.0f) p[i] = u(rng);
  expect_ort_bytes_at_every_level(b, "sign_shrink_sum", {{"x", xv}, {"y", values({4, 1}, 8)}, {"z", values({131}, 9)}});
}

// values() with a NaN of the other sign where it put -0: which of two NaNs wins is fixed, which
// of +0 / -0 is not (ORT's Eigen loop answers the ties of its packets and of its scalar ends
// differently; engine/ops/compare_ops.cc).
ir::TensorData extremum_values(const ir::Dims& dims, uint32_t seed) {
  ir::TensorData t = values(dims, seed);
  float* p = const_cast<float*>(t.as<float>());
  for (int64_t i = 0; i < t.count(); ++i)
    if (p[i] == 0.0f && std::signbit(p[i])) p[i] = -NAN;
  return t;
}

// Max / Min of 1 to 4 operands, every broadcast form (a scalar first or later, rows, columns).
TEST(CompareParity, MaxAndMinAreOrtsBits) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  const auto x = b.input("x", {2, 4, 131}), w = b.input("w", {2, 4, 131}), y = b.input("y", {4, 1});
  const auto z = b.input("z", {131}), s = b.input("s", {});
  for (const char* op : {"Max", "Min"}) {
    b.output(b.node(op, {x}));
    b.output(b.node(op, {x, w}));
    b.output(b.node(op, {w, x, y}));
    b.output(b.node(op, {z, x, y, w}));
    b.output(b.node(op, {s, x}));
    b.output(b.node(op, {x, s}));
    b.output(b.node(op, {s, y, z}));
  }
  const std::vector<float> nan = {NAN};
  expect_ort_bytes_at_every_level(b, "max_min", {{"x", extremum_values({2, 4, 131}, 13)}, {"w", extremum_values({2, 4, 131}, 14)},
                                  {"y", extremum_values({4, 1}, 15)}, {"z", extremum_values({131}, 16)},
                                  {"s", ir::TensorData::f32({}, nan)}});
}

// Tensors large enough to be split over two threads (pieces of 32K elements, tails at both ends).
TEST(CompareParity, LargeTensorsSplitOverThreadsAreOrtsBytes) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  const ir::Dims d = {2, 3, 100, 117};
  const auto x = b.input("x", d), y = b.input("y", d), z = b.input("z", {});
  b.output(b.node("Greater", {x, y}), ElemType::b8);
  b.output(b.node("Equal", {z, x}), ElemType::b8);
  b.output(b.node("IsNaN", {x}), ElemType::b8);
  b.output(b.node("Sign", {x}));
  b.output(b.node("Shrink", {y}, {{"lambd", 0.25f}}));
  b.output(b.node("Sum", {x, y, z}));
  b.output(b.node("Mean", {y, x}));
  expect_ort_bytes_at_every_level(b, "large", {{"x", values(d, 10)}, {"y", values(d, 11)}, {"z", values({}, 12)}});
}

TEST(CompareParity, LargeMaxAndMinSplitOverThreadsAreOrtsBits) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  const ir::Dims d = {2, 3, 100, 117};
  const auto x = b.input("x", d), y = b.input("y", d), z = b.input("z", {});
  b.output(b.node("Max", {x, y}));
  b.output(b.node("Min", {z, y, x}));
  expect_ort_bytes_at_every_level(b, "large_max_min", {{"x", extremum_values(d, 17)}, {"y", extremum_values(d, 18)}, {"z", extremum_values({}, 19)}});
}

}  // namespace compare_parity
}  // namespace octet::parity
