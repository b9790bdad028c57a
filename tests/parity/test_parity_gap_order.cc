// GlobalAveragePool, AveragePool and ReduceMean over H and W are ONNX Runtime's bit for bit at
// every ISA level this CPU runs: octet sums in the order of ORT's kernel for each
// (kernels/ref/pool2d.h: GapOrder, f32_avgpool_sum_rows). In a dynamic INT8 model their float output feeds a
// DynamicQuantizeLinear, where one ulp can move a code.
#include <gtest/gtest.h>

#include <map>
#include <span>
#include <string>
#include <vector>

#include "tests/parity/parity_fixture.h"

namespace octet::parity {
namespace gap_order_parity {

using testing::OnnxBuilder;

// Runs the model in ORT and in octet at every level on `inputs` (named x0, x1, ...) and
// expects every output byte for byte; no pooling step runs a scalar reference at a SIMD level.
void expect_identical(const OnnxBuilder& b, const std::string& name, const std::vector<ir::TensorData>& inputs) {
  std::map<std::string, ir::TensorData> feeds;
  std::vector<ir::Dims> dims;
  for (size_t i = 0; i < inputs.size(); ++i) {
    feeds["x" + std::to_string(i)] = inputs[i];
    dims.push_back(inputs[i].dims);
  }
  expect_ort_bytes_at_every_level(b, name, feeds);
  expect_no_scalar_step_at_simd_levels(b, name, dims, {"GlobalAveragePool", "AveragePool", "ReduceMean", "ReduceSum"});
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

// ORT's layout pass runs an AveragePool in NCHWc only when its shape inference knows the input
// as 4-D with a known channel count; otherwise MLAS's NCHW kernel sums columns first, whatever the
// channel count. The loader follows ORT's rules for that (loader/ort_shapes.cc,
// ir::kShapeKnownToOrtAttr). Each model below pools 40 channels, a multiple of 8, with 3x3 and
// 5x5 windows, so the two orders differ: a wrong verdict fails the comparison.
void pool_twice(OnnxBuilder& b, const std::string& x) {
  for (int64_t k : {3, 5}) {
    testing::Attrs a = {{"kernel_shape", {k, k}}, {"strides", {1, 1}}, {"pads", {1, 1, 1, 1}}, {"count_include_pad", 1}};
    b.output(b.node("AveragePool", {x}, a));
  }
}

std::string unsqueeze0(OnnxBuilder& b, const std::string& scalar) {
  return b.node("Unsqueeze", {scalar, b.initializer_i64("", {1}, {0})});
}

// Shape(x) -> Gather(i): one dimension of x, a scalar.
std::string dim_of(OnnxBuilder& b, const std::string& shape, int64_t i) {
  return b.node("Gather", {shape, b.initializer_i64("", {}, {i})}, {{"axis", 0}});
}

// ResNeSt's split attention: a Reshape to [batch, 2, 20, -1] and back to [batch, 40, 13, 13],
// the batch from Shape -> Gather -> Unsqueeze of the first Reshape's input. ORT's Reshape fusion
// turns both targets into constants, [0, 2, 20, -1] and [0, 40, 13, 13]: a dimension of another
// tensor is kept (0) when it is the reshaped tensor's own at that position (both "N"), so the
// pool's input is [N, 40, 13, 13]: NCHWc.
TEST(GapOrderParity, AveragePoolAfterAReshapeOrtFusesSumsInNchwcOrder) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x0", {-1, 40, 13, 13});
  auto batch = unsqueeze0(b, dim_of(b, b.node("Shape", {x}), 0));
  auto split = b.node("Reshape", {x, b.node("Concat", {batch, b.initializer_i64("", {3}, {2, 20, -1})}, {{"axis", 0}})});
  auto folded = b.node("Reshape", {split, b.node("Concat", {batch, b.initializer_i64("", {3}, {40, 13, 13})}, {{"axis", 0}})});
  pool_twice(b, folded);
  expect_identical(b, "avgpool_fused_reshape", {random_tensor({2, 40, 13, 13}, 97, 3.0f)});
}

// The second Reshape's batch taken from another input, of batch "M", and its channels from x's
// shape (40, where the reshaped tensor has 2): neither is the reshaped tensor's own dimension,
// both become -1 and the fusion allows one; data propagation carries no symbolic dimension. ORT
// does not know the pool's input: NCHW order.
TEST(GapOrderParity, AveragePoolAfterAReshapeWithTwoForeignPiecesSumsInNchwOrder) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x0", {-1, 40, 13, 13});
  auto y = b.input("x1", {-2, 7});
  auto shape = b.node("Shape", {x});
  auto split = b.node("Reshape", {x, b.node("Concat", {unsqueeze0(b, dim_of(b, shape, 0)),
                                                       b.initializer_i64("", {3}, {2, 20, -1})}, {{"axis", 0}})});
  auto target = b.node("Concat", {unsqueeze0(b, dim_of(b, b.node("Shape", {y}), 0)), unsqueeze0(b, dim_of(b, shape, 1)),
                                  b.initializer_i64("", {2}, {13, 13})}, {{"axis", 0}});
  pool_twice(b, b.node("Reshape", {split, target}));
  expect_identical(b, "avgpool_reshape_two_foreign",
                   {random_tensor({2, 40, 13, 13}, 98, 3.0f), random_tensor({2, 7}, 106, 1.0f)});
}

// The fusion needs the Concat to feed its Reshape alone: here it also feeds a second Reshape,
// so neither target becomes a constant and ORT does not know the pool's input: NCHW order.
TEST(GapOrderParity, AveragePoolAfterAReshapeWithASharedTargetSumsInNchwOrder) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x0", {-1, 40, 13, 13});
  auto y = b.input("x1", {-1, 40, 169});
  auto target = b.node("Concat", {unsqueeze0(b, dim_of(b, b.node("Shape", {x}), 0)),
                                  b.initializer_i64("", {3}, {40, 13, 13})}, {{"axis", 0}});
  pool_twice(b, b.node("Reshape", {x, target}));
  pool_twice(b, b.node("Reshape", {y, target}));
  expect_identical(b, "avgpool_reshape_shared_target",
                   {random_tensor({2, 40, 13, 13}, 99, 3.0f), random_tensor({2, 40, 169}, 100, 3.0f)});
}

// A fixed batch: constant folding computes Shape and the arithmetic on it (here the channels
// halved by Div and doubled back by Mul with initializers, which data propagation alone would
// not follow), so the Reshape target is a constant and ORT knows the pool's input: NCHWc.
TEST(GapOrderParity, AveragePoolAfterAReshapeOfAFixedShapeSumsInNchwcOrder) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x0", {2, 40, 169});
  auto shape = b.node("Shape", {x});
  auto two = b.initializer_i64("", {}, {2});
  auto channels = b.node("Mul", {b.node("Div", {dim_of(b, shape, 1), two}), two});
  auto target = b.node("Concat", {unsqueeze0(b, dim_of(b, shape, 0)), unsqueeze0(b, channels),
                                  b.initializer_i64("", {2}, {13, 13})}, {{"axis", 0}});
  pool_twice(b, b.node("Reshape", {x, target}));
  expect_identical(b, "avgpool_reshape_fixed_shape", {random_tensor({2, 40, 169}, 101, 3.0f)});
}

// ORT's data propagation of shape values: Shape with a start (opset 15) leaves out the symbolic
// batch, so its value [40, 13, 13] is known; Gather, Squeeze, Unsqueeze, Add, Sub, Mul and Div
// carry scalars taken from it, and Concat joins the pieces into [1, 40, 13, 13]. No piece is a
// constant and the fusion cannot apply (four one-element pieces), so only propagation explains
// that ORT knows the pool's input: NCHWc.
TEST(GapOrderParity, AveragePoolAfterAReshapeToPropagatedShapeValuesSumsInNchwcOrder) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(15);
  auto x = b.input("x0", {-1, 40, 13, 13});
  auto z = b.input("x1", {6760});
  auto shape = b.node("Shape", {x}, {{"start", 1}});
  auto c = dim_of(b, shape, 0), h = dim_of(b, shape, 1), w = dim_of(b, shape, 2);
  auto one = b.node("Div", {h, w});
  auto channels = b.node("Squeeze", {unsqueeze0(b, c), b.initializer_i64("", {1}, {0})});
  auto height = b.node("Mul", {one, h});
  auto width = b.node("Sub", {b.node("Add", {h, w}), h});
  auto target = b.node("Concat", {unsqueeze0(b, one), unsqueeze0(b, channels), unsqueeze0(b, height),
                                  unsqueeze0(b, width)}, {{"axis", 0}});
  pool_twice(b, b.node("Reshape", {z, target}));
  expect_identical(b, "avgpool_reshape_propagated",
                   {random_tensor({1, 40, 13, 13}, 102, 3.0f), random_tensor({6760}, 103, 3.0f)});
}

// The same with the leading 1 an initializer: ORT's data propagation never reads a constant's
// content (only values it propagated), so Concat yields no value; the fusion sees three
// one-element pieces. ORT does not know the pool's input: NCHW order.
TEST(GapOrderParity, AveragePoolAfterAReshapeMixingConstantAndPropagatedPiecesSumsInNchwOrder) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(15);
  auto x = b.input("x0", {-1, 40, 13, 13});
  auto z = b.input("x1", {6760});
  auto shape = b.node("Shape", {x}, {{"start", 1}});
  auto target = b.node("Concat", {b.initializer_i64("", {1}, {1}), unsqueeze0(b, dim_of(b, shape, 0)),
                                  unsqueeze0(b, dim_of(b, shape, 1)), unsqueeze0(b, dim_of(b, shape, 2))},
                       {{"axis", 0}});
  pool_twice(b, b.node("Reshape", {z, target}));
  expect_identical(b, "avgpool_reshape_mixed_pieces",
                   {random_tensor({1, 40, 13, 13}, 104, 3.0f), random_tensor({6760}, 105, 3.0f)});
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
