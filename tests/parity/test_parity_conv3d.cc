// 3-D convolutions as torchvision's video classifiers export them (r3d_18, mc3_18, r2plus1d_18:
// NCDHW, stems of 3x7x7 / 1x7x7 with stride (1, 2, 2), 3x3x3 blocks with a residual, the
// factorised 1x3x3 + 3x1x1 pair, 1x1x1 stride-2 shortcuts), plus grouped and depthwise 3-D
// convs: FP32 against ONNX Runtime, on SIMD kernels (no step falls back to the scalar reference
// where the CPU has a SIMD level).
#include <gtest/gtest.h>

#include "engine/session.h"
#include "kernels/isa.h"
#include "io/tensor_io.h"
#include "tests/parity/parity_fixture.h"
#include "tests/util/qdq_patterns.h"
#include "tests/util/skip_reasons.h"

namespace octet::parity {
namespace conv3d_parity {

using testing::OnnxBuilder;

struct Conv3d {
  int64_t out_c, kd, kh, kw, sd = 1, shw = 1, groups = 1, dd = 1;
};

std::string conv3d(OnnxBuilder& b, const std::string& x, int64_t in_c, const Conv3d& c, bool bias = true) {
  const int64_t pd = c.dd * (c.kd - 1) / 2, ph = c.kh / 2, pw = c.kw / 2;
  std::vector<std::string> in = {x, b.random_normal_init("", {c.out_c, in_c / c.groups, c.kd, c.kh, c.kw}, 0.0f, 0.15f)};
  if (bias) in.push_back(b.random_normal_init("", {c.out_c}));
  return b.node("Conv", in,
                {{"group", c.groups},
                 {"pads", {pd, ph, pw, pd, ph, pw}},
                 {"strides", {c.sd, c.shw, c.shw}},
                 {"dilations", {c.dd, int64_t{1}, int64_t{1}}}});
}

std::string batchnorm(OnnxBuilder& b, const std::string& x, int64_t c) {
  return b.node("BatchNormalization",
                {x, b.random_uniform_init("", {c}, 0.5f, 2.0f), b.random_normal_init("", {c}),
                 b.random_normal_init("", {c}), b.random_uniform_init("", {c}, 0.01f, 2.0f)},
                {{"epsilon", 1e-5f}});
}

void expect_no_scalar_step(const OnnxBuilder& b, const std::string& name) {
  ScratchDir dir;
  const std::string path = (dir.path() / (name + ".onnx")).string();
  b.save(path);
  Session session = Session::load(path);
  if (kernels::active_isa() == kernels::Isa::scalar) GTEST_SKIP() << octet::testing::kIsaNotOnCpu << "no SIMD level on this CPU";
  for (const PlanStep& step : session.plan_for(session.input_dims_at(1)).steps())
    EXPECT_FALSE(step.scalar()) << step.node << " runs " << step.kernel << " (" << step.fallback << ")";
}

TEST_F(ParityTest, VideoResNetConvolutions) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 3, 4, 16, 16});
  // r3d_18's stem (conv + BN + ReLU; the BN folds), then a basic block with its residual.
  auto stem = b.node("Relu", {batchnorm(b, conv3d(b, x, 3, {16, 3, 7, 7, 1, 2}, false), 16)});
  auto a = b.node("Relu", {conv3d(b, stem, 16, {16, 3, 3, 3})});
  auto block = b.node("Relu", {b.node("Add", {conv3d(b, a, 16, {16, 3, 3, 3}), stem})});
  // r2plus1d's factorised conv (1x3x3 spatial then 3x1x1 temporal, stride 2 in both) and the
  // downsampling shortcut it pairs with (1x1x1 stride 2).
  auto spatial = b.node("Relu", {conv3d(b, block, 16, {28, 1, 3, 3, 1, 2})});
  auto temporal = conv3d(b, spatial, 28, {32, 3, 1, 1, 2, 1});
  auto shortcut = conv3d(b, block, 16, {32, 1, 1, 1, 2, 2});
  b.output(b.node("Relu", {b.node("Add", {temporal, shortcut})}));
  // A 1x1x1 stride-1 conv (the plain GEMM), a grouped one, a depthwise one and one dilated in
  // depth, on the stem's output.
  b.output(conv3d(b, stem, 16, {24, 1, 1, 1}));
  b.output(conv3d(b, stem, 16, {32, 3, 3, 3, 1, 1, 4}));
  b.output(b.node("Relu", {conv3d(b, stem, 16, {16, 3, 3, 3, 2, 2, 16})}));
  b.output(conv3d(b, stem, 16, {8, 3, 3, 3, 1, 1, 1, 2}));
  check_model(b, "video_resnet_convs");
  expect_no_scalar_step(b, "video_resnet_convs");
}

// 3-D MaxPool and AveragePool (ceil_mode, count_include_pad, asymmetric pads, a spatial-only
// window) and the global average pool a video classifier ends with.
TEST_F(ParityTest, VideoPools) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 12, 5, 9, 9});
  b.output(b.node("MaxPool", {x}, {{"kernel_shape", {3, 3, 3}}, {"strides", {2, 2, 2}}, {"pads", {1, 1, 1, 1, 1, 1}}}));
  b.output(b.node("MaxPool", {x}, {{"kernel_shape", {1, 3, 3}}, {"strides", {1, 2, 2}}, {"pads", {0, 1, 1, 0, 1, 1}}}));
  b.output(b.node("AveragePool", {x},
                  {{"kernel_shape", {2, 3, 3}}, {"strides", {2, 2, 2}}, {"pads", {1, 0, 1, 0, 1, 1}}, {"ceil_mode", 1}}));
  b.output(b.node("AveragePool", {x},
                  {{"kernel_shape", {3, 3, 3}}, {"strides", {1, 1, 1}}, {"pads", {1, 1, 1, 1, 1, 1}},
                   {"count_include_pad", 1}}));
  b.output(b.node("GlobalAveragePool", {x}));
  check_model(b, "video_pools");
  expect_no_scalar_step(b, "video_pools");
}

// The same layers in INT8 as ONNX Runtime's quantizer writes them (QDQ around each op; and the
// dynamic ConvInteger chain): bit-identical to ORT at every level this CPU runs, with no step on
// a scalar reference.
TEST(Conv3dParity, Int8IsBitIdenticalToOrt) {
  OCTET_SKIP_WITHOUT_ORT();
  using testing::qdq;
  OnnxBuilder b(13);
  const testing::QParams act{1.0f / 32, 128, testing::ElemType::u8}, relu_out{1.0f / 16, 0, testing::ElemType::u8};
  auto x = b.input("x", {-1, 8, 4, 10, 10});
  // The input's Q / DQ pair repeats the producer's parameters, as ORT's quantizer writes them.
  auto qconv = [&](const std::string& in, const testing::QParams& in_q, int64_t in_c, int64_t out_c,
                   std::vector<int64_t> k, int64_t groups, std::vector<int64_t> strides) {
    auto w = testing::qdq_weights(b, {out_c, in_c / groups, k[0], k[1], k[2]}, true, 0.2f);
    auto y = b.node("Conv", {qdq(b, in, in_q), w.dq, testing::qdq_bias(b, out_c, in_q.scale, w.scales)},
                    {{"group", groups},
                     {"pads", {k[0] / 2, k[1] / 2, k[2] / 2, k[0] / 2, k[1] / 2, k[2] / 2}},
                     {"strides", strides}});
    return qdq(b, b.node("Relu", {y}), relu_out);
  };
  auto a = qconv(x, act, 8, 16, {3, 3, 3}, 1, {1, 1, 1});
  auto pooled = qdq(b, b.node("MaxPool", {a}, {{"kernel_shape", {1, 3, 3}}, {"strides", {1, 2, 2}}, {"pads", {0, 1, 1, 0, 1, 1}}}),
                    relu_out);
  auto grouped = qconv(pooled, relu_out, 16, 16, {1, 3, 3}, 4, {1, 1, 1});
  auto depthwise = qconv(grouped, relu_out, 16, 16, {3, 3, 3}, 16, {2, 1, 1});
  b.output(qdq(b, b.node("AveragePool", {depthwise}, {{"kernel_shape", {2, 2, 2}}, {"strides", {1, 2, 2}}}), act));
  b.output(testing::dynamic_conv(b, x, {12, 8, 3, 1, 1}, {{"pads", {1, 0, 0, 1, 0, 0}}}, true));

  const ir::Dims dims{2, 8, 4, 10, 10};
  expect_ort_bytes_at_every_level(b, "conv3d_int8", {{"x", random_inputs({dims}, dims[0], 11)[0]}});
  expect_no_scalar_step_at_simd_levels(b, "conv3d_int8", {{1, 8, 4, 10, 10}});
}

}  // namespace conv3d_parity
}  // namespace octet::parity
