// "Where INT8 loses time" over plans that fuse differently: the FP32 plan runs Conv+BN+Relu as
// one step, the 1x1 conv and the depthwise after it as another, and the residual Add inside the
// projection conv; the INT8 plan runs a QuantizeLinear, a relayout, every conv on its own, the
// Add as a QLinearAdd and a DequantizeLinear at the output. Each row must compare whole groups.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "apps/explain/differences.h"

namespace octet::explain::differences_test {

using json = nlohmann::json;

void add(ir::Graph& g, const std::string& name, const std::string& op, std::vector<std::string> inputs,
         std::vector<std::string> outputs) {
  ir::Node n;
  n.name = name;
  n.op = op;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  g.nodes.push_back(std::move(n));
}

StepProfile step(std::string node, std::string op, Category category, double us, std::vector<std::string> inputs,
                 std::vector<std::string> outputs, int64_t macs = 0) {
  StepProfile s;
  s.node = std::move(node);
  s.op = std::move(op);
  s.kernel = s.op + "_kernel";
  s.category = category;
  s.us = us;
  s.macs = macs;
  s.output_bytes = 1000;
  s.inputs = std::move(inputs);
  s.outputs = std::move(outputs);
  return s;
}

// The FP32 model as exported: the stem keeps its BatchNormalization.
ir::Graph fp32_model() {
  ir::Graph g;
  g.inputs = {"x"};
  add(g, "stem", "Conv", {"x", "w0"}, {"s0"});
  add(g, "stem_bn", "BatchNormalization", {"s0", "bn_scale"}, {"s1"});
  add(g, "stem_relu", "Relu", {"s1"}, {"a"});
  add(g, "pw", "Conv", {"a", "w1"}, {"p0"});
  add(g, "pw_relu", "Relu", {"p0"}, {"p"});
  add(g, "dw", "Conv", {"p", "w2"}, {"d0"});
  add(g, "dw_relu", "Relu", {"d0"}, {"b"});
  add(g, "proj", "Conv", {"b", "w3"}, {"c"});
  add(g, "res", "Add", {"c", "a"}, {"out"});
  g.outputs = {"out"};
  return g;
}

// Its QDQ form (BatchNormalization folded). The projection conv carries the dynamic
// quantizer's name for the integer form of "proj", which must still meet FP32's "proj".
ir::Graph int8_model() {
  ir::Graph g;
  g.inputs = {"x"};
  add(g, "x_q", "QuantizeLinear", {"x"}, {"xq"});
  add(g, "x_dq", "DequantizeLinear", {"xq"}, {"xd"});
  add(g, "stem", "Conv", {"xd", "w0"}, {"s0"});
  add(g, "stem_relu", "Relu", {"s0"}, {"a"});
  add(g, "a_q", "QuantizeLinear", {"a"}, {"aq"});
  add(g, "a_dq", "DequantizeLinear", {"aq"}, {"ad"});
  add(g, "pw", "Conv", {"ad", "w1"}, {"p0"});
  add(g, "pw_relu", "Relu", {"p0"}, {"p"});
  add(g, "p_q", "QuantizeLinear", {"p"}, {"pq"});
  add(g, "p_dq", "DequantizeLinear", {"pq"}, {"pd"});
  add(g, "dw", "Conv", {"pd", "w2"}, {"d0"});
  add(g, "dw_relu", "Relu", {"d0"}, {"b"});
  add(g, "b_q", "QuantizeLinear", {"b"}, {"bq"});
  add(g, "b_dq", "DequantizeLinear", {"bq"}, {"bd"});
  add(g, "proj_quant", "Conv", {"bd", "w3"}, {"c"});
  add(g, "c_q", "QuantizeLinear", {"c"}, {"cq"});
  add(g, "c_dq", "DequantizeLinear", {"cq"}, {"cd"});
  add(g, "a_dq2", "DequantizeLinear", {"aq"}, {"ad2"});
  add(g, "res", "Add", {"cd", "ad2"}, {"o"});
  add(g, "o_q", "QuantizeLinear", {"o"}, {"oq"});
  add(g, "o_dq", "DequantizeLinear", {"oq"}, {"out"});
  g.outputs = {"out"};
  return g;
}

std::vector<std::string> names(const StepProfile& s) {
  std::vector<std::string> out;
  for (const auto& n : s.sources) out.push_back(n.name);
  return out;
}

TEST(ExplainDifferences, PlansFusingDifferentlyAreComparedOverTheSameNodes) {
  std::vector<StepProfile> fp32 = {
      step("relayout x", "Relayout to channels-last", Category::layout, 10, {"x"}, {"x@channels_last"}),
      step("stem", "Conv", Category::dense, 50, {"x"}, {"a"}, 1000),
      step("pw+dw", "PointwiseDepthwise", Category::dense, 100, {"a"}, {"b"}, 5000),
      step("proj", "Conv", Category::dense, 40, {"b", "a"}, {"out"}, 900)};
  std::vector<StepProfile> int8 = {
      step("x_q", "QuantizeLinear", Category::quantize, 20, {"x"}, {"xq"}),
      step("relayout xq", "Relayout to channels-last", Category::layout, 4, {"xq"}, {"xq@channels_last"}),
      step("stem", "QLinearConv", Category::dense, 45, {"xq"}, {"aq"}, 1000),
      step("pw", "QLinearConv", Category::dense, 90, {"aq"}, {"pq"}, 4000),
      step("dw", "QLinearConv", Category::depthwise, 30, {"pq"}, {"bq"}, 1000),
      step("proj_quant", "QLinearConv", Category::dense, 30, {"bq"}, {"cq"}, 900),
      step("res", "QLinearAdd", Category::elementwise, 12, {"cq", "aq"}, {"oq"}),
      step("o_dq", "DequantizeLinear", Category::quantize, 6, {"oq"}, {"out"})};
  assign_sources(fp32, fp32_model());
  assign_sources(int8, int8_model());

  // What each step computes of its model.
  EXPECT_TRUE(fp32[0].sources.empty());
  EXPECT_EQ(names(fp32[1]), (std::vector<std::string>{"stem", "stem_bn", "stem_relu"}));
  EXPECT_EQ(names(fp32[2]), (std::vector<std::string>{"pw", "pw_relu", "dw", "dw_relu"}));
  EXPECT_EQ(names(fp32[3]), (std::vector<std::string>{"proj", "res"}));
  EXPECT_EQ(names(int8[0]), (std::vector<std::string>{"x_q"}));
  EXPECT_EQ(names(int8[2]), (std::vector<std::string>{"x_dq", "stem", "stem_relu", "a_q"}));
  EXPECT_EQ(names(int8[6]), (std::vector<std::string>{"c_dq", "a_dq2", "res", "o_q"}));
  EXPECT_EQ(names(int8[7]), (std::vector<std::string>{"o_dq"}));

  // The partition: the stem with the quantize step and both relayouts; pw + dw against the
  // fused pair; the projection with the Add and the output's dequantize.
  const std::vector<CoFusionGroup> groups = co_fusion_groups(fp32, int8);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].int8, (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(groups[0].fp32, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(groups[1].int8, (std::vector<size_t>{3, 4}));
  EXPECT_EQ(groups[1].fp32, (std::vector<size_t>{2}));
  EXPECT_EQ(groups[2].int8, (std::vector<size_t>{5, 6, 7}));
  EXPECT_EQ(groups[2].fp32, (std::vector<size_t>{3}));

  // Rows: every group INT8 loses time on, largest first, with both sums.
  const json d = int8_differences("int8_static", kernels::Isa::avx2, fp32, int8, 10);
  ASSERT_EQ(d.size(), 3u) << d.dump(1);
  const json& pair = d[0];
  EXPECT_EQ(pair["node"], "pw (+Relu, Conv, Relu)");
  EXPECT_EQ(pair["nodes"], json({"pw", "pw_relu", "dw", "dw_relu"}));
  EXPECT_EQ(pair["op"], "QLinearConv + QLinearConv");
  EXPECT_DOUBLE_EQ(pair["int8_us"].get<double>(), 120.0);
  EXPECT_DOUBLE_EQ(pair["fp32_us"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(pair["delta_us"].get<double>(), 20.0);
  EXPECT_EQ(pair["int8_steps"], 2);
  EXPECT_EQ(pair["fp32_steps"], 1);
  EXPECT_EQ(pair["step_indices"]["int8"], json({3, 4}));
  EXPECT_NE(pair["reason"].get<std::string>().find("INT8 runs these nodes as 2 step(s) (main: QLinearConv), FP32 as 1: no integer"), std::string::npos)
      << pair["reason"];
  EXPECT_NE(pair["reason"].get<std::string>().find("no integer dot-product instruction at avx2"), std::string::npos)
      << pair["reason"];

  // The stem: 20 + 4 + 45 against 10 + 50. The quantize step alone costs more than the 9 µs
  // INT8 loses, so it is the reason, although the conv is the main step.
  const json& stem = d[1];
  EXPECT_EQ(stem["node"], "stem (+BatchNormalization, Relu)");
  EXPECT_DOUBLE_EQ(stem["int8_us"].get<double>(), 69.0);
  EXPECT_DOUBLE_EQ(stem["fp32_us"].get<double>(), 60.0);
  EXPECT_DOUBLE_EQ(stem["overhead_us"].get<double>(), 20.0);
  EXPECT_EQ(stem["step_indices"]["fp32"], json({0, 1}));
  EXPECT_NE(stem["reason"].get<std::string>().find("quantization overhead: QuantizeLinear (20.0 µs)"),
            std::string::npos)
      << stem["reason"];

  // The projection: the dynamic quantizer's "proj_quant" is FP32's "proj"; 30 + 12 + 6 against
  // 40, its 6 µs dequantize less than the 8 µs lost, so the conv's reason.
  const json& proj = d[2];
  EXPECT_EQ(proj["node"], "proj (+Add)");
  EXPECT_DOUBLE_EQ(proj["int8_us"].get<double>(), 48.0);
  EXPECT_DOUBLE_EQ(proj["fp32_us"].get<double>(), 40.0);
  EXPECT_EQ(proj["int8_steps"], 3);
  EXPECT_NE(proj["reason"].get<std::string>().find("3 step(s) (main: QLinearConv), FP32 as 1: no integer dot-product"),
            std::string::npos)
      << proj["reason"];

  // With a dot product and a memory-bound conv, the reason follows the numbers.
  int8[5].output_bytes = 1000;
  int8[5].macs = 100;
  const json vnni = int8_differences("int8_static", kernels::Isa::avx512vnni, fp32, int8, 10);
  bool found = false;
  for (const auto& row : vnni)
    if (row["node"] == "proj (+Add)") {
      found = true;
      EXPECT_NE(row["reason"].get<std::string>().find("memory-bound"), std::string::npos) << row["reason"];
    }
  EXPECT_TRUE(found) << vnni.dump(1);
  EXPECT_EQ(int8_differences("int8_static", kernels::Isa::avx2, fp32, int8, 1).size(), 1u);
  EXPECT_EQ(step_nodes("a+b_quant+"), (std::vector<std::string>{"a", "b"}));
}

// A node the FP32 plan never names on its own (the SE block's inner conv, fused into one FP32
// step) still finds the FP32 step that runs it.
TEST(ExplainDifferences, NodeInsideAFusedBlockFindsItsFp32Step) {
  ir::Graph f;
  f.inputs = {"x"};
  add(f, "pool", "GlobalAveragePool", {"x"}, {"g"});
  add(f, "fc1", "Conv", {"g", "w1"}, {"h"});
  add(f, "sig", "Sigmoid", {"h"}, {"s"});
  add(f, "mul", "Mul", {"x", "s"}, {"y"});
  ir::Graph q;
  q.inputs = {"xq"};
  add(q, "x_dq", "DequantizeLinear", {"xq"}, {"xd"});
  add(q, "pool", "GlobalAveragePool", {"xd"}, {"g"});
  add(q, "g_q", "QuantizeLinear", {"g"}, {"gq"});
  add(q, "g_dq", "DequantizeLinear", {"gq"}, {"gd"});
  add(q, "fc1", "Conv", {"gd", "w1"}, {"h"});
  add(q, "sig", "Sigmoid", {"h"}, {"s"});
  add(q, "mul", "Mul", {"xd", "s"}, {"y"});
  std::vector<StepProfile> fp32 = {step("mul", "SqueezeExcitation", Category::elementwise, 10, {"x"}, {"y"})};
  std::vector<StepProfile> int8 = {step("pool", "QLinearGlobalAveragePool", Category::elementwise, 3, {"xq"}, {"gq"}),
                                   step("fc1", "QLinearConv", Category::dense, 6, {"gq"}, {"h"}, 64),
                                   step("mul", "SigmoidMul", Category::elementwise, 5, {"h", "xq"}, {"y"})};
  assign_sources(fp32, f);
  assign_sources(int8, q);
  const json d = int8_differences("int8_static", kernels::Isa::avx2, fp32, int8, 10);
  ASSERT_EQ(d.size(), 1u) << d.dump(1);
  EXPECT_EQ(d[0]["node"], "fc1 (+GlobalAveragePool, Sigmoid, Mul)");
  EXPECT_DOUBLE_EQ(d[0]["fp32_us"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(d[0]["int8_us"].get<double>(), 14.0);
  EXPECT_EQ(d[0]["int8_steps"], 3);
}

}  // namespace octet::explain::differences_test
