#pragma once
// Calibration and quantization as the command line drives them: the options `octet quantize`
// and `octet eval --precision int8|both` share, where the calibration images come from, and
// the FP32 -> QDQ run itself with its report.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "calib/quantize.h"
#include "core/ir.h"
#include "io/model_card.h"

namespace octet::cli {

struct CalibrationArgs {
  std::string spec;           // --calib; empty: the model card's dataset, training split
  int64_t count = 1000;       // --calib-count: the first N images
  int per_class = 0;          // --per-class K: K images of each class instead
  std::string method = "minmax";
  double percentile = 99.999;
  bool per_tensor = false;
  std::string act = "uint8";  // uint8 | int8
  std::string keep_float;     // comma-separated op types
  bool allow_test = false;    // --allow-test-calibration
  int batch = 32;             // images per calibration run
  bool progress = true;
  std::string mode = "static";  // --mode static | dynamic
  bool per_channel = false;     // --per-channel (dynamic mode; static is per channel already)
};

// Registers --calib, --calib-count, --per-class, --method, --percentile, --per-tensor, --act,
// --keep-float and --allow-test-calibration on `cmd` (not --batch nor --no-progress, which each
// command words itself).
void add_calibration_options(CLI::App* cmd, CalibrationArgs& a);

// The options as the calib library takes them. Throws ir::Error on an unknown method, a bad
// --act or percentile, so a typo fails before any image is read.
struct QuantizeSettings {
  bool dynamic = false;  // --mode dynamic: no calibration, DynamicQuantizeLinear per call
  calib::CalibrationOptions calibration;
  calib::QuantizeOptions quantize;
  calib::DynamicQuantizeOptions dynamic_options;
};
QuantizeSettings parse_settings(const CalibrationArgs& a);

// Whether a dataset spec names a test split: fashion-mnist:test, a bare fashion-mnist (whose
// split defaults to test), or a file or folder whose name contains "test" (or "t10k", the
// MNIST family's name for it). `why` receives the reason.
bool names_test_split(const std::string& spec, std::string* why = nullptr);

// The calibration spec to use: --calib, else the card's dataset with its training split.
// Throws ir::Error when there is none, or when it names a test split and --allow-test-calibration
// was not given.
std::string calibration_spec(const CalibrationArgs& a, const std::optional<ModelCard>& card,
                             const std::string& model_path);


struct QuantizeResult {
  ir::Graph graph;  // QDQ form, ready for loader::save_onnx and for Session
  calib::QuantizeReport report;
  std::string data;          // the calibration dataset's description
  std::string selection;     // "first 1000 images" / "100 per class (1000 images)"
  int64_t images = 0;
  double load_seconds = 0, calibrate_seconds = 0, quantize_seconds = 0;
  QuantizeSettings settings;
};

// Loads the calibration images, runs the FP32 graph over them and quantizes it (--mode
// dynamic: no images, the graph onnxruntime's quantize_dynamic writes). Progress on
// stderr when a.progress. Throws ir::Error (already-quantized model, empty calibration set,
// nothing to quantize, data that does not fit the model, ...).
QuantizeResult quantize_for_cli(const ir::Graph& fp32, const std::string& model_path, const CalibrationArgs& a);

// The report as JSON: calibration set, method, nodes quantized / kept float (with reasons),
// activations absorbed, warnings, times.
nlohmann::json quantize_report_json(const QuantizeResult& r);

// A short human-readable form of the same, one fact per line.
std::string quantize_report_text(const QuantizeResult& r);

}  // namespace octet::cli
