// GlobalAveragePool, AveragePool and ReduceMean over H and W are ONNX Runtime's bit for bit at
// every ISA level this CPU runs: octet sums in the order of ORT's kernel for each
// (kernels/ref/pool2d.h: GapOrder, f32_avgpool_sum_rows). In a dynamic INT8 model their float output feeds a
// DynamicQuantizeLinear, where one ulp can move a code.
#include <gtest/gtest.h>

#include <map>
#include <span>
#include <string>
#include <vector>

#include "engine/session.h"
#include "kernels/isa.h"
#include "tests/parity/parity_fixture.h"
#include "io/tensor_io.h"

namespace octet::parity {
namespace gap_order_parity {

using testing::OnnxBuilder;

// Runs the model in ORT and in octet at every level on `inputs` (named x0, x1, ...) and
// expects every output byte for byte; no pooling step runs a scalar reference at a SIMD level.
void expect_identical(const OnnxBuilder& b, const std::string& name, const std::vector<ir::TensorData>& inputs) {
  ScratchDir dir;
  const std::string path = (dir.path() / (name + ".onnx")).string();
  b.save(path);
  std::map<std::string, npy::Array> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) feeds["x" + std::to_string(i)] = to_npy(inputs[i]);
  const auto theirs = testing::run_ort(path, feeds);
  for (kernels::Isa isa : kernels::runnable_isas()) {
    SessionOptions o;
    o.isa = isa;
    Session session = Session::load(path, o);
    const auto mine = session.run(inputs);
    for (size_t k = 0; k < mine.size(); ++k) {
      const std::string& out = session.outputs()[k].name;
      EXPECT_EQ(differing_bytes(mine[k], theirs.at(out)), 0)
          << name << " output " << out << " at " << kernels::isa_name(isa) << " (" << mine[k].count() << " values)";
    }
    if (isa == kernels::Isa::scalar) continue;
    for (const PlanStep& s : session.plan_for(inputs).steps())
      if (s.op == "GlobalAveragePool" || s.op == "AveragePool" || s.op == "ReduceMean" || s.op == "ReduceSum")
        EXPECT_FALSE(s.scalar()) << name << ": " << s.node << " runs " << s.kernel << " at " << kernels::isa_name(isa);
  }
}

ir::TensorData random_tensor(const ir::Dims& dims, uint32_t seed, float scale) {
  ir::TensorData t = random_inputs({dims}, dims[0], seed)[0];
  for (float& v : std::span(const_cast<float*>(t.as<float>()), size_t(t.count()))) v *= scale;
  return t;
}

// ---- GlobalAveragePool ----

// Spatial sizes from 1x1 to 60x60 (odd, prime, 7x7, single rows and columns) and channel
// counts 1 to 104, multiples of 8 among them, cut by Slice from one input per size: ORT runs
// MLAS's global kernel (four position sums) on each, as on every GlobalAveragePool of the zoo's
// dynamic models (its NCHWc pooling, one sum in order, only replaces a GlobalAveragePool that
// reads a graph input or an NCHWc Conv's output; kernels/ref/pool2d.h).
TEST(GapOrderParity, GlobalAveragePoolOverSizesAndChannelCounts) {
  OCTET_SKIP_WITHOUT_ORT();
  const std::pair<int64_t, int64_t> sizes[] = {{1, 1}, {1, 2}, {2, 2}, {1, 7}, {3, 1},  {3, 5},   {5, 5},  {7, 7},
                                               {9, 9}, {13, 13}, {14, 14}, {17, 31}, {28, 28}, {1, 60}, {60, 60}};
  for (auto [h, w] : sizes) {
    OnnxBuilder b(13);
    auto x = b.input("x0", {-1, 104, h, w});
    for (int64_t c : {1, 3, 4, 7, 8, 12, 16, 20, 24, 40, 96, 100, 104}) {
      auto cut = b.node("Slice", {x, b.initializer_i64("", {1}, {0}), b.initializer_i64("", {1}, {c}),
                                  b.initializer_i64("", {1}, {1})});
      b.output(b.node("GlobalAveragePool", {cut}));
    }
    const std::string name = "gap_" + std::to_string(h) + "x" + std::to_string(w);
    expect_identical(b, name, {random_tensor({2, 104, h, w}, uint32_t(h * 100 + w), 3.0f)});
  }
}

// AveragePool: ORT sums a window as its kernel for the pool does (kernels/ref/pool2d.h,
// f32_avgpool_sum_rows): columns first in MLAS's vector kernel, row-major in its generic kernel
// (stride 3) and in the NCHWc pool its layout pass substitutes when the channels are a
// multiple of this CPU's block. Channel counts on both sides of 8 and 16, with and without pads.
TEST(GapOrderParity, AveragePoolSumsInOrtsOrder) {
  OCTET_SKIP_WITHOUT_ORT();
  struct Case {
    int64_t k, stride, pad;
    bool include_pad;
  };
  const Case cases[] = {{3, 1, 0, false}, {3, 2, 0, false}, {3, 3, 0, false}, {2, 2, 0, false},
                        {3, 1, 1, false}, {3, 1, 1, true},  {5, 2, 2, true},  {7, 1, 0, false}};
  int index = 0;
  for (const Case& c : cases) {
    OnnxBuilder b(13);
    auto x = b.input("x0", {-1, 40, 13, 13});
    for (int64_t ch : {5, 8, 13, 16, 24, 40}) {
      auto cut = b.node("Slice", {x, b.initializer_i64("", {1}, {0}), b.initializer_i64("", {1}, {ch}),
                                  b.initializer_i64("", {1}, {1})});
      testing::Attrs a = {{"kernel_shape", {c.k, c.k}},
                          {"strides", {c.stride, c.stride}},
                          {"pads", {c.pad, c.pad, c.pad, c.pad}},
                          {"count_include_pad", int64_t(c.include_pad)}};
      b.output(b.node("AveragePool", {cut}, a));
    }
    expect_identical(b, "avgpool_" + std::to_string(index), {random_tensor({2, 40, 13, 13}, uint32_t(71 + index), 3.0f)});
    ++index;
  }
}

// ORT's layout pass runs an AveragePool in NCHWc only when it knows the input's shape: after a
// Reshape whose target is computed from the batch (ResNeSt's split attention, TResNet), it keeps
// MLAS's NCHW kernels and their column-first order, whatever the channel count. The loader marks
// such pools from ONNX shape inference (ir::kShapeKnownToOrtAttr); 40 channels, a multiple of
// 8, so the two orders would otherwise be NCHWc's.
TEST(GapOrderParity, AveragePoolOfAShapeOrtCannotInferSumsInMlasNchwOrder) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x0", {-1, 40, 13, 13});
  auto batch = b.node("Unsqueeze", {b.node("Gather", {b.node("Shape", {x}), b.initializer_i64("", {}, {0})}, {{"axis", 0}}),
                                    b.initializer_i64("", {1}, {0})});
  auto split = b.node("Reshape", {x, b.node("Concat", {batch, b.initializer_i64("", {3}, {2, 20, -1})}, {{"axis", 0}})});
  auto folded = b.node("Reshape", {split, b.node("Concat", {batch, b.initializer_i64("", {3}, {40, 13, 13})}, {{"axis", 0}})});
  for (int64_t k : {3, 5}) {
    testing::Attrs a = {{"kernel_shape", {k, k}}, {"strides", {1, 1}}, {"pads", {1, 1, 1, 1}}, {"count_include_pad", 1}};
    b.output(b.node("AveragePool", {folded}, a));
  }
  expect_identical(b, "avgpool_unknown_shape", {random_tensor({2, 40, 13, 13}, 97, 3.0f)});
}

// ReduceMean over H and W (timm's SE blocks): ORT sums each row of its NCHW buffer with Eigen's
// 4-float packets from the row's first 16-byte boundary, so the order changes from channel to
// channel when H * W is not a multiple of 4 (kernels/ref/pool2d.h, eigen_packets4). Sizes
// around one and two packets and odd, even and multiple-of-4 pixel counts; channel counts 1 to
// 104; a batch of 3, whose images start their rows at other phases; both keepdims. The 1x1
// MaxPool (exact) hands octet's channels-last kernel the input, as a conv would.
TEST(GapOrderParity, ReduceMeanOverHAndWSumsInEigensOrder) {
  OCTET_SKIP_WITHOUT_ORT();
  const std::pair<int64_t, int64_t> sizes[] = {{1, 1}, {1, 3}, {2, 2}, {1, 5}, {3, 3}, {2, 5}, {3, 4}, {1, 11},
                                               {3, 5}, {4, 5}, {5, 5}, {7, 7}, {6, 9}, {14, 14}, {13, 17}, {28, 28}};
  OnnxBuilder b(13);
  std::vector<ir::TensorData> inputs;
  int64_t keep = 0;
  for (auto [h, w] : sizes) {
    auto x = b.input("x" + std::to_string(inputs.size()), {-1, 104, h, w});
    for (int64_t c : {1, 3, 4, 7, 8, 12, 16, 20, 24, 37, 96, 104}) {
      auto cut = b.node("Slice", {x, b.initializer_i64("", {1}, {0}), b.initializer_i64("", {1}, {c}),
                                  b.initializer_i64("", {1}, {1})});
      auto pooled = b.node("MaxPool", {cut}, {{"kernel_shape", {1, 1}}});
      b.output(b.node("ReduceMean", {pooled}, {{"axes", {2, 3}}, {"keepdims", keep}}));
      keep = 1 - keep;
    }
    inputs.push_back(random_tensor({3, 104, h, w}, uint32_t(h * 1000 + w), 3.0f));
  }
  expect_identical(b, "reduce_mean_hw", inputs);
}

// The same means of a row-major tensor (timm's split attention and GroupNorm SE blocks: the
// input of the ReduceMean is no conv's output), and ReduceSum over the trailing axes and over
// all of them: octet's row sums (f32_row_sums) take ORT's rows, leads and division as they are.
// The Relu keeps the input row-major.
TEST(GapOrderParity, ReduceMeanAndSumOfRowMajorRowsSumInEigensOrder) {
  OCTET_SKIP_WITHOUT_ORT();
  const std::pair<int64_t, int64_t> sizes[] = {{1, 1}, {1, 3}, {2, 2}, {1, 5}, {3, 3}, {2, 5}, {3, 4},
                                               {5, 5}, {7, 7}, {6, 9}, {14, 14}, {13, 17}, {28, 28}};
  OnnxBuilder b(13);
  std::vector<ir::TensorData> inputs;
  int64_t keep = 0;
  for (auto [h, w] : sizes) {
    auto x = b.input("x" + std::to_string(inputs.size()), {-1, 37, h, w});
    auto relu = b.node("Relu", {x});
    b.output(b.node("ReduceMean", {relu}, {{"axes", {2, 3}}, {"keepdims", keep}}));
    b.output(b.node("ReduceMean", {relu}, {{"axes", {1, 2, 3}}, {"keepdims", 1 - keep}}));
    b.output(b.node("ReduceSum", {relu, b.initializer_i64("", {2}, {2, 3})}, {{"keepdims", keep}}));
    b.output(b.node("ReduceSum", {relu}, {{"keepdims", 1 - keep}}));
    keep = 1 - keep;
    inputs.push_back(random_tensor({3, 37, h, w}, uint32_t(h * 1000 + w + 7), 3.0f));
  }
  expect_identical(b, "reduce_rows", inputs);
}

}  // namespace gap_order_parity
}  // namespace octet::parity
