// passes::fuse_residual_adds and the Conv op's fourth input: a ResNet block's
//   Conv -> Add(., shortcut) -> activation
// becomes one Conv that adds the shortcut (and applies the activation) itself, and it computes
// what the three ops computed; where the fusion must not fire (a broadcast, a second reader,
// a constant) the graph keeps its Add.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/session.h"
#include "kernels/isa.h"
#include "loader/onnx_loader.h"
#include "tests/util/onnx_builder.h"
#include "tests/util/session_passes.h"

namespace octet {
namespace {

using testing::OnnxBuilder;

constexpr const char* kPass = "fuse residual Add (+activation) into Conv";

using testing::count_ops;

// -1 when the pass did not run (the fusion was switched off).
int residual_fused_count(const Session& s) { return testing::pass_changed(s, kPass); }

const ir::Node& node_named(const Session& s, const std::string& name) {
  for (const auto& node : s.graph().nodes)
    if (node.name == name) return node;
  throw std::runtime_error("no node " + name);
}

// The Conv steps whose kernel adds a residual, in the plan at `batch`.
std::vector<PlanStep> residual_steps(Session& s, int64_t batch) {
  std::vector<PlanStep> out;
  for (const PlanStep& step : s.plan_for(s.input_dims_at(batch)).steps())
    if (step.op == "Conv" && step.kernel.find("+residual") != std::string::npos) out.push_back(step);
  return out;
}

// `t` followed by `act`: "Relu", "Clip" (0..6, as torchvision's Relu6), "HardSwish",
// "Silu" (Sigmoid then Mul, as torch exports it) or "" for none.
std::string then_activation(OnnxBuilder& b, const std::string& act, const std::string& t) {
  if (act.empty()) return t;
  if (act == "Clip") return b.node("Clip", {t, b.initializer("", {}, {0.0f}), b.initializer("", {}, {6.0f})});
  if (act == "Silu") return b.node("Mul", {t, b.node("Sigmoid", {t})});
  return b.node(act, {t});
}

testing::Attrs conv3x3(int group = 1, int stride = 1) {
  return {{"kernel_shape", {3, 3}}, {"pads", {1, 1, 1, 1}}, {"strides", {stride, stride}}, {"group", group}};
}

// A ResNet basic block on [batch, c, hw, hw]:
//   x -> Conv 3x3 + Relu -> Conv 3x3 ("conv2") -> Add(., x) -> act
struct ResidualBlock {
  int c = 16, hw = 10;
  std::string act = "Relu";
  bool residual_first = false;  // Add(x, conv2) rather than Add(conv2, x)
  bool bias = true;             // conv2's bias
  int group = 1;                // conv2's group (c: depthwise)
  bool fixed_batch = false;     // x is [1, c, hw, hw]: no unknown extent
};

ir::Graph basic_block_graph(const ResidualBlock& bl) {
  OnnxBuilder b(14, "residual", 5);
  auto x = b.input("x", {bl.fixed_batch ? 1 : -1, bl.c, bl.hw, bl.hw});
  auto h = b.node("Relu", {b.node("Conv", {x, b.random_normal_init("w1", {bl.c, bl.c, 3, 3}, 0.0f, 0.1f),
                                           b.random_normal_init("b1", {bl.c})}, conv3x3())});
  std::vector<std::string> conv2_in = {h, b.random_normal_init("w2", {bl.c, bl.c / bl.group, 3, 3}, 0.0f, 0.1f)};
  if (bl.bias) conv2_in.push_back(b.random_normal_init("b2", {bl.c}));
  auto t = b.node("Conv", conv2_in, conv3x3(bl.group), "conv2");
  b.output(then_activation(b, bl.act, bl.residual_first ? b.node("Add", {x, t}) : b.node("Add", {t, x})));
  return loader::load_onnx_bytes(b.serialize(), "residual");
}

// A ResNet bottleneck that halves the map: the main path ends in "conv3" (1x1, c -> 2c), the
// shortcut is "downsample" (1x1 stride 2, c -> 2c), and Add(conv3, downsample) -> Relu.
// `downsample_first` puts the shortcut's conv first in node order.
ir::Graph downsample_graph(bool downsample_first) {
  constexpr int c = 16, mid = 8, out_c = 32, hw = 10;
  OnnxBuilder b(13, "downsample", 9);
  auto x = b.input("x", {-1, c, hw, hw});
  auto shortcut = [&] {
    return b.node("Conv", {x, b.random_normal_init("wd", {out_c, c, 1, 1}, 0.0f, 0.25f),
                           b.random_normal_init("bd", {out_c})}, {{"strides", {2, 2}}}, "downsample");
  };
  std::string ds = downsample_first ? shortcut() : "";
  auto h = b.node("Relu", {b.node("Conv", {x, b.random_normal_init("w1", {mid, c, 1, 1}, 0.0f, 0.25f),
                                           b.random_normal_init("b1", {mid})})});
  h = b.node("Relu", {b.node("Conv", {h, b.random_normal_init("w2", {mid, mid, 3, 3}, 0.0f, 0.1f),
                                      b.random_normal_init("b2", {mid})}, conv3x3(1, 2))});
  auto t = b.node("Conv", {h, b.random_normal_init("w3", {out_c, mid, 1, 1}, 0.0f, 0.3f),
                           b.random_normal_init("b3", {out_c})}, {}, "conv3");
  if (!downsample_first) ds = shortcut();
  b.output(b.node("Relu", {b.node("Add", {t, ds})}));
  return loader::load_onnx_bytes(b.serialize(), "downsample");
}

// Two basic blocks in a row: the second block's shortcut is the first block's output, which
// after the fusion is written by the first block's fused conv.
ir::Graph two_blocks_graph() {
  constexpr int c = 16, hw = 10;
  OnnxBuilder b(13, "two_blocks", 13);
  auto y = b.input("x", {-1, c, hw, hw});
  for (int i = 0; i < 2; ++i) {
    const std::string k = std::to_string(i);
    auto h = b.node("Relu", {b.node("Conv", {y, b.random_normal_init("wa" + k, {c, c, 3, 3}, 0.0f, 0.1f),
                                             b.random_normal_init("ba" + k, {c})}, conv3x3())});
    auto t = b.node("Conv", {h, b.random_normal_init("wb" + k, {c, c, 3, 3}, 0.0f, 0.1f),
                             b.random_normal_init("bb" + k, {c})}, conv3x3());
    y = b.node("Relu", {b.node("Add", {t, y})});
  }
  b.output(y);
  return loader::load_onnx_bytes(b.serialize(), "two_blocks");
}

// Runs both sessions on the same random inputs, every unknown extent set to `batch`; every
// output within 1e-5 relative + 1e-6 absolute.
void expect_same_outputs(Session& fused, Session& plain, int64_t batch, const std::string& what) {
  SCOPED_TRACE(what + " at batch " + std::to_string(batch));
  std::vector<ir::TensorData> in;
  const std::vector<ir::Dims> dims = fused.input_dims_at(batch);
  for (size_t i = 0; i < dims.size(); ++i)
    in.push_back(ir::TensorData::f32(dims[i], testing::random_normal(size_t(ir::element_count(dims[i])),
                                                                     uint32_t(17 + 31 * i + batch))));
  const auto a = fused.run(in);
  const auto b = plain.run(in);
  ASSERT_EQ(a.size(), b.size());
  for (size_t o = 0; o < a.size(); ++o) {
    ASSERT_EQ(a[o].dims, b[o].dims) << "output " << o;
    for (int64_t i = 0; i < a[o].count(); ++i) {
      const float want = b[o].as<float>()[i];
      ASSERT_NEAR(a[o].as<float>()[i], want, 1e-5f * std::fabs(want) + 1e-6f) << "output " << o << " at " << i;
    }
  }
}

// Sessions on the graph with and without the fusion (otherwise the same `options`): `fused`
// Adds fused, and both agree at each of `batches`. Returns the fused session for inspection.
Session expect_fusion(const std::function<ir::Graph()>& graph, int fused, const std::string& what,
                      SessionOptions options = {}, std::vector<int64_t> batches = {1, 3}) {
  SessionOptions unfused_options = options;
  unfused_options.passes.fuse_residual_adds = false;
  Session s(graph(), options);
  Session plain(graph(), unfused_options);
  EXPECT_EQ(residual_fused_count(s), fused) << what;
  EXPECT_EQ(residual_fused_count(plain), -1) << what;
  for (int64_t batch : batches) expect_same_outputs(s, plain, batch, what);
  return s;
}

TEST(ResidualFusion, BasicBlockFusesTheAddAndTheRelu) {
  Session s = expect_fusion([] { return basic_block_graph({}); }, 1, "basic block");
  EXPECT_EQ(count_ops(s, "Add"), 0);
  EXPECT_EQ(count_ops(s, "Relu"), 0);
  const ir::Node& conv2 = node_named(s, "conv2");
  ASSERT_EQ(conv2.inputs.size(), 4u);
  EXPECT_EQ(conv2.inputs[3], "x");
  EXPECT_EQ(conv2.attrs.s("fused_act"), "Relu");
  EXPECT_EQ(conv2.outputs[0], s.graph().outputs[0]);
  const auto steps = residual_steps(s, 1);
  ASSERT_EQ(steps.size(), 1u);
  // A dense 3x3 conv adds the residual per output tile in its SIMD kernel.
  EXPECT_EQ(steps[0].scalar(), kernels::active_isa() == kernels::Isa::scalar) << steps[0].kernel;
  std::cout << "[ residual ] basic block's conv2: " << steps[0].kernel << "\n";
  // The direct conv's tiles too, where Winograd took the 3x3 above.
  SessionOptions direct;
  direct.winograd = false;
  Session d = expect_fusion([] { return basic_block_graph({}); }, 1, "basic block, no Winograd", direct);
  const auto direct_steps = residual_steps(d, 3);
  ASSERT_EQ(direct_steps.size(), 1u);
  EXPECT_EQ(direct_steps[0].kernel.find("winograd"), std::string::npos) << direct_steps[0].kernel;
  std::cout << "[ residual ] without Winograd: " << direct_steps[0].kernel << "\n";
}

// The conv that runs last takes the other's output as its residual. An exception (a conv
// reading a residual not yet written) fails this order only.
void expect_fused_into_the_later_conv(bool downsample_first) {
  const std::string what = downsample_first ? "downsample conv first" : "conv3 first";
  SCOPED_TRACE(what);
  try {
    Session s = expect_fusion([&] { return downsample_graph(downsample_first); }, 1, what);
    EXPECT_EQ(count_ops(s, "Add"), 0);
    EXPECT_EQ(count_ops(s, "Relu"), 0);  // the main path's two fuse into their convs as well
    const ir::Node& later = node_named(s, downsample_first ? "conv3" : "downsample");
    const ir::Node& earlier = node_named(s, downsample_first ? "downsample" : "conv3");
    ASSERT_EQ(later.inputs.size(), 4u);
    EXPECT_EQ(earlier.inputs.size(), 3u);
    EXPECT_EQ(later.inputs[3], earlier.outputs[0]);
    EXPECT_EQ(later.attrs.s("fused_act"), "Relu");
    EXPECT_FALSE(earlier.attrs.has("fused_act"));
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
  }
}

TEST(ResidualFusion, DownsampleBlockFusesIntoTheConvThatRunsLast) {
  expect_fused_into_the_later_conv(false);
  expect_fused_into_the_later_conv(true);
}

TEST(ResidualFusion, EitherOperandOrderAndEveryActivation) {
  ResidualBlock swapped;
  swapped.residual_first = true;
  expect_fusion([&] { return basic_block_graph(swapped); }, 1, "Add(x, conv)");
  for (const char* act : {"", "Clip", "HardSwish", "Silu"}) {
    ResidualBlock bl;
    bl.act = act;
    const std::string what = std::string("activation '") + act + "'";
    Session s = expect_fusion([&] { return basic_block_graph(bl); }, 1, what);
    EXPECT_EQ(count_ops(s, "Add"), 0) << what;
    const ir::Node& conv2 = node_named(s, "conv2");
    ASSERT_EQ(conv2.inputs.size(), 4u) << what;
    if (*act) {
      EXPECT_EQ(conv2.attrs.s("fused_act"), bl.act) << what;
      EXPECT_EQ(conv2.outputs[0], s.graph().outputs[0]) << what;  // the activation's output
    } else {
      EXPECT_FALSE(conv2.attrs.has("fused_act")) << what;
    }
    for (const char* op : {"Clip", "HardSwish", "Sigmoid", "Mul"}) EXPECT_EQ(count_ops(s, op), 0) << what << ": " << op;
  }
}

TEST(ResidualFusion, ConvWithoutBiasTakesTheResidualAsFourthInput) {
  ResidualBlock bl;
  bl.bias = false;
  Session s = expect_fusion([&] { return basic_block_graph(bl); }, 1, "no bias");
  const ir::Node& conv2 = node_named(s, "conv2");
  ASSERT_EQ(conv2.inputs.size(), 4u);
  EXPECT_EQ(conv2.inputs[2], "");
  EXPECT_EQ(conv2.inputs[3], "x");
}

using Tail = std::function<void(OnnxBuilder&, const std::string& x)>;

// x [batch, 8, 6, 6] (or [1, 8, 6, 6]) and the rest of the graph from `tail`.
ir::Graph small_graph(const Tail& tail, bool fixed_batch) {
  OnnxBuilder b(13, "not_fused", 21);
  tail(b, b.input("x", {fixed_batch ? 1 : -1, 8, 6, 6}));
  return loader::load_onnx_bytes(b.serialize(), "not_fused");
}

std::string conv8(OnnxBuilder& b, const std::string& x) {
  return b.node("Conv", {x, b.random_normal_init("", {8, 8, 3, 3}, 0.0f, 0.2f), b.random_normal_init("", {8})},
                conv3x3());
}

// Count 0, the Add kept, and the same outputs as without the pass. An exception (a residual
// of the wrong shape reaching the Conv) is a failure of this case, and the next still runs.
void expect_not_fused(const std::string& what, const Tail& tail, bool fixed_batch = false) {
  SCOPED_TRACE(what);
  try {
    Session s = expect_fusion([&] { return small_graph(tail, fixed_batch); }, 0, what, {},
                              fixed_batch ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 3});
    EXPECT_EQ(count_ops(s, "Add"), 1);
    for (const auto& n : s.graph().nodes) EXPECT_LE(n.inputs.size(), 3u) << n.name;
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
  }
}

TEST(ResidualFusion, NotFusedWhenTheOperandBroadcasts) {
  expect_not_fused("[N, C, 1, 1] operand", [](OnnxBuilder& b, const std::string& x) {
    // Written before the conv, so that only the shapes keep the pass from fusing.
    auto pooled = b.node("GlobalAveragePool", {x});
    b.output(b.node("Relu", {b.node("Add", {conv8(b, x), pooled})}));
  });
  // The plan at batch 2 tells this one apart.
  expect_not_fused("[1, C, H, W] operand", [](OnnxBuilder& b, const std::string& x) {
    b.output(b.node("Relu", {b.node("Add", {conv8(b, x), b.input("r", {1, 8, 6, 6})})}));
  });
}

TEST(ResidualFusion, NotFusedWhereTheConvOutputOrTheOperandMustStay) {
  expect_not_fused("conv output read by another node", [](OnnxBuilder& b, const std::string& x) {
    auto t = conv8(b, x);
    b.output(b.node("Relu", {b.node("Add", {t, x})}));
    b.output(b.node("Sigmoid", {t}));
  });
  expect_not_fused("conv output is a graph output", [](OnnxBuilder& b, const std::string& x) {
    auto t = conv8(b, x);
    b.output(b.node("Relu", {b.node("Add", {t, x})}));
    b.output(t);
  });
  // A fixed batch, so that the constant has the conv output's very shape.
  expect_not_fused("constant operand", [](OnnxBuilder& b, const std::string& x) {
    b.output(b.node("Relu", {b.node("Add", {conv8(b, x), b.random_normal_init("k", {1, 8, 6, 6})})}));
  }, true);
  expect_not_fused("Add(t, t)", [](OnnxBuilder& b, const std::string& x) {
    auto t = conv8(b, x);
    b.output(b.node("Relu", {b.node("Add", {t, t})}));
  });
}

// Depthwise and grouped convs write y first and add the residual in one pass after (the
// depthwise driver's SIMD kernel, or the ref conv for grouped convs and for --isa scalar).
TEST(ResidualFusion, DepthwiseAndGroupedConvsAddTheResidualAfter) {
  std::string ran;
  for (kernels::Isa isa : kernels::runnable_isas()) {
    for (int group : {16, 4}) {
      ResidualBlock bl;
      bl.group = group;
      SessionOptions o;
      o.isa = isa;
      const std::string what = std::string(kernels::isa_name(isa)) + " group " + std::to_string(group);
      Session s = expect_fusion([&] { return basic_block_graph(bl); }, 1, what, o);
      const auto steps = residual_steps(s, 3);
      ASSERT_EQ(steps.size(), 1u) << what;
      EXPECT_EQ(steps[0].node, "conv2") << what;
      // Depthwise convs (F32DwConv, residual added after) and grouped ones (F32Conv's grouped
      // IGEMM, residual added per tile) both have SIMD kernels.
      EXPECT_EQ(steps[0].scalar(), isa == kernels::Isa::scalar) << what << ": " << steps[0].kernel;
      ran += "\n  " + what + ": " + steps[0].kernel;
    }
  }
  std::cout << "[ residual ] kernels run:" << ran << "\n";
}

TEST(ResidualFusion, ChainedBlocksFuseBothAndSliceAndThread) {
  SessionOptions sliced;
  sliced.batch_slice = 2;
  Session s = expect_fusion(two_blocks_graph, 2, "batch slices of 2", sliced);
  EXPECT_TRUE(s.slices_batches());
  EXPECT_EQ(count_ops(s, "Add"), 0);
  EXPECT_EQ(count_ops(s, "Relu"), 0);
  std::vector<const ir::Node*> fused;
  for (const auto& n : s.graph().nodes)
    if (n.op == "Conv" && n.inputs.size() == 4) fused.push_back(&n);
  ASSERT_EQ(fused.size(), 2u);
  EXPECT_EQ(fused[0]->inputs[3], "x");
  EXPECT_EQ(fused[1]->inputs[3], fused[0]->outputs[0]);  // the first block's fused output
  SessionOptions threaded;
  threaded.threads = 2;
  expect_fusion(two_blocks_graph, 2, "2 threads", threaded);
  SessionOptions both = sliced;
  both.threads = 2;
  expect_fusion(two_blocks_graph, 2, "2 threads, batch slices of 2", both);
}

TEST(ResidualFusion, FixedBatchOfOne) {
  ResidualBlock bl;
  bl.fixed_batch = true;
  Session s = expect_fusion([&] { return basic_block_graph(bl); }, 1, "fixed batch", {}, {1});
  EXPECT_EQ(count_ops(s, "Add"), 0);
  EXPECT_EQ(node_named(s, "conv2").inputs.size(), 4u);
}

}  // namespace
}  // namespace octet
