// `octet quantize model.onnx -o model_int8.onnx`: calibrate an FP32 model on a few hundred
// training images and write it as a standard ONNX QDQ model (octet and ONNX Runtime both run it).
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "engine/int8_ops.h"
#include "engine/session.h"
#include "loader/onnx_loader.h"
#include "loader/onnx_writer.h"
#include "tools/cli/calibration.h"
#include "tools/cli/commands.h"

namespace octet::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct QuantizeCommandOptions {
  std::string model, out;
  CalibrationArgs calib;
  bool json = false;
};

// Fails before the (long) calibration when the output cannot be written where asked.
void check_output_path(const std::string& model, const std::string& out) {
  std::error_code ec;
  const fs::path dir = fs::path(out).parent_path();
  if (!dir.empty() && !fs::is_directory(dir, ec))
    throw ir::Error("-o " + out + ": the folder " + dir.string() + " does not exist");
  if (fs::exists(out, ec) && fs::equivalent(model, out, ec))
    throw ir::Error("-o " + out + " is the FP32 model itself; write the INT8 model to another file");
  if (fs::is_directory(out, ec)) throw ir::Error("-o " + out + " is a folder; give a file name such as model_int8.onnx");
  // The model is written beside -o and renamed over it: that would replace a device, a FIFO or
  // a symlink with a plain file, so only a regular file (or a new path) is accepted.
  const auto st = fs::symlink_status(out, ec);
  if (!ec && fs::exists(st) && !fs::is_regular_file(st))
    throw ir::Error("-o " + out + " is " + (fs::is_symlink(st) ? "a symbolic link" : "not a regular file") +
                    "; give a regular file or a new path");
}

// The FP32 model's card copied beside the INT8 model (OUT.onnx -> OUT.json), so `octet eval
// OUT.onnx` feeds it the same preprocessed images without flags. Never overwrites a card that is
// already there. Returns what it did, for the report ("" when the FP32 model has no card).
std::string write_card(const std::string& model, const std::string& out, const QuantizeResult& q) {
  std::error_code ec;
  const fs::path src = fs::path(model).replace_extension(".json");
  const fs::path dst = fs::path(out).replace_extension(".json");
  if (!fs::exists(src, ec)) return "";
  if (fs::exists(dst, ec)) return "kept the existing " + dst.string();
  std::ifstream in(src);
  json card;
  try {
    card = json::parse(in);
  } catch (const json::exception& e) {
    throw ir::Error(src.string() + ": malformed model card: " + e.what());
  }
  card["model"] = fs::path(out).filename().string();
  card["quantization"] = {{"from", fs::path(model).filename().string()},
                          {"method", q.settings.dynamic ? "dynamic" : calib::method_name(q.settings.calibration.method)},
                          {"calibration_images", q.images},
                          {"calibration_data", q.data}};
  const fs::path tmp = dst.string() + ".tmp";
  {
    std::ofstream f(tmp);
    f << card.dump(2) << "\n";
    if (!f) {
      fs::remove(tmp, ec);
      throw ir::Error("cannot write the model card " + dst.string());
    }
  }
  fs::rename(tmp, dst, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw ir::Error("cannot write the model card " + dst.string() + ": " + ec.message());
  }
  return "wrote " + dst.string() + " (from " + src.string() + ")";
}

int run_quantize(const QuantizeCommandOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  parse_settings(o.calib);  // a bad --method or --act fails before anything is read
  check_output_path(o.model, o.out);
  ir::Graph fp32 = loader::load_onnx(o.model);
  QuantizeResult q = quantize_for_cli(fp32, o.model, o.calib);

  // octet must be able to run what it writes: build a session (fusing the QDQ units and
  // planning batch 1) before anything touches the output path.
  Session check(q.graph);
  std::map<std::string, int> int8_ops;  // what octet runs after fusing the QDQ units
  int fused = 0;
  for (const auto& n : check.graph().nodes)
    if (const int8::Int8Op* op = int8::find(n.op);
        op && (op->family == int8::Family::qlinear || op->family == int8::Family::integer_to_float))
      ++int8_ops[n.op], ++fused;

  loader::WriteOptions wo;
  wo.doc = q.settings.dynamic
               ? fmt::format("INT8 dynamic-quantization model (DynamicQuantizeLinear + ConvInteger / MatMulInteger) "
                             "written by octet from {}",
                             fs::path(o.model).filename().string())
               : fmt::format("INT8 QDQ model quantized by octet from {} ({} calibration, {} images)",
                             fs::path(o.model).filename().string(),
                             calib::method_name(q.settings.calibration.method), q.images);
  loader::save_onnx(q.graph, o.out, wo);
  const std::string card = write_card(o.model, o.out, q);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  const auto fp32_bytes = fs::file_size(o.model), int8_bytes = fs::file_size(o.out);
  const double ratio = int8_bytes ? double(fp32_bytes) / double(int8_bytes) : 0.0;
  if (o.json) {
    json j = {{"model", o.model},
              {"output", o.out},
              {"fp32_bytes", fp32_bytes},
              {"int8_bytes", int8_bytes},
              {"size_ratio", ratio},
              {"octet_int8_ops", int8_ops},
              {"seconds", seconds},
              {"card", card},
              {"calibration", quantize_report_json(q)}};
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  fmt::print("model        {}\n", o.model);
  fmt::print("{}", quantize_report_text(q));
  std::string ops;
  for (const auto& [op, n] : int8_ops) ops += fmt::format("{}{} {}", ops.empty() ? "" : ", ", n, op);
  fmt::print("octet runs   {} INT8 op{}{}\n", fused, fused == 1 ? "" : "s", ops.empty() ? "" : " (" + ops + ")");
  fmt::print("size         {:.1f} KB FP32 -> {:.1f} KB INT8 ({:.2f}x smaller)\n", double(fp32_bytes) / 1024.0,
             double(int8_bytes) / 1024.0, ratio);
  if (q.settings.dynamic)
    fmt::print("time         {:.1f} s (quantization {:.2f} s)\n", seconds, q.quantize_seconds);
  else
    fmt::print("time         {:.1f} s (data {:.1f} s, calibration {:.1f} s, quantization {:.2f} s)\n", seconds,
               q.load_seconds, q.calibrate_seconds, q.quantize_seconds);
  fmt::print("wrote        {}\n", o.out);
  if (!card.empty()) fmt::print("card         {}\n", card);
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
