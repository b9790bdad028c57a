#pragma once
// One importer per supported ONNX op: which attributes it accepts, their defaults, and how
// opset differences are normalised (e.g. Clip's min/max move from attributes to inputs).
#include <string>
#include <vector>

#include "core/int8_ops.h"
#include "core/ir.h"

namespace octet::loader {

struct ImportContext {
  ir::Graph& graph;
  int64_t opset;
  // Adds a constant tensor to the graph under a fresh name and returns that name.
  std::string add_constant(const std::string& hint, ir::TensorData data);
};

// Validates and normalises `node` in place. Throws ir::Error (without the file prefix;
// the caller adds it) when the op or one of its attributes is not supported.
void import_node(ir::Node& node, ImportContext& ctx);

// Op types octet can execute: of the default ONNX domain, and of com.microsoft (ONNX Runtime's
// contrib ops that its quantization tools write). Nodes carry their domain in ir::Node::domain.
const std::vector<std::string>& supported_ops();
const std::vector<std::string>& supported_contrib_ops();

// What the loader accepts of an op: the first opset it reads and the attributes with their
// defaults (after an opset's attributes are moved to inputs, the names it still reads);
// nullptr when it does not read the op.
struct ImportSchema {
  int64_t min_opset = 1;
  std::vector<int8::AttrSpec> attrs;
};
const ImportSchema* import_schema(const std::string& op);

// "FLOAT", "INT4", ... for an ONNX TensorProto data type code; "type code N" when unknown.
std::string onnx_type_name(int64_t code);

// The domain name of ONNX Runtime's contrib ops.
inline constexpr const char* kMicrosoftDomain = int8::kMicrosoftDomain;

}  // namespace octet::loader
