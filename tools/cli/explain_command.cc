// `octet explain`: why this model's INT8 is faster or slower than its FP32 on this machine, and
// where its accuracy goes, as an HTML page with charts and the same numbers as JSON
// (tools/explain/, docs/explain.md).
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <span>
#include <sstream>

#include "engine/ir.h"
#include "kernels/isa.h"
#include "tools/cli/calibration.h"
#include "tools/cli/commands.h"
#include "tools/cli/engine_options.h"
#include "tools/explain/explain.h"
#include "tools/atomic_file.h"
#include "tools/explain/report_html.h"
#include "tools/version.h"

namespace octet::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct ExplainArgs {
  std::string model, output, json_out, fp32, data, levels = "all", render;
  std::vector<std::string> compare;
  int64_t images = 1000;
  int batch = 16;
  bool compare_ort = false, progress = true;
  CalibrationArgs calib;
};

// The whole file or nothing (tools/atomic_file.h); a missing folder is named as such.
void write_file(const std::string& path, const std::string& contents) {
  const fs::path dest(path);
  if (dest.has_parent_path() && !fs::exists(dest.parent_path()))
    throw ir::Error("cannot write " + path + ": folder " + dest.parent_path().string() + " does not exist");
  write_file_atomically(path, std::as_bytes(std::span(contents.data(), contents.size())));
}

json read_report(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ir::Error("cannot read " + path);
  try {
    json j = json::parse(in);
    if (j.value("schema", "") != "octet-explain/1")
      throw ir::Error(path + ": not an octet explain report (its \"schema\" is not \"octet-explain/1\")");
    return j;
  } catch (const json::parse_error& e) {
    throw ir::Error(path + ": not JSON: " + e.what());
  }
}

std::vector<kernels::Isa> parse_levels(const std::string& text) {
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

int run_explain(const ExplainArgs& a) {
  if (a.output.empty() && a.json_out.empty()) throw UsageError("give -o REPORT.html, --json REPORT.json or both");
  if (!a.compare.empty()) {
    if (a.compare.size() != 2) throw UsageError("--compare takes two report files");
    if (a.output.empty()) throw UsageError("--compare writes a page: give -o PAGE.html");
    write_file(a.output, explain::render_comparison_html(read_report(a.compare[0]), read_report(a.compare[1])));
    fmt::print(stderr, "explain: wrote {}\n", a.output);
    return 0;
  }
  json report;
  if (!a.render.empty()) {
    report = read_report(a.render);
  } else {
    if (a.model.empty()) throw UsageError("give the model to explain (or --render REPORT.json / --compare A B)");
    explain::ExplainOptions o;
    o.model = a.model;
    o.fp32_model = a.fp32;
    o.data = a.data;
    o.images = a.images;
    o.calib = a.calib;
    o.mode = a.calib.mode;
    o.levels = parse_levels(a.levels);
    o.batches = a.batch == 1 ? std::vector<int>{1} : std::vector<int>{1, a.batch};
    o.threads = engine_threads();
    o.compare_ort = a.compare_ort;
    o.progress = a.progress;
    o.octet_version = OCTET_VERSION;
    report = explain::explain_model(o);
  }
  // Render first: a report the page cannot show is an error before anything is written.
  const std::string html = a.output.empty() ? std::string() : explain::render_report_html(report);
  if (!a.json_out.empty()) {
    write_file(a.json_out, report.dump(2) + "\n");
    fmt::print(stderr, "explain: wrote {}\n", a.json_out);
  }
  if (!a.output.empty()) {
    write_file(a.output, html);
    fmt::print(stderr, "explain: wrote {}\n", a.output);
  }
  fmt::print("{}\n", report.value("verdict", ""));
  return 0;
}

}  // namespace

Command add_explain_command(CLI::App& app) {
  auto a = std::make_shared<ExplainArgs>();
  auto* cmd = app.add_subcommand(
      "explain",
      "Why this model's INT8 is faster or slower than its FP32 on this CPU, and where its accuracy goes: FP32, static "
      "and dynamic INT8 timed at every ISA level, the time per kind of step, the error of every quantized tensor, "
      "recommendations; an HTML page with charts (-o) and the numbers as JSON (--json)");
  cmd->add_option("model", a->model, "ONNX model: FP32 (quantized in memory with the options below) or INT8 (then give "
                                     "--fp32)")
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", a->output, "Write the report as a self-contained HTML page");
  cmd->add_option("--json", a->json_out, "Write the report's numbers as JSON (schema: docs/explain.md)");
  cmd->add_option("--fp32", a->fp32, "The FP32 original of an INT8 model")->check(CLI::ExistingFile);
  cmd->add_option("--data", a->data,
                  "Evaluation images, a dataset spec as for eval (default: the model card's test split; 'none': no "
                  "accuracy section)");
  cmd->add_option("--images", a->images, "Evaluation images for the accuracy section (default 1000)")->check(positive());
  cmd->add_option("--isa-levels", a->levels,
                  "all (default: every level this CPU runs, scalar included) or a comma-separated list, e.g. avx2,avx512vnni");
  cmd->add_option("--batch", a->batch, "Largest batch timed besides batch 1 (default 16; 1: batch 1 only)")
      ->check(positive());
  cmd->add_flag("--compare-ort", a->compare_ort, "Also time ONNX Runtime on the same FP32 and INT8 files");
  cmd->add_option("--render", a->render, "Re-render a saved --json report instead of measuring")
      ->check(CLI::ExistingFile);
  cmd->add_option("--compare", a->compare, "Two saved --json reports (e.g. from two machines) rendered side by side")
      ->expected(2)
      ->check(CLI::ExistingFile);
  cmd->add_flag("!--no-progress", a->progress, "No progress output on stderr");
  add_calibration_options(cmd, a->calib);
  cmd->get_option("--mode")->description(
      "static (default), dynamic or both: which INT8 forms of an FP32 model to build and measure (static: calibrated "
      "QDQ; dynamic: DynamicQuantizeLinear + ConvInteger / MatMulInteger, as onnxruntime's quantize_dynamic writes)");
  return [a, cmd]() -> int { return cmd->parsed() ? run_explain(*a) : -1; };
}

}  // namespace octet::cli
