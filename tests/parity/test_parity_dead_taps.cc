// FP32 convs whose outer taps read only padding (DeepLabV3's ASPP: dilation 12, 24, 36 on a
// small map), cropped by passes::prune_dead_taps, against ONNX Runtime's whole convs: a
// pointwise result, stride 2 with partly live rows and asymmetric pads, depthwise, 1-D, and the
// fused Relu and residual Add kept.
#include <gtest/gtest.h>

#include "engine/passes.h"
#include "engine/session.h"
#include "tests/parity/parity_fixture.h"

namespace octet::parity {
namespace dead_taps_parity {

using testing::OnnxBuilder;

TEST_F(ParityTest, DilatedConvsWithDeadTaps) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13, "dead_taps", 21);
  auto x = b.input("x", {-1, 32, 6, 6});
  auto conv = [&](const std::string& in, int64_t in_c, int64_t out_c, int64_t group, testing::Attrs attrs) {
    attrs.push_back({"group", group});
    return b.node("Conv", {in, b.random_normal_init("", {out_c, in_c / group, 3, 3}, 0.0f, 0.2f),
                           b.random_normal_init("", {out_c}, 0.0f, 0.1f)},
                  std::move(attrs));
  };
  // The ASPP branches, concatenated as DeepLabV3 does, each with its Relu.
  std::vector<std::string> branches;
  for (int d : {12, 24, 36})
    branches.push_back(b.node("Relu", {conv(x, 32, 16, 1, {{"pads", {d, d, d, d}}, {"dilations", {d, d}}})}));
  auto t = b.node("Concat", branches, {{"axis", int64_t{1}}});
  // Depthwise, dilation 6 (only the centre live), plus a residual Add the Session fuses.
  t = b.node("Relu", {b.node("Add", {conv(t, 48, 48, 48, {{"pads", {6, 6, 6, 6}}, {"dilations", {6, 6}}}), t})});
  // Stride 2 on rows with pad top 6 and dilation 3: tap 0 dead, tap 1 live at the last output.
  b.output(conv(t, 48, 8, 1, {{"pads", {6, 1, 0, 1}}, {"dilations", {3, 1}}, {"strides", {2, 1}}}));
  // 1-D: kernel 3, dilation 4, pads 4 on length 3.
  auto s = b.input("s", {-1, 8, 3});
  b.output(b.node("Conv", {s, b.random_normal_init("", {4, 8, 3}, 0.0f, 0.3f)}, {{"pads", {4, 4}}, {"dilations", {4}}}));
  check_model(b, "dead_taps");

  ScratchDir dir;
  const std::string path = (dir.path() / "dead_taps.onnx").string();
  b.save(path);
  const Session session = Session::load(path);
  int cropped = 0;
  for (const auto& n : session.graph().nodes) cropped += n.attrs.has(passes::kPrunedTapsAttr);
  EXPECT_EQ(cropped, 6);
}

}  // namespace dead_taps_parity
}  // namespace octet::parity
