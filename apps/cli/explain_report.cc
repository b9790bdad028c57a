#include "apps/cli/explain_report.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "core/ir.h"
#include "io/output_file.h"
#include "apps/cli/commands.h"
#include "apps/explain/explain.h"
#include "apps/explain/report_html.h"
#include "core/version.h"

namespace octet::cli {

void write_explain_file(const std::string& path, const std::string& contents) {
  check_output_path(path);
  const std::filesystem::path dest(path);
  if (dest.has_parent_path() && !std::filesystem::exists(dest.parent_path()))
    throw ir::Error("cannot write " + path + ": folder " + dest.parent_path().string() + " does not exist");
  write_file_atomically(path, std::string_view(contents));
}

std::vector<kernels::Isa> parse_isa_levels(const std::string& text) {
  std::vector<kernels::Isa> levels;
  if (text == "all") return levels;
  std::stringstream ss(text);
  for (std::string name; std::getline(ss, name, ',');) {
    auto isa = kernels::parse_isa(name);
    if (!isa) throw UsageError("--isa-levels: unknown level '" + name + "' (levels: " + kernels::isa_names() + ")");
    if (!kernels::isa_supported(*isa))
      throw UsageError("--isa-levels: this CPU does not run " + name);
    levels.push_back(*isa);
  }
  std::sort(levels.begin(), levels.end(),
            [](kernels::Isa a, kernels::Isa b) { return kernels::isa_rank(a) < kernels::isa_rank(b); });
  return levels;
}

nlohmann::json measure_explain(const ExplainArgs& a, int threads) {
  explain::ExplainOptions o;
  o.model = a.model;
  o.fp32_model = a.fp32;
  o.data = a.data;
  o.images = a.images;
  o.calib = a.calib;
  o.mode = a.calib.mode;
  o.levels = parse_isa_levels(a.levels);
  o.batches = a.batch == 1 ? std::vector<int>{1} : std::vector<int>{1, a.batch};
  o.threads = threads;
  o.compare_ort = a.compare_ort;
  o.progress = a.progress;
  o.octet_version = OCTET_VERSION;
  return explain::explain_model(o);
}

void write_explain_files(const nlohmann::json& report, const std::string& html_path, const std::string& json_path,
                         const std::function<void(const std::string&)>& written) {
  const std::string html = html_path.empty() ? std::string() : explain::render_report_html(report);
  if (!json_path.empty()) {
    write_explain_file(json_path, report.dump(2) + "\n");
    if (written) written(json_path);
  }
  if (!html_path.empty()) {
    write_explain_file(html_path, html);
    if (written) written(html_path);
  }
}

}  // namespace octet::cli
