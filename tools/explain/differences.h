#pragma once
// "Where INT8 loses time": the INT8 plan's steps against the FP32 plan's over the same ONNX nodes.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernels/isa.h"
#include "tools/explain/step_category.h"

namespace octet::explain {

// The ONNX nodes a step runs, from its name: a fused step is named by its nodes joined with '+'
// (the 1x1 and depthwise pair "A+B"); the dynamic quantizer names the integer form of node X
// "X_quant".
std::vector<std::string> step_nodes(const std::string& step);

// The INT8 steps that cost more than the FP32 steps running the same ONNX nodes, largest
// difference first, at most `limit`. The two plans fuse differently (FP32 runs a 1x1 conv and
// the depthwise after it as one step, INT8 as two), so steps are grouped: two steps of either
// plan sharing a node are in one group, and a group compares the sum of its INT8 steps with the
// sum of its FP32 steps. An INT8 step with no FP32 node (a QuantizeLinear) is a group alone.
nlohmann::json int8_differences(const std::string& precision, kernels::Isa isa, const std::vector<StepProfile>& fp32,
                               const std::vector<StepProfile>& int8, size_t limit);

}  // namespace octet::explain
