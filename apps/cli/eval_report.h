#pragma once
// `octet eval`'s report: the JSON pieces every evaluation is made of (accuracy of a score matrix,
// latency of timed runs) and the report's text forms: one precision (octet beside ONNX Runtime,
// with per-class accuracy and the confusion matrix), or FP32 beside static and / or dynamic INT8.
// The CLI and the Python module (octet.ray gathers a cluster's results into this report) share it.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/cli/metrics.h"

namespace octet::cli {

// "images", "labelled", "top1", "top5", "top1_correct", "per_class" (named by `classes`, by
// number past their end) and "confusion".
nlohmann::json metrics_json(const ClassificationMetrics& m, const std::vector<std::string>& classes);

// One latency measurement of `engine`: per-run milliseconds of `images` images in runs of
// `batch`. Its statistics leave out a last, smaller run, so every sample has the same size.
nlohmann::json timing_json(const std::string& engine, int batch, int threads, const std::vector<double>& run_ms,
                           int64_t images);

std::string single_report_text(const nlohmann::json& r);
// r["fp32"] and any of r["int8"] (static) and r["dynamic"], each with "bytes".
std::string side_by_side_report_text(const nlohmann::json& r);

void print_single_report(const nlohmann::json& r);
void print_side_by_side_report(const nlohmann::json& r);

}  // namespace octet::cli
