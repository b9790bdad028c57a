#pragma once
// The quantization pass: an FP32 graph plus activation ranges -> a standard ONNX QDQ graph
// (QuantizeLinear/DequantizeLinear around every quantized tensor, int8 weights, int32
// biases) that ONNX Runtime runs as is and octet's fuse_qdq pass turns into INT8 ops.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "calib/calibrate.h"
#include "calib/observers.h"
#include "calib/qparams.h"
#include "core/ir.h"

namespace octet::calib {

struct QuantizeOptions {
  bool per_channel = true;         // int8 symmetric weights per output channel, else per tensor
  QType activations = QType::u8;   // uint8 asymmetric (ORT's default on x86) or int8 asymmetric
  // Op types left in float even where octet could quantize them (e.g. {"Sigmoid", "Mul"}
  // keeps a squeeze-excitation gate in float).
  std::set<std::string> keep_float;
};

struct QuantizeReport {
  std::vector<std::string> quantized;  // "node (Op)" run in INT8
  std::vector<std::string> float_ops;  // "node (Op): why" left in float
  std::vector<std::string> absorbed;   // activations made redundant by an output clamp
  std::vector<std::string> warnings;   // e.g. an all-zero activation, a saturated bias
};

// int8 symmetric weights in [-127, 127] (ORT's quantizer's rule), per channel along `axis` or
// per tensor: the int8 tensor (same dims) and its 1 or dims[axis] scales.
struct QuantizedWeights {
  ir::TensorData values;
  std::vector<float> scales;
};
QuantizedWeights quantize_weights_s8(const ir::TensorData& w, int64_t axis, bool per_channel);

// `prepared` comes from prepare_for_quantization; `observers` from observe_activations on it.
// Throws ir::Error when nothing in the graph can be quantized.
ir::Graph quantize_graph(const ir::Graph& prepared, const std::map<std::string, std::unique_ptr<Observer>>& observers,
                         const QuantizeOptions& options, QuantizeReport* report = nullptr);

// Dynamic quantization (calib/quantize_dynamic.cc): no calibration, activations quantized per
// call by DynamicQuantizeLinear (uint8), Conv -> ConvInteger, MatMul / Gemm -> MatMulInteger,
// int8 symmetric weights; the graph onnxruntime.quantization.quantize_dynamic writes.
struct DynamicQuantizeOptions {
  bool per_channel = false;  // ORT's default for quantize_dynamic: one weight scale per tensor
  std::set<std::string> keep_float;
};
// `prepared` comes from prepare_for_quantization. Throws ir::Error when nothing can be quantized.
ir::Graph quantize_dynamic(const ir::Graph& prepared, const DynamicQuantizeOptions& options,
                           QuantizeReport* report = nullptr);

// Everything in one call: prepare, calibrate on `batches`, quantize.
ir::Graph quantize_model(const ir::Graph& fp32, const std::vector<ir::TensorData>& batches,
                         const CalibrationOptions& calibration, const QuantizeOptions& options,
                         QuantizeReport* report = nullptr, const Progress& progress = {});

}  // namespace octet::calib
