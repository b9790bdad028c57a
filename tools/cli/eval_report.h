#pragma once
// The text forms of `octet eval`'s JSON report: one precision (octet beside ONNX Runtime, with
// per-class accuracy and the confusion matrix), or FP32 beside static and / or dynamic INT8.
#include <nlohmann/json.hpp>

namespace octet::cli {

void print_single_report(const nlohmann::json& r);
// r["fp32"] and any of r["int8"] (static) and r["dynamic"], each with "bytes".
void print_side_by_side_report(const nlohmann::json& r);

}  // namespace octet::cli
