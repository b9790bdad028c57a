// ONNX Runtime as a test oracle: the test-facing names for tools/ort/ort_client.h, which runs a model
// through tools/ort/ort_run.mjs (Node + the onnxruntime-node pinned in third_party/onnxruntime-node)
// and hands back its outputs.
//
// Tests that need it skip when it is missing:
//   if (auto why = octet::testing::ort_unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
//
// Environment: OCTET_NODE picks the node binary (default: `node` on PATH); OCTET_ORT_DIR another
// folder holding the runners; OCTET_ORT_NODE_DIR (read by the runner) another folder holding
// node_modules/onnxruntime-node.
#pragma once

#include <map>
#include <string>

#include "io/npy.h"
#include "tools/ort/ort_client.h"

namespace octet::testing {

// intra-op threads (inter-op is always 1, execution sequential); graph_opt disabled|basic|extended|all
using OrtOptions = octet::ort::Options;

// Why ONNX Runtime cannot be used (node missing, onnxruntime-node not installed, ...), with the
// command that fixes it; empty when it is available. Checked once per process.
std::string ort_unavailable_reason();

// The ONNX Runtime version the runner loads ("1.30.0"), or "" when unavailable.
std::string ort_version();

// Runs the model in ONNX Runtime (CPU) on `inputs` (by input name) and returns every model output
// by name. Works in a fresh temporary directory that is removed afterwards. Throws
// std::runtime_error carrying the runner's stderr if ONNX Runtime is unavailable or fails.
// Input names must not contain '=' (the runner's NAME=FILE syntax): std::invalid_argument.
std::map<std::string, npy::Array> run_ort(const std::string& model_path,
                                          const std::map<std::string, npy::Array>& inputs,
                                          const OrtOptions& opt = {});

// Writes the graph ONNX Runtime runs for `model_path` after its own optimizations (a QDQ model's
// node units fused into QLinearConv, QLinearAdd, QGemm, ...: the QOperator form) to `out_path`,
// through tools/ort/ort_fuse.mjs --graph-opt extended. Throws std::runtime_error when it fails.
void ort_fuse(const std::string& model_path, const std::string& out_path);

}  // namespace octet::testing
