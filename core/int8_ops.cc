#include "core/int8_ops.h"

#include <algorithm>

namespace octet::int8 {
namespace {

const std::vector<std::string> kConvSlots = {"x",       "x_scale", "x_zero_point", "w",   "w_scale",
                                             "w_zero_point", "y_scale", "y_zero_point", "bias"};
// Two operands and an 8-bit output: QLinearMatMul, QLinearAdd, QLinearMul.
const std::vector<std::string> kBinarySlots = {"a",       "a_scale", "a_zero_point", "b",
                                               "b_scale", "b_zero_point", "y_scale", "y_zero_point"};
const std::vector<std::string> kUnarySlots = {"x", "x_scale", "x_zero_point", "y_scale", "y_zero_point"};

ir::AttrValue ints() { return std::vector<int64_t>{}; }
ir::AttrValue i64(int64_t v) { return v; }
ir::AttrValue f32(float v) { return v; }
ir::AttrValue str(const char* s) { return std::string(s); }

// ORT's pooling contrib ops carry channels_last; octet's fused ones are the NCHW form.
void nchw(ir::Node& n, const ir::Graph&) { n.attrs.set("channels_last", int64_t{0}); }

// ORT's QLinearSoftmax carries the Softmax's opset (its axis semantics changed in 13).
void softmax_opset(ir::Node& n, const ir::Graph& g) {
  n.attrs.set("opset", int64_t{g.opset >= 13 ? 13 : g.opset >= 11 ? 11 : 1});
  if (n.attrs.has("coerce_2d")) n.attrs.erase("coerce_2d");
}

std::vector<Int8Op> make_table() {
  std::vector<Int8Op> t;
  auto row = [&t](std::string op, std::string domain, std::vector<std::string> replaces,
                  std::vector<std::string> slots) -> Int8Op& {
    Int8Op r;
    r.op = std::move(op);
    r.domain = std::move(domain);
    r.replaces = std::move(replaces);
    r.slots = std::move(slots);
    return t.emplace_back(std::move(r));
  };
  const std::string ms = kMicrosoftDomain;

  // ---- Convolution and matrix products ----
  {
    Int8Op& r = row("QLinearConv", "", {"Conv"}, kConvSlots);
    r.fusion = Fusion::conv;
    r.quantizer = QuantRule::conv;
    r.folds_relu = true;
    r.min_opset = 10;
    r.attrs_like = "Conv";
    r.impl = "engine/ops/qconv_ops.cc";
  }
  {
    Int8Op& r = row("QGemm", ms, {"Gemm"},
                    {"a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point", "bias", "y_scale",
                     "y_zero_point"});
    r.fusion = Fusion::gemm;
    r.quantizer = QuantRule::gemm;
    r.folds_relu = true;
    r.attrs = {{"alpha", f32(1.0f)}, {"transA", i64(0)}, {"transB", i64(0)}};
    r.impl = "engine/ops/qgemm_ops.cc";
  }
  {
    Int8Op& r = row("QLinearMatMul", "", {"MatMul"}, kBinarySlots);
    r.fusion = Fusion::matmul;
    r.quantizer = QuantRule::matmul;
    r.folds_relu = true;
    r.min_opset = 10;
    r.impl = "engine/ops/qgemm_ops.cc";
  }

  // ---- Element-wise, pooling and reductions ----
  for (const char* op : {"Add", "Mul"}) {
    Int8Op& r = row(std::string("QLinear") + op, ms, {op}, kBinarySlots);
    r.fusion = Fusion::binary;
    r.quantizer = QuantRule::binary;
    r.folds_relu = true;
    r.impl = "engine/ops/qelementwise_ops.cc";
  }
  {
    Int8Op& r = row("QLinearSigmoid", ms, {"Sigmoid"}, kUnarySlots);
    r.fusion = Fusion::unary;
    r.quantizer = QuantRule::unary;
    r.impl = "engine/ops/qelementwise_ops.cc";
  }
  {
    // fuse_qdq forms it from DequantizeLinear -> LeakyRelu -> QuantizeLinear: its table holds
    // the float round trip's values, as ORT's does; octet's quantizer does not insert the unit.
    Int8Op& r = row("QLinearLeakyRelu", ms, {"LeakyRelu"}, kUnarySlots);
    r.fusion = Fusion::unary;
    r.attrs = {{"alpha", f32(0.01f)}};
    r.impl = "engine/ops/qelementwise_ops.cc";
  }
  // No ONNX Runtime op: octet's own 256-entry tables, the same values as the float round trip.
  for (const char* op : {"HardSwish", "HardSigmoid"}) {
    Int8Op& r = row(std::string("QLinear") + op, kOctetDomain, {op}, kUnarySlots);
    r.fusion = Fusion::unary;
    r.imported = false;
    r.impl = "engine/ops/qelementwise_ops.cc";
  }
  {
    Int8Op& r = row("QLinearGlobalAveragePool", ms, {"GlobalAveragePool"}, kUnarySlots);
    r.fusion = Fusion::unary;
    r.fused_attrs = nchw;
    r.quantizer = QuantRule::unary;
    r.attrs = {{"channels_last", i64(0)}};
    r.import_checks = kNchwOnly;
    r.impl = "engine/ops/qelementwise_ops.cc";
  }
  {
    Int8Op& r = row("QLinearAveragePool", ms, {"AveragePool"}, kUnarySlots);
    r.fusion = Fusion::unary;
    r.fused_attrs = nchw;
    r.quantizer = QuantRule::unary;
    // AveragePool's attributes as ONNX Runtime's schema lists them: no dilations.
    r.attrs = {{"auto_pad", str("NOTSET")}, {"kernel_shape", std::nullopt}, {"pads", ints()},
               {"strides", ints()},         {"ceil_mode", i64(0)},        {"count_include_pad", i64(0)},
               {"channels_last", i64(0)}};
    r.import_checks = kNchwOnly | kPoolPads;
    r.impl = "engine/ops/qelementwise_ops.cc";
  }
  {
    Int8Op& r = row("QLinearReduceMean", ms, {"ReduceMean"}, kUnarySlots);
    r.fusion = Fusion::reduce;
    r.quantizer = QuantRule::reduce;
    r.attrs = {{"axes", std::nullopt}, {"keepdims", std::nullopt}};  // both required by ORT's schema
    r.impl = "engine/ops/qelementwise_ops.cc";
  }
  {
    Int8Op& r = row("QLinearSoftmax", ms, {"Softmax"}, kUnarySlots);
    r.fusion = Fusion::unary;
    r.fused_attrs = softmax_opset;
    r.quantizer = QuantRule::probability;
    // `opset` (required) is the Softmax opset whose axis rule applies (flattening from axis
    // before 13). axis defaults to -1 whatever the opset: ORT's schema default.
    r.attrs = {{"axis", i64(-1)}, {"opset", std::nullopt}};
    r.impl = "engine/ops/qsoftmax_op.cc";
  }
  {
    Int8Op& r = row("QLinearConcat", ms, {"Concat"}, {"y_scale", "y_zero_point"});
    r.repeated = {"x", "x_scale", "x_zero_point"};
    r.fusion = Fusion::variadic;
    r.quantizer = QuantRule::variadic;
    r.attrs = {{"axis", std::nullopt}};
    r.impl = "engine/ops/qconcat_op.cc";
  }

  // ---- Dynamic quantization: integer products, scaled to float ----
  {
    Int8Op& r = row("ConvInteger", "", {"Conv"}, {"x", "w", "x_zero_point", "w_zero_point"});
    r.family = Family::integer;
    r.quantizer = QuantRule::dynamic_conv;
    r.min_opset = 10;
    r.attrs_like = "Conv";
    r.impl = "engine/ops/qconv_ops.cc";
  }
  {
    Int8Op& r = row("MatMulInteger", "", {"MatMul", "Gemm"}, {"a", "b", "a_zero_point", "b_zero_point"});
    r.family = Family::integer;
    r.quantizer = QuantRule::dynamic_matmul;
    r.min_opset = 10;
    r.impl = "engine/ops/qgemm_ops.cc";
  }
  {
    // Written by passes::fuse_dynamic_quantization from ConvInteger and its float tail.
    Int8Op& r = row("ConvIntegerToFloat", "", {"Conv"},
                    {"x", "w", "x_scale", "w_scale", "x_zero_point", "w_zero_point", "bias"});
    r.family = Family::integer_to_float;
    r.imported = false;
    r.impl = "engine/ops/dynamic_ops.cc";
  }
  {
    Int8Op& r = row("MatMulIntegerToFloat", ms, {"MatMul"},
                    {"a", "b", "a_scale", "b_scale", "a_zero_point", "b_zero_point", "bias"});
    r.family = Family::integer_to_float;
    r.impl = "engine/ops/dynamic_ops.cc";
  }
  {
    // No OpImpl: passes::expand_dynamic_quantize_matmul splits it into DynamicQuantizeLinear
    // and MatMulIntegerToFloat.
    Int8Op& r = row("DynamicQuantizeMatMul", ms, {"MatMul"}, {"a", "b", "b_scale", "b_zero_point", "bias"});
    r.family = Family::rewritten;
  }
  return t;
}

const Int8Op* first_where(auto pred) {
  for (const auto& r : ops())
    if (pred(r)) return &r;
  return nullptr;
}

bool computes(const Int8Op& r, std::string_view float_op) {
  return std::find(r.replaces.begin(), r.replaces.end(), float_op) != r.replaces.end();
}

bool is_dynamic(QuantRule q) { return q == QuantRule::dynamic_conv || q == QuantRule::dynamic_matmul; }

}  // namespace

bool Int8Op::has_slot(std::string_view name) const {
  return std::find(slots.begin(), slots.end(), name) != slots.end();
}

size_t Int8Op::slot(std::string_view name) const {
  auto it = std::find(slots.begin(), slots.end(), name);
  if (it == slots.end()) throw ir::Error("internal: " + op + " has no input named '" + std::string(name) + "'");
  return size_t(it - slots.begin());
}

const std::vector<Int8Op>& ops() {
  static const std::vector<Int8Op> table = make_table();
  return table;
}

const Int8Op* find(std::string_view op) {
  return first_where([&](const Int8Op& r) { return r.op == op; });
}

const Int8Op* fused_from(std::string_view float_op) {
  return first_where([&](const Int8Op& r) { return r.fusion != Fusion::none && computes(r, float_op); });
}

const Int8Op* static_form(std::string_view float_op) {
  return first_where([&](const Int8Op& r) {
    return r.quantizer != QuantRule::none && !is_dynamic(r.quantizer) && computes(r, float_op);
  });
}

const Int8Op* dynamic_form(std::string_view float_op) {
  return first_where([&](const Int8Op& r) { return is_dynamic(r.quantizer) && computes(r, float_op); });
}

QuantRule float_unit_rule(std::string_view float_op) {
  return float_op == "ConvTranspose" ? QuantRule::conv_transpose : QuantRule::none;
}

bool moves_data_only(std::string_view float_op) {
  static const std::vector<std::string_view> ops = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "MaxPool",
                                                    "GlobalMaxPool", "Resize", "Upsample", "Transpose", "Slice",
                                                    "Split", "Gather", "DepthToSpace", "SpaceToDepth", "Expand",
                                                    "GatherElements", "GatherND", "Tile", "Trilu"};
  return std::find(ops.begin(), ops.end(), float_op) != ops.end();
}

bool scatters_data_only(std::string_view float_op) { return float_op == "ScatterND" || float_op == "ScatterElements"; }

}  // namespace octet::int8
