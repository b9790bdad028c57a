#pragma once
// The report's recommendations and verdict, computed from its measured numbers only (the
// "speed", "speedups", "profiles", "differences" and "accuracy" fields of docs/explain.md): a
// sentence is written only when the numbers behind it are in the report.
#include <string>

#include <nlohmann/json.hpp>

namespace octet::explain {

// [{"id", "text", "effect"?: {"metric", "from", "to"}}], most important first.
nlohmann::json recommendations(const nlohmann::json& report);

// One paragraph: INT8 against FP32 at the best level and without an integer dot product, and
// what the accuracy section found.
std::string verdict(const nlohmann::json& report);

}  // namespace octet::explain
