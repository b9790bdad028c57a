#include "calib/calibrate.h"

#include <span>

#include "core/int8_ops.h"
#include "engine/passes.h"
#include "engine/session.h"

namespace octet::calib {
namespace {

passes::Options unfused() {
  passes::Options o;
  o.fuse_qdq = false;
  o.fuse_activations = false;
  o.fuse_channel_shuffle = false;  // the quantized graph is written as ONNX
  o.fuse_decompositions = false;    // likewise: Gelu and LayerNormalization may be above its opset
  o.fuse_group_norm = false;        // every tensor of the chain observed, as written
  o.drop_broadcast_expands = false;  // an Expand's output is observed (its QDQ pair is exported)
  o.fuse_scalar_affine = false;      // the Mul's and Add's outputs are observed
  return o;
}

}  // namespace

bool is_quantized(const ir::Graph& g, std::string* first) {
  for (const auto& n : g.nodes) {
    const int8::Int8Op* op = int8::find(n.op);
    const bool q = n.op == "QuantizeLinear" || n.op == "DequantizeLinear" || n.op == "DynamicQuantizeLinear" ||
                   (op && (op->family == int8::Family::qlinear || op->family == int8::Family::integer));
    if (q) {
      if (first) *first = ir::Graph::describe(n);
      return true;
    }
  }
  return false;
}

ir::Graph prepare_for_quantization(ir::Graph graph) {
  if (std::string node; is_quantized(graph, &node))
    throw ir::Error(graph.source + ": the model is already quantized (" + node + "); quantize its FP32 original instead");
  passes::optimize(graph, unfused());
  return graph;
}

std::map<std::string, std::unique_ptr<Observer>> observe_activations(const ir::Graph& prepared,
                                                                      const std::vector<ir::TensorData>& batches,
                                                                      const CalibrationOptions& options,
                                                                      const Progress& progress) {
  if (batches.empty()) throw ir::Error("calibration set is empty: give at least one image");
  SessionOptions so;
  so.passes = unfused();
  Session session(prepared, so);

  std::map<std::string, std::unique_ptr<Observer>> observers;
  auto observer_for = [&](const std::string& name) -> Observer& {
    auto& o = observers[name];
    if (!o) o = make_observer(options.method, options.observer);
    return *o;
  };
  const bool histograms = make_observer(options.method, options.observer)->needs_histogram();
  const int passes = histograms ? 2 : 1;
  const int total = int(batches.size()) * passes;
  for (int pass = 0; pass < passes; ++pass) {
    for (size_t b = 0; b < batches.size(); ++b) {
      ValueObserver watch = [&](const std::string& name, const TensorInfo& info, const void* data) {
        if (info.dtype != ir::DType::f32) return;
        std::span<const float> values(static_cast<const float*>(data), size_t(info.count()));
        try {
          if (pass == 0) observer_for(name).observe_range(values);
          else observer_for(name).observe_histogram(values);
        } catch (const std::exception& e) {
          throw ir::Error("calibration batch " + std::to_string(b + 1) + ", tensor '" + name + "': " + e.what());
        }
      };
      session.run({batches[b]}, nullptr, &watch);
      if (progress) progress(pass * int(batches.size()) + int(b) + 1, total, pass == 0 ? "ranges" : "histograms");
    }
  }
  return observers;
}

}  // namespace octet::calib
