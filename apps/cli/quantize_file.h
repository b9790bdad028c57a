#pragma once
// `octet quantize` without its printing: an FP32 model file in, its INT8 model file (and model
// card) out, and the report `octet quantize --json` prints. The CLI and the Python module's
// octet.quantize both call it, so the same options write the same file.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "apps/cli/calibration.h"

namespace octet::cli {

struct QuantizeFileResult {
  QuantizeResult quantized;
  std::map<std::string, int> int8_ops;  // what octet runs after fusing the QDQ units, by op
  int fused = 0;                        // their number
  std::string card;                     // what happened to the model card ("" when the FP32 model has none)
  uintmax_t fp32_bytes = 0, int8_bytes = 0;
  double seconds = 0;
};

// Checks `out` before the (long) calibration, quantizes, checks octet can run the result, writes
// it with its card. Throws ir::Error (nothing written) on a bad output path or anything
// quantize_for_cli refuses.
QuantizeFileResult quantize_file(const std::string& model, const std::string& out, const CalibrationArgs& args);

// The report as `octet quantize --json` prints it.
nlohmann::json quantize_file_json(const std::string& model, const std::string& out, const QuantizeFileResult& r);

}  // namespace octet::cli
