// Grouped convolutions as ResNeXt, RegNet and depthwise convs with a channel multiplier (2 and 3;
// FastViT's 7x7 stride 2) export them: FP32 against ONNX Runtime, on SIMD kernels (no step falls back to the scalar
// reference where the CPU has a SIMD level).
#include <gtest/gtest.h>

#include "engine/session.h"
#include "kernels/isa.h"
#include "tests/parity/parity_fixture.h"
#include "tests/util/skip_reasons.h"

namespace octet::parity {
namespace grouped_parity {

using testing::OnnxBuilder;

TEST_F(ParityTest, GroupedConvolutions) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 64, 14, 14});
  auto grouped = [&](const std::string& in, int64_t in_c, int64_t out_c, int64_t groups, int64_t k, int64_t stride) {
    const int64_t pad = k / 2;
    return b.node("Relu", {b.node("Conv", {in, b.random_normal_init("", {out_c, in_c / groups, k, k}, 0.0f, 0.2f),
                                           b.random_normal_init("", {out_c})},
                                  {{"group", groups}, {"pads", {pad, pad, pad, pad}}, {"strides", {stride, stride}}})});
  };
  auto resnext = grouped(x, 64, 64, 32, 3, 1);        // 32 groups of 2
  auto regnet = grouped(resnext, 64, 96, 4, 3, 2);    // groups of 16 -> 24, stride 2
  auto pointwise = grouped(regnet, 96, 48, 3, 1, 1);  // a grouped 1x1 (ShuffleNetV1)
  b.output(pointwise);
  b.output(grouped(x, 64, 128, 64, 3, 1));            // depthwise with a channel multiplier of 2
  b.output(grouped(x, 64, 128, 64, 7, 2));            // FastViT's downsampling: 7x7, stride 2
  b.output(grouped(resnext, 64, 192, 64, 5, 1));      // a multiplier of 3
  check_model(b, "grouped_convs");

  ScratchDir dir;
  const std::string path = (dir.path() / "grouped.onnx").string();
  b.save(path);
  Session session = Session::load(path);
  if (kernels::active_isa() == kernels::Isa::scalar) GTEST_SKIP() << octet::testing::kIsaNotOnCpu << "no SIMD level on this CPU";
  int multiplied = 0;
  for (const PlanStep& step : session.plan_for(session.input_dims_at(1)).steps()) {
    EXPECT_FALSE(step.scalar()) << step.node << " runs " << step.kernel << " (" << step.fallback << ")";
    multiplied += step.kernel.find("repeat_channels") != std::string::npos;
  }
  EXPECT_EQ(multiplied, 3) << "the convs with a channel multiplier run the depthwise kernel over repeated channels";
}

}  // namespace grouped_parity
}  // namespace octet::parity
