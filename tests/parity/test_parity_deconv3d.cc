// 3-D transposed convolutions as a volumetric decoder exports them (torch.nn.ConvTranspose3d +
// ReLU: NCDHW, 2x upsampling k2 s2 and k3 s2 p1 output_padding 1, a temporal-only one, grouped
// and depthwise, a fused Sigmoid): FP32 against ONNX Runtime on the SIMD driver (no step on the
// scalar reference where the CPU has a SIMD level), and the same chain in QDQ as ORT's
// quantizer writes it (float between DequantizeLinear and QuantizeLinear, as ORT's CPU provider
// runs it) bit-identical to ORT at every level this CPU runs.
#include <gtest/gtest.h>

#include "engine/session.h"
#include "io/tensor_io.h"
#include "kernels/isa.h"
#include "tests/parity/parity_fixture.h"
#include "tests/util/qdq_patterns.h"
#include "tests/util/skip_reasons.h"

namespace octet::parity {
namespace deconv3d_parity {

using testing::Attrs;
using testing::OnnxBuilder;

struct Deconv3d {
  int64_t out_c;
  std::vector<int64_t> k, strides, pads, output_padding = {};
  int64_t groups = 1;
};

Attrs attrs(const Deconv3d& d) {
  Attrs a = {{"kernel_shape", d.k}, {"strides", d.strides}, {"pads", d.pads}, {"group", d.groups}};
  if (!d.output_padding.empty()) a.push_back({"output_padding", d.output_padding});
  return a;
}

std::string deconv3d(OnnxBuilder& b, const std::string& x, int64_t in_c, const Deconv3d& d) {
  return b.node("ConvTranspose",
                {x, b.random_normal_init("", {in_c, d.out_c / d.groups, d.k[0], d.k[1], d.k[2]}, 0.0f, 0.2f),
                 b.random_normal_init("", {d.out_c})},
                attrs(d));
}

TEST_F(ParityTest, VolumetricDecoderConvTranspose3d) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 16, 2, 4, 4});
  const std::vector<int64_t> none = {0, 0, 0, 0, 0, 0}, one = {1, 1, 1, 1, 1, 1};
  auto up1 = b.node("Relu", {deconv3d(b, x, 16, {12, {2, 2, 2}, {2, 2, 2}, none})});
  auto up2 = b.node("Relu", {deconv3d(b, up1, 12, {8, {3, 3, 3}, {2, 2, 2}, one, {1, 1, 1}})});
  b.output(up2);
  // Temporal-only (3x1x1 s(2,1,1)), grouped with a Sigmoid fused, depthwise (the direct path),
  // and a dilated one with asymmetric pads, on the first stage's output.
  b.output(deconv3d(b, up1, 12, {6, {3, 1, 1}, {2, 1, 1}, {1, 0, 0, 0, 0, 0}}));
  b.output(b.node("Sigmoid", {deconv3d(b, up1, 12, {8, {3, 3, 3}, {1, 1, 1}, one, {}, 4})}));
  b.output(deconv3d(b, up1, 12, {12, {2, 4, 4}, {1, 2, 2}, {0, 1, 1, 1, 1, 1}, {}, 12}));
  b.output(b.node("ConvTranspose",
                  {up1, b.random_normal_init("", {12, 5, 3, 3, 3}, 0.0f, 0.2f)},
                  {{"dilations", {2, 2, 2}}, {"pads", {1, 2, 0, 2, 1, 1}}, {"strides", {1, 2, 1}}}));
  check_model(b, "volumetric_decoder");

  ScratchDir dir;
  const std::string path = (dir.path() / "volumetric_decoder.onnx").string();
  b.save(path);
  Session session = Session::load(path);
  if (kernels::active_isa() == kernels::Isa::scalar) GTEST_SKIP() << octet::testing::kIsaNotOnCpu << "no SIMD level on this CPU";
  int deconvs = 0;
  for (const PlanStep& step : session.plan_for(session.input_dims_at(1)).steps()) {
    EXPECT_FALSE(step.scalar()) << step.node << " runs " << step.kernel << " (" << step.fallback << ")";
    deconvs += step.kernel.find("conv_transpose") != std::string::npos;
  }
  EXPECT_EQ(deconvs, 6);
}

// The decoder in QDQ as ORT's quantize_static writes ConvTranspose (int8 weights per output
// channel along axis 1, per tensor when grouped; an int32 bias; the Relu inside the unit):
// every output byte equal to ORT's at every level, no step on a scalar reference.
TEST(Deconv3dParity, QdqIsBitIdenticalToOrt) {
  OCTET_SKIP_WITHOUT_ORT();
  using testing::qdq;
  OnnxBuilder b(13);
  const testing::QParams act{1.0f / 32, 128, testing::ElemType::u8}, relu_out{1.0f / 16, 0, testing::ElemType::u8};
  auto x = b.input("x", {-1, 8, 2, 5, 5});
  auto qdeconv = [&](const std::string& in, const testing::QParams& in_q, int64_t in_c, const Deconv3d& d, bool relu) {
    auto w = testing::qdq_weights(b, {in_c, d.out_c / d.groups, d.k[0], d.k[1], d.k[2]}, d.groups == 1, 0.2f, 1);
    auto y = b.node("ConvTranspose", {qdq(b, in, in_q), w.dq, testing::qdq_bias(b, d.out_c, in_q.scale, w.scales)},
                    attrs(d));
    return relu ? qdq(b, b.node("Relu", {y}), relu_out) : qdq(b, y, act);
  };
  const std::vector<int64_t> none = {0, 0, 0, 0, 0, 0}, one = {1, 1, 1, 1, 1, 1};
  auto up1 = qdeconv(x, act, 8, {12, {2, 2, 2}, {2, 2, 2}, none}, true);
  b.output(qdeconv(up1, relu_out, 12, {8, {3, 3, 3}, {2, 2, 2}, one, {1, 1, 1}}, true));
  b.output(qdeconv(up1, relu_out, 12, {8, {3, 3, 3}, {1, 1, 1}, one, {}, 4}, false));
  b.output(qdeconv(up1, relu_out, 12, {12, {2, 2, 2}, {2, 2, 2}, none, {}, 12}, false));

  const ir::Dims dims{2, 8, 2, 5, 5};
  expect_ort_bytes_at_every_level(b, "deconv3d_qdq", {{"x", random_inputs({dims}, dims[0], 17)[0]}});
  expect_no_scalar_step_at_simd_levels(b, "deconv3d_qdq", {{1, 8, 2, 5, 5}});
}

}  // namespace deconv3d_parity
}  // namespace octet::parity
