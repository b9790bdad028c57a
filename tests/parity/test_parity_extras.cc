// Beyond the torch-export patterns: op variants and layout mixes a converter or a hand-written
// model can produce (Clip with one bound, Gemm alpha/beta, opset-11 Softmax on 4-D, negative
// Pad, broadcasting against channels-last maps, batched MatMul after Reshape, BatchNorm that
// cannot be folded), and one session reused across many batch sizes (the plan cache).
#include <gtest/gtest.h>

#include "engine/session.h"
#include "tests/parity/parity_fixture.h"

namespace octet::parity {
namespace {

using testing::OnnxBuilder;

TEST_F(ParityTest, ClipWithOneBound) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 4, 5, 6});
  auto y = b.node("Conv", {x, b.random_normal_init("w", {8, 4, 3, 3})}, {{"pads", {1, 1, 1, 1}}});
  b.output(b.node("Clip", {y, "", b.initializer("hi", {}, {0.5f})}));  // fused into the conv, max only
  b.output(b.node("Clip", {x, b.initializer("lo", {}, {-0.5f})}));     // standalone, min only
  check_model(b, "clip_one_bound");
}

TEST_F(ParityTest, GemmAlphaBetaAndNoBias) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 12});
  auto w = b.random_normal_init("w", {12, 7});
  b.output(b.node("Gemm", {x, w}, {{"alpha", 0.5f}}));
  auto y = b.node("Gemm", {x, w, b.random_normal_init("c", {1, 7})}, {{"alpha", 0.5f}, {"beta", 2.0f}});
  b.output(b.node("Relu", {b.node("Gemm", {y, b.random_normal_init("w2", {7, 12})})}));
  check_model(b, "gemm_alpha_beta");
}

// Opset 11: Softmax flattens to 2-D at its axis; Squeeze axes are an attribute.
TEST_F(ParityTest, Opset11ShapeAndSoftmaxVariants) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(11);
  auto x = b.input("x", {-1, 4, 3, 5});
  auto y = b.node("Conv", {x, b.random_normal_init("w", {6, 4, 1, 1})});
  b.output(b.node("Softmax", {y}, {{"axis", 1}}));
  b.output(b.node("Flatten", {y}, {{"axis", 2}}));
  b.output(b.node("Concat", {y, x}, {{"axis", -3}}));
  b.output(b.node("MaxPool", {y}, {{"kernel_shape", {2, 3}}, {"dilations", {1, 2}}, {"pads", {1, 1, 0, 1}}}));
  b.output(b.node("Squeeze", {b.node("GlobalAveragePool", {y})}, {{"axes", {2, 3}}}));
  auto centred = b.node("Sub", {y, b.node("ReduceMean", {y}, {{"axes", {1}}, {"keepdims", 1}})});
  b.output(b.node("Div", {centred, b.initializer("d", {6, 1, 1}, {1, 2, 3, 4, 5, 6})}));
  check_model(b, "opset11_variants");
}

TEST_F(ParityTest, BatchNormThatCannotBeFolded) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 4, 3, 5});
  auto bn = [&](const std::string& in, int64_t c) {
    return b.node("BatchNormalization", {in, b.random_uniform_init("", {c}, 0.5f, 2.0f), b.random_normal_init("", {c}),
                                         b.random_normal_init("", {c}), b.random_uniform_init("", {c}, 0.5f, 2.0f)});
  };
  auto y = b.node("Conv", {x, b.random_normal_init("w", {6, 4, 1, 1})});
  b.output(bn(x, 4));  // on the graph input
  b.output(y);         // the conv output is also read by the BatchNorm below
  b.output(bn(y, 6));
  check_model(b, "batchnorm_unfolded");
}

// ShuffleNetV2's channel shuffle (Reshape -> Transpose -> Reshape, passes::fuse_channel_shuffle):
// with the shapes computed from Shape(x) as torch.onnx.export writes them and with literal
// ones; on a conv output (channels-last: one per-pixel copy) and on the graph input
// (row-major); 2 and 4 groups; followed by the chunk (Split) and a depthwise conv; and a rank-5
// swap of the two innermost axes, which the pass also takes but which is no channel shuffle
// (a channels-last input must be read row-major first).
TEST_F(ParityTest, ChannelShuffleChains) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 16, 6, 5});
  auto i64 = [&](int64_t v) { return b.initializer_i64("", {}, {v}); };
  auto axis0 = b.initializer_i64("", {1}, {0});
  auto dim = [&](const std::string& t, int64_t k) {
    return b.node("Unsqueeze", {b.node("Gather", {b.node("Shape", {t}), i64(k)}, {{"axis", int64_t{0}}}), axis0});
  };
  // As exported: [N, g, C / g, H, W] then [N, -1, H, W], every extent read from the tensor.
  auto shuffle_computed = [&](const std::string& t, int64_t groups) {
    auto per_group = b.node("Cast", {b.node("Div", {b.node("Gather", {b.node("Shape", {t}), i64(1)}, {{"axis", int64_t{0}}}),
                                                    i64(groups)})},
                            {{"to", int64_t{7}}});
    auto split = b.node("Concat", {dim(t, 0), b.initializer_i64("", {1}, {groups}), b.node("Unsqueeze", {per_group, axis0}),
                                   dim(t, 2), dim(t, 3)},
                        {{"axis", int64_t{0}}});
    auto moved = b.node("Transpose", {b.node("Reshape", {t, split})}, {{"perm", {0, 2, 1, 3, 4}}});
    auto back = b.node("Concat", {dim(t, 0), b.initializer_i64("", {1}, {-1}), dim(t, 2), dim(t, 3)}, {{"axis", int64_t{0}}});
    return b.node("Reshape", {moved, back});
  };
  auto shuffle_literal = [&](const std::string& t, int64_t c, int64_t groups, int64_t h, int64_t w) {
    auto r = b.node("Reshape", {t, b.initializer_i64("", {5}, {-1, groups, c / groups, h, w})});
    return b.node("Reshape", {b.node("Transpose", {r}, {{"perm", {0, 2, 1, 3, 4}}}), b.initializer_i64("", {4}, {-1, c, h, w})});
  };
  auto y = b.node("Conv", {x, b.random_normal_init("w", {24, 16, 1, 1})});
  auto halves = b.node_multi("Split", {shuffle_computed(y, 2), b.initializer_i64("", {2}, {12, 12})}, 2, {{"axis", int64_t{1}}});
  b.output(halves[0]);
  b.output(b.node("Conv", {halves[1], b.random_normal_init("dw", {12, 1, 3, 3})}, {{"group", int64_t{12}}, {"pads", {1, 1, 1, 1}}}));
  b.output(shuffle_literal(y, 24, 4, 6, 5));
  b.output(shuffle_computed(x, 4));  // the graph input, row-major
  // C and H merged: no view of channels-last memory.
  auto merged = b.node("Reshape", {y, b.initializer_i64("", {5}, {-1, 144, 5, 1, 1})});
  auto swapped = b.node("Transpose", {merged}, {{"perm", {0, 2, 1, 3, 4}}});
  b.output(b.node("Reshape", {swapped, b.initializer_i64("", {4}, {-1, 24, 6, 5})}));
  check_model(b, "channel_shuffle");

  ScratchDir dir("octet-shuffle");
  const std::string path = (dir.path() / "m.onnx").string();
  b.save(path);
  Session session = Session::load(path);
  int shuffles = 0;
  for (const auto& n : session.graph().nodes) {
    EXPECT_NE(n.op, "Transpose") << n.name;
    shuffles += n.op == "ChannelShuffle";
  }
  EXPECT_EQ(shuffles, 4);
  // One copy per chain, no relayout step; only the merged-axes chain reads its input
  // row-major first (its kernel names both copies).
  int relayouts = 0, two_copies = 0;
  for (const PlanStep& s : session.plan_for(std::vector<ir::Dims>{{2, 16, 6, 5}}).steps()) {
    relayouts += s.node.starts_with("relayout ") && !s.node.starts_with("relayout x");
    two_copies += s.op == "ChannelShuffle" && s.kernel.find(" + ") != std::string::npos;
  }
  EXPECT_EQ(relayouts, 0);
  EXPECT_EQ(two_copies, 1);
}

// YOLOv5's anchor head (passes::fuse_reshape_transpose): a conv's [N, 3 * K, H, W] output viewed
// as [N, 3, K, H, W] (the batch read with Shape, as torch exports view(bs, ...)) and permuted to
// [N, 3, H, W, K], then Sigmoid; the same on the graph input (row-major); and a view that
// merges C and H, which channels-last memory does not have (read row-major first).
TEST_F(ParityTest, ReshapeTransposePairs) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 15, 6, 5});
  auto axis0 = b.initializer_i64("", {1}, {0});
  auto batch = b.node("Unsqueeze", {b.node("Gather", {b.node("Shape", {x}), b.initializer_i64("", {}, {0})},
                                           {{"axis", int64_t{0}}}),
                                    axis0});
  auto head_view = [&](const std::string& t) {
    auto shape = b.node("Concat", {batch, b.initializer_i64("", {4}, {3, 5, 6, 5})}, {{"axis", int64_t{0}}});
    return b.node("Transpose", {b.node("Reshape", {t, shape})}, {{"perm", {0, 1, 3, 4, 2}}});
  };
  auto y = b.node("Conv", {x, b.random_normal_init("w", {15, 15, 1, 1})});
  b.output(b.node("Sigmoid", {head_view(y)}));
  b.output(head_view(x));
  auto merged = b.node("Reshape", {y, b.initializer_i64("", {3}, {-1, 90, 5})});
  b.output(b.node("Transpose", {merged}, {{"perm", {0, 2, 1}}}));
  check_model(b, "reshape_transpose");

  ScratchDir dir("octet-reshape-transpose");
  const std::string path = (dir.path() / "m.onnx").string();
  b.save(path);
  Session session = Session::load(path);
  int fused = 0;
  for (const auto& n : session.graph().nodes) {
    EXPECT_NE(n.op, "Transpose") << n.name;
    fused += n.op == "ReshapeTranspose";
  }
  EXPECT_EQ(fused, 3);
  // The head's view is one copy of the channels-last map; only the merged view reads it
  // row-major first, inside its step.
  int relayouts = 0, two_copies = 0;
  for (const PlanStep& s : session.plan_for(std::vector<ir::Dims>{{2, 15, 6, 5}}).steps()) {
    relayouts += s.node.starts_with("relayout ") && !s.node.starts_with("relayout x");
    two_copies += s.op == "ReshapeTranspose" && s.kernel.find(" + ") != std::string::npos;
  }
  EXPECT_EQ(relayouts, 0);
  EXPECT_EQ(two_copies, 1);
}

TEST_F(ParityTest, BroadcastAgainstChannelsLastMaps) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 4, 3, 5});
  auto y = b.node("Conv", {x, b.random_normal_init("w", {4, 4, 1, 1})});
  auto gate = b.node("Sigmoid", {b.node("GlobalAveragePool", {y})});
  b.output(b.node("Mul", {gate, y}));                                     // the small operand first
  b.output(b.node("Sub", {b.random_normal_init("c", {4, 1, 1}), y}));     // per channel
  b.output(b.node("Sub", {b.random_normal_init("r", {5}), y}));           // along W
  b.output(b.node("Div", {y, b.random_uniform_init("h", {3, 1}, 1.0f, 2.0f)}));  // along H
  b.output(b.node("Add", {x, y}));                                        // row-major + channels-last
  b.output(b.node("Mul", {b.node("GlobalAveragePool", {x}), b.node("ReduceMean", {y}, {{"axes", {1}}, {"keepdims", 1}})}));
  check_model(b, "broadcast_channels_last");
}

TEST_F(ParityTest, PadCropAndReflect) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 4, 6, 5});
  auto y = b.node("Conv", {x, b.random_normal_init("w", {4, 4, 1, 1})});
  b.output(b.node("Pad", {y, b.initializer_i64("p", {8}, {0, 0, -1, 2, 0, 0, 1, -2})}));
  b.output(b.node("Pad", {x, b.initializer_i64("p2", {8}, {0, 1, 0, 0, 0, -1, 0, 0})}));  // shifts channels
  b.output(b.node("Pad", {y, b.initializer_i64("q", {8}, {0, 0, 2, 1, 0, 0, 1, 3})}, {{"mode", "reflect"}}));
  check_model(b, "pad_crop_reflect");
}

TEST_F(ParityTest, ReshapeThenBatchedMatMul) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 4, 3, 5});
  auto y = b.node("Conv", {x, b.random_normal_init("w", {6, 4, 1, 1})});
  auto r = b.node("Reshape", {y, b.initializer_i64("s", {3}, {0, 6, -1})});  // [N, 6, 15]
  b.output(b.node("MatMul", {r, b.random_normal_init("k", {15, 4})}));        // [N, 6, 4]
  b.output(b.node("MatMul", {b.random_normal_init("k2", {2, 6}), r}));        // [N, 2, 15]
  b.output(b.node("Unsqueeze", {y, b.initializer_i64("ax", {1}, {1})}));      // [N, 1, 6, 3, 5]
  check_model(b, "reshape_batched_matmul");
}

// One session, more batch sizes than the plan cache holds (8), revisiting earlier ones.
TEST_F(ParityTest, ManyBatchSizesOneSession) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 3, 6, 6});
  auto y = b.node("Relu", {b.node("Conv", {x, b.random_normal_init("w", {8, 3, 3, 3}), b.random_normal_init("bias", {8})},
                                  {{"pads", {1, 1, 1, 1}}, {"strides", {2, 2}}})});
  auto f = b.node("Flatten", {b.node("GlobalAveragePool", {y})});
  b.output(b.node("Gemm", {f, b.random_normal_init("fc", {10, 8}, 0.0f, 0.5f)}, {{"transB", 1}}));
  check_model(b, "many_batch_sizes", {1, 5, 2, 3, 4, 6, 7, 8, 9, 1, 5});
}

}  // namespace
}  // namespace octet::parity
