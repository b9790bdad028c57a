// The INT8 op table (core/int8_ops.h) against its readers: the op registry, the loader, and
// the rules the QDQ pass and calib look up in it.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/int8_ops.h"
#include "engine/op_registry.h"
#include "loader/importers.h"

namespace octet {
namespace {

using int8::Int8Op;

bool listed(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

TEST(Int8Ops, EveryRowNamesAnOpImplThatIsRegistered) {
  for (const Int8Op& r : int8::ops()) {
    SCOPED_TRACE(r.op);
    // Only a file form that a pass rewrites before planning has no OpImpl of its own.
    EXPECT_EQ(r.impl.empty(), r.family == int8::Family::rewritten);
    EXPECT_EQ(find_op(r.op) != nullptr, !r.impl.empty());
  }
}

TEST(Int8Ops, NamesAndLookupsAreUnambiguous) {
  std::set<std::string> names;
  std::map<std::string, int> fused, static_forms, dynamic_forms;
  for (const Int8Op& r : int8::ops()) {
    EXPECT_TRUE(names.insert(r.op).second) << r.op << " has two rows";
    const bool dynamic = r.quantizer == int8::QuantRule::dynamic_conv || r.quantizer == int8::QuantRule::dynamic_matmul;
    for (const auto& f : r.replaces) {
      fused[f] += r.fusion != int8::Fusion::none;
      static_forms[f] += r.quantizer != int8::QuantRule::none && !dynamic;
      dynamic_forms[f] += dynamic;
    }
  }
  for (const auto& [f, k] : fused) EXPECT_LE(k, 1) << "fuse_qdq could form " << k << " ops from " << f;
  for (const auto& [f, k] : static_forms) EXPECT_LE(k, 1) << f;
  for (const auto& [f, k] : dynamic_forms) EXPECT_LE(k, 1) << f;

  EXPECT_EQ(int8::find("QLinearConv")->op, "QLinearConv");
  EXPECT_EQ(int8::find("Conv"), nullptr);
  EXPECT_EQ(int8::fused_from("Conv")->op, "QLinearConv");
  EXPECT_EQ(int8::dynamic_form("Conv")->op, "ConvInteger");
  EXPECT_EQ(int8::dynamic_form("Gemm")->op, "MatMulInteger");
  EXPECT_EQ(int8::static_form("Gemm")->op, "QGemm");
  EXPECT_EQ(int8::fused_from("LeakyRelu")->op, "QLinearLeakyRelu");  // from QDQ units, not written by calib
  EXPECT_EQ(int8::static_form("LeakyRelu"), nullptr);
  EXPECT_EQ(int8::static_form("HardSwish"), nullptr);  // fused from QDQ files, not written by calib
  EXPECT_NE(int8::fused_from("HardSwish"), nullptr);
  // ConvTranspose: a QDQ unit the quantizer writes, run in float (no INT8 op, as in ORT's CPU provider).
  EXPECT_EQ(int8::static_form("ConvTranspose"), nullptr);
  EXPECT_EQ(int8::fused_from("ConvTranspose"), nullptr);
  EXPECT_EQ(int8::float_unit_rule("ConvTranspose"), int8::QuantRule::conv_transpose);
  EXPECT_EQ(int8::float_unit_rule("Conv"), int8::QuantRule::none);
  EXPECT_TRUE(int8::moves_data_only("Reshape"));
  EXPECT_TRUE(int8::moves_data_only("Slice"));  // ShuffleNetV2's chunk
  EXPECT_TRUE(int8::moves_data_only("Split"));  // YOLOv8 C2f, CSP stages
  EXPECT_FALSE(int8::moves_data_only("Conv"));
}

// The slots the rules read by name exist wherever the rule applies, and sit where ONNX Runtime's
// schemas put them (QLinearConv's y_zero_point is its input 7, QGemm's 8, QLinearConcat's 1).
TEST(Int8Ops, SlotsTheRulesReadExist) {
  for (const Int8Op& r : int8::ops()) {
    SCOPED_TRACE(r.op);
    std::set<std::string> unique(r.slots.begin(), r.slots.end());
    EXPECT_EQ(unique.size(), r.slots.size());
    if (r.fusion == int8::Fusion::none) continue;
    EXPECT_TRUE(r.has_slot("y_scale") && r.has_slot("y_zero_point"));
    const std::string in = r.fusion == int8::Fusion::conv || r.fusion == int8::Fusion::unary ||
                                   r.fusion == int8::Fusion::reduce
                               ? "x"
                           : r.fusion == int8::Fusion::variadic ? ""
                                                                : "a";
    if (!in.empty()) {
      EXPECT_TRUE(r.has_slot(in) && r.has_slot(in + "_scale") && r.has_slot(in + "_zero_point"));
    }
  }
  EXPECT_EQ(int8::find("QLinearConv")->slot("y_zero_point"), 7u);
  EXPECT_EQ(int8::find("QLinearConv")->slot("bias"), 8u);
  EXPECT_EQ(int8::find("QGemm")->slot("y_zero_point"), 8u);
  EXPECT_EQ(int8::find("QLinearAdd")->slot("y_zero_point"), 7u);
  EXPECT_EQ(int8::find("QLinearConcat")->slot("y_zero_point"), 1u);
  EXPECT_EQ(int8::find("QLinearSoftmax")->slot("y_zero_point"), 4u);
  EXPECT_THROW(int8::find("QLinearSigmoid")->slot("w"), ir::Error);
}

TEST(Int8Ops, TheLoaderReadsTheImportedRowsInTheirDomains) {
  const auto& onnx = loader::supported_ops();
  const auto& contrib = loader::supported_contrib_ops();
  for (const Int8Op& r : int8::ops()) {
    SCOPED_TRACE(r.op);
    EXPECT_EQ(listed(onnx, r.op), r.imported && r.domain.empty());
    EXPECT_EQ(listed(contrib, r.op), r.imported && r.domain == int8::kMicrosoftDomain);
  }
  // Every contrib op the loader accepts comes from the table.
  for (const auto& op : contrib) EXPECT_NE(int8::find(op), nullptr) << op;
}

}  // namespace
}  // namespace octet
