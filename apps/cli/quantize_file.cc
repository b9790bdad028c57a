#include "apps/cli/quantize_file.h"

#include <chrono>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "core/int8_ops.h"
#include "engine/session.h"
#include "io/output_file.h"
#include "loader/onnx_loader.h"
#include "loader/onnx_writer.h"

namespace octet::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// Fails before the (long) calibration when the output cannot be written where asked.
void check_output_path(const std::string& model, const std::string& out) {
  std::error_code ec;
  const fs::path dir = fs::path(out).parent_path();
  if (!dir.empty() && !fs::is_directory(dir, ec))
    throw ir::Error("-o " + out + ": the folder " + dir.string() + " does not exist");
  if (fs::exists(out, ec) && fs::equivalent(model, out, ec))
    throw ir::Error("-o " + out + " is the FP32 model itself; write the INT8 model to another file");
  if (fs::is_directory(out, ec)) throw ir::Error("-o " + out + " is a folder; give a file name such as model_int8.onnx");
  try {
    octet::check_output_path(out);
  } catch (const std::runtime_error& e) {
    throw ir::Error(std::string("-o ") + e.what());
  }
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
  try {
    write_file_atomically(dst.string(), card.dump(2) + "\n");
  } catch (const std::runtime_error& e) {
    throw ir::Error(std::string("cannot write the model card: ") + e.what());
  }
  return "wrote " + dst.string() + " (from " + src.string() + ")";
}

}  // namespace

QuantizeFileResult quantize_file(const std::string& model, const std::string& out, const CalibrationArgs& args) {
  const auto t0 = std::chrono::steady_clock::now();
  parse_settings(args);  // a bad --method or --act fails before anything is read
  check_output_path(model, out);
  ir::Graph fp32 = loader::load_onnx(model);
  QuantizeFileResult r;
  r.quantized = quantize_for_cli(fp32, model, args);
  const QuantizeResult& q = r.quantized;

  // octet must be able to run what it writes: build a session (fusing the QDQ units and
  // planning batch 1) before anything touches the output path.
  Session check(q.graph);
  for (const auto& n : check.graph().nodes)
    if (const int8::Int8Op* op = int8::find(n.op);
        op && (op->family == int8::Family::qlinear || op->family == int8::Family::integer_to_float))
      ++r.int8_ops[n.op], ++r.fused;

  loader::WriteOptions wo;
  wo.doc = q.settings.dynamic
               ? fmt::format("INT8 dynamic-quantization model (DynamicQuantizeLinear + ConvInteger / MatMulInteger) "
                             "written by octet from {}",
                             fs::path(model).filename().string())
               : fmt::format("INT8 QDQ model quantized by octet from {} ({} calibration, {} images)",
                             fs::path(model).filename().string(),
                             calib::method_name(q.settings.calibration.method), q.images);
  loader::save_onnx(q.graph, out, wo);
  r.card = write_card(model, out, q);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.fp32_bytes = fs::file_size(model);
  r.int8_bytes = fs::file_size(out);
  return r;
}

json quantize_file_json(const std::string& model, const std::string& out, const QuantizeFileResult& r) {
  const double ratio = r.int8_bytes ? double(r.fp32_bytes) / double(r.int8_bytes) : 0.0;
  return {{"model", model},
          {"output", out},
          {"fp32_bytes", r.fp32_bytes},
          {"int8_bytes", r.int8_bytes},
          {"size_ratio", ratio},
          {"octet_int8_ops", r.int8_ops},
          {"seconds", r.seconds},
          {"card", r.card},
          {"calibration", quantize_report_json(r.quantized)}};
}

}  // namespace octet::cli
