#pragma once
// `octet explain` without its command line: the options as the CLI takes them, the measuring run
// they ask for, and the report files. The CLI and the Python module's octet.explain both call
// these, so the same options measure the same way and write the same files.
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernels/isa.h"
#include "apps/cli/calibration.h"

namespace octet::cli {

struct ExplainArgs {
  std::string model, output, json_out, fp32, data, levels = "all", render;
  std::vector<std::string> compare;
  int64_t images = 1000;
  int batch = 16;
  bool compare_ort = false, progress = true;
  CalibrationArgs calib;
};

// "all" (empty: every level this CPU runs) or a comma-separated list, ordered by rank. Throws
// UsageError for a level that is unknown or that this CPU does not run.
std::vector<kernels::Isa> parse_isa_levels(const std::string& text);

// Measures a.model as `octet explain` does (levels, batches, data, calibration from `a`); the
// profiles run on `threads` threads. Throws ir::Error for a model or option it cannot explain.
nlohmann::json measure_explain(const ExplainArgs& a, int threads);

// Writes a report file (page or JSON) whole or not at all (io/output_file.h); a missing
// folder is named as such.
void write_explain_file(const std::string& path, const std::string& contents);

// Writes the report as a page (html_path) and as JSON (json_path), each the whole file or
// nothing; an empty path is skipped. The page is rendered before anything is written, so a
// report it cannot show leaves no file. `written` hears each path once it is written.
void write_explain_files(const nlohmann::json& report, const std::string& html_path, const std::string& json_path,
                         const std::function<void(const std::string&)>& written = {});

}  // namespace octet::cli
