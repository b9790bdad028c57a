#include "tools/catalogue/probes.h"

#include <onnx/onnx_pb.h>

#include <algorithm>

#include "engine/session.h"
#include "kernels/ref/activation.h"
#include "loader/onnx_loader.h"
#include "tests/util/qdq_patterns.h"

namespace octet::catalogue {
namespace probe_graphs {

using testing::Attrs;
using testing::ElemType;
using testing::OnnxBuilder;
using testing::QParams;
using testing::TensorValue;
using Build = std::function<void(OnnxBuilder&)>;

// The feature map most probes read: 16 channels (two AVX2 vectors), 8x8.
const std::vector<int64_t> kMap = {1, 16, 8, 8};
const QParams kAct{1.0f / 64, 128, ElemType::u8};

std::string map(OnnxBuilder& b, std::vector<int64_t> dims = kMap) { return b.input("x", dims); }
std::string init(OnnxBuilder& b, std::vector<int64_t> dims) { return b.random_normal_init("", dims, 0.0f, 0.3f); }

Build unary(const std::string& op, Attrs attrs = {}) {
  return [=](OnnxBuilder& b) { b.output(b.node(op, {map(b)}, attrs)); };
}
Build binary(const std::string& op, std::vector<int64_t> b_dims) {
  return [=](OnnxBuilder& b) { b.output(b.node(op, {map(b), init(b, b_dims)})); };
}
Build conv(int64_t c_out, int64_t group, int64_t kh, int64_t kw, Attrs attrs) {
  attrs.push_back({"group", group});
  return [=](OnnxBuilder& b) {
    b.output(b.node("Conv", {map(b), init(b, {c_out, kMap[1] / group, kh, kw}), init(b, {c_out})}, attrs));
  };
}
Build qdq_unary(const std::string& op, Attrs attrs = {}) {
  return [=](OnnxBuilder& b) { b.output(testing::qdq(b, b.node(op, {testing::qdq(b, map(b), kAct)}, attrs), kAct)); };
}
Build qdq_conv(int64_t group, int64_t k) {
  return [=](OnnxBuilder& b) {
    auto w = testing::qdq_weights(b, {16, 16 / group, k, k}, true);
    auto y = b.node("Conv", {testing::qdq(b, map(b), kAct), w.dq, testing::qdq_bias(b, 16, kAct.scale, w.scales)},
                    {{"group", group}, {"pads", {k / 2, k / 2, k / 2, k / 2}}});
    b.output(testing::qdq(b, y, {0.05f, 128, ElemType::u8}));
  };
}
// A QDQ unit around the node `make` builds on the dequantized map.
Build qdq_unary_with(const std::string&, std::function<std::string(OnnxBuilder&, const std::string&)> make) {
  return [=](OnnxBuilder& b) { b.output(testing::qdq(b, make(b, testing::qdq(b, map(b), kAct)), kAct)); };
}
// A com.microsoft node (ONNX Runtime's contrib ops): output name.
std::string ms(OnnxBuilder& b, const std::string& op, const std::vector<std::string>& in, Attrs attrs = {}) {
  std::string y = b.node(op, in, attrs);
  b.set_domain(y, "com.microsoft");
  return y;
}
std::string f(OnnxBuilder& b, float v) { return b.initializer("", TensorValue::scalar_f32(v)); }
std::string u8(OnnxBuilder& b, int64_t v) { return b.initializer("", TensorValue::u8({}, {v})); }
std::string i64s(OnnxBuilder& b, std::vector<int64_t> v) {
  return b.initializer_i64("", {int64_t(v.size())}, v);
}

std::vector<Probe> make() {
  std::vector<Probe> t;
  auto row = [&t](std::string op, std::string variant, Build build) -> Probe& {
    return t.emplace_back(Probe{std::move(op), std::move(variant), std::move(build), 17, ""});
  };
  auto folded = [&t](std::string op, std::string variant, Build build, std::string why) {
    t.emplace_back(Probe{std::move(op), std::move(variant), std::move(build), 17, std::move(why)});
  };
  const Attrs same = {{"pads", {1, 1, 1, 1}}};

  // ---- Convolution and matrix products ----
  row("Conv", "3x3 stride 1 (Winograd)", conv(16, 1, 3, 3, same));
  row("Conv", "3x3 stride 2", conv(16, 1, 3, 3, {{"pads", {1, 1, 1, 1}}, {"strides", {2, 2}}}));
  row("Conv", "3x3 dilation 2", conv(16, 1, 3, 3, {{"pads", {2, 2, 2, 2}}, {"dilations", {2, 2}}}));
  row("Conv", "1x1", conv(32, 1, 1, 1, {}));
  row("Conv", "1x7 asymmetric", conv(16, 1, 1, 7, {{"pads", {0, 3, 0, 3}}}));
  row("Conv", "depthwise 3x3", conv(16, 16, 3, 3, same));
  row("Conv", "depthwise 5x5 stride 2", conv(16, 16, 5, 5, {{"pads", {2, 2, 2, 2}}, {"strides", {2, 2}}}));
  row("Conv", "grouped 3x3, 4 groups", conv(16, 4, 3, 3, same));
  row("Conv", "1-D k3", [](OnnxBuilder& b) {
    b.output(b.node("Conv", {map(b, {1, 16, 32}), init(b, {16, 16, 3}), init(b, {16})}, {{"pads", {1, 1}}}));
  });
  row("ConvTranspose", "2x upsampling k2 s2", [](OnnxBuilder& b) {
    b.output(b.node("ConvTranspose", {map(b), init(b, {16, 8, 2, 2}), init(b, {8})}, {{"strides", {2, 2}}}));
  });
  row("ConvTranspose", "3x3 s2 p1 output_padding 1", [](OnnxBuilder& b) {
    b.output(b.node("ConvTranspose", {map(b), init(b, {16, 16, 3, 3})},
                    {{"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}, {"output_padding", {1, 1}}}));
  });
  row("ConvTranspose", "3-D 2x upsampling k2 s2", [](OnnxBuilder& b) {
    b.output(b.node("ConvTranspose", {map(b, {1, 16, 4, 8, 8}), init(b, {16, 8, 2, 2, 2}), init(b, {8})},
                    {{"strides", {2, 2, 2}}}));
  });
  row("Gemm", "transB, bias", [](OnnxBuilder& b) {
    b.output(b.node("Gemm", {map(b, {1, 64}), init(b, {32, 64}), init(b, {32})}, {{"transB", 1}}));
  });
  row("MatMul", "2-D constant B", [](OnnxBuilder& b) { b.output(b.node("MatMul", {map(b, {4, 64}), init(b, {64, 32})})); });
  row("MatMul", "3-D activations", [](OnnxBuilder& b) {
    b.output(b.node("MatMul", {map(b, {1, 4, 8, 16}), b.input("y", {1, 4, 16, 8})}));
  });

  // ---- Element-wise ----
  row("Relu", "", unary("Relu"));
  row("Sigmoid", "", unary("Sigmoid"));
  row("Clip", "0..6", [](OnnxBuilder& b) { b.output(b.node("Clip", {map(b), f(b, 0.0f), f(b, 6.0f)})); });
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    row(op, "same shape", [op](OnnxBuilder& b) { b.output(b.node(op, {map(b), b.input("y", kMap)})); });
    row(op, "per-channel constant", binary(op, {16, 1, 1}));
  }
  row("BatchNormalization", "training outputs declared, unread", [](OnnxBuilder& b) {
    b.output(b.node_multi("BatchNormalization", {map(b), init(b, {16}), init(b, {16}), init(b, {16}),
                                                 b.random_uniform_init("", {16}, 0.5f, 2.0f)}, 5)[0]);
  }).opset = 13;
  row("BatchNormalization", "on an input (not folded)", [](OnnxBuilder& b) {
    b.output(b.node("BatchNormalization",
                    {map(b), init(b, {16}), init(b, {16}), init(b, {16}), b.random_uniform_init("", {16}, 0.5f, 2.0f)}));
  });
  row("Min", "two inputs", [](OnnxBuilder& b) { b.output(b.node("Min", {map(b), b.input("y", kMap)})); });
  row("Max", "two inputs", [](OnnxBuilder& b) { b.output(b.node("Max", {map(b), b.input("y", kMap)})); });

  // ---- Pooling and reductions ----
  row("GlobalAveragePool", "", unary("GlobalAveragePool"));
  row("GlobalMaxPool", "", unary("GlobalMaxPool"));
  row("MaxPool", "3x3 stride 2 pads 1 with Indices", [](OnnxBuilder& b) {
    auto out = b.node_multi("MaxPool", {map(b)}, 2, {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}});
    b.output(out[0]);
    b.output(out[1], ElemType::s64);
  });
  row("MaxUnpool", "2x2 stride 2 after MaxPool", [](OnnxBuilder& b) {
    const Attrs a = {{"kernel_shape", {2, 2}}, {"strides", {2, 2}}};
    auto out = b.node_multi("MaxPool", {map(b)}, 2, a);
    b.output(b.node("MaxUnpool", {out[0], out[1]}, a));
  });
  for (const char* mode : {"avg", "max"})
    row("RoiAlign", std::string(mode) + " 7x7, adaptive sampling", [mode](OnnxBuilder& b) {
      const std::string rois = b.initializer("", {2, 4}, {1.0f, 1.0f, 6.0f, 5.0f, 0.0f, 2.0f, 3.5f, 7.0f});
      const std::string idx = b.initializer_i64("", {2}, {0, 0});
      b.output(b.node("RoiAlign", {map(b), rois, idx},
                      {{"mode", std::string(mode)}, {"output_height", int64_t(7)}, {"output_width", int64_t(7)}}));
    }).opset = 16;
  for (const char* mode : {"bilinear", "nearest", "bicubic"})
    row("GridSample", mode, [mode](OnnxBuilder& b) {
      const std::string x = map(b);
      const std::string grid = b.input("grid", {kMap[0], 5, 5, 2});
      b.output(b.node("GridSample", {x, grid}, {{"mode", std::string(mode)}}));
    }).opset = 16;
  row("LRN", "size 5 (AlexNet, GoogLeNet)", unary("LRN", {{"size", int64_t(5)}, {"alpha", 1e-4f}, {"beta", 0.75f}, {"bias", 1.0f}}));
  row("AveragePool", "3x3 stride 2 pads 1", unary("AveragePool", {{"kernel_shape", {3, 3}}, {"strides", {2, 2}},
                                                                  {"pads", {1, 1, 1, 1}}}));
  row("AveragePool", "2x2 stride 2", unary("AveragePool", {{"kernel_shape", {2, 2}}, {"strides", {2, 2}}}));
  row("MaxPool", "3x3 stride 2 pads 1", unary("MaxPool", {{"kernel_shape", {3, 3}}, {"strides", {2, 2}},
                                                          {"pads", {1, 1, 1, 1}}}));
  row("MaxPool", "2x2 stride 2", unary("MaxPool", {{"kernel_shape", {2, 2}}, {"strides", {2, 2}}}));
  row("ReduceMean", "spatial axes", unary("ReduceMean", {{"axes", {2, 3}}}));
  row("ReduceSum", "group axis of 5-D (split attention)", [](OnnxBuilder& b) {
    b.output(b.node("ReduceSum", {map(b, {1, 2, 16, 8, 8}), i64s(b, {1})}, {{"keepdims", 0}}));
  });
  row("ReduceMin", "channel axis", unary("ReduceMin", {{"axes", {1}}}));
  row("ReduceMax", "channel axis", unary("ReduceMax", {{"axes", {1}}}));
  for (const char* op : {"ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp", "ReduceProd"})
    row(op, "channel axis", unary(op, {{"axes", {1}}}));
  row("ReduceLogSum", "spatial axes", [](OnnxBuilder& b) {
    b.output(b.node("ReduceLogSum", {b.node("Abs", {map(b)})}, {{"axes", {2, 3}}}));
  });
  row("ReduceL2", "every axis", unary("ReduceL2"));
  row("LpNormalization", "p 2, last axis (embeddings)", [](OnnxBuilder& b) {
    b.output(b.node("LpNormalization", {map(b, {4, 512})}, {{"axis", -1}, {"p", 2}}));
  });
  row("LpNormalization", "p 1, channels", unary("LpNormalization", {{"axis", 1}, {"p", 1}}));
  row("MeanVarianceNormalization", "default axes", unary("MeanVarianceNormalization"));
  row("CumSum", "over channels", [](OnnxBuilder& b) {
    b.output(b.node("CumSum", {map(b), b.initializer_i64("", {}, {1})}));
  }).opset = 14;
  row("Hardmax", "last axis", [](OnnxBuilder& b) { b.output(b.node("Hardmax", {map(b, {4, 100})})); }).opset = 13;
  row("Softmax", "last axis", [](OnnxBuilder& b) { b.output(b.node("Softmax", {map(b, {4, 100})}, {{"axis", -1}})); });
  row("Softmax", "axis 1 of 4-D", unary("Softmax", {{"axis", 1}}));

  // ---- Data movement ----
  row("Pad", "constant", [](OnnxBuilder& b) { b.output(b.node("Pad", {map(b), i64s(b, {0, 0, 1, 1, 0, 0, 1, 1})})); });
  row("Pad", "reflect", [](OnnxBuilder& b) {
    b.output(b.node("Pad", {map(b), i64s(b, {0, 0, 2, 2, 0, 0, 2, 2})}, {{"mode", "reflect"}}));
  });
  row("PRelu", "per-channel slope", binary("PRelu", {16, 1, 1}));
  // The activations of kernels/elementwise/activation_list.h, at their attributes' defaults.
  for (const kernels::ActivationRow& r : kernels::kActivationRows)
    row(r.op, "", unary(r.op)).opset = std::max<int64_t>(17, r.since);
  row("Gelu", "opset 20", unary("Gelu")).opset = 20;
  row("Pow", "scalar exponent 2", [](OnnxBuilder& b) { b.output(b.node("Pow", {map(b), f(b, 2.0f)})); });
  row("Pow", "exponent at run time", [](OnnxBuilder& b) { b.output(b.node("Pow", {map(b), b.input("e", {8})})); });
  row("Where", "condition at run time", [](OnnxBuilder& b) {
    auto cond = b.node("Cast", {b.node("Relu", {b.input("c", kMap)})}, {{"to", int64_t(9)}});
    b.output(b.node("Where", {cond, map(b), b.input("y", kMap)}));
  });
  // Comparisons, logic, classification (bool outputs), Sign, Shrink, Mod, Sum and Mean.
  for (const char* op : {"Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"}) {
    row(op, "same shape", [op](OnnxBuilder& b) { b.output(b.node(op, {map(b), b.input("y", kMap)}), ElemType::b8); });
    row(op, "per-channel constant", [op](OnnxBuilder& b) {
      b.output(b.node(op, {map(b), init(b, {16, 1, 1})}), ElemType::b8);
    });
  }
  for (const char* op : {"And", "Or", "Xor"})
    row(op, "conditions at run time", [op](OnnxBuilder& b) {
      auto c0 = b.node("Cast", {b.node("Relu", {map(b)})}, {{"to", int64_t(9)}});
      auto c1 = b.node("Cast", {b.node("Relu", {b.input("y", kMap)})}, {{"to", int64_t(9)}});
      b.output(b.node(op, {c0, c1}), ElemType::b8);
    });
  row("Not", "condition at run time", [](OnnxBuilder& b) {
    b.output(b.node("Not", {b.node("Cast", {b.node("Relu", {map(b)})}, {{"to", int64_t(9)}})}), ElemType::b8);
  });
  row("IsNaN", "", [](OnnxBuilder& b) { b.output(b.node("IsNaN", {map(b)}), ElemType::b8); });
  row("IsInf", "", [](OnnxBuilder& b) { b.output(b.node("IsInf", {map(b)}), ElemType::b8); });
  row("Sign", "", unary("Sign"));
  row("Shrink", "lambd 0.5", unary("Shrink", {{"lambd", 0.5f}}));
  row("Mod", "fmod=1, float", [](OnnxBuilder& b) {
    b.output(b.node("Mod", {map(b), b.input("y", kMap)}, {{"fmod", int64_t(1)}}));
  });
  for (const char* op : {"Sum", "Mean"})
    row(op, "three inputs", [op](OnnxBuilder& b) {
      b.output(b.node(op, {map(b), b.input("y", kMap), b.input("z", {16, 1, 1})}));
    });
  row("LogSoftmax", "over channels", unary("LogSoftmax", {{"axis", 1}}));
  row("ArgMax", "over channels", unary("ArgMax", {{"axis", 1}}));
  row("ArgMin", "over channels", unary("ArgMin", {{"axis", 1}}));
  row("LayerNormalization", "last axis", [](OnnxBuilder& b) {
    b.output(b.node("LayerNormalization", {map(b), init(b, {8}), init(b, {8})}, {{"axis", -1}}));
  });
  row("InstanceNormalization", "", [](OnnxBuilder& b) {
    b.output(b.node("InstanceNormalization", {map(b), init(b, {16}), init(b, {16})}));
  });
  row("DepthToSpace", "DCR, block 2", unary("DepthToSpace", {{"blocksize", 2}}));
  row("SpaceToDepth", "block 2", unary("SpaceToDepth", {{"blocksize", 2}}));
  row("Resize", "nearest 2x (YOLO's upsampling)", [](OnnxBuilder& b) {
    b.output(b.node("Resize", {map(b), "", b.initializer("", {4}, {1.0f, 1.0f, 2.0f, 2.0f})},
                    {{"mode", "nearest"}, {"coordinate_transformation_mode", "asymmetric"}, {"nearest_mode", "floor"}}));
  });
  row("Resize", "linear 2x half_pixel", [](OnnxBuilder& b) {
    b.output(b.node("Resize", {map(b), "", b.initializer("", {4}, {1.0f, 1.0f, 2.0f, 2.0f})}, {{"mode", "linear"}}));
  });
  row("Resize", "cubic 2x half_pixel", [](OnnxBuilder& b) {
    b.output(b.node("Resize", {map(b), "", b.initializer("", {4}, {1.0f, 1.0f, 2.0f, 2.0f})}, {{"mode", "cubic"}}));
  });
  row("Resize", "QDQ nearest 2x", qdq_unary_with("Resize", [](OnnxBuilder& b, const std::string& x) {
        return b.node("Resize", {x, "", b.initializer("", {4}, {1.0f, 1.0f, 2.0f, 2.0f})}, {{"mode", "nearest"}});
      }));
  row("Upsample", "nearest 2x (opset 9)", [](OnnxBuilder& b) {
    b.output(b.node("Upsample", {map(b), b.initializer("", {4}, {1.0f, 1.0f, 2.0f, 2.0f})}, {{"mode", "nearest"}}));
  }).opset = 9;
  row("Transpose", "NCHW to NHWC", unary("Transpose", {{"perm", {0, 2, 3, 1}}}));
  row("Concat", "channels", [](OnnxBuilder& b) { b.output(b.node("Concat", {map(b), b.input("y", kMap)}, {{"axis", 1}})); });
  row("Split", "channels in two", [](OnnxBuilder& b) {
    for (const auto& y : b.node_multi("Split", {map(b)}, 2, {{"axis", 1}})) b.output(y);
  });
  row("Slice", "spatial crop", [](OnnxBuilder& b) {
    b.output(b.node("Slice", {map(b), i64s(b, {1, 1}), i64s(b, {7, 7}), i64s(b, {2, 3})}));
  });
  row("Reshape", "", [](OnnxBuilder& b) { b.output(b.node("Reshape", {map(b), i64s(b, {1, 16, 64})})); });
  // An Expand whose reader broadcasts anyway is skipped (passes::drop_broadcast_expands): here the
  // expanded map is the output.
  row("Expand", "per-channel values to the map", [](OnnxBuilder& b) {
    b.output(b.node("Expand", {b.input("g", {1, 16, 1, 1}), b.node("Shape", {map(b)})}));
  });
  row("Flatten", "", unary("Flatten"));
  row("Squeeze", "", [](OnnxBuilder& b) { b.output(b.node("Squeeze", {map(b, {1, 16, 1, 8}), i64s(b, {2})})); });
  row("Unsqueeze", "", [](OnnxBuilder& b) { b.output(b.node("Unsqueeze", {map(b), i64s(b, {1})})); });
  row("Gather", "channels", [](OnnxBuilder& b) {
    b.output(b.node("Gather", {map(b), i64s(b, {3, 1, 4})}, {{"axis", 1}}));
  });
  row("TopK", "k=100 of 8400 scores (a detector's candidates)", [](OnnxBuilder& b) {
    auto y = b.node_multi("TopK", {b.input("x", {1, 8400}), i64s(b, {100})}, 2);
    b.output(y[0]);
    b.output(y[1], ElemType::s64);
  });
  row("GatherElements", "the rows TopK picked", [](OnnxBuilder& b) {
    auto y = b.node_multi("TopK", {b.input("s", {1, 400, 1}), i64s(b, {20})}, 2, {{"axis", 1}});
    b.output(b.node("GatherElements", {b.input("x", {1, 400, 1}), y[1]}, {{"axis", 1}}));
  });
  row("GatherND", "pixels of the map", [](OnnxBuilder& b) {
    b.output(b.node("GatherND", {map(b), b.initializer_i64("", {3, 4}, {0, 1, 2, 3, 0, 5, 7, 7, 0, -1, 0, 0})}));
  });
  row("NonZero", "coordinates of a map's non-zero values (between two stages)", [](OnnxBuilder& b) {
    b.output(b.node("NonZero", {b.node("Relu", {map(b)})}), ElemType::s64);
  });
  row("NonMaxSuppression", "80 classes x 840 boxes, thresholds (between two stages)", [](OnnxBuilder& b) {
    auto boxes = b.node("Relu", {b.input("boxes", {1, 840, 4})});
    auto scores = b.node("Sigmoid", {b.input("scores", {1, 80, 840})});
    b.output(b.node("NonMaxSuppression", {boxes, scores, i64s(b, {100}), b.initializer("", TensorValue::scalar_f32(0.45f)),
                                          b.initializer("", TensorValue::scalar_f32(0.25f))}),
             ElemType::s64);
  });
  row("Compress", "channels by a run-time condition (between two stages)", [](OnnxBuilder& b) {
    auto keep = b.node("Cast", {b.node("Relu", {b.input("c", {16})})}, {{"to", int64_t(ElemType::b8)}});
    b.output(b.node("Compress", {map(b), keep}, {{"axis", 1}}));
  });
  row("Unique", "sorted, four outputs (between two stages)", [](OnnxBuilder& b) {
    auto x = b.node("Floor", {b.input("x", {64})});
    auto y = b.node_multi("Unique", {x}, 4);
    b.output(y[0]);
    for (int i = 1; i < 4; ++i) b.output(y[size_t(i)], ElemType::s64);
  });
  row("ScatterND", "a slice replaced (YOLOv5's grid write)", [](OnnxBuilder& b) {
    b.output(b.node("ScatterND", {map(b), b.initializer_i64("", {1, 2}, {0, 3}), b.input("u", {1, 8, 8})}));
  });
  row("ScatterElements", "channels, add", [](OnnxBuilder& b) {
    b.output(b.node("ScatterElements", {b.input("x", {4, 16}), b.initializer_i64("", {1, 16}, std::vector<int64_t>(16, 2)),
                                        b.input("u", {1, 16})}, {{"reduction", "add"}}));
  });
  row("Scatter", "opset 10", [](OnnxBuilder& b) {
    b.output(b.node("Scatter", {b.input("x", {4, 16}), b.initializer_i64("", {1, 2}, {3, 0}), b.input("u", {1, 2})},
                    {{"axis", 1}}));
  }).opset = 10;
  row("Tile", "spatial 2x2", [](OnnxBuilder& b) { b.output(b.node("Tile", {map(b), i64s(b, {1, 1, 2, 2})})); });
  row("Trilu", "upper", unary("Trilu"));
  row("OneHot", "depth 10 of computed labels", [](OnnxBuilder& b) {
    auto idx = b.node("Cast", {b.input("x", {4, 3})}, {{"to", 7}});
    b.output(b.node("OneHot", {idx, b.initializer_i64("", {}, {10}), b.initializer("", {2}, {0.0f, 1.0f})}));
  });
  folded("Range", "constant bounds", [](OnnxBuilder& b) {
    b.output(b.node("Add", {b.input("x", {8}), b.node("Range", {f(b, 0.0f), f(b, 8.0f), f(b, 1.0f)})}));
  }, "folded at plan time (its inputs are constants)");
  folded("Size", "", [](OnnxBuilder& b) {
    auto x = map(b);
    b.output(b.node("Add", {b.node("Cast", {b.node("Size", {x})}, {{"to", 1}}), x}));
  }, "folded at plan time (computable from input shapes)");
  folded("EyeLike", "", [](OnnxBuilder& b) {
    auto x = b.input("x", {8, 8});
    b.output(b.node("Add", {x, b.node("EyeLike", {x})}));
  }, "folded at plan time (computable from input shapes)");
  row("ChannelShuffle", "Reshape-Transpose-Reshape, 2 groups", [](OnnxBuilder& b) {
    auto y = b.node("Reshape", {map(b), i64s(b, {1, 2, 8, 8, 8})});
    y = b.node("Transpose", {y}, {{"perm", {0, 2, 1, 3, 4}}});
    b.output(b.node("Reshape", {y, i64s(b, {1, 16, 8, 8})}));
  });
  row("ReshapeTranspose", "Reshape-Transpose, YOLOv5's head view", [](OnnxBuilder& b) {
    auto y = b.node("Reshape", {map(b), i64s(b, {1, 2, 8, 8, 8})});
    b.output(b.node("Transpose", {y}, {{"perm", {0, 1, 3, 4, 2}}}));
  });
  row("Cast", "float to int32", unary("Cast", {{"to", 6}}));
  row("CastLike", "float to int64", [](OnnxBuilder& b) {
    b.output(b.node("CastLike", {map(b), b.initializer_i64("", {1}, {0})}), ElemType::s64);
  });
  row("Identity", "", unary("Identity"));
  row("Dropout", "inference", unary("Dropout"));
  folded("Constant", "", [](OnnxBuilder& b) {
    b.output(b.node("Add", {map(b), b.constant(TensorValue::scalar_f32(1.0f))}));
  }, "folded at plan time (a constant value, no step)");
  folded("ConstantOfShape", "one value over a shape", [](OnnxBuilder& b) {
    auto x = map(b);
    b.output(b.node("Add", {x, b.node("ConstantOfShape", {b.node("Shape", {x})},
                                      {{"value", TensorValue::f32({1}, {0.5f})}})}));
  }, "folded at plan time (its shape input is one)");
  folded("Shape", "", [](OnnxBuilder& b) {
    auto x = map(b);
    b.output(b.node("Reshape", {x, b.node("Shape", {x})}));
  }, "folded at plan time (computable from input shapes)");

  // ---- Quantization ----
  row("QuantizeLinear", "float to uint8", [](OnnxBuilder& b) {
    b.output(b.node("QuantizeLinear", {map(b), f(b, 0.02f), u8(b, 128)}), ElemType::u8);
  });
  row("DequantizeLinear", "uint8 to float", [](OnnxBuilder& b) {
    b.output(b.node("DequantizeLinear", {b.input("x", kMap, ElemType::u8), f(b, 0.02f), u8(b, 128)}));
  });
  row("DynamicQuantizeLinear", "", [](OnnxBuilder& b) {
    auto q = b.node_multi("DynamicQuantizeLinear", {map(b)}, 3);
    b.output(q[0], ElemType::u8);
    b.output(q[1]);
    b.output(q[2], ElemType::u8);
  });

  // ---- Static INT8: QDQ units fused into QLinear ops ----
  row("QLinearConv", "QDQ 3x3, per-channel weights", qdq_conv(1, 3));
  row("QLinearConv", "QDQ 1x1", qdq_conv(1, 1));
  row("QLinearConv", "QDQ depthwise 3x3", qdq_conv(16, 3));
  row("QLinearConv", "QDQ grouped 3x3, 4 groups", qdq_conv(4, 3));
  row("QGemm", "QDQ Gemm transB", [](OnnxBuilder& b) {
    auto w = testing::qdq_weights(b, {32, 64}, true);
    auto y = b.node("Gemm", {testing::qdq(b, map(b, {1, 64}), kAct), w.dq, testing::qdq_bias(b, 32, kAct.scale, w.scales)},
                    {{"transB", 1}});
    b.output(testing::qdq(b, y, {0.05f, 128, ElemType::u8}));
  });
  row("QLinearMatMul", "QDQ MatMul, constant B", [](OnnxBuilder& b) {
    auto w = testing::qdq_weights(b, {64, 32}, false);
    b.output(testing::qdq(b, b.node("MatMul", {testing::qdq(b, map(b, {4, 64}), kAct), w.dq}), {0.05f, 128, ElemType::u8}));
  });
  for (const char* op : {"Add", "Mul"})
    row(std::string("QLinear") + op, "QDQ, same shape", [op](OnnxBuilder& b) {
      auto y = b.node(op, {testing::qdq(b, map(b), kAct), testing::qdq(b, b.input("y", kMap), kAct)});
      b.output(testing::qdq(b, y, {1.0f / 32, 128, ElemType::u8}));
    });
  row("QLinearSigmoid", "QDQ", qdq_unary("Sigmoid"));
  row("QLinearHardSwish", "QDQ (octet's own table op)", qdq_unary("HardSwish"));
  row("QLinearHardSigmoid", "QDQ (octet's own table op)", qdq_unary("HardSigmoid"));
  row("QuantizeDequantize", "QuantizeLinear read only by a DequantizeLinear of the same scale (octet's own)",
      [](OnnxBuilder& b) { b.output(testing::qdq(b, map(b), kAct)); });
  row("QLinearSilu", "QDQ Sigmoid or HardSigmoid times x (octet's own table op)", [](OnnxBuilder& b) {
    auto x = testing::qdq(b, map(b), kAct);
    auto s = testing::qdq(b, b.node("Sigmoid", {x}), {1.0f / 256, 0, ElemType::u8});
    b.output(testing::qdq(b, b.node("Mul", {x, s}), kAct));
  });
  row("QLinearTable", "QDQ float chain Div, Erf, Add (octet's own table op)", [](OnnxBuilder& b) {
    auto x = testing::qdq(b, map(b), kAct);
    auto erf = b.node("Erf", {b.node("Div", {x, f(b, 1.4142135f)})});
    b.output(testing::qdq(b, b.node("Add", {erf, f(b, 1.0f)}), kAct));
  });
  row("QLinearBatchNormalization", "QDQ float BatchNormalization + Relu (octet's own op)", [](OnnxBuilder& b) {
    auto bn = b.node("BatchNormalization", {testing::qdq(b, map(b), kAct), init(b, {16}), init(b, {16}), init(b, {16}),
                                            b.random_uniform_init("", {16}, 0.5f, 2.0f)});
    b.output(testing::qdq(b, b.node("Relu", {bn}), kAct));
  });
  row("QLinearBiasAdd", "QDQ float Add of a row along the last axis, a Linear's bias (octet's own op)",
      [](OnnxBuilder& b) {
        auto x = testing::qdq(b, map(b, {1, 64, 48}), kAct);
        b.output(testing::qdq(b, b.node("Add", {x, init(b, {48})}), kAct));
      });
  row("QLinearGroupNorm", "QDQ GroupNorm as torch exports it, 4 groups (octet's own op)", [](OnnxBuilder& b) {
    auto grouped = testing::qdq(b, b.node("Reshape", {testing::qdq(b, map(b), kAct), i64s(b, {1, 4, 256})}), kAct);
    auto norm = b.node("InstanceNormalization", {grouped, init(b, {4}), init(b, {4})});
    auto back = b.node("Reshape", {norm, i64s(b, {1, 16, 8, 8})});
    auto affine = b.node("Add", {b.node("Mul", {back, init(b, {16, 1, 1})}), init(b, {16, 1, 1})});
    b.output(testing::qdq(b, affine, kAct));
  });
  row("QLinearLeakyRelu", "com.microsoft node", [](OnnxBuilder& b) {
    auto x = b.input("x", kMap, ElemType::u8);
    b.output(ms(b, "QLinearLeakyRelu", {x, f(b, 0.02f), u8(b, 128), f(b, 0.02f), u8(b, 128)}, {{"alpha", 0.1f}}),
             ElemType::u8);
  });
  row("QLinearGlobalAveragePool", "QDQ", qdq_unary("GlobalAveragePool"));
  row("QLinearAveragePool", "QDQ 3x3 stride 2 pads 1",
      qdq_unary("AveragePool", {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}}));
  row("QLinearReduceMean", "QDQ spatial axes", qdq_unary("ReduceMean", {{"axes", {2, 3}}}));
  row("QLinearSoftmax", "QDQ last axis", [](OnnxBuilder& b) {
    auto y = b.node("Softmax", {testing::qdq(b, map(b, {4, 100}), kAct)}, {{"axis", -1}});
    b.output(testing::qdq(b, y, {1.0f / 256, 0, ElemType::u8}));
  });
  row("QLinearConcat", "QDQ channels", [](OnnxBuilder& b) {
    auto y = b.node("Concat", {testing::qdq(b, map(b), kAct), testing::qdq(b, b.input("y", kMap), kAct)}, {{"axis", 1}});
    b.output(testing::qdq(b, y, kAct));
  });

  // ---- Dynamic INT8 ----
  row("ConvInteger", "alone (int32 out)", [](OnnxBuilder& b) {
    auto x = b.input("x", kMap, ElemType::u8);
    auto w = b.initializer("", TensorValue::s8({16, 16, 3, 3}, std::vector<int64_t>(16 * 16 * 9, 3)));
    b.output(b.node("ConvInteger", {x, w, u8(b, 128)}, {{"pads", {1, 1, 1, 1}}}), ElemType::s32);
  });
  row("MatMulInteger", "alone (int32 out)", [](OnnxBuilder& b) {
    auto x = b.input("x", {4, 64}, ElemType::u8);
    auto w = b.initializer("", TensorValue::s8({64, 32}, std::vector<int64_t>(64 * 32, -5)));
    b.output(b.node("MatMulInteger", {x, w, u8(b, 128)}), ElemType::s32);
  });
  row("ConvIntegerToFloat", "DynamicQuantizeLinear, ConvInteger, Cast, Mul, Add", [](OnnxBuilder& b) {
    b.output(testing::dynamic_conv(b, map(b), {16, 16, 3, 3}, {{"pads", {1, 1, 1, 1}}}, true));
  });
  row("MatMulIntegerToFloat", "DynamicQuantizeLinear, MatMulInteger, Cast, Mul, Add", [](OnnxBuilder& b) {
    b.output(testing::dynamic_matmul(b, map(b, {4, 64}), 64, 32, true));
  });

  // ---- Fused by octet's passes ----
  row("SqueezeExcite", "GlobalAveragePool, Conv, Relu, Conv, Sigmoid, Mul", [](OnnxBuilder& b) {
    auto x = map(b);
    auto s = b.node("GlobalAveragePool", {x});
    s = b.node("Relu", {b.node("Conv", {s, init(b, {4, 16, 1, 1}), init(b, {4})})});
    s = b.node("Sigmoid", {b.node("Conv", {s, init(b, {16, 4, 1, 1}), init(b, {16})})});
    b.output(b.node("Mul", {x, s}));
  });
  row("GroupNorm", "Reshape, InstanceNormalization, Reshape, Mul, Add, Sigmoid, Mul (torch's GroupNorm + SiLU)",
      [](OnnxBuilder& b) {
        auto x = map(b);
        auto grouped = b.node("Reshape", {x, i64s(b, {0, 4, -1})});
        auto norm = b.node("InstanceNormalization", {grouped, b.initializer("", {4}, {1, 1, 1, 1}),
                                                     b.initializer("", {4}, {0, 0, 0, 0})});
        auto y = b.node("Add", {b.node("Mul", {b.node("Reshape", {norm, b.node("Shape", {x})}), init(b, {16, 1, 1})}),
                                init(b, {16, 1, 1})});
        b.output(b.node("Mul", {y, b.node("Sigmoid", {y})}));
      });
  row("GroupNormalization", "4 groups, a scale and bias per group (opset 18)", [](OnnxBuilder& b) {
    b.output(b.node("GroupNormalization", {map(b), init(b, {4}), init(b, {4})}, {{"num_groups", int64_t{4}}}));
  }).opset = 18;
  row("GroupNormalization", "4 groups, a scale and bias per channel (opset 21)", [](OnnxBuilder& b) {
    b.output(b.node("GroupNormalization", {map(b), init(b, {16}), init(b, {16})}, {{"num_groups", int64_t{4}}}));
  }).opset = 21;
  row("PointwiseDepthwise", "Conv 1x1, Relu, depthwise 3x3", [](OnnxBuilder& b) {
    auto y = b.node("Relu", {b.node("Conv", {map(b), init(b, {32, 16, 1, 1}), init(b, {32})})});
    b.output(b.node("Conv", {y, init(b, {32, 1, 3, 3}), init(b, {32})}, {{"group", 32}, {"pads", {1, 1, 1, 1}}}));
  });
  return t;
}

}  // namespace probe_graphs

const std::vector<Probe>& probes() {
  static const std::vector<Probe> table = probe_graphs::make();
  return table;
}

ProbeResult run_probe(const Probe& probe, kernels::Isa isa) {
  ProbeResult r;
  try {
    testing::OnnxBuilder b(probe.opset);
    probe.build(b);
    SessionOptions o;
    o.isa = isa;
    Session s(loader::load_onnx_bytes(b.serialize(), "probe " + probe.op), o);
    const Plan& plan = s.plan_for(s.input_dims_at(1));
    r.planned = true;
    for (const PlanStep& step : plan.steps()) {
      if (step.op != probe.op) continue;
      r.has_step = true;
      r.kernel = step.kernel;
      r.kernel_scalar = step.scalar();
      r.fallback = step.fallback;
      break;
    }
    for (const ir::Node* cut : s.stage_cuts())  // ops whose output shape depends on values run at a cut
      if (!r.has_step && cut->op == probe.op) {
        r.has_step = true;
        r.kernel = Session::cut_kernel(*cut);
      }
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return r;
}

}  // namespace octet::catalogue
