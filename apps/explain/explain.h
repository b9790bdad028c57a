#pragma once
// `octet explain`: measures one model in FP32, static and dynamic INT8 at every ISA level this
// CPU runs, and returns the report as JSON (schema in docs/explain.md). The HTML page is
// rendered from that JSON alone (apps/explain/report_html.h).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/isa.h"
#include "apps/cli/calibration.h"
#include "apps/explain/timing.h"

namespace octet::explain {

struct ExplainOptions {
  std::string model;       // FP32 (quantized in memory) or INT8 (then fp32_model is its original)
  std::string fp32_model;  // --fp32
  std::string data;        // dataset spec; empty: the model card's test split; "none": no accuracy
  int64_t images = 1000;   // evaluation images for the accuracy section
  cli::CalibrationArgs calib;
  std::string mode = "static";       // static | dynamic | both
  std::vector<kernels::Isa> levels;  // empty: every level this CPU runs
  std::vector<int> batches = {1, 16};
  int threads = 1;          // the profiles' threads; speed is also timed on every core
  bool all_cores = true;    // also time speed with one thread per core (when that is more)
  bool compare_ort = false;
  bool progress = true;
  // The atlas (octet atlas) asks for more than the page needs and skips what its budget cannot pay:
  std::string dynamic_model;          // with an INT8 `model`: its dynamic form as a file, measured too
  bool all_cores_every_level = false; // every level on every core (default: the best level only)
  bool differences_every_level = false;  // "Where INT8 loses time" at every level
  double max_run_seconds = 0;  // > 0: skip a batch whose one run the batch-1 time puts above this
                               // (listed in the report's "skipped")
  TimingBudget budget;
  std::string octet_version;
};

// Throws ir::Error for a model or option it cannot explain (an INT8 model without --fp32, a
// dataset that does not fit the model, ...). Progress lines on stderr when options.progress.
nlohmann::json explain_model(const ExplainOptions& options);

}  // namespace octet::explain
