#include "apps/explain/step_category.h"

#include <fmt/format.h>

#include <set>

namespace octet::explain {
namespace {

bool depthwise(const ir::Graph& graph, const std::string& node) {
  for (const ir::Node& n : graph.nodes) {
    if (n.name != node) continue;
    return n.attrs.i("group", 1) > 1;
  }
  return false;
}

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

}  // namespace

const char* category_name(Category c) {
  switch (c) {
    case Category::dense: return "dense";
    case Category::depthwise: return "depthwise";
    case Category::quantize: return "quantize";
    case Category::dynamic_range: return "dynamic_range";
    case Category::layout: return "layout";
    case Category::elementwise: return "elementwise";
    case Category::other: return "other";
  }
  return "other";
}

Category category_of(const PlanStep& step, const ir::Graph& graph) {
  static const std::set<std::string> kDense = {"Conv", "QLinearConv", "ConvInteger", "ConvIntegerToFloat", "Gemm",
                                               "QGemm", "MatMul", "QLinearMatMul", "MatMulInteger",
                                               "MatMulIntegerToFloat", "FusedConv"};
  static const std::set<std::string> kQuantize = {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear"};
  static const std::set<std::string> kLayout = {"Transpose", "ChannelShuffle", "ReshapeTranspose", "Reshape",
                                                "Flatten", "Concat", "QLinearConcat", "Split", "Slice", "Squeeze",
                                                "Unsqueeze", "Identity", "Gather", "Pad", "Expand", "Tile"};
  const std::string& op = step.op;
  if (op.rfind("relayout", 0) == 0 || step.node.rfind("relayout", 0) == 0) return Category::layout;
  if (kDense.count(op)) return depthwise(graph, step.node) ? Category::depthwise : Category::dense;
  // An expand 1x1 conv and its depthwise conv in one step: most of its MACs are the 1x1 conv's.
  if (op == "PointwiseDepthwise") return Category::dense;
  if (kQuantize.count(op)) return Category::quantize;
  if (kLayout.count(op)) return Category::layout;
  if (contains(op, "Add") || contains(op, "Mul") || contains(op, "Sub") || contains(op, "Div") ||
      contains(op, "Relu") || contains(op, "Clip") || contains(op, "Sigmoid") || contains(op, "Swish") || contains(op, "Silu") ||
      contains(op, "Pool") || contains(op, "Softmax") || contains(op, "Reduce") || contains(op, "Tanh") ||
      contains(op, "SqueezeExcit") || contains(op, "LeakyRelu") || contains(op, "Exp"))
    return Category::elementwise;
  return Category::other;
}

StepProfile describe_step(const PlanStep& step, const ir::Graph& graph) {
  StepProfile p;
  p.node = step.node;
  p.op = step.op;
  p.kernel = step.kernel;
  p.fallback = step.fallback;
  p.macs = step.macs;
  for (const auto& o : step.outputs) p.output_bytes += double(o.bytes());
  p.scalar = step.scalar();
  p.category = category_of(step, graph);
  p.outputs = step.output_names;
  if (const std::string relayout = "relayout "; step.node.rfind(relayout, 0) == 0) {
    p.inputs = {step.node.substr(relayout.size())};
  } else {
    for (const ir::Node& n : graph.nodes)
      if (n.name == step.node) {
        for (const auto& in : n.inputs)
          if (!in.empty() && !graph.is_constant(in)) p.inputs.push_back(in);
        break;
      }
  }
  return p;
}

bool has_int8_dot_product(kernels::Isa isa) { return (kernels::isa_features(isa) & kernels::kInt8DotProduct) != 0; }

std::string slowdown_reason(const StepPair& p, kernels::Isa isa) {
  const StepProfile& s = *p.int8;
  if (s.scalar && isa != kernels::Isa::scalar)
    return fmt::format("scalar fallback: {} ran a reference kernel at {}{}", s.kernel, kernels::isa_name(isa),
                       s.fallback.empty() ? "" : " (" + s.fallback + ")");
  if (p.fp32 && p.fp32->scalar && isa != kernels::Isa::scalar)
    return fmt::format("the FP32 step is a scalar fallback ({}), so the comparison measures octet", p.fp32->kernel);
  const bool int8_op = s.op.rfind("QLinear", 0) == 0 || s.op == "QGemm" || s.op.find("Integer") != std::string::npos ||
                       s.category == Category::quantize || s.category == Category::dynamic_range;
  if (p.fp32 == nullptr) {
    if (!int8_op)
      return fmt::format("runs in float: {} has no INT8 form here, so its input is dequantized and its output "
                         "quantized again", s.op);
    if (s.category == Category::quantize || s.category == Category::dynamic_range)
      return fmt::format("quantization overhead: {} exists only in the INT8 model", s.op);
    return fmt::format("only in the INT8 plan: no FP32 step runs these nodes ({})", s.kernel.empty() ? s.op : s.kernel);
  }
  if (!int8_op) return fmt::format("runs in float: the INT8 model keeps {} in FP32", s.op);
  if (p.overhead_us > 0 && p.overhead_us >= p.delta_us)
    return fmt::format("quantization overhead: {} ({:.1f} µs), which only the INT8 plan runs, cost at least the "
                       "{:.1f} µs INT8 loses on these nodes",
                       p.overhead_ops, p.overhead_us, p.delta_us);
  if ((s.category == Category::dense || s.category == Category::depthwise) && !has_int8_dot_product(isa) &&
      isa != kernels::Isa::scalar)
    return fmt::format("no integer dot-product instruction at {}: uint8 x int8 products are widened to int16, no "
                       "more multiply-adds per instruction than FP32's FMA",
                       kernels::isa_name(isa));
  if (s.macs > 0 && s.output_bytes > 0 && double(s.macs) / s.output_bytes < 4.0)
    return fmt::format("memory-bound: {:.1f} multiply-adds per output byte", double(s.macs) / s.output_bytes);
  if (s.macs > 0 && p.fp32)
    return fmt::format("slower kernel: {} at {:.1f} GOP/s vs FP32 {} at {:.1f} GFLOP/s", s.kernel,
                       2.0 * double(s.macs) / std::max(s.us, 1e-9) / 1e3, p.fp32->kernel,
                       2.0 * double(p.fp32->macs) / std::max(p.fp32->us, 1e-9) / 1e3);
  return fmt::format("slower kernel: {} ({})", s.kernel.empty() ? s.op : s.kernel, s.op);
}

}  // namespace octet::explain
