// Dynamic quantization against ONNX Runtime. FP32 models built here are quantized by octet's
// writer (calib::quantize_dynamic, what `octet quantize --mode dynamic` writes: the graph of
// onnxruntime's quantize_dynamic) and run by octet, whose fuse_dynamic_quantization pass turns
// each DynamicQuantizeLinear -> ConvInteger / MatMulInteger -> Cast -> Mul -> Add -> Relu chain
// into one step on the INT8 microkernels, and by ORT. The float outputs must agree bit for bit
// with ORT's and with octet's own unfused run (every op one by one on the reference kernels).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <iostream>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "calib/calibrate.h"
#include "calib/quantize.h"
#include "engine/passes.h"
#include "engine/session.h"
#include "kernels/isa.h"
#include "loader/onnx_loader.h"
#include "loader/onnx_writer.h"
#include "tests/parity/parity_fixture.h"
#include "io/tensor_io.h"

namespace octet::parity {
namespace {

void expect_bit_exact_at(const std::string& path, const std::string& name, int64_t fused_steps, float lo, float hi,
                         const SessionOptions& options);

using ir::DType;
using testing::ElemType;
using testing::OnnxBuilder;
using testing::TensorValue;

// Writes `fp32`, quantizes it dynamically and writes the result next to it; returns its path.
std::string dynamic_model(const OnnxBuilder& fp32, const ScratchDir& dir, const std::string& name, bool per_channel) {
  const std::string fp32_path = (dir.path() / (name + "_fp32.onnx")).string();
  fp32.save(fp32_path);
  calib::DynamicQuantizeOptions o;
  o.per_channel = per_channel;
  calib::QuantizeReport report;
  const ir::Graph q = calib::quantize_dynamic(calib::prepare_for_quantization(loader::load_onnx(fp32_path)), o, &report);
  EXPECT_FALSE(report.quantized.empty()) << name;
  const std::string path = (dir.path() / (name + "_dynamic.onnx")).string();
  loader::save_onnx(q, path);
  return path;
}

ir::TensorData random_input(const ir::Dims& dims, std::mt19937& rng, float lo, float hi) {
  ir::TensorData t = ir::TensorData::make(DType::f32, dims);
  std::uniform_real_distribution<float> d(lo, hi);
  for (int64_t i = 0; i < t.count(); ++i) t.as<float>()[i] = d(rng);
  return t;
}

int64_t count_op(const Session& s, const std::string& op) {
  int64_t n = 0;
  for (const auto& node : s.graph().nodes) n += node.op == op;
  return n;
}

// The steps of the model's plan at batch 1 whose kernel names contain `kernel_part`.
int steps_running(const std::string& path, const std::string& kernel_part) {
  Session session = Session::load(path);
  int n = 0;
  for (const PlanStep& step : session.plan_for(session.input_dims_at(1)).steps())
    n += step.kernel.find(kernel_part) != std::string::npos;
  return n;
}

// octet fused (at every ISA level this CPU runs, scalar included), octet unfused and ORT on
// the same random input, batch 1 and 3.
void expect_bit_exact(const std::string& path, const std::string& name, int64_t fused_steps, float lo = -2.0f,
                      float hi = 3.0f) {
  for (kernels::Isa isa : kernels::kAllIsas) {
    if (!kernels::isa_supported(isa)) continue;
    SCOPED_TRACE(std::string("isa ") + kernels::isa_name(isa));
    SessionOptions options;
    options.isa = isa;
    expect_bit_exact_at(path, name + "@" + kernels::isa_name(isa), fused_steps, lo, hi, options);
    if (::testing::Test::HasFatalFailure()) return;
  }
}
void expect_bit_exact_at(const std::string& path, const std::string& name, int64_t fused_steps, float lo, float hi,
                         const SessionOptions& options) {
  Session fused = Session::load(path, options);
  EXPECT_EQ(count_op(fused, "ConvIntegerToFloat") + count_op(fused, "MatMulIntegerToFloat"), fused_steps)
      << name << ": the pattern was not fused";
  SessionOptions unfused_options;
  unfused_options.passes.fuse_dynamic = false;
  Session unfused = Session::load(path, unfused_options);
  EXPECT_EQ(count_op(unfused, "ConvIntegerToFloat") + count_op(unfused, "MatMulIntegerToFloat"), 0);
  std::mt19937 rng(std::hash<std::string>{}(name) & 0xffff);
  for (int64_t batch : {1, 3}) {
    ir::Dims dims = fused.inputs()[0].dims;
    for (auto& d : dims)
      if (d < 0) d = batch;
    const ir::TensorData x = random_input(dims, rng, lo, hi);
    const auto ours = fused.run({x});
    const auto reference = unfused.run({x});
    const auto theirs = testing::run_ort(path, {{fused.inputs()[0].name, to_npy(x)}});
    for (size_t o = 0; o < ours.size(); ++o) {
      const ir::TensorData ort = from_npy(theirs.at(fused.outputs()[o].name));
      ASSERT_EQ(ours[o].dims, ort.dims) << name;
      int64_t differ = 0, differ_unfused = 0;
      double max_diff = 0;
      for (int64_t i = 0; i < ort.count(); ++i) {
        const float a = ours[o].as<float>()[i], b = ort.as<float>()[i], r = reference[o].as<float>()[i];
        differ += std::bit_cast<uint32_t>(a) != std::bit_cast<uint32_t>(b);
        differ_unfused += std::bit_cast<uint32_t>(a) != std::bit_cast<uint32_t>(r);
        max_diff = std::max(max_diff, double(std::fabs(a - b)));
      }
      std::cout << "[ DYNAMIC  ] " << name << " batch " << batch << ": " << differ << " of " << ort.count()
                << " differ from ORT (max |diff| " << max_diff << "), " << differ_unfused
                << " from octet unfused" << std::endl;
      EXPECT_EQ(differ, 0) << name << " batch " << batch << ": max |diff| " << max_diff;
      EXPECT_EQ(differ_unfused, 0) << name << " batch " << batch;
    }
  }
}

// A small CNN as torch exports one: 3x3 conv + Relu, a strided 3x3 conv with bottom/right
// padding, a 1x1 conv without bias, a depthwise conv, Flatten, Gemm (transB). No float
// reduction between the layers: a GlobalAveragePool's sum runs in another order in ORT (an FP32
// difference of an ulp or so, outside the dynamic path) and would feed the next layer's range.
OnnxBuilder small_cnn(bool with_depthwise) {
  OnnxBuilder b(13, "dynamic_cnn", 3);
  auto x = b.input("x", {-1, 3, 12, 12});
  auto w1 = b.random_normal_init("w1", {16, 3, 3, 3}, 0.0f, 0.3f);
  auto b1 = b.random_normal_init("b1", {16}, 0.0f, 0.1f);
  auto t = b.node("Relu", {b.node("Conv", {x, w1, b1}, {{"pads", {1, 1, 1, 1}}})});
  auto w2 = b.random_normal_init("w2", {24, 16, 3, 3}, 0.0f, 0.1f);
  auto b2 = b.random_normal_init("b2", {24}, 0.0f, 0.1f);
  t = b.node("Relu", {b.node("Conv", {t, w2, b2}, {{"pads", {0, 0, 1, 1}}, {"strides", {2, 2}}})});
  auto w3 = b.random_normal_init("w3", {20, 24, 1, 1}, 0.0f, 0.2f);
  t = b.node("Conv", {t, w3});
  if (with_depthwise) {
    auto wd = b.random_normal_init("wd", {20, 1, 3, 3}, 0.0f, 0.3f);
    auto bd = b.random_normal_init("bd", {20}, 0.0f, 0.1f);
    t = b.node("Relu", {b.node("Conv", {t, wd, bd}, {{"pads", {1, 1, 1, 1}}, {"group", int64_t{20}}})});
    // 5x5, stride 2, asymmetric pads, no bias: 6x6 -> 3x3, padded back to 6x6 by a 1x1 below.
    auto w5 = b.random_normal_init("w5", {20, 1, 5, 5}, 0.0f, 0.2f);
    t = b.node("Conv", {t, w5}, {{"pads", {2, 2, 1, 1}}, {"strides", {2, 2}}, {"group", int64_t{20}}});
    auto wp = b.random_normal_init("wp", {20, 20, 1, 1}, 0.0f, 0.2f);
    t = b.node("Conv", {t, wp}, {{"pads", {2, 2, 1, 1}}});
  }
  t = b.node("Flatten", {t});
  auto fc = b.random_normal_init("fc", {10, 20 * 6 * 6}, 0.0f, 0.05f);
  auto fcb = b.random_normal_init("fcb", {10}, 0.0f, 0.1f);
  b.output(b.node("Gemm", {t, fc, fcb}, {{"transB", int64_t{1}}}));
  return b;
}

TEST(DynamicParity, SmallCnnPerTensorAndPerChannel) {
  OCTET_SKIP_WITHOUT_ORT();
  ScratchDir dir("octet-dynamic");
  for (bool per_channel : {false, true}) {
    const std::string name = per_channel ? "cnn_per_channel" : "cnn_per_tensor";
    expect_bit_exact(dynamic_model(small_cnn(false), dir, name, per_channel), name, 4);
  }
}

// The depthwise ConvInteger runs on the reference kernel (the fused step's fallback).
TEST(DynamicParity, DepthwiseConv) {
  OCTET_SKIP_WITHOUT_ORT();
  ScratchDir dir("octet-dynamic");
  expect_bit_exact(dynamic_model(small_cnn(true), dir, "cnn_depthwise", true), "cnn_depthwise", 7);
}

// Grouped ConvIntegers (ResNeXt's and RegNet's convs, a grouped 1x1) on the grouped driver's
// float output: one dense conv per group.
TEST(DynamicParity, GroupedConv) {
  OCTET_SKIP_WITHOUT_ORT();
  ScratchDir dir("octet-dynamic");
  OnnxBuilder b(13, "dynamic_grouped", 5);
  auto x = b.input("x", {-1, 16, 10, 10});
  auto t = b.node("Relu", {b.node("Conv", {x, b.random_normal_init("w1", {32, 4, 3, 3}, 0.0f, 0.2f),
                                           b.random_normal_init("b1", {32}, 0.0f, 0.1f)},
                                  {{"pads", {1, 1, 1, 1}}, {"group", int64_t{4}}})});
  t = b.node("Conv", {t, b.random_normal_init("w2", {24, 4, 3, 3}, 0.0f, 0.2f)},
             {{"pads", {0, 0, 1, 1}}, {"strides", {2, 2}}, {"group", int64_t{8}}});
  t = b.node("Conv", {t, b.random_normal_init("w3", {12, 8, 1, 1}, 0.0f, 0.2f)}, {{"group", int64_t{3}}});
  b.output(t);
  for (bool per_channel : {false, true}) {
    const std::string name = per_channel ? "grouped_per_channel" : "grouped_per_tensor";
    const std::string path = dynamic_model(b, dir, name, per_channel);
    expect_bit_exact(path, name, 3);
    if (kernels::active_isa() == kernels::Isa::scalar) continue;
    Session session = Session::load(path);
    for (const PlanStep& step : session.plan_for(session.input_dims_at(1)).steps())
      EXPECT_FALSE(step.scalar()) << name << ": " << step.node << " runs " << step.kernel;
  }
}

// Grouped ConvIntegers of 4, 8 and 16 channels a group on the narrow-group kernels' float
// output, each reading the previous one's output range.
TEST(DynamicParity, NarrowGroupConv) {
  OCTET_SKIP_WITHOUT_ORT();
  ScratchDir dir("octet-dynamic");
  OnnxBuilder b(13, "dynamic_narrow_groups", 9);
  auto x = b.input("x", {-1, 40, 9, 9});
  auto t = b.node("Relu", {b.node("Conv", {x, b.random_normal_init("w1", {40, 4, 3, 3}, 0.0f, 0.2f),
                                           b.random_normal_init("b1", {40}, 0.0f, 0.1f)},
                                  {{"pads", {1, 1, 1, 1}}, {"group", int64_t{10}}})});
  t = b.node("Conv", {t, b.random_normal_init("w2", {40, 8, 3, 3}, 0.0f, 0.2f)},
             {{"pads", {0, 1, 1, 0}}, {"strides", {2, 2}}, {"group", int64_t{5}}});
  t = b.node("Conv", {b.node("Concat", {t, t}, {{"axis", int64_t{1}}}),
                      b.random_normal_init("w3", {80, 16, 3, 3}, 0.0f, 0.2f)},
             {{"pads", {1, 1, 1, 1}}, {"group", int64_t{5}}});
  b.output(t);
  const std::string path = dynamic_model(b, dir, "narrow_groups", true);
  expect_bit_exact(path, "narrow_groups", 3);
  if (kernels::active_isa() == kernels::Isa::scalar) return;
  EXPECT_EQ(steps_running(path, "_gconv_g"), 3);
}

// A depthwise ConvInteger with a channel multiplier of 2 (FastViT's 7x7 stride-2 downsampling):
// the depthwise kernel over the input's channels repeated.
TEST(DynamicParity, DepthwiseWithChannelMultiplier) {
  OCTET_SKIP_WITHOUT_ORT();
  ScratchDir dir("octet-dynamic");
  OnnxBuilder b(13, "dynamic_multiplier", 3);
  auto x = b.input("x", {-1, 12, 11, 11});
  auto t = b.node("Conv", {x, b.random_normal_init("w1", {24, 1, 7, 7}, 0.0f, 0.2f),
                           b.random_normal_init("b1", {24}, 0.0f, 0.1f)},
                  {{"pads", {3, 3, 3, 3}}, {"strides", {2, 2}}, {"group", int64_t{12}}});
  b.output(t);
  const std::string path = dynamic_model(b, dir, "multiplier", true);
  expect_bit_exact(path, "multiplier", 1);
  if (kernels::active_isa() == kernels::Isa::scalar) return;
  EXPECT_EQ(steps_running(path, "repeat_channels + "), 1);
}

// DeepLabV3's ASPP on a small map: 3x3 convs whose dilation exceeds the map, one with stride 2
// and asymmetric pads whose rows are partly live. passes::prune_dead_taps crops the taps that
// read only padding; ConvInteger pads with x's zero point (ORT's im2col too), so a dropped tap
// contributed (x_zp - x_zp) * (w - w_zp) = 0 and the cropped step stays bit-exact with ORT.
TEST(DynamicParity, DilatedConvsWithDeadTaps) {
  OCTET_SKIP_WITHOUT_ORT();
  ScratchDir dir("octet-dynamic");
  OnnxBuilder b(13, "dynamic_dead_taps", 7);
  auto x = b.input("x", {-1, 16, 6, 6});
  auto conv = [&](const std::string& in, const std::string& name, testing::Attrs attrs) {
    return b.node("Relu", {b.node("Conv", {in, b.random_normal_init("", {16, 16, 3, 3}, 0.0f, 0.2f),
                                           b.random_normal_init("", {16}, 0.0f, 0.1f)},
                                  std::move(attrs), name)});
  };
  auto a = conv(x, "aspp12", {{"pads", {12, 12, 12, 12}}, {"dilations", {12, 12}}});
  auto c = conv(a, "aspp6", {{"pads", {6, 6, 6, 6}}, {"dilations", {6, 6}}});
  auto d = conv(c, "stride2", {{"pads", {6, 1, 0, 1}}, {"dilations", {3, 1}}, {"strides", {2, 1}}});
  b.output(d);
  for (bool per_channel : {false, true}) {
    const std::string name = per_channel ? "dead_taps_per_channel" : "dead_taps_per_tensor";
    const std::string path = dynamic_model(b, dir, name, per_channel);
    expect_bit_exact(path, name, 3);
    const Session session = Session::load(path);
    int cropped = 0;
    for (const auto& n : session.graph().nodes) cropped += n.attrs.has(passes::kPrunedTapsAttr);
    EXPECT_EQ(cropped, 3) << name;
  }
}

// MatMul with a batch of rows per image ([N, 5, 32] x [32, 12]) and a Gemm without bias.
TEST(DynamicParity, MatMulWithBatchDimensions) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13, "dynamic_matmul", 5);
  auto x = b.input("x", {-1, 5, 32});
  auto w = b.random_normal_init("w", {32, 12}, 0.0f, 0.2f);
  auto t = b.node("Relu", {b.node("MatMul", {x, w})});
  auto w2 = b.random_normal_init("w2", {12, 7}, 0.0f, 0.2f);
  b.output(b.node("MatMul", {t, w2}));
  ScratchDir dir("octet-dynamic");
  for (bool per_channel : {false, true}) {
    const std::string name = per_channel ? "matmul_per_channel" : "matmul_per_tensor";
    expect_bit_exact(dynamic_model(b, dir, name, per_channel), name, 2);
  }
}

// Every DynamicQuantizeLinear here reads a range its producer gathered while writing
// (passes::compute_ranges_in_producers): a ConvIntegerToFloat, a residual Add and a broadcast
// Mul, each output 20x20x24 = 9600 floats per image (several OutputRange chunks), on 1 and 2
// threads (the chunks' ranges merged across threads).
TEST(DynamicParity, RangesGatheredByTheProducers) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13, "dynamic_ranges", 11);
  auto x = b.input("x", {-1, 8, 20, 20});
  auto w1 = b.random_normal_init("w1", {24, 8, 3, 3}, 0.0f, 0.3f);
  auto a = b.node("Relu", {b.node("Conv", {x, w1}, {{"pads", {1, 1, 1, 1}}})});
  auto w2 = b.random_normal_init("w2", {24, 24, 1, 1}, 0.0f, 0.2f);
  auto c = b.node("Add", {a, b.node("Conv", {a, w2})});
  auto w3 = b.random_normal_init("w3", {24, 24, 1, 1}, 0.0f, 0.2f);
  auto gain = b.random_uniform_init("gain", {1, 24, 1, 1}, 0.5f, 1.5f);
  auto d = b.node("Mul", {b.node("Conv", {c, w3}), gain});
  auto w4 = b.random_normal_init("w4", {10, 24, 1, 1}, 0.0f, 0.2f);
  b.output(b.node("Conv", {d, w4}));
  ScratchDir dir("octet-dynamic");
  const std::string path = dynamic_model(b, dir, "ranges", true);
  for (int threads : {1, 2}) {
    SessionOptions options;
    options.threads = threads;
    Session s = Session::load(path, options);
    int64_t given = 0;
    for (const auto& node : s.graph().nodes) given += node.op == "DynamicQuantizeLinear" && node.inputs.size() == 2;
    EXPECT_EQ(given, 3) << "the conv's, the Add's and the Mul's outputs should carry their ranges";
    expect_bit_exact_at(path, "ranges_threads_" + std::to_string(threads), 4, -2.0f, 3.0f, options);
  }
}

// Activations other than Relu / Clip after the integer steps run in the step's epilogue, on each
// tile while it is in L1: SiLU (YOLO's Sigmoid -> Mul) after a dense conv, HardSwish after a
// depthwise conv, Sigmoid after a grouped conv and after a MatMul, SiLU after a Gemm; the
// last conv hands its SiLU output's range to the next DynamicQuantizeLinear. Every value as ORT's,
// which runs each activation as an op of its own, and no activation left as a step.
TEST(DynamicParity, ActivationsFusedIntoTheIntegerSteps) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(14, "dynamic_activations", 17);
  auto silu = [&](const std::string& t) { return b.node("Mul", {t, b.node("Sigmoid", {t})}); };
  auto x = b.input("x", {-1, 8, 12, 12});
  auto t = silu(b.node("Conv", {x, b.random_normal_init("w1", {24, 8, 3, 3}, 0.0f, 0.3f),
                                b.random_normal_init("b1", {24}, 0.0f, 0.2f)},
                        {{"pads", {1, 1, 1, 1}}}));
  t = b.node("HardSwish", {b.node("Conv", {t, b.random_normal_init("w2", {24, 1, 3, 3}, 0.0f, 0.3f)},
                                  {{"pads", {1, 1, 1, 1}}, {"group", int64_t{24}}})});
  t = b.node("Sigmoid", {b.node("Conv", {t, b.random_normal_init("w3", {16, 6, 3, 3}, 0.0f, 0.3f)},
                                {{"pads", {1, 1, 1, 1}}, {"strides", {2, 2}}, {"group", int64_t{4}}})});
  t = silu(b.node("Conv", {t, b.random_normal_init("w4", {16, 16, 1, 1}, 0.0f, 0.4f)}));
  t = b.node("Transpose", {b.node("Reshape", {t, b.initializer_i64("shape", {3}, {0, 16, -1})})}, {{"perm", {0, 2, 1}}});
  t = b.node("Sigmoid", {b.node("MatMul", {t, b.random_normal_init("w5", {16, 12}, 0.0f, 0.4f)})});
  t = b.node("Flatten", {t});
  b.output(silu(b.node("Gemm", {t, b.random_normal_init("w6", {36 * 12, 10}, 0.0f, 0.1f),
                                b.random_normal_init("b6", {10}, 0.0f, 0.1f)})));
  ScratchDir dir("octet-dynamic");
  for (bool per_channel : {false, true}) {
    const std::string name = per_channel ? "activations_per_channel" : "activations_per_tensor";
    const std::string path = dynamic_model(b, dir, name, per_channel);
    expect_bit_exact(path, name, 6);
    Session s = Session::load(path);
    for (const char* op : {"Sigmoid", "Mul", "HardSwish"}) EXPECT_EQ(count_op(s, op), 0) << name << ": " << op;
  }
}

// All-positive, all-negative and tiny-range inputs move the zero point to the ends of uint8.
TEST(DynamicParity, ZeroPointsAtTheEnds) {
  OCTET_SKIP_WITHOUT_ORT();
  ScratchDir dir("octet-dynamic");
  const std::string path = dynamic_model(small_cnn(false), dir, "cnn_ranges", false);
  expect_bit_exact(path, "cnn_all_positive", 4, 0.5f, 4.0f);
  expect_bit_exact(path, "cnn_all_negative", 4, -4.0f, -0.5f);
  expect_bit_exact(path, "cnn_tiny_range", 4, -1e-6f, 2e-6f);
}

// An all-zero input: scale 1, zero point 0 (ORT's choice), so every product is 0.
TEST(DynamicParity, AllZeroInput) {
  OCTET_SKIP_WITHOUT_ORT();
  ScratchDir dir("octet-dynamic");
  const std::string path = dynamic_model(small_cnn(false), dir, "cnn_zero", false);
  Session s = Session::load(path);
  ir::TensorData x = ir::TensorData::make(DType::f32, {1, 3, 12, 12});
  const auto ours = s.run({x});
  const auto theirs = testing::run_ort(path, {{s.inputs()[0].name, to_npy(x)}});
  const ir::TensorData ort = from_npy(theirs.at(s.outputs()[0].name));
  for (int64_t i = 0; i < ort.count(); ++i) EXPECT_EQ(ours[0].as<float>()[i], ort.as<float>()[i]) << i;
}

// NaN or infinity in an activation has no quantization range: a clear error, not garbage.
TEST(DynamicParity, NonFiniteInputIsAnError) {
  ScratchDir dir("octet-dynamic");
  const std::string path = dynamic_model(small_cnn(false), dir, "cnn_nan", false);
  Session s = Session::load(path);
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    ir::TensorData x = ir::TensorData::make(DType::f32, {1, 3, 12, 12});
    x.as<float>()[17] = bad;
    try {
      s.run({x});
      ADD_FAILURE() << "no error for " << bad;
    } catch (const ir::Error& e) {
      EXPECT_NE(std::string(e.what()).find("NaN or infinite"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("DynamicQuantizeLinear"), std::string::npos) << e.what();
    }
  }
}

// A [k, n] int8 weight initializer with random values in [-127, 127].
std::string int8_weights(OnnxBuilder& b, int64_t k, int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int64_t> w(size_t(k * n));
  for (auto& v : w) v = int64_t(rng() % 255) - 127;
  return b.initializer("wq", TensorValue::ints(ElemType::s8, {k, n}, w));
}

// Saves `b`, checks the plan holds one MatMulIntegerToFloat, and compares octet with ORT bit for
// bit on random inputs of `dims` (batch first) at batch 1 and 5.
void expect_file_matches_ort(const OnnxBuilder& b, const std::string& name, ir::Dims dims) {
  ScratchDir dir("octet-dynamic");
  const std::string path = (dir.path() / (name + ".onnx")).string();
  b.save(path);
  Session s = Session::load(path);
  EXPECT_EQ(count_op(s, "MatMulIntegerToFloat"), 1) << name;
  std::mt19937 data(8);
  for (int64_t batch : {1, 5}) {
    dims[0] = batch;
    const ir::TensorData in = random_input(dims, data, -3.0f, 2.0f);
    const auto ours = s.run({in});
    const ir::TensorData ort = from_npy(testing::run_ort(path, {{"x", to_npy(in)}}).at(s.outputs()[0].name));
    for (int64_t i = 0; i < ort.count(); ++i)
      EXPECT_EQ(std::bit_cast<uint32_t>(ours[0].as<float>()[i]), std::bit_cast<uint32_t>(ort.as<float>()[i]))
          << name << " batch " << batch << " element " << i << ": " << ours[0].as<float>()[i] << " vs "
          << ort.as<float>()[i];
  }
}

// ORT's own fused form in a file: com.microsoft.MatMulIntegerToFloat with per-column scales,
// a run-time activation zero point and a bias.
TEST(DynamicParity, MicrosoftMatMulIntegerToFloat) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13, "mmitf", 9);
  auto q = b.node_multi("DynamicQuantizeLinear", {b.input("x", {-1, 24})}, 3);
  auto ws = b.random_uniform_init("ws", {9}, 0.001f, 0.02f);
  auto bias = b.random_normal_init("bias", {9}, 0.0f, 0.5f);
  auto y = b.node("MatMulIntegerToFloat", {q[0], int8_weights(b, 24, 9, 4), q[1], ws, q[2], "", bias});
  b.set_domain(y, "com.microsoft");
  b.output(y);
  expect_file_matches_ort(b, "mmitf", {1, 24});
}

// com.microsoft.DynamicQuantizeMatMul (ORT's fusion of DynamicQuantizeLinear + MatMulInteger,
// as a file saved after its optimizer holds it): octet splits it back into the two steps.
TEST(DynamicParity, MicrosoftDynamicQuantizeMatMul) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13, "dqmm", 10);
  auto ws = b.random_uniform_init("ws", {11}, 0.001f, 0.02f);
  auto bias = b.random_normal_init("bias", {11}, 0.0f, 0.5f);
  auto y = b.node("DynamicQuantizeMatMul", {b.input("x", {-1, 3, 20}), int8_weights(b, 20, 11, 6), ws, "", bias});
  b.set_domain(y, "com.microsoft");
  b.output(y);
  expect_file_matches_ort(b, "dqmm", {1, 3, 20});
}

}  // namespace
}  // namespace octet::parity
