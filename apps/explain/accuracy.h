#pragma once
// Where an INT8 model's accuracy goes: every quantized activation of a static QDQ model compared
// with the FP32 tensor it stands for, over the same images (docs/explain.md, "accuracy").
//
// The FP32 values come from the model prepared for quantization (calib::prepare_for_quantization,
// run unfused, so every tensor the quantizer named exists); the INT8 values are the quantized
// tensors the fused INT8 plan writes (a QuantizeLinear's output names the integer result of the
// op it was fused into), dequantized with that QuantizeLinear's scale and zero point.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/ir.h"
#include "engine/session.h"

namespace octet::explain {

struct TensorAccuracy {
  std::string name;       // the FP32 tensor
  std::string quantized;  // its quantized value in the QDQ graph
  std::string producer;   // the FP32 node writing it ("" for a graph input)
  std::string op;
  float scale = 0;
  int32_t zero_point = 0;
  int32_t qmin = 0, qmax = 255;
  double signal = 0, noise = 0;  // sums of squares: FP32 values, INT8 - FP32
  int64_t values = 0, clipped = 0;
  std::map<std::string, std::pair<float, float>> methods;  // the range each calibration method picks
  std::vector<std::string> quantized_inputs;  // nearest quantized tensors upstream (FP32 names)
  std::optional<double> sqnr_drop_db;
  bool culprit = false;

  // 10 log10(signal / noise); none when the INT8 values equal the FP32 ones exactly.
  std::optional<double> sqnr_db() const;
  std::pair<float, float> range() const { return {scale * float(qmin - zero_point), scale * float(qmax - zero_point)}; }
};

struct AccuracyOptions {
  int batch = 32;
  kernels::Isa isa = kernels::Isa::scalar;
  int threads = 1;
  bool methods = true;  // also the range every calibration method would choose (a second FP32 pass)
  int64_t method_images = 256;  // over the first this many images (their histograms are the slow part)
  std::function<void(int64_t done, int64_t total, const char* what)> progress;
};

struct ModelScores {
  std::vector<float> scores;  // [images, classes] of output 0
  int64_t classes = 0;
};

struct AccuracyResult {
  int64_t images = 0;
  std::vector<TensorAccuracy> tensors;  // graph order
  ModelScores fp32, int8;
};

// `fp32` is the original model, `qdq` its static QDQ form. `images` [N, C, H, W].
AccuracyResult measure_accuracy(const ir::Graph& fp32, const ir::Graph& qdq, const ir::TensorData& images,
                                const AccuracyOptions& options);

// Output 0 of `graph` over the images (e.g. a dynamic INT8 model), in batches.
ModelScores run_scores(const ir::Graph& graph, const ir::TensorData& images, const AccuracyOptions& options);

// Share of images whose highest score has the same index in both; top-1 against labels.
double top1_agreement(const ModelScores& a, const ModelScores& b);
double top1_accuracy(const ModelScores& s, const std::vector<int>& labels);
// SQNR (dB) of b against a over every score; none when identical.
std::optional<double> scores_sqnr_db(const ModelScores& reference, const ModelScores& other);

// A value a plan wrote (in its own layout: TensorInfo::layout) as row-major doubles; empty for a
// type that is not a number.
std::vector<double> row_major_values(const TensorInfo& info, const void* data);

// octet's INT8 codes of every quantized tensor against ONNX Runtime's on the same QDQ model and
// images (each quantized tensor added as a model output, so ORT hands it back).
struct OrtTensorComparison {
  std::string name;       // the FP32 tensor
  std::string quantized;  // the compared integer tensor
  int64_t values = 0, identical = 0, max_lsb = 0;
};
std::vector<OrtTensorComparison> compare_with_ort(const ir::Graph& qdq, const ir::TensorData& images,
                                                  const AccuracyOptions& options);

// Marks as culprits the tensors whose SQNR drops most against their quantized inputs: a drop of
// at least `min_drop_db` and at least three times the median drop of all tensors, to an SQNR no
// better than the median tensor's; at most `max_culprits` of them, largest drop first.
void flag_culprits(std::vector<TensorAccuracy>& tensors, double min_drop_db = 6.0, size_t max_culprits = 3);

}  // namespace octet::explain
