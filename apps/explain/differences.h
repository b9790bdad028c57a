#pragma once
// "Where INT8 loses time": the INT8 plan's steps against the FP32 plan's over the same ONNX nodes.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/ir.h"
#include "kernels/isa.h"
#include "apps/explain/step_category.h"

namespace octet::explain {

// The ONNX nodes a step runs, from its name: a fused step is named by its nodes joined with '+'
// (the 1x1 and depthwise pair "A+B"); the dynamic quantizer names the integer form of node X
// "X_quant".
std::vector<std::string> step_nodes(const std::string& step);

// Sets each step's `sources`: the nodes of `model` (the graph as loaded, before the engine's
// passes) whose work the step does. From each value the step writes, the walk goes up the
// model's nodes until it reaches a value some step of the plan writes, a constant or a graph
// input: the nodes it passes were fused into the step (a Conv's BatchNormalization and Relu,
// a QLinearConv's DequantizeLinear and QuantizeLinear).
void assign_sources(std::vector<StepProfile>& steps, const ir::Graph& model);

// The smallest sets of steps of the two plans that run the same ONNX nodes: steps of either
// plan sharing a node (other than a Q/DQ node; the dynamic quantizer's "X_quant" is X) are in
// one group. A step sharing no node with the other plan joins a neighbour's group: a
// QuantizeLinear or DynamicQuantizeLinear the step it feeds (the step it drains when it feeds a
// DequantizeLinear: a round trip between float steps); a relayout, or a step whose nodes
// another step claimed, the step reading its output (else the one writing its input); any
// other (a DequantizeLinear, the dynamic quantizer's scale Mul) the step whose output it reads.
// Groups in the INT8 plan's order, then those of FP32 steps alone; indices into the two lists.
struct CoFusionGroup {
  std::vector<size_t> fp32, int8;
};
std::vector<CoFusionGroup> co_fusion_groups(const std::vector<StepProfile>& fp32, const std::vector<StepProfile>& int8);

// The groups whose INT8 steps cost more than their FP32 steps, largest difference first, at
// most `limit`: each row sets the sum of the group's INT8 steps (its quantize steps included)
// against the sum of its FP32 steps, with the reason (docs/explain.md, "Reasons").
nlohmann::json int8_differences(const std::string& precision, kernels::Isa isa, const std::vector<StepProfile>& fp32,
                               const std::vector<StepProfile>& int8, size_t limit);

}  // namespace octet::explain
