#include "loader/ort_nhwc.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "loader/ort_shapes.h"

namespace octet::loader {
namespace {

using onnx::NodeProto;

// The ReduceMean's axes: the attribute (opset < 18) or a constant second input.
std::vector<int64_t> axes_of(const NodeProto& n, const std::map<std::string, const onnx::TensorProto*>& inits) {
  if (const auto* a = find_attr(n, "axes")) return {a->ints().begin(), a->ints().end()};
  if (n.input_size() < 2) return {};
  auto it = inits.find(n.input(1));
  if (it == inits.end()) return {};
  return read_ints(*it->second).value_or(std::vector<int64_t>{});
}

// A DequantizeLinear with one scale (no axis of its own matters then).
bool per_tensor_dq(const NodeProto& n, const std::map<std::string, const onnx::TensorProto*>& inits) {
  if (n.op_type() != "DequantizeLinear" || !is_onnx_domain(n.domain()) || n.input_size() < 2)
    return false;
  auto it = inits.find(n.input(1));
  if (it == inits.end()) return false;
  int64_t count = 1;
  for (int64_t d : it->second->dims()) count *= d;
  return count == 1;
}

}  // namespace

std::set<std::string> reduce_means_ort_runs_channels_last(const onnx::ModelProto& model) {
  const auto& g = model.graph();
  std::map<std::string, const onnx::TensorProto*> inits;
  for (const auto& t : g.initializer()) inits[t.name()] = &t;
  std::map<std::string, const NodeProto*> producer;
  for (const auto& n : g.node())
    for (const auto& o : n.output()) producer[o] = &n;
  auto made_by = [&](const std::string& name, const char* op) -> const NodeProto* {
    auto it = producer.find(name);
    if (it == producer.end() || it->second->op_type() != op) return nullptr;
    return is_onnx_domain(it->second->domain()) ? it->second : nullptr;
  };
  auto weight_rank = [&](const std::string& name) {
    auto it = inits.find(name);
    return it == inits.end() ? -1 : it->second->dims_size();
  };
  // A 2-D conv's output as ORT's QLinearConv writes it: a Q of a Conv (or of its Relu or Clip)
  // reading DQ outputs, its weight a 4-D constant, or a QLinearConv.
  auto from_qlinear_conv = [&](const std::string& q_name) {
    if (const NodeProto* c = made_by(q_name, "QLinearConv")) return c->input_size() > 3 && weight_rank(c->input(3)) == 4;
    const NodeProto* q = made_by(q_name, "QuantizeLinear");
    if (!q || q->input_size() < 1) return false;
    // A Relu or Clip between them: ORT drops it where the Q's range already clips (its
    // ReluQuantFusion / ClipQuantFusion), as quantizers arrange it.
    const NodeProto* act = made_by(q->input(0), "Relu");
    if (!act) act = made_by(q->input(0), "Clip");
    const NodeProto* conv = made_by(act && act->input_size() > 0 ? act->input(0) : q->input(0), "Conv");
    if (!conv || conv->input_size() < 2 || !made_by(conv->input(0), "DequantizeLinear")) return false;
    const NodeProto* w = made_by(conv->input(1), "DequantizeLinear");
    return w && w->input_size() > 0 && weight_rank(w->input(0)) == 4;
  };
  std::set<std::string> out;
  for (const auto& n : g.node()) {
    if (n.op_type() != "ReduceMean" || !is_onnx_domain(n.domain()) || n.input_size() < 1 || n.output_size() != 1)
      continue;
    if (const auto* k = find_attr(n, "keepdims"); k && k->i() == 0) continue;
    std::vector<int64_t> axes = axes_of(n, inits);
    for (int64_t& a : axes) a = a < 0 ? a + 4 : a;  // the input is 4-D: checked below
    std::sort(axes.begin(), axes.end());
    if (axes != std::vector<int64_t>{2, 3}) continue;
    const NodeProto* dq = made_by(n.input(0), "DequantizeLinear");
    if (!dq || !per_tensor_dq(*dq, inits) || !from_qlinear_conv(dq->input(0))) continue;
    out.insert(n.output(0));
  }
  return out;
}

}  // namespace octet::loader
