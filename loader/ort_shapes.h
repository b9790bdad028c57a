#pragma once
// What ONNX Runtime knows of a model's tensor shapes when it lays its graph out for its CPU
// provider: the question behind ir::kShapeKnownToOrtAttr (an AveragePool runs in ORT's NCHWc
// layout, and sums its windows in that layout's order, only when ORT knows its input's shape).
// docs/kernels.md ("Float AveragePool and ORT's NCHWc layout") states the rules this follows.
#include <cstdint>
#include <map>
#include <set>
#include <string>

namespace onnx {
class AttributeProto;
class ModelProto;
class NodeProto;
}

namespace octet::loader {

bool is_onnx_domain(const std::string& domain);  // "" or "ai.onnx"
// The node's attribute of that name, or null.
const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, const std::string& name);

// The names of the values that feed a float AveragePool of the main graph and whose shape ORT's
// graph resolution, after the graph rewrites it applies before its layout pass, holds as 4-D with
// a known channel count. Throws nothing: a model this cannot follow yields the pools it could.
std::set<std::string> avgpool_inputs_ort_knows(const onnx::ModelProto& model);
// The same question for the first input of every node of the main graph whose op is in `ops`
// (ONNX domain): the inputs ORT knows as float 4-D with a known channel count, with that count.
std::map<std::string, int64_t> input_channels_ort_knows(const onnx::ModelProto& model, const std::set<std::string>& ops);

}  // namespace octet::loader
