// torch's GroupNorm export left in float between a DequantizeLinear and a QuantizeLinear (timm's
// efficientnet_b0_gn quantized by ORT's tool: Q -> DQ -> Reshape -> Q -> DQ -> InstanceNormalization
// -> Reshape -> Mul -> Add -> Q) runs as one QLinearGroupNorm step (passes::fuse_qdq_group_norm)
// with the Reshape back on its bytes, still ONNX Runtime's bytes at every level: u8 and s8, two
// channels a group and one, a map whose rows are off a 16-byte boundary (9x7 pixels), an
// InstanceNormalization with its own scale and bias; a chain the pass must leave alone (the
// normalized map read twice) keeps its steps and ORT's bytes too.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/session.h"
#include "tests/parity/parity_fixture.h"
#include "tests/parity/qdq_chain_util.h"

namespace octet::parity {
namespace qdq_group_norm_parity {

using testing::ElemType;
using testing::OnnxBuilder;
using qdq_chain::dq;
using qdq_chain::q;
using qdq_chain::Quant;
using qdq_chain::quant;

TEST(QdqGroupNormParity, GroupNormBetweenDequantizeAndQuantizeIsOneStepWithOrtsBytes) {
  OCTET_SKIP_WITHOUT_ORT();
  for (bool s8 : {false, true}) {
    for (int64_t groups : {int64_t{8}, int64_t{16}}) {
      OnnxBuilder b(13);
      const ir::Dims dims{2, 16, 9, 7};
      auto x = b.input("x", {-1, 16, 9, 7});
      const Quant in = quant(b, s8, 0.04f, s8 ? -3 : 131), mid = quant(b, s8, 0.04f, s8 ? -3 : 131);
      const Quant out = quant(b, s8, 0.03f, s8 ? 2 : 120);
      const ElemType type = s8 ? ElemType::s8 : ElemType::u8;
      const auto xq = q(b, x, in);
      auto chain = [&](bool share) {
        auto grouped = q(b, b.node("Reshape", {dq(b, xq, in), b.initializer_i64("", {3}, {0, groups, -1})}), mid);
        auto norm = b.node("InstanceNormalization",
                           {dq(b, grouped, mid), b.random_normal_init("", {groups}, 1.0f, 0.3f), b.random_normal_init("", {groups})});
        auto back = b.node("Reshape", {norm, b.node("Shape", {x})});
        auto affine = b.node("Add", {b.node("Mul", {back, b.random_normal_init("", {16, 1, 1}, 1.0f, 0.5f)}),
                                     b.random_normal_init("", {16, 1, 1})});
        b.output(q(b, affine, out), type);
        if (share) b.output(norm);
      };
      chain(false);
      chain(true);  // left alone: the normalized map is also an output
      const std::string name = std::string("qdq_group_norm_") + (s8 ? "s8_" : "u8_") + std::to_string(groups);
      qdq_chain::expect_ort_bytes_on_wide_input(b, name, dims, 7, 2.5f);
      qdq_chain::at_every_level(b, name, dims, [&](const auto& steps, kernels::Isa isa) {
        EXPECT_EQ(steps("QLinearGroupNorm"), 1) << name << " at " << kernels::isa_name(isa);
        EXPECT_EQ(steps("InstanceNormalization"), 1) << name << ": only the chain of a shared map stays";
      });
    }
  }
}

}  // namespace qdq_group_norm_parity
}  // namespace octet::parity
