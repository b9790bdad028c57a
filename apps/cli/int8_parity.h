#pragma once
// What `octet eval` needs to compare octet's INT8 run with ONNX Runtime's on the same QDQ
// model: the quantized graph's final DequantizeLinear (whose output is the last integer result,
// before any float tail such as Softmax), a private temporary model file for ORT, and the
// comparison itself in units of that DequantizeLinear's scale (LSB).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>

#include "core/ir.h"

namespace octet::cli {

// The DequantizeLinear that writes the model's first output, or, when a float op (Softmax,
// say) computes the output from a DequantizeLinear, that DequantizeLinear.
struct LogitsTap {
  std::string tensor;     // the DequantizeLinear's output
  std::string node;       // its node, for the report
  float scale = 0;        // its scale (0 when not a single per-tensor scale)
  bool extra_output = false;  // not a graph output: must be added as one to be compared
};
std::optional<LogitsTap> find_logits_tap(const ir::Graph& g);

// `g` with `tap.tensor` appended to its outputs when it is not one already.
ir::Graph with_tap_output(ir::Graph g, const LogitsTap& tap);

// Share of identical values and the largest difference in LSB: |a - b| / scale, rounded.
struct TapComparison {
  int64_t values = 0, identical = 0;
  int64_t max_lsb = 0;
  double max_abs_diff = 0;
};
TapComparison compare_tap(std::span<const float> octet, std::span<const float> ort, float scale);

// A private folder under the system temporary directory, removed with everything in it when
// this object goes away (normal return or exception).
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::filesystem::path path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace octet::cli
