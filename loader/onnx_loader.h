#pragma once
// Reads .onnx files into ir::Graph. The only part of octet that knows protobuf.
#include <string>

#include "core/ir.h"

namespace octet::loader {

// Parses the file, imports every node (validating attributes and filling their defaults,
// normalising opset differences so the engine sees one form per op) and returns the graph.
// Throws ir::Error naming the file, the node, the op and the opset on anything it cannot run.
ir::Graph load_onnx(const std::string& path);
ir::Graph load_onnx_bytes(const std::string& bytes, const std::string& source_name);

// A serialized onnx.TensorProto file (the ONNX test suite's input_*.pb / output_*.pb).
ir::TensorData load_tensor_pb(const std::string& path);

}  // namespace octet::loader
