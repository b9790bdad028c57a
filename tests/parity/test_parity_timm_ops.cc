// The ops timm's CNN families export that octet added for them, each in the pattern the family
// writes, against ONNX Runtime at batches 1 and 5 (ParityTest: FP32 within its tolerance):
// ReduceSum over the group axis (ResNeSt's split attention, SKNet's selective kernels), Expand
// of an SE gate to the map (ECA-ResNet), ConstantOfShape into Pad's pads (TResNet's
// anti-aliasing), InstanceNormalization as GroupNorm exports it, Ceil / Floor in "same" padding
// computed from the shape (TF-ported EfficientNets), MatMul of two activations (global-context
// attention pooling), and BatchNormalization whose training outputs are declared but unread.
#include <gtest/gtest.h>

#include <cstring>

#include "engine/session.h"
#include "kernels/isa.h"
#include "tests/parity/parity_fixture.h"
#include "io/tensor_io.h"

namespace octet::parity {
namespace timm_ops_parity {

using testing::ElemType;
using testing::OnnxBuilder;
using testing::TensorValue;

std::string i64s(OnnxBuilder& b, std::vector<int64_t> v) { return b.initializer_i64("", {int64_t(v.size())}, v); }

class TimmOpsParity : public ParityTest {};

// [N, 2C, H, W] viewed as [N, 2, C, H, W], summed over the 2 paths, a gate per path, summed again.
TEST_F(TimmOpsParity, ReduceSumOverTheGroupAxis) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 32, 9, 7});
  auto split = b.node("Reshape", {x, i64s(b, {0, 2, 16, 9, 7})});
  auto sum = b.node("ReduceSum", {split, i64s(b, {1})}, {{"keepdims", 0}});
  auto gate = b.node("Sigmoid", {b.node("ReduceMean", {sum}, {{"axes", {2, 3}}, {"keepdims", 1}})});
  auto weighted = b.node("Mul", {split, b.node("Unsqueeze", {gate, i64s(b, {1})})});
  b.output(b.node("ReduceSum", {weighted, i64s(b, {1})}, {{"keepdims", 0}}));
  b.output(b.node("ReduceSum", {x, i64s(b, {-1, 2})}, {{"keepdims", 1}}));
  check_model(b, "reduce_sum_group_axis");
}

TEST_F(TimmOpsParity, ExpandOfAGateToTheMap) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 24, 6, 5});
  auto pooled = b.node("GlobalAveragePool", {x});
  auto gate = b.node("Sigmoid", {pooled});
  b.output(b.node("Mul", {x, b.node("Expand", {gate, b.node("Shape", {x})})}));
  b.output(b.node("Expand", {b.node("Flatten", {pooled}), i64s(b, {3, 1, 24})}));
  check_model(b, "expand_gate");
}

TEST_F(TimmOpsParity, ConstantOfShapeIntoPads) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 8, 7, 6});
  auto zeros = b.node("ConstantOfShape", {i64s(b, {4})}, {{"value", TensorValue::ints(ElemType::s64, {1}, {0})}});
  auto pads = b.node("Concat", {i64s(b, {0, 0, 1, 1}), zeros}, {{"axis", 0}});
  b.output(b.node("Pad", {x, pads}, {{"mode", "reflect"}}));
  auto halves = b.node("ConstantOfShape", {b.node("Shape", {x})}, {{"value", TensorValue::f32({1}, {0.5f})}});
  b.output(b.node("Add", {x, halves}));
  check_model(b, "constant_of_shape");
}

// GroupNorm as torch exports it: Reshape to [N, groups, -1], InstanceNormalization with unit
// scale and zero bias, Reshape back, then the per-channel affine.
TEST_F(TimmOpsParity, InstanceNormalizationAsGroupNorm) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 32, 9, 9});
  auto grouped = b.node("Reshape", {x, i64s(b, {0, 4, -1})});
  auto norm = b.node("InstanceNormalization", {grouped, b.initializer("", {4}, {1, 1, 1, 1}),
                                               b.initializer("", {4}, {0, 0, 0, 0})});
  auto back = b.node("Reshape", {norm, b.node("Shape", {x})});
  b.output(b.node("Add", {b.node("Mul", {back, b.random_normal_init("", {32, 1, 1})}), b.random_normal_init("", {32, 1, 1})}));
  b.output(b.node("InstanceNormalization", {x, b.random_normal_init("", {32}), b.random_normal_init("", {32})},
                  {{"epsilon", 1e-3f}}));
  check_model(b, "instance_norm");
}

// ONNX's GroupNormalization on the GroupNorm kernels: a scale and bias per group at opset 18,
// per channel at 21, rank 3 and 4, against ORT (which runs both).
TEST_F(TimmOpsParity, GroupNormalizationOpsets18And21) {
  OCTET_SKIP_WITHOUT_ORT();
  for (int64_t opset : {18, 21}) {
    OnnxBuilder b(opset);
    const int64_t params = opset < 21 ? 4 : 32;
    auto x = b.input("x", {-1, 32, 9, 9});
    b.output(b.node("GroupNormalization", {x, b.random_normal_init("", {params}), b.random_normal_init("", {params})},
                    {{"num_groups", int64_t{4}}, {"epsilon", 1e-3f}}));
    auto seq = b.input("seq", {-1, 32, 50});
    b.output(b.node("GroupNormalization", {seq, b.random_normal_init("", {opset < 21 ? 8 : 32}),
                                           b.random_normal_init("", {opset < 21 ? 8 : 32})},
                    {{"num_groups", int64_t{8}}}));
    check_model(b, "group_normalization_" + std::to_string(opset));
  }
}

// InstanceNormalization sums as ORT's Eigen code does: bit-identical at every level, in FP32
// and as the codes of a QuantizeLinear after it, on rows that start off a 16-byte boundary
// (63 and 49 values) and on rows too short for one packet.
TEST(TimmOpsExact, InstanceNormalizationIsBitIdenticalToOrt) {
  OCTET_SKIP_WITHOUT_ORT();
  for (const ir::Dims& dims : {ir::Dims{2, 5, 7, 9}, ir::Dims{3, 4, 49}, ir::Dims{2, 3, 3}, ir::Dims{1, 4, 100352}}) {
    OnnxBuilder b(13);
    const int64_t c = dims[1];
    ir::Dims symbolic = dims;
    symbolic[0] = -1;
    auto x = b.input("x", symbolic);
    auto norm = b.node("InstanceNormalization", {x, b.random_normal_init("", {c}), b.random_normal_init("", {c})});
    b.output(norm);
    auto zp = b.initializer("zp", TensorValue::u8({}, {128}));
    b.output(b.node("QuantizeLinear", {norm, b.initializer("s", {}, {0.02f}), zp}), ElemType::u8);
    auto inputs = random_inputs({dims}, dims[0], 11);
    for (float& v : std::span(const_cast<float*>(inputs[0].as<float>()), size_t(inputs[0].count()))) v = v * 3.0f + 0.5f;
    expect_ort_bytes_at_every_level(b, "instance_norm_" + ir::dims_str(dims), {{"x", inputs[0]}});
  }
}

// ReduceSum over the axes ORT's fast paths cover sums in ORT's order: trailing axes (rows of 49
// off a 16-byte boundary, the last axis, every axis; rows of 257 and 380, long-row kernel), a middle axis and the leading one.
// ReduceMean too (opset 13: axes an attribute), over the sets that are not one run of memory
// (RKRK, KRKR: ORT's generic loop), the RK mean and a KRK mean over 3 rows. A KRK sum or mean
// over more rows (16, 40) is not bit-identical: ORT's order there is neither the rows in order
// nor Eigen's packetwise column reduction (probed with onnxruntime 1.30), so it is not pinned.
TEST(TimmOpsExact, ReduceSumIsBitIdenticalToOrt) {
  OCTET_SKIP_WITHOUT_ORT();
  struct Case {
    ir::Dims dims, axes;
    bool mean = false;
  };
  for (const Case& k : {Case{{2, 16, 7, 7}, {2, 3}}, Case{{3, 5, 6}, {-1}}, Case{{2, 3, 50}, {}},
                        Case{{2, 3, 16, 5, 5}, {1}}, Case{{4, 8, 9}, {0}}, Case{{2, 16, 7, 7}, {0, 2}},
                        Case{{2, 16, 7, 7}, {-3, -1}}, Case{{2, 3, 5, 9, 11}, {1, 3}}, Case{{2, 16, 7, 7}, {0, 2}, true},
                        Case{{2, 16, 7, 7}, {1, 3}, true}, Case{{2, 3, 16, 5, 5}, {1}, true},
                        Case{{6, 5, 33}, {0}, true}, Case{{3, 5, 257}, {-1}}, Case{{2, 7, 19, 20}, {2, 3}, true}}) {
    OnnxBuilder b(13);
    auto x = b.input("x", k.dims);
    std::vector<std::string> in = {x};
    if (k.mean) {
      b.output(b.node("ReduceMean", in, {{"axes", k.axes}, {"keepdims", 0}}));
    } else {
      if (!k.axes.empty()) in.push_back(i64s(b, k.axes));
      b.output(b.node("ReduceSum", in, {{"keepdims", 0}}));
    }
    ScratchDir dir;
    const std::string path = (dir.path() / "reduce_sum.onnx").string();
    b.save(path);
    const auto inputs = random_inputs({k.dims}, k.dims[0], 5);
    const auto theirs = testing::run_ort(path, {{"x", to_npy(inputs[0])}});
    for (kernels::Isa isa : kernels::runnable_isas()) {
      if (isa == kernels::Isa::scalar) continue;  // the strided reference sums in double
      SessionOptions o;
      o.isa = isa;
      Session session = Session::load(path, o);
      const auto mine = session.run(inputs);
      EXPECT_EQ(differing_bytes(mine[0], theirs.at(session.outputs()[0].name)), 0)
          << (k.mean ? "mean " : "sum ") << ir::dims_str(k.dims) << " over " << ir::dims_str(k.axes) << " at "
          << kernels::isa_name(isa);
    }
  }
}

// "Same" padding from the input's shape: pad = max((ceil(H / s) - 1) * s + k - H, 0), split
// floor / ceil between the two sides, on a 3x3 stride-2 conv; Ceil and Floor on data too.
TEST_F(TimmOpsParity, CeilAndFloorInSamePadding) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 4, 9, 10});
  auto hw = b.node("Cast", {b.node("Slice", {b.node("Shape", {x}), i64s(b, {2}), i64s(b, {4})})}, {{"to", 1}});
  auto two = b.initializer("", {}, {2.0f});
  auto out = b.node("Ceil", {b.node("Div", {hw, two})});
  auto total = b.node("Max", {b.node("Sub", {b.node("Add", {b.node("Mul", {b.node("Sub", {out, b.initializer("", {}, {1.0f})}), two}),
                                                           b.initializer("", {}, {3.0f})}),
                                             hw}),
                              b.initializer("", {}, {0.0f})});
  auto begin = b.node("Floor", {b.node("Div", {total, two})});
  auto end = b.node("Sub", {total, begin});
  auto pads = b.node("Cast", {b.node("Concat", {b.initializer("", {2}, {0.0f, 0.0f}), begin, b.initializer("", {2}, {0.0f, 0.0f}), end},
                                     {{"axis", 0}})},
                     {{"to", 7}});
  auto padded = b.node("Pad", {x, pads});
  b.output(b.node("Conv", {padded, b.random_normal_init("", {8, 4, 3, 3}, 0.0f, 0.3f)}, {{"strides", {2, 2}}}));
  auto scaled = b.node("Mul", {x, b.initializer("", {}, {3.7f})});
  b.output(b.node("Ceil", {scaled}));
  b.output(b.node("Floor", {scaled}));
  check_model(b, "ceil_floor_same_padding");
}

// Global-context pooling: [N, 1, C, HW] x [N, 1, HW, 1] with the softmax weights of a 1x1 conv.
TEST_F(TimmOpsParity, MatMulOfTwoActivations) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 40, 7, 9});
  auto logits = b.node("Conv", {x, b.random_normal_init("", {1, 40, 1, 1}, 0.0f, 0.3f)});
  auto weights = b.node("Softmax", {b.node("Reshape", {logits, i64s(b, {0, 1, 63, 1})})}, {{"axis", 2}});
  auto features = b.node("Reshape", {x, i64s(b, {0, 1, 40, 63})});
  b.output(b.node("MatMul", {features, weights}));
  b.output(b.node("MatMul", {features, b.node("Reshape", {x, i64s(b, {0, 1, 63, 40})})}));
  check_model(b, "matmul_activations");
}

TEST(TimmOpsLoad, BatchNormTrainingOutputReadIsRefused) {
  OnnxBuilder b(13);
  auto x = b.input("x", {1, 4, 3, 3});
  auto outs = b.node_multi("BatchNormalization", {x, b.initializer("", {4}, {1, 1, 1, 1}), b.initializer("", {4}, {0, 0, 0, 0}),
                                                  b.initializer("", {4}, {0, 0, 0, 0}), b.initializer("", {4}, {1, 1, 1, 1})},
                           5);
  b.output(outs[0]);
  b.output(outs[1]);
  ScratchDir dir;
  const std::string path = (dir.path() / "bn_training.onnx").string();
  b.save(path);
  try {
    Session::load(path);
    FAIL() << "a graph reading BatchNormalization's running mean loaded";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("training mode is not supported"), std::string::npos) << e.what();
  }
}

TEST(TimmOpsLoad, BatchNormTrainingOutputsUnreadAreDropped) {
  OnnxBuilder b(13);
  auto x = b.input("x", {1, 4, 3, 3});
  auto outs = b.node_multi("BatchNormalization", {x, b.initializer("", {4}, {2, 2, 2, 2}), b.initializer("", {4}, {1, 1, 1, 1}),
                                                  b.initializer("", {4}, {0, 0, 0, 0}), b.initializer("", {4}, {1, 1, 1, 1})},
                           5, {{"epsilon", 0.0f}});
  b.output(outs[0]);
  ScratchDir dir;
  const std::string path = (dir.path() / "bn_unread.onnx").string();
  b.save(path);
  Session s = Session::load(path);
  ir::TensorData in = ir::TensorData::make(ir::DType::f32, {1, 4, 3, 3});
  auto* v = const_cast<float*>(in.as<float>());
  for (int i = 0; i < 36; ++i) v[i] = float(i) * 0.25f;
  const auto out = s.run({in});
  ASSERT_EQ(out.size(), 1u);
  for (int i = 0; i < 36; ++i) EXPECT_EQ(out[0].as<float>()[i], 2.0f * v[i] + 1.0f) << i;
}

}  // namespace timm_ops_parity
}  // namespace octet::parity
