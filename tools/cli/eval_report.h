#pragma once
// The text forms of `octet eval`'s JSON report: one precision (octet beside ONNX Runtime, with
// per-class accuracy and the confusion matrix), or FP32 and INT8 side by side.
#include <nlohmann/json.hpp>

namespace octet::cli {

void print_single_report(const nlohmann::json& r);
void print_both_report(const nlohmann::json& r);

}  // namespace octet::cli
