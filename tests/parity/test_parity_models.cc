// octet FP32 against ONNX Runtime on small models written here, node for node the way
// torch.onnx.export writes them (Constant nodes for small constants, BatchNormalization left
// in, Clip for ReLU6, the Shape/Gather/Unsqueeze/Concat/Reshape chain of x.view(x.size(0), -1)).
// Each model has a dynamic batch and runs at batch 1 and 5; several also output an inner
// feature map so that a layout or padding slip cannot hide behind global pooling.
#include <gtest/gtest.h>

#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "tests/parity/parity_fixture.h"
#include "tests/util/onnx_builder.h"

namespace octet::parity {
namespace {

using testing::Attrs;
using testing::OnnxBuilder;
using testing::TensorValue;

// Layers as torch exports them, with weights scaled so activations stay O(1) through the
// network (He-style initialisation) and BatchNorm statistics that are far from identity.
class Net {
 public:
  explicit Net(int64_t opset, uint32_t seed = 7) : b(opset, "parity", seed) {}

  OnnxBuilder b;

  struct ConvSpec {
    int64_t k = 3;                      // square kernel unless kh/kw set
    int64_t kh = 0, kw = 0;
    std::vector<int64_t> pads;          // omitted when empty
    std::vector<int64_t> strides;
    std::vector<int64_t> dilations;
    int64_t group = 1;
    std::string auto_pad;               // omitted when empty
    bool bias = true;
  };

  std::string conv(const std::string& x, int64_t cin, int64_t cout, const ConvSpec& s) {
    const int64_t kh = s.kh ? s.kh : s.k, kw = s.kw ? s.kw : s.k;
    const std::string base = "conv" + std::to_string(++convs_);
    const int64_t fan_in = cin / s.group * kh * kw;
    auto w = b.random_normal_init(base + ".weight", {cout, cin / s.group, kh, kw}, 0.0f,
                                  std::sqrt(2.0f / float(fan_in)));
    std::vector<std::string> in = {x, w};
    if (s.bias) in.push_back(b.random_normal_init(base + ".bias", {cout}, 0.0f, 0.1f));
    Attrs a;
    if (!s.auto_pad.empty()) a.push_back({"auto_pad", s.auto_pad});
    a.push_back({"dilations", s.dilations.empty() ? std::vector<int64_t>{1, 1} : s.dilations});
    a.push_back({"group", s.group});
    a.push_back({"kernel_shape", std::vector<int64_t>{kh, kw}});
    if (!s.pads.empty()) a.push_back({"pads", s.pads});
    a.push_back({"strides", s.strides.empty() ? std::vector<int64_t>{1, 1} : s.strides});
    return b.node("Conv", in, a);
  }

  std::string bn(const std::string& x, int64_t c, float gain_lo = 0.5f, float gain_hi = 1.5f) {
    const std::string base = "bn" + std::to_string(++bns_);
    auto scale = b.random_uniform_init(base + ".weight", {c}, gain_lo, gain_hi);
    auto bias = b.random_normal_init(base + ".bias", {c}, 0.0f, 0.2f);
    auto mean = b.random_normal_init(base + ".running_mean", {c}, 0.0f, 0.2f);
    auto var = b.random_uniform_init(base + ".running_var", {c}, 0.5f, 2.0f);
    return b.node("BatchNormalization", {x, scale, bias, mean, var}, {{"epsilon", 1e-5f}, {"momentum", 0.9f}});
  }

  std::string relu(const std::string& x) { return b.node("Relu", {x}); }

  // nn.ReLU6 / F.hardtanh(0, 6): Clip with bounds as Constant inputs from opset 11, attributes before.
  std::string clip(const std::string& x, float lo, float hi) {
    if (b.opset() < 11) return b.node("Clip", {x}, {{"min", lo}, {"max", hi}});
    auto lo_c = b.constant(TensorValue::scalar_f32(lo));
    auto hi_c = b.constant(TensorValue::scalar_f32(hi));
    return b.node("Clip", {x, lo_c, hi_c});
  }

  std::string unsqueeze(const std::string& x, std::vector<int64_t> axes) {
    if (b.opset() < 13) return b.node("Unsqueeze", {x}, {{"axes", axes}});
    auto ax = b.constant(TensorValue::s64({int64_t(axes.size())}, axes));
    return b.node("Unsqueeze", {x, ax});
  }

  // x.view(x.size(0), -1) exactly as torch exports it.
  std::string view_flatten(const std::string& x) {
    auto shape = b.node("Shape", {x});
    auto zero = b.constant(TensorValue::scalar_s64(0));
    auto n = b.node("Gather", {shape, zero}, {{"axis", 0}});
    auto n1 = unsqueeze(n, {0});
    auto minus1 = b.constant(TensorValue::s64({1}, {-1}));
    auto target = b.node("Concat", {n1, minus1}, {{"axis", 0}});
    return b.node("Reshape", {x, target});
  }

  // nn.Linear: Gemm(transB=1) with a [out, in] weight.
  std::string linear(const std::string& x, int64_t in, int64_t out) {
    const std::string base = "fc" + std::to_string(++fcs_);
    auto w = b.random_normal_init(base + ".weight", {out, in}, 0.0f, std::sqrt(1.0f / float(in)));
    auto bias = b.random_normal_init(base + ".bias", {out}, 0.0f, 0.1f);
    return b.node("Gemm", {x, w, bias}, {{"alpha", 1.0f}, {"beta", 1.0f}, {"transB", 1}});
  }

  // GlobalAveragePool -> view -> Linear: the classifier head of most torchvision CNNs.
  std::string gap_head(const std::string& x, int64_t c, int64_t classes = 10) {
    return linear(view_flatten(b.node("GlobalAveragePool", {x})), c, classes);
  }

 private:
  int convs_ = 0, bns_ = 0, fcs_ = 0;
};

// ---------------------------------------------------------------------------------------------
// MobileNetV2/V3 inverted residual with squeeze-excitation.

enum class Gate { sigmoid, hard_sigmoid };

OnnxBuilder inverted_residual_se(int64_t opset, Gate gate) {
  Net n(opset);
  const int64_t c = 16, hidden = 64, squeeze = 16;
  auto x = n.b.input("input", {-1, c, 8, 10});
  // 1x1 expand + BN + ReLU6; BN gains above 1 so that the clip at 6 really bites.
  auto e = n.clip(n.bn(n.conv(x, c, hidden, {.k = 1, .pads = {0, 0, 0, 0}, .bias = false}), hidden, 1.0f, 3.0f), 0, 6);
  // 3x3 depthwise + BN + ReLU6
  auto d = n.clip(n.bn(n.conv(e, hidden, hidden, {.k = 3, .pads = {1, 1, 1, 1}, .group = hidden, .bias = false}),
                       hidden, 1.0f, 3.0f),
                  0, 6);
  // squeeze-excitation
  auto s = n.b.node("GlobalAveragePool", {d});
  s = n.relu(n.conv(s, hidden, squeeze, {.k = 1, .pads = {0, 0, 0, 0}}));
  s = n.conv(s, squeeze, hidden, {.k = 1, .pads = {0, 0, 0, 0}});
  s = gate == Gate::sigmoid ? n.b.node("Sigmoid", {s})
                            : n.b.node("HardSigmoid", {s}, {{"alpha", 1.0f / 6.0f}, {"beta", 0.5f}});
  auto scaled = n.b.node("Mul", {d, s});
  // 1x1 project + BN, residual add
  auto p = n.bn(n.conv(scaled, hidden, c, {.k = 1, .pads = {0, 0, 0, 0}, .bias = false}), c);
  auto block = n.b.node("Add", {x, p}, {}, "/block/Add");
  auto logits = n.gap_head(block, c);
  n.b.output(block);
  n.b.output(logits);
  return std::move(n.b);
}

TEST_F(ParityTest, InvertedResidualSeSigmoid) {
  OCTET_SKIP_WITHOUT_ORT();
  check_model(inverted_residual_se(13, Gate::sigmoid), "inverted_residual_se_sigmoid_opset13");
}

TEST_F(ParityTest, InvertedResidualSeHardSigmoid) {
  OCTET_SKIP_WITHOUT_ORT();
  check_model(inverted_residual_se(13, Gate::hard_sigmoid), "inverted_residual_se_hardsigmoid_opset13");
}

// Opset 11: Clip bounds are inputs, Unsqueeze axes still an attribute.
TEST_F(ParityTest, InvertedResidualSeOpset11) {
  OCTET_SKIP_WITHOUT_ORT();
  check_model(inverted_residual_se(11, Gate::sigmoid), "inverted_residual_se_sigmoid_opset11");
}

// Opset 10: Clip bounds are attributes.
TEST_F(ParityTest, InvertedResidualSeOpset10) {
  OCTET_SKIP_WITHOUT_ORT();
  check_model(inverted_residual_se(10, Gate::hard_sigmoid), "inverted_residual_se_hardsigmoid_opset10");
}

// ---------------------------------------------------------------------------------------------
// ResNet basic blocks.

OnnxBuilder resnet_basic_block(bool projection) {
  Net n(13);
  auto x = n.b.input("input", {-1, 3, 12, 10});
  auto stem = n.relu(n.bn(n.conv(x, 3, 16, {.k = 3, .pads = {1, 1, 1, 1}, .bias = false}), 16));
  const int64_t cout = projection ? 32 : 16;
  const std::vector<int64_t> stride = projection ? std::vector<int64_t>{2, 2} : std::vector<int64_t>{1, 1};
  auto a = n.relu(n.bn(n.conv(stem, 16, cout, {.k = 3, .pads = {1, 1, 1, 1}, .strides = stride, .bias = false}), cout));
  auto r = n.bn(n.conv(a, cout, cout, {.k = 3, .pads = {1, 1, 1, 1}, .bias = false}), cout);
  std::string shortcut = stem;
  if (projection)
    shortcut = n.bn(n.conv(stem, 16, cout, {.k = 1, .pads = {0, 0, 0, 0}, .strides = {2, 2}, .bias = false}), cout);
  auto block = n.relu(n.b.node("Add", {r, shortcut}));
  auto logits = n.linear(n.b.node("Flatten", {n.b.node("GlobalAveragePool", {block})}, {{"axis", 1}}), cout, 10);
  n.b.output(block);
  n.b.output(logits);
  return std::move(n.b);
}

TEST_F(ParityTest, ResNetBasicBlock) {
  OCTET_SKIP_WITHOUT_ORT();
  check_model(resnet_basic_block(false), "resnet_basic_block");
}

TEST_F(ParityTest, ResNetBasicBlockStridedProjection) {
  OCTET_SKIP_WITHOUT_ORT();
  check_model(resnet_basic_block(true), "resnet_basic_block_projection");
}

// ---------------------------------------------------------------------------------------------
// Geometry corner cases.

// 1x1 spatial input: a 3x3 conv whose window is all padding but the centre.
TEST_F(ParityTest, OneByOneSpatial) {
  OCTET_SKIP_WITHOUT_ORT();
  Net n(13);
  auto x = n.b.input("input", {-1, 8, 1, 1});
  auto y = n.relu(n.conv(x, 8, 16, {.k = 1, .pads = {0, 0, 0, 0}}));
  y = n.relu(n.conv(y, 16, 16, {.k = 3, .pads = {1, 1, 1, 1}}));
  auto f = n.b.node("Flatten", {y}, {{"axis", 1}});
  n.b.output(n.linear(f, 16, 10));
  check_model(n.b, "one_by_one_spatial");
}

// Stride 2 with the TF/Keras 'same' padding at the bottom/right only, and other lopsided pads.
TEST_F(ParityTest, StrideTwoAsymmetricPads) {
  OCTET_SKIP_WITHOUT_ORT();
  Net n(13);
  auto x = n.b.input("input", {-1, 4, 8, 10});
  auto y = n.relu(n.conv(x, 4, 8, {.k = 3, .pads = {0, 0, 1, 1}, .strides = {2, 2}}));  // 4x5
  auto z = n.relu(n.conv(y, 8, 8, {.k = 3, .pads = {1, 2, 0, 1}}));                    // 3x6
  auto w = n.conv(z, 8, 6, {.kh = 2, .kw = 3, .pads = {0, 1, 1, 0}, .strides = {1, 2}});  // 3x3
  n.b.output(y);
  n.b.output(w);
  n.b.output(n.gap_head(w, 6));
  check_model(n.b, "stride2_asymmetric_pads");
}

class AutoPadParity : public ParityTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(AutoPadParity, ConvAndMaxPool) {
  OCTET_SKIP_WITHOUT_ORT();
  const std::string mode = GetParam();
  Net n(13);
  auto x = n.b.input("input", {-1, 4, 16, 13});
  auto y = n.relu(n.conv(x, 4, 8, {.k = 3, .strides = {2, 2}, .auto_pad = mode}));
  y = n.relu(n.conv(y, 8, 8, {.k = 2, .auto_pad = mode}));  // even kernel: SAME pads one side more
  auto p = n.b.node("MaxPool", {y}, {{"auto_pad", mode}, {"kernel_shape", {3, 3}}, {"strides", {2, 2}}});
  n.b.output(y);
  n.b.output(p);
  n.b.output(n.gap_head(p, 8));
  check_model(n.b, "auto_pad_" + mode);
}

INSTANTIATE_TEST_SUITE_P(Modes, AutoPadParity, ::testing::Values("SAME_UPPER", "SAME_LOWER", "VALID"),
                         [](const auto& info) { return std::string(info.param); });

TEST_F(ParityTest, GroupedAndDilatedConv) {
  OCTET_SKIP_WITHOUT_ORT();
  Net n(13);
  auto x = n.b.input("input", {-1, 8, 12, 11});
  auto g2 = n.relu(n.conv(x, 8, 8, {.k = 3, .pads = {1, 1, 1, 1}, .group = 2}));
  auto g4 = n.relu(n.conv(g2, 8, 16, {.k = 3, .pads = {1, 1, 1, 1}, .group = 4}));
  auto d2 = n.relu(n.conv(g4, 16, 16, {.k = 3, .pads = {2, 2, 2, 2}, .dilations = {2, 2}}));
  auto d2s2 = n.conv(d2, 16, 12, {.k = 3, .pads = {2, 1, 2, 1}, .strides = {2, 2}, .dilations = {2, 3}, .group = 4});
  n.b.output(g4);
  n.b.output(d2s2);
  n.b.output(n.gap_head(n.relu(d2s2), 12));
  check_model(n.b, "grouped_dilated_conv");
}

// ---------------------------------------------------------------------------------------------
// Pooling with pads, ceil_mode and count_include_pad.

struct PoolCase {
  int ceil_mode;
  int count_include_pad;
};

void PrintTo(const PoolCase& c, std::ostream* os) {
  *os << "ceil_mode=" << c.ceil_mode << " count_include_pad=" << c.count_include_pad;
}

class PoolParity : public ParityTest, public ::testing::WithParamInterface<PoolCase> {};

TEST_P(PoolParity, MaxPoolThenAveragePool) {
  OCTET_SKIP_WITHOUT_ORT();
  const PoolCase pc = GetParam();
  Net n(13);
  auto x = n.b.input("input", {-1, 6, 10, 9});
  auto y = n.conv(x, 6, 8, {.k = 1, .pads = {0, 0, 0, 0}});
  // With ceil_mode the last window starts in the input and runs past the padding.
  auto m = n.b.node("MaxPool", {y},
                    {{"ceil_mode", pc.ceil_mode}, {"kernel_shape", {3, 3}}, {"pads", {1, 1, 1, 1}}, {"strides", {2, 2}}});
  auto a = n.b.node("AveragePool", {m},
                    {{"ceil_mode", pc.ceil_mode},
                     {"count_include_pad", pc.count_include_pad},
                     {"kernel_shape", {3, 3}},
                     {"pads", {1, 0, 1, 1}},
                     {"strides", {2, 2}}});
  n.b.output(m);
  n.b.output(a);
  n.b.output(n.gap_head(a, 8));
  check_model(n.b, "pool_ceil" + std::to_string(pc.ceil_mode) + "_incpad" + std::to_string(pc.count_include_pad));
}

INSTANTIATE_TEST_SUITE_P(Modes, PoolParity,
                         ::testing::Values(PoolCase{0, 0}, PoolCase{0, 1}, PoolCase{1, 0}, PoolCase{1, 1}),
                         [](const auto& info) {
                           return "ceil" + std::to_string(info.param.ceil_mode) + "_includepad" +
                                  std::to_string(info.param.count_include_pad);
                         });

// ---------------------------------------------------------------------------------------------
// Pad (opset 13: pads and constant_value as inputs) between two convs.

class PadParity : public ParityTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(PadParity, PadBeforeConv) {
  OCTET_SKIP_WITHOUT_ORT();
  const std::string mode = GetParam();
  Net n(13);
  auto x = n.b.input("input", {-1, 4, 8, 7});
  auto y = n.relu(n.conv(x, 4, 6, {.k = 1, .pads = {0, 0, 0, 0}}));
  auto pads = n.b.constant(TensorValue::s64({8}, {0, 0, 1, 2, 0, 0, 2, 1}));
  std::vector<std::string> in = {y, pads};
  if (mode == "constant") in.push_back(n.b.constant(TensorValue::scalar_f32(0.75f)));
  auto p = n.b.node("Pad", in, {{"mode", mode}});
  auto z = n.conv(p, 6, 8, {.k = 3, .pads = {0, 0, 0, 0}});
  // Padding the graph input itself (row-major, straight from the caller).
  auto px = n.b.node("Pad", {x, n.b.constant(TensorValue::s64({8}, {0, 0, 2, 1, 0, 0, 1, 2}))}, {{"mode", mode}});
  n.b.output(p);
  n.b.output(z);
  n.b.output(px);
  n.b.output(n.gap_head(z, 8));
  check_model(n.b, "pad_" + mode);
}

INSTANTIATE_TEST_SUITE_P(Modes, PadParity, ::testing::Values("constant", "reflect", "edge"),
                         [](const auto& info) { return std::string(info.param); });

// ---------------------------------------------------------------------------------------------
// Concat on channels: two conv branches, and a conv branch with the (row-major) graph input.

TEST_F(ParityTest, ConcatConvBranches) {
  OCTET_SKIP_WITHOUT_ORT();
  Net n(13);
  auto x = n.b.input("input", {-1, 4, 9, 8});
  auto a = n.relu(n.conv(x, 4, 6, {.k = 1, .pads = {0, 0, 0, 0}}));
  auto c = n.relu(n.conv(x, 4, 10, {.k = 3, .pads = {1, 1, 1, 1}}));
  auto cat = n.b.node("Concat", {a, c}, {{"axis", 1}});
  auto y = n.relu(n.conv(cat, 16, 8, {.k = 1, .pads = {0, 0, 0, 0}}));
  auto mixed = n.b.node("Concat", {x, y}, {{"axis", 1}});
  auto z = n.conv(mixed, 12, 8, {.k = 3, .pads = {1, 1, 1, 1}});
  n.b.output(cat);
  n.b.output(z);
  n.b.output(n.gap_head(z, 8));
  check_model(n.b, "concat_branches");
}

// ---------------------------------------------------------------------------------------------
// ReduceMean over the spatial axes instead of GlobalAveragePool.

class ReduceMeanParity : public ParityTest, public ::testing::WithParamInterface<int> {};

TEST_P(ReduceMeanParity, SpatialMeanHead) {
  OCTET_SKIP_WITHOUT_ORT();
  const int keepdims = GetParam();
  Net n(13);
  auto x = n.b.input("input", {-1, 4, 7, 9});
  auto y = n.relu(n.conv(x, 4, 12, {.k = 3, .pads = {1, 1, 1, 1}}));
  auto m = n.b.node("ReduceMean", {y}, {{"axes", {2, 3}}, {"keepdims", keepdims}});
  auto f = keepdims ? n.b.node("Flatten", {m}, {{"axis", 1}}) : m;
  n.b.output(m);
  n.b.output(n.linear(f, 12, 10));
  check_model(n.b, "reduce_mean_keepdims" + std::to_string(keepdims));
}

INSTANTIATE_TEST_SUITE_P(KeepDims, ReduceMeanParity, ::testing::Values(1, 0),
                         [](const auto& info) { return "keepdims" + std::to_string(info.param); });

// ---------------------------------------------------------------------------------------------
// Activations and heads.

// HardSwish (opset 14): fused after a conv, and standalone after an Add; Softmax at the end.
TEST_F(ParityTest, HardSwishSoftmax) {
  OCTET_SKIP_WITHOUT_ORT();
  Net n(14);
  auto x = n.b.input("input", {-1, 4, 8, 8});
  auto y = n.b.node("HardSwish", {n.bn(n.conv(x, 4, 16, {.k = 3, .pads = {1, 1, 1, 1}, .bias = false}), 16, 1.0f, 3.0f)});
  auto z = n.conv(y, 16, 16, {.k = 3, .pads = {1, 1, 1, 1}, .group = 16});
  auto h = n.b.node("HardSwish", {n.b.node("Add", {y, z})});
  auto logits = n.gap_head(h, 16);
  n.b.output(h);
  n.b.output(n.b.node("Softmax", {logits}, {{"axis", 1}}));
  check_model(n.b, "hardswish_softmax");
}

// MatMul + Add instead of Gemm, then Softmax over the last axis.
TEST_F(ParityTest, MatMulHead) {
  OCTET_SKIP_WITHOUT_ORT();
  Net n(13);
  auto x = n.b.input("input", {-1, 4, 6, 6});
  auto y = n.relu(n.conv(x, 4, 24, {.k = 3, .pads = {1, 1, 1, 1}}));
  auto f = n.b.node("Flatten", {n.b.node("GlobalAveragePool", {y})}, {{"axis", 1}});
  auto w = n.b.random_normal_init("fc.weight_t", {24, 10}, 0.0f, 0.3f);
  auto bias = n.b.random_normal_init("fc.bias", {10}, 0.0f, 0.1f);
  auto logits = n.b.node("Add", {n.b.node("MatMul", {f, w}), bias});
  n.b.output(logits);
  n.b.output(n.b.node("Softmax", {logits}, {{"axis", -1}}));
  check_model(n.b, "matmul_head");
}

// Flatten (and torch's view chain) of an [N, C, H, W] map with H, W > 1: the channels-last
// activations must be laid out row-major (C, H, W) before the classifier.
TEST_F(ParityTest, FlattenSpatialMap) {
  OCTET_SKIP_WITHOUT_ORT();
  Net n(13);
  auto x = n.b.input("input", {-1, 4, 5, 7});
  auto y = n.relu(n.conv(x, 4, 6, {.k = 3, .pads = {1, 1, 1, 1}}));
  auto flat = n.b.node("Flatten", {y}, {{"axis", 1}});
  auto viewed = n.view_flatten(y);
  n.b.output(flat);
  n.b.output(n.linear(flat, 6 * 5 * 7, 10));
  n.b.output(n.linear(viewed, 6 * 5 * 7, 10));
  check_model(n.b, "flatten_spatial");
}

}  // namespace
}  // namespace octet::parity
