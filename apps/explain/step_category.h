#pragma once
// What a plan step is, in words a user reads (docs/explain.md, "Categories" and "Reasons"):
// the category its time is counted under, and why an INT8 step is slower than the FP32 one.
#include <string>
#include <vector>

#include "core/ir.h"
#include "engine/plan.h"
#include "kernels/isa.h"

namespace octet::explain {

enum class Category { dense, depthwise, quantize, dynamic_range, layout, elementwise, other };
inline constexpr Category kCategories[] = {Category::dense,  Category::depthwise,   Category::quantize,
                                           Category::dynamic_range, Category::layout, Category::elementwise,
                                           Category::other};
const char* category_name(Category c);

// The category of a step of a plan built from `graph` (the node, when the step has one, says
// whether a convolution is depthwise).
Category category_of(const PlanStep& step, const ir::Graph& graph);

// Whether the level has an integer dot-product instruction (VNNI, SDOT, SMMLA): without one,
// INT8 multiplies no faster per instruction than FP32 does.
bool has_int8_dot_product(kernels::Isa isa);

// One profiled plan step: what the report needs of a PlanStep, and its median time.
struct StepProfile {
  std::string node, op, kernel, fallback;
  int64_t macs = 0;
  double output_bytes = 0;
  bool scalar = false;  // a scalar reference kernel (PlanStep::scalar)
  Category category = Category::other;
  double us = 0;        // median
  double range_us = 0;  // of which the range pass of a dynamic quantization (category dynamic_range)
  std::vector<std::string> inputs;   // the values it reads, as the optimized graph names them
  std::vector<std::string> outputs;  // the values it writes (an inserted relayout's: "name@layout")
  struct Source {
    std::string name, op;
  };
  std::vector<Source> sources;  // the ONNX nodes of the model as loaded that it computes (assign_sources)
};
// `graph`: the optimized graph the plan was built from (Session::graph()).
StepProfile describe_step(const PlanStep& step, const ir::Graph& graph);

// One step of the INT8 plan next to its FP32 counterpart (absent: fp32 == nullptr).
struct StepPair {
  const StepProfile* int8 = nullptr;
  const StepProfile* fp32 = nullptr;
  // When the pair stands for a group of steps: the time of the group's INT8-only quantize
  // steps (and range passes), their ops, and how much longer INT8 takes than FP32 in all.
  double overhead_us = 0;
  std::string overhead_ops;
  double delta_us = 0;
};
// Why the INT8 step costs more than the FP32 one, from its numbers (first rule that applies).
std::string slowdown_reason(const StepPair& p, kernels::Isa isa);

}  // namespace octet::explain
