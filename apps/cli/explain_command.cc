// `octet explain`: why this model's INT8 is faster or slower than its FP32 on this machine, and
// where its accuracy goes, as an HTML page with charts and the same numbers as JSON
// (apps/explain/, docs/explain.md).
#include <fmt/format.h>

#include <fstream>
#include <memory>

#include "core/ir.h"
#include "io/output_file.h"
#include "apps/cli/commands.h"
#include "apps/cli/engine_options.h"
#include "apps/cli/explain_report.h"
#include "apps/explain/report_html.h"

namespace octet::cli {
namespace {

using json = nlohmann::json;

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

int run_explain(const ExplainArgs& a) {
  if (a.output.empty() && a.json_out.empty()) throw UsageError("give -o REPORT.html, --json REPORT.json or both");
  // Before the minutes of measuring: a device or a folder named as a report fails at once.
  for (const std::string* path : {&a.output, &a.json_out})
    if (!path->empty()) check_output_path(*path);
  if (!a.compare.empty()) {
    if (a.compare.size() != 2) throw UsageError("--compare takes two report files");
    if (a.output.empty()) throw UsageError("--compare writes a page: give -o PAGE.html");
    write_explain_file(a.output, explain::render_comparison_html(read_report(a.compare[0]), read_report(a.compare[1])));
    fmt::print(stderr, "explain: wrote {}\n", a.output);
    return 0;
  }
  json report;
  if (!a.render.empty()) {
    report = read_report(a.render);
  } else {
    if (a.model.empty()) throw UsageError("give the model to explain (or --render REPORT.json / --compare A B)");
    report = measure_explain(a, engine_threads());
  }
  write_explain_files(report, a.output, a.json_out,
                      [](const std::string& path) { fmt::print(stderr, "explain: wrote {}\n", path); });
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
