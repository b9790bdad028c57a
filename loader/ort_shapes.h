#pragma once
// What ONNX Runtime knows of a model's tensor shapes when it lays its graph out for its CPU
// provider: the question behind ir::kShapeKnownToOrtAttr (an AveragePool runs in ORT's NCHWc
// layout, and sums its windows in that layout's order, only when ORT knows its input's shape).
// docs/kernels.md ("Float AveragePool and ORT's NCHWc layout") states the rules this follows.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>
#include <optional>

namespace onnx {
class AttributeProto;
class ModelProto;
class NodeProto;
class TensorProto;
}

namespace octet::loader {

bool is_onnx_domain(const std::string& domain);  // "" or "ai.onnx"
// The node's attribute of that name, or null.
const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, const std::string& name);
// The contents of an int32 / int64 tensor of at most 1024 values held in the file (shape
// arithmetic, axes), or nothing.
std::optional<std::vector<int64_t>> read_ints(const onnx::TensorProto& t);

// The first inputs of the main graph's nodes whose op is in `ops` (ONNX domain) that ORT's graph
// resolution, after the rewrites it applies before its layout pass, holds as float 4-D with a
// known channel count, with that count. Throws nothing: a model this cannot follow yields the
// inputs it could.
std::map<std::string, int64_t> input_channels_ort_knows(const onnx::ModelProto& model, const std::set<std::string>& ops);

}  // namespace octet::loader
