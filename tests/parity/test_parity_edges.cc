// ONNX Runtime's answer at the edges of three ops, byte for byte at every level and thread count:
// Pad with a crop and an edge / reflect pad on the same axis (every pair of pads around small
// axes; where ORT refuses the model octet must refuse it too), TopK over rows full of NaN, ±0
// and ±inf (each of ORT's three selections: the scan, its heap, nth_element), and Unique over the
// same values (NaN equal to nothing, so which key a NaN joins depends on the map's walk).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "engine/session.h"
#include "tests/parity/parity_fixture.h"

namespace octet::parity {
namespace edges_parity {

using testing::ElemType;
using testing::OnnxBuilder;

std::string i64s(OnnxBuilder& b, std::vector<int64_t> v) { return b.initializer_i64("", {int64_t(v.size())}, v); }

// Values that break a comparison-based order: both NaN signs, both zeros, both infinities, ties.
ir::TensorData awkward(const ir::Dims& dims, std::mt19937& rng) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const float pool[] = {nan, -nan, 0.0f, -0.0f, 1.0f, -1.0f, 2.0f, inf, -inf, 0.5f};
  std::vector<float> v(size_t(ir::element_count(dims)));
  for (float& x : v) x = pool[rng() % std::size(pool)];
  return ir::TensorData::f32(dims, v);
}

// Whether ONNX Runtime refuses the model (it fails on the run).
bool ort_refuses(const OnnxBuilder& b, const std::string& name, const std::map<std::string, ir::TensorData>& in) {
  ScratchDir dir;
  const std::string path = (dir.path() / (name + ".onnx")).string();
  b.save(path);
  std::map<std::string, npy::Array> ort_in;
  for (const auto& [k, v] : in) ort_in[k] = npy::Array{static_cast<npy::DType>(v.dtype), v.dims, v.bytes};
  try {
    testing::run_ort(path, ort_in);
  } catch (const std::runtime_error&) {
    return true;
  }
  return false;
}

class EdgesParity : public ParityTest {};

TEST_F(EdgesParity, PadCropsThenPadsAsOrtAndRefusesWhatItRefuses) {
  OCTET_SKIP_WITHOUT_ORT();
  int refused = 0, ran = 0;
  struct Problem {
    ir::Dims dims;
    std::vector<int64_t> pads;
  };
  std::vector<Problem> problems;
  // The inner axis (pad_rows' rows) of 5 and an outer one of 3; pads without a crop are the sweep's.
  for (const auto& [n, axis] : {std::pair<int64_t, int>{5, 1}, {3, 0}})
    for (int64_t begin = -n - 1; begin <= n; ++begin)
      for (int64_t end = -n - 1; end <= n; ++end) {
        if (n + begin + end < 0) continue;  // a negative extent: an error of the model, not a crop
        if (begin >= 0 && end >= 0) continue;
        std::vector<int64_t> pads(4, 0);
        pads[size_t(axis)] = begin;
        pads[size_t(axis) + 2] = end;
        problems.push_back({axis == 0 ? ir::Dims{n, 3} : ir::Dims{2, n}, pads});
      }
  // An empty input: ORT refuses only padding its empty axis (a reflect of the other one may be
  // longer than that axis: nothing is read).
  for (const std::vector<int64_t>& pads : {std::vector<int64_t>{0, 0, 0, 7}, {0, -4, 0, 2}, {1, 0, 0, 0}, {0, 6, 0, 0}})
    problems.push_back({{0, 5}, pads});
  for (const char* mode : {"reflect", "edge"})
    for (const Problem& p : problems) {
      const ir::Dims& dims = p.dims;
      const std::vector<int64_t>& pads = p.pads;
      OnnxBuilder b(18);
      b.output(b.node("Pad", {b.input("x", dims), i64s(b, pads)}, {{"mode", mode}}));
      std::vector<float> v(size_t(ir::element_count(dims)));
      for (size_t i = 0; i < v.size(); ++i) v[i] = float(i + 1);
      const std::map<std::string, ir::TensorData> in{{"x", ir::TensorData::f32(dims, v)}};
      std::string name = std::string("pad_") + mode + "_" + std::to_string(dims[0]) + "x" + std::to_string(dims[1]);
      for (int64_t pad : pads) name += "_" + std::to_string(pad);
      if (ort_refuses(b, name, in)) {
        ScratchDir dir;
        const std::string path = (dir.path() / "m.onnx").string();
        b.save(path);
        EXPECT_THROW(Session::load(path).run({in.at("x")}), std::exception) << name << ": ORT refuses it";
        ++refused;
      } else {
        expect_ort_bytes_at_every_level(b, name, in);
        ++ran;
      }
    }
  // Both kinds occur (a grid that only ran, or only refused, would test half the rule).
  EXPECT_GT(refused, 30);
  EXPECT_GT(ran, 30);
}

TEST_F(EdgesParity, TopKWithNaNAndSignedZerosInOrtsOrder) {
  OCTET_SKIP_WITHOUT_ORT();
  std::mt19937 rng(36);
  // (len, k): k = 1 the scan; k < 4 or log2 k / log2 len < 0.725 ORT's heap; otherwise nth_element.
  const std::pair<int64_t, int64_t> shapes[] = {{9, 1}, {9, 2}, {9, 3}, {9, 5}, {9, 9}, {40, 5},
                                                {40, 14}, {40, 15}, {40, 40}, {97, 20}, {97, 60}, {1, 1}};
  for (const auto& [len, k] : shapes)
    for (int largest : {1, 0})
      for (int axis : {-1, 0}) {
        const ir::Dims dims = axis == -1 ? ir::Dims{6, len} : ir::Dims{len, 5};
        OnnxBuilder b(11);
        auto o = b.node_multi("TopK", {b.input("x", dims), i64s(b, {k})}, 2, {{"largest", largest}, {"axis", axis}});
        b.output(o[0]);
        b.output(o[1], ElemType::s64);
        expect_ort_bytes_at_every_level(b,
                                        "topk_" + std::to_string(len) + "_k" + std::to_string(k) + "_largest" +
                                            std::to_string(largest) + "_axis" + std::to_string(axis),
                                        {{"x", awkward(dims, rng)}});
      }
}

// TopK with sorted = 0: ORT writes the k best in the order its selection leaves them (the heap's
// array; std::nth_element's partition), so octet must leave the same. 30 (len, k) pairs over
// both selections (and the scan), largest and smallest, 24 rows each: distinct values, few
// distinct values (ties), and NaN / +-0 / +-inf; then along axis 0.
TEST_F(EdgesParity, TopKUnsortedInOrtsOrder) {
  OCTET_SKIP_WITHOUT_ORT();
  std::mt19937 rng(50);
  std::normal_distribution<float> normal;
  const std::pair<int64_t, int64_t> shapes[] = {
      {2, 2},    {5, 2},    {5, 3},     {5, 4},    {5, 5},     {9, 3},     {9, 4},     {9, 6},
      {9, 9},    {16, 4},   {16, 5},    {16, 8},   {16, 16},   {40, 5},    {40, 14},   {40, 15},
      {40, 33},  {97, 20},  {97, 27},   {97, 60},  {300, 3},   {300, 60},  {300, 63},  {300, 200},
      {1000, 10}, {1000, 100}, {1000, 150}, {1000, 999}, {1, 1}, {7, 1}};
  int heap = 0, partition = 0;
  for (const auto& [len, k] : shapes)
    for (int largest : {1, 0})
      for (int axis : {-1, 0}) {
        if (axis == 0 && len > 100) continue;
        const int64_t rows = axis == -1 ? 24 : 6;
        const ir::Dims dims = axis == -1 ? ir::Dims{rows, len} : ir::Dims{len, rows};
        std::vector<float> v(size_t(rows * len));
        const ir::TensorData odd = awkward(dims, rng);
        for (int64_t i = 0; i < rows * len; ++i) {
          const int64_t row = axis == -1 ? i / len : i % rows;
          v[size_t(i)] = row % 3 == 0 ? normal(rng) : row % 3 == 1 ? float(rng() % 5) : odd.as<float>()[i];
        }
        OnnxBuilder b(11);
        auto o = b.node_multi("TopK", {b.input("x", dims), i64s(b, {k})}, 2,
                              {{"largest", largest}, {"axis", axis}, {"sorted", 0}});
        b.output(o[0]);
        b.output(o[1], ElemType::s64);
        expect_ort_bytes_at_every_level(b,
                                        "topk_unsorted_" + std::to_string(len) + "_k" + std::to_string(k) +
                                            "_largest" + std::to_string(largest) + "_axis" + std::to_string(axis),
                                        {{"x", ir::TensorData::f32(dims, v)}});
        const bool by_heap = k < 4 || std::log2(double(k)) / std::log2(double(len)) < 0.725;
        (k > 1 && by_heap ? heap : partition) += k > 1 ? int(rows) : 0;
      }
  // Both selections, on at least 600 rows each.
  EXPECT_GE(heap, 600);
  EXPECT_GE(partition, 600);
}

TEST_F(EdgesParity, UniqueWithNaNAndSignedZerosAsOrt) {
  OCTET_SKIP_WITHOUT_ORT();
  std::mt19937 rng(11);
  for (int trial = 0; trial < 24; ++trial)
    for (int sorted : {1, 0}) {
      const int64_t n = 1 + int64_t(rng() % 60);
      const int kind = trial % 3;  // flattened, along axis 0 of [n, 2], along axis 1 of [2, n]
      const ir::Dims dims = kind == 0 ? ir::Dims{n} : kind == 1 ? ir::Dims{n, 2} : ir::Dims{2, n};
      OnnxBuilder b(11);
      testing::Attrs attrs = {{"sorted", sorted}};
      if (kind > 0) attrs.push_back({"axis", kind - 1});
      auto o = b.node_multi("Unique", {b.input("x", dims)}, 4, attrs);
      b.output(o[0]);
      for (size_t i = 1; i < 4; ++i) b.output(o[i], ElemType::s64);
      expect_ort_bytes_at_every_level(b, "unique_" + std::to_string(trial) + "_sorted" + std::to_string(sorted),
                                      {{"x", awkward(dims, rng)}});
    }
}

}  // namespace edges_parity
}  // namespace octet::parity
