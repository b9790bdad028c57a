// `octet quantize model.onnx -o model_int8.onnx`: calibrate an FP32 model on a few hundred
// training images and write it as a standard ONNX QDQ model (octet and ONNX Runtime both run it).
#include <fmt/format.h>

#include "apps/cli/calibration.h"
#include "apps/cli/commands.h"
#include "apps/cli/quantize_file.h"

namespace octet::cli {
namespace {

struct QuantizeCommandOptions {
  std::string model, out;
  CalibrationArgs calib;
  bool json = false;
};

int run_quantize(const QuantizeCommandOptions& o) {
  const QuantizeFileResult r = quantize_file(o.model, o.out, o.calib);
  if (o.json) {
    fmt::print("{}\n", quantize_file_json(o.model, o.out, r).dump(2));
    return 0;
  }
  const QuantizeResult& q = r.quantized;
  const double ratio = r.int8_bytes ? double(r.fp32_bytes) / double(r.int8_bytes) : 0.0;
  fmt::print("model        {}\n", o.model);
  fmt::print("{}", quantize_report_text(q));
  std::string ops;
  for (const auto& [op, n] : r.int8_ops) ops += fmt::format("{}{} {}", ops.empty() ? "" : ", ", n, op);
  fmt::print("octet runs   {} INT8 op{}{}\n", r.fused, r.fused == 1 ? "" : "s", ops.empty() ? "" : " (" + ops + ")");
  fmt::print("size         {:.1f} KB FP32 -> {:.1f} KB INT8 ({:.2f}x smaller)\n", double(r.fp32_bytes) / 1024.0,
             double(r.int8_bytes) / 1024.0, ratio);
  if (q.settings.dynamic)
    fmt::print("time         {:.1f} s (quantization {:.2f} s)\n", r.seconds, q.quantize_seconds);
  else
    fmt::print("time         {:.1f} s (data {:.1f} s, calibration {:.1f} s, quantization {:.2f} s)\n", r.seconds,
               q.load_seconds, q.calibrate_seconds, q.quantize_seconds);
  fmt::print("wrote        {}\n", o.out);
  if (!r.card.empty()) fmt::print("card         {}\n", r.card);
  return 0;
}

}  // namespace

Command add_quantize_command(CLI::App& app) {
  auto o = std::make_shared<QuantizeCommandOptions>();
  auto* cmd = app.add_subcommand("quantize",
                                 "Calibrate an FP32 model and write it as an INT8 ONNX QDQ model (--mode dynamic: "
                                 "no calibration, DynamicQuantizeLinear + ConvInteger / MatMulInteger)");
  cmd->add_option("model", o->model, "FP32 ONNX model (its card model.json gives preprocessing and data)")
      ->required()->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", o->out, "Where to write the INT8 model")->required();
  add_calibration_options(cmd, o->calib);
  cmd->add_option("--batch", o->calib.batch, "Images per calibration run (default 32)")->check(positive());
  cmd->add_flag("--json", o->json, "Print the report as JSON");
  cmd->add_flag("!--no-progress", o->calib.progress, "No progress output on stderr");
  return [o, cmd]() -> int { return cmd->parsed() ? run_quantize(*o) : -1; };
}

}  // namespace octet::cli
