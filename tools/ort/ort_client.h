// ONNX Runtime, the reference, driven from C++: runs the Node runners in tools/ort/
// (ort_run.mjs for one run, ort_eval.mjs for a whole data set in batches, timed) as child
// processes without a shell, exchanging .npy files through a private temporary directory that
// is always removed. run() and the availability probe share one `ort_run.mjs --jobs` process
// per calling process (started on first use, again if it dies), so that node and ONNX Runtime
// load once, not once a run; eval() starts its own. Used by `octet eval --compare-ort`,
// `octet diff --ort` and, through tests/util/ort_oracle.h, by the tests.
//
// Environment:
//   OCTET_ORT_DIR       the folder holding ort_run.mjs and ort_eval.mjs (default: tools/ort in
//                       the source tree this was built from)
//   OCTET_NODE          the node binary (default: `node` on PATH)
//   OCTET_ORT_NODE_DIR  read by the runners: a folder holding node_modules/onnxruntime-node
//                       (default: third_party/onnxruntime-node)
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "io/npy.h"

namespace octet::ort {

struct Options {
  int threads = 1;                // intra-op threads; inter-op is always 1, execution sequential
  std::string graph_opt = "all";  // disabled | basic | extended | all
  // exact: exact uint8 x int8 in ORT (session.x64quantprecision on x86 without VNNI; with VNNI
  // ORT's default kernels, exact already); native: ORT's default, which without VNNI saturates
  // pair sums at int16 (tools/ort/session.mjs).
  std::string u8s8 = "exact";
};

// Why ONNX Runtime cannot be used (runner missing, node missing, onnxruntime-node not
// installed, ...), with what fixes it; "" when it is usable. Checked once per process.
std::string unavailable_reason();

// The ONNX Runtime version the runner loads ("1.30.0"), or "" when unavailable.
std::string version();

// Runs the model once on `inputs` (by input name; names must not contain '=') and returns every
// model output by name. Throws std::runtime_error carrying ONNX Runtime's message when it is
// unavailable or fails, std::invalid_argument for an input name with '='.
std::map<std::string, npy::Array> run(const std::string& model, const std::map<std::string, npy::Array>& inputs,
                                      const Options& opt = {});

struct EvalOptions : Options {
  int batch = 1;          // images per session.run; the last batch may be smaller
  int warmup = 3;         // untimed runs on the first batch before timing
  int repeat = 1;         // timed passes over the data; outputs come from the first
  int limit_timing = -1;  // >= 0: time only the first K batches of each pass (later passes stop there)
  bool progress = false;  // forward the runner's progress lines to this process's stderr
};

struct EvalResult {
  std::map<std::string, npy::Array> outputs;  // every output, concatenated over the batches along dim 0
  std::vector<double> batch_ms;               // wall time of each timed session.run, in order
  std::vector<int64_t> images_per_run;        // images in each of those runs (same length)
  std::string version;                        // ONNX Runtime version
};

// Runs the model (single input `input_name`) over every image of `all_inputs` (images along
// dim 0) in batches of opt.batch, sequentially, and times each run (see tools/ort/ort_eval.mjs).
// Every output must have the batch as dim 0. Throws like run(); std::invalid_argument for bad
// options or an input with no images.
EvalResult eval(const std::string& model, const std::string& input_name, const npy::Array& all_inputs,
                const EvalOptions& opt);

}  // namespace octet::ort
