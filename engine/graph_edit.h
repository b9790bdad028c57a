#pragma once
// Small graph-editing helpers shared by the passes (engine/passes*.cc).
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/ir.h"

namespace octet::graph_edit {

// Points every reader of `from` at `to` (graph outputs are names, not readers: callers that
// may touch one rename the producer instead).
void replace_uses(ir::Graph& g, const std::string& from, const std::string& to);
// The single node reading `name` (once), or nullptr when it has several readers or is an output.
ir::Node* sole_consumer(ir::Graph& g, const std::string& name);
ir::Node* producer_of(ir::Graph& g, const std::string& name);
const ir::Node* producer_of(const ir::Graph& g, const std::string& name);
void erase_marked(ir::Graph& g, const std::set<const ir::Node*>& dead);
// A fresh value name starting with `hint` that the graph does not use yet.
std::string fresh_name(const ir::Graph& g, const std::string& hint);
// The float32 constant called `name`, or nullptr when it is not one.
const ir::TensorData* float_constant(const ir::Graph& g, const std::string& name);
// A 1x1, stride-1, unpadded, ungrouped FP32 Conv (ONNX domain) with constant weights (and
// bias, if any) and one output.
bool is_pointwise_conv(const ir::Graph& g, const ir::Node* n);
// Adds a constant under a fresh name and returns that name.
std::string add_constant(ir::Graph& g, const std::string& hint, ir::TensorData data);
// uint8 or int8.
inline bool is_8bit(ir::DType t) { return t == ir::DType::u8 || t == ir::DType::s8; }
// A DequantizeLinear or QuantizeLinear (ONNX domain) of one constant scale and zero point for
// the whole tensor.
bool per_tensor_quantization(const ir::Graph& g, const ir::Node& n);
// A DequantizeLinear's input type or a QuantizeLinear's output type: its zero point's, uint8
// when that is omitted (ONNX's default).
ir::DType zero_point_type(const ir::Graph& g, const ir::Node& n);
// The 256 values of an 8-bit type, in byte order (0..255 as stored): the input a table lookup
// is computed from by running a node on it (evaluate_node).
ir::TensorData every_byte_value(ir::DType type);
// Runs node n now, on its constant inputs, with input `slot` replaced by `value` when given
// (the other inputs must be constants of g or absent), through its op's own kernel: its outputs,
// row-major. Empty when its op is unknown or an input is not constant.
std::vector<ir::TensorData> evaluate_node(const ir::Graph& g, const ir::Node& n, size_t slot = SIZE_MAX,
                                          const ir::TensorData* value = nullptr);

}  // namespace octet::graph_edit
