// Follows ONNX Runtime's NCHWc layout pass (onnxruntime/core/optimizer/nchwc_transformer.cc) over
// a model as far as a BatchNormalization needs: which tensors ORT holds in its blocked layout.
// ORT visits the nodes in order; a node becomes an NCHWc node when
//  - Conv (or com.microsoft FusedConv): its weight is a constant float 4-D tensor and its bias,
//    if any, a constant float vector of one value per output channel; grouped, the output
//    channels are a multiple of 4 and the conv is depthwise or both its per-group channel counts
//    are multiples of the block; ungrouped, fewer input channels than the block or a multiple of
//    4. Whatever its input's layout (ORT reorders a plain one);
//  - MaxPool / AveragePool: one output, and ORT's shape inference knows the input as float 4-D
//    with a channel count that is a multiple of the block (loader/ort_shapes.h);
// and, only when every input that a node produces comes from an NCHWc node:
//  - Add / Sum / Mul: every input NCHWc with the same channel count;
//  - Concat: an explicit axis 1, every input NCHWc with a multiple of the block of channels;
//  - Relu / Sigmoid / Tanh: an NCHWc input;
//  - BatchNormalization: an NCHWc input, one output, spatial 1 if given and four constant float
//    vectors of one value per channel: rewritten into the 1x1 depthwise conv (the pass wants an
//    epsilon attribute, but ORT's graph resolution has already written the default in);
//  - GlobalMaxPool / GlobalAveragePool: as the windowed pools.
// Before it, ORT's earlier rewrites drop Identity and Dropout and fold Constant nodes into
// initializers; an initializer that is also a graph input stays a graph input (it may be fed).
// Not followed: Resize / Upsample (NCHWc only in some modes; taken as never), and ORT's fusions
// of a constant Add or Mul into a preceding Conv (taken as not blocking the Add or Mul).
#include "loader/ort_nchwc.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "loader/ort_shapes.h"

namespace octet::loader {
namespace {

using onnx::NodeProto;
using onnx::TensorProto;

class Walk {
 public:
  Walk(const onnx::GraphProto& g, const std::map<std::string, int64_t>& pool_channels, int block)
      : g_(g), block_(block), pool_channels_(pool_channels) {
    std::set<std::string> inputs;
    for (const auto& in : g_.input()) inputs.insert(in.name());
    for (const auto& t : g_.initializer()) if (!inputs.count(t.name())) constants_[t.name()] = &t;
  }

  std::set<std::string> run() {
    for (const auto& n : g_.node()) visit(n);
    return rewritten_;
  }

 private:
  std::string resolve(const std::string& name) const {
    auto it = alias_.find(name);
    return it == alias_.end() ? name : it->second;
  }
  const TensorProto* constant(const std::string& name) const {
    auto it = constants_.find(resolve(name));
    return it == constants_.end() ? nullptr : it->second;
  }
  std::optional<int64_t> blocked(const std::string& name) const {
    auto it = blocked_.find(resolve(name));
    return it == blocked_.end() ? std::nullopt : std::optional<int64_t>(it->second);
  }
  bool float_vector(const std::string& name, int64_t count) const {
    const TensorProto* t = constant(name);
    return t && t->data_type() == TensorProto::FLOAT && t->dims_size() == 1 && t->dims(0) == count;
  }
  bool pool_input_aligned(const NodeProto& n) const {
    auto it = pool_channels_.find(n.input(0));
    return n.output_size() == 1 && it != pool_channels_.end() && it->second % block_ == 0;
  }
  // ORT's edge test: every input some node produces comes from an NCHWc node.
  bool inputs_from_blocked_nodes(const NodeProto& n) const {
    for (const auto& in : n.input())
      if (!in.empty() && produced_.count(resolve(in)) && !blocked(in)) return false;
    return n.input_size() > 0;
  }

  std::optional<int64_t> conv_channels(const NodeProto& n) const {
    if (n.input_size() < 2) return std::nullopt;
    const TensorProto* w = constant(n.input(1));
    if (!w || w->data_type() != TensorProto::FLOAT || w->dims_size() != 4) return std::nullopt;
    const int64_t out_c = w->dims(0), in_c = w->dims(1);
    const onnx::AttributeProto* g = find_attr(n, "group");
    const int64_t group = g && g->type() == onnx::AttributeProto::INT ? g->i() : 1;
    if (group > 1) {
      if (out_c % 4 != 0) return std::nullopt;
      const bool depthwise = in_c == 1 && out_c == group;
      if (!depthwise && (in_c % block_ != 0 || out_c % group != 0 || (out_c / group) % block_ != 0)) return std::nullopt;
    } else if (in_c >= block_ && in_c % 4 != 0) {
      return std::nullopt;
    }
    if (n.input_size() >= 3 && !n.input(2).empty() && !float_vector(n.input(2), out_c)) return std::nullopt;
    return out_c;
  }

  // Every input NCHWc with one channel count (Add, Sum, Mul).
  std::optional<int64_t> same_channels(const NodeProto& n) const {
    std::optional<int64_t> c;
    for (const auto& in : n.input()) {
      auto b = blocked(in);
      if (!b || (c && *c != *b)) return std::nullopt;
      c = b;
    }
    return c;
  }

  std::optional<int64_t> concat_channels(const NodeProto& n) const {
    const onnx::AttributeProto* axis = find_attr(n, "axis");
    if (!axis || axis->type() != onnx::AttributeProto::INT || axis->i() != 1) return std::nullopt;
    int64_t total = 0;
    for (const auto& in : n.input()) {
      auto b = blocked(in);
      if (!b || *b % block_ != 0) return std::nullopt;
      total += *b;
    }
    return total;
  }

  std::optional<int64_t> batchnorm_channels(const NodeProto& n) const {
    auto c = blocked(n.input(0));
    if (!c || n.output_size() != 1 || n.input_size() != 5) return std::nullopt;
    const onnx::AttributeProto* spatial = find_attr(n, "spatial");
    if (spatial && spatial->type() == onnx::AttributeProto::INT && spatial->i() != 1) return std::nullopt;
    for (int i = 1; i <= 4; ++i)
      if (!float_vector(n.input(i), *c)) return std::nullopt;
    return c;
  }

  void visit(const NodeProto& n) {
    const std::string& op = n.op_type();
    const bool onnx = is_onnx_domain(n.domain());
    if (onnx && op == "Constant") {
      const onnx::AttributeProto* v = find_attr(n, "value");
      if (v && v->has_t() && n.output_size() == 1) constants_[n.output(0)] = &v->t();
      return;
    }
    if (onnx && (op == "Identity" || op == "Dropout") && n.input_size() > 0 && n.output_size() > 0) {
      alias_[n.output(0)] = resolve(n.input(0));
      return;
    }
    for (const auto& out : n.output()) if (!out.empty()) produced_.insert(out);
    std::optional<int64_t> c;
    if ((onnx && op == "Conv") || (n.domain() == "com.microsoft" && op == "FusedConv")) {
      c = conv_channels(n);
    } else if (onnx && (op == "MaxPool" || op == "AveragePool")) {
      if (pool_input_aligned(n)) c = pool_channels_.at(n.input(0));
    } else if (onnx && inputs_from_blocked_nodes(n)) {
      if (op == "Add" || op == "Sum" || op == "Mul") c = same_channels(n);
      else if (op == "Concat") c = concat_channels(n);
      else if (op == "Relu" || op == "Sigmoid" || op == "Tanh") c = blocked(n.input(0));
      else if (op == "GlobalMaxPool" || op == "GlobalAveragePool") {
        if (pool_input_aligned(n)) c = pool_channels_.at(n.input(0));
      } else if (op == "BatchNormalization") {
        c = batchnorm_channels(n);
        if (c) rewritten_.insert(n.output(0));
      }
    }
    if (c && n.output_size() > 0) blocked_[n.output(0)] = *c;
  }

  const onnx::GraphProto& g_;
  const int64_t block_;
  const std::map<std::string, int64_t>& pool_channels_;  // what ORT's shape inference knows
  std::map<std::string, const TensorProto*> constants_;
  std::map<std::string, std::string> alias_;     // Identity / Dropout outputs: their input
  std::set<std::string> produced_;               // outputs of nodes ORT keeps
  std::map<std::string, int64_t> blocked_;       // NCHWc tensors: their channel count
  std::set<std::string> rewritten_;
};

}  // namespace

std::map<std::string, std::vector<int64_t>> batchnorms_ort_rewrites(
    const onnx::ModelProto& model, const std::map<std::string, int64_t>& pool_channels) {
  const auto& nodes = model.graph().node();
  if (std::none_of(nodes.begin(), nodes.end(), [](const NodeProto& n) { return n.op_type() == "BatchNormalization"; }))
    return {};
  std::map<std::string, std::vector<int64_t>> blocks;
  for (int block : {8, 16})
    for (const auto& name : Walk(model.graph(), pool_channels, block).run()) blocks[name].push_back(block);
  return blocks;
}

}  // namespace octet::loader
