#pragma once
// Calibration: run the FP32 graph on calibration batches and observe every float activation.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "calib/observers.h"
#include "core/ir.h"

namespace octet::calib {

// Whether the graph already holds quantized ops (QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear, QLinear*, QGemm, ConvInteger, MatMulInteger); `first` receives
// "node 'x' (Op)" of the first one.
bool is_quantized(const ir::Graph& g, std::string* first = nullptr);

// The FP32 graph as quantization sees it: Identity/Dropout removed, constants folded,
// BatchNorm folded into Conv, activations NOT fused (each activation tensor keeps its own
// name and range) and nothing else changed. Throws ir::Error when the graph is already
// quantized (it holds QuantizeLinear, DequantizeLinear or QLinear* ops).
ir::Graph prepare_for_quantization(ir::Graph graph);

// (batches done, batches total, "ranges" or "histograms").
using Progress = std::function<void(int done, int total, const char* phase)>;

struct CalibrationOptions {
  Method method = Method::minmax;
  ObserverOptions observer;
};

// One observer per float activation of `prepared` (graph inputs included), fed with every
// batch: a range pass, then a histogram pass when the method needs one. Throws ir::Error
// naming the tensor and the batch when an activation holds NaN or Inf, and when `batches`
// is empty.
std::map<std::string, std::unique_ptr<Observer>> observe_activations(const ir::Graph& prepared,
                                                                      const std::vector<ir::TensorData>& batches,
                                                                      const CalibrationOptions& options,
                                                                      const Progress& progress = {});

}  // namespace octet::calib
