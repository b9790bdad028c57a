// A QDQ fire module whose conv branches carry scales of their own (as ONNX Runtime's quantizer
// calibrates each branch apart): passes::fuse_concat_requantization hands the QLinearConcat's
// requantization of each branch to its QLinearConv, which looks its bytes up as it stores them
// (after its own table: a fused QLinearSigmoid here), so every branch is written in its place in
// the Concat's output (engine/plan_views.cc) and the Concat copies nothing; still ORT's bytes at
// every level. A branch read by a second node keeps its scale and is requantized by the Concat.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "engine/session.h"
#include "tests/parity/parity_fixture.h"
#include "tests/util/qdq_patterns.h"

namespace octet::parity {
namespace concat_views_parity {

using testing::ElemType;
using testing::OnnxBuilder;
using testing::QParams;

OnnxBuilder fire(bool s8, bool shared_branch) {
  OnnxBuilder b(13, "qdq_fire", 17);
  const ElemType t = s8 ? ElemType::s8 : ElemType::u8;
  const QParams xq{1.0f / 32, s8 ? 0 : 128, t}, out{1.0f / 16, s8 ? -20 : 100, t};
  auto x = b.input("x", {-1, 16, 9, 11});
  auto xd = testing::qdq(b, x, xq);
  auto conv = [&](int64_t out_c, int64_t k, int64_t group) {
    auto w = testing::qdq_weights(b, {out_c, 16 / group, k, k}, true);
    return b.node("Conv", {xd, w.dq, testing::qdq_bias(b, out_c, xq.scale, w.scales)},
                  {{"pads", {k / 2, k / 2, k / 2, k / 2}}, {"group", group}});
  };
  std::vector<std::string> branches = {
      testing::qdq(b, b.node("Relu", {conv(24, 1, 1)}), {1.0f / 20, s8 ? -128 : 0, t}),
      testing::qdq(b, conv(32, 3, 1), {1.0f / 12, s8 ? 3 : 131, t}),
      // A QLinearSigmoid the conv takes as its output table, then the Concat's table after it.
      testing::qdq(b, b.node("Sigmoid", {testing::qdq(b, conv(8, 3, 1), {1.0f / 10, s8 ? 0 : 128, t})}),
                   {1.0f / 256, s8 ? -128 : 0, t}),
      testing::qdq(b, conv(16, 3, 16), out),  // already the output's parameters
  };
  if (shared_branch) b.output(b.node("Relu", {branches[1]}));
  b.output(testing::qdq(b, b.node("Concat", branches, {{"axis", int64_t(1)}}), out));
  return b;
}

TEST(ConcatViewsParity, ConvBranchesTakeTheConcatsRequantizationAndWriteInPlace) {
  OCTET_SKIP_WITHOUT_ORT();
  for (const bool s8 : {false, true}) {
    for (const bool shared : {false, true}) {
      const std::string name = std::string("qdq_fire_") + (s8 ? "s8" : "u8") + (shared ? "_shared" : "");
      SCOPED_TRACE(name);
      const OnnxBuilder b = fire(s8, shared);
      const ir::Dims dims{2, 16, 9, 11};
      expect_ort_bytes_at_every_level(b, name, {{"x", random_inputs({dims}, 2, 5)[0]}});

      ScratchDir dir;
      const std::string path = (dir.path() / (name + ".onnx")).string();
      b.save(path);
      Session session = Session::load(path);
      int fused = -1;
      for (const auto& pass : session.pass_report())
        if (pass.pass == "fuse QLinearConcat requantization into QLinearConv") fused = pass.changed;
      EXPECT_EQ(fused, shared ? 2 : 3);
      std::string concat;
      for (const PlanStep& s : session.plan_for(std::vector<ir::Dims>{dims}).steps())
        if (s.op == "QLinearConcat") concat = s.kernel;
      if (shared) EXPECT_NE(concat.find("lookup"), std::string::npos) << concat;
      else EXPECT_EQ(concat, "in_place");
    }
  }
}

}  // namespace concat_views_parity
}  // namespace octet::parity
