// FP32 parity of octet against ONNX Runtime: the same model file and the same inputs go to both;
// every output must agree to max |octet - ORT| <= 1e-4 * max |ORT|, and [N, classes] outputs
// must pick the same class (argmax over dim 1) for every row.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/ir.h"
#include "io/npy.h"

namespace octet::testing {
class OnnxBuilder;
}

namespace octet::parity {

inline constexpr double kRelTolerance = 1e-4;

// How one octet output compares with ONNX Runtime's.
struct Figures {
  double max_abs_diff = 0;  // max |octet - ORT| over every element
  double max_abs_ref = 0;   // max |ORT|
  int64_t top1_agree = 0;   // rows with the same argmax over dim 1 (rank-2 outputs only)
  int64_t top1_rows = 0;
  bool shape_ok = true;
  std::string shape_note;   // why shape_ok is false

  double ratio() const { return max_abs_ref > 0 ? max_abs_diff / max_abs_ref : max_abs_diff; }
  bool within_tolerance() const { return shape_ok && max_abs_diff <= kRelTolerance * max_abs_ref; }
  bool top1_identical() const { return top1_agree == top1_rows; }
  // Accumulates another batch of the same output.
  void merge(const Figures& o);
};

// Row-wise argmax over dim 1 of a row-major [N, C] float buffer.
std::vector<int64_t> argmax_rows(const float* data, int64_t rows, int64_t cols);

Figures compare(const ir::TensorData& octet, const npy::Array& ort);

// "max|diff| 1.2e-06  max|ORT| 3.4  ratio 3.5e-07  top-1 5/5"
std::string describe(const Figures& f);

// One line per model, batch and output, also collected for a summary printed at exit.
struct Line {
  std::string model;
  int64_t batch = 0;
  std::string output;
  Figures figures;
};
void report(const Line& line);
const std::vector<Line>& reported();

// Bytes in which an octet output and ORT's differ (codes, or float bits); sizes must match
// (a mismatch is a test failure and counts the longer side's excess as differing).
int64_t differing_bytes(const ir::TensorData& mine, const npy::Array& theirs);

// Saves the model `b` writes at `path` and returns ONNX Runtime's outputs (by name) on `in` (by
// input name); the caller's octet sessions then load the same file.
std::map<std::string, npy::Array> save_and_run_ort(const testing::OnnxBuilder& b, const std::string& path,
                                                   const std::map<std::string, ir::TensorData>& in);

// The model `b` writes, run on `in` (by input name) once by ONNX Runtime and by octet at every
// runnable level on 1 and 2 threads: every output must have ORT's shape and be ORT's byte for
// byte (failures name the model `name`, the output, the level and the thread count).
void expect_ort_bytes_at_every_level(const testing::OnnxBuilder& b, const std::string& name,
                                     const std::map<std::string, ir::TensorData>& in);

// The model `b` writes, planned for `input_dims` at every runnable SIMD level: no step (of the
// ops named in `ops`; empty: every step) runs a scalar reference kernel.
void expect_no_scalar_step_at_simd_levels(const testing::OnnxBuilder& b, const std::string& name,
                                          const std::vector<ir::Dims>& input_dims, const std::set<std::string>& ops = {});

// Random-normal float inputs for `input_dims` (-1 extents become `batch`), seeded.
std::vector<ir::TensorData> random_inputs(const std::vector<ir::Dims>& input_dims, int64_t batch, uint32_t seed);

// A temporary directory removed on destruction unless keep() was called.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix = "octet-parity");
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  void keep() { keep_ = true; }

 private:
  std::filesystem::path path_;
  bool keep_ = false;
};

// ../shared, next to the project (OCTET_SOURCE_DIR "/../shared").
std::filesystem::path shared_dir();

// A positive integer from the environment, or `dflt` when unset or empty.
int64_t env_limit(const char* name, int64_t dflt);

}  // namespace octet::parity
