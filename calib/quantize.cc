#include "calib/quantize.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "core/int8_ops.h"
#include "engine/graph_edit.h"
#include "engine/passes.h"
#include "kernels/ref/qmath.h"

namespace octet::calib {
namespace {

using graph_edit::float_constant;

using graph_edit::add_constant;
using int8::QuantRule;
using ir::DType;
using Observers = std::map<std::string, std::unique_ptr<Observer>>;

enum class Kind { none, compute, passthrough };

// The rule of octet's static quantizer for a float op: its INT8 form's (the INT8 table), or that
// of a unit ONNX Runtime runs in float between Q and DQ (int8::float_unit_rule). Such a unit's
// output Q saturates as an INT8 op's clamp would, so a Relu / Clip after it folds the same way.
struct StaticRule {
  QuantRule rule = QuantRule::none;
  bool folds_relu = false;
};

StaticRule static_rule(std::string_view op) {
  if (const int8::Int8Op* form = int8::static_form(op)) return {form->quantizer, form->folds_relu};
  const QuantRule r = int8::float_unit_rule(op);
  return {r, r != QuantRule::none};
}

// What the pass can do with a node, and why not when it cannot.
Kind classify(const ir::Graph& g, const ir::Node& n, const Observers& obs, bool per_channel, std::string& why) {
  auto observed = [&](size_t i) { return n.has_input(i) && obs.count(n.input(i)); };
  auto activation_input = [&] { return observed(0) ? Kind::compute : (why = "input is not an activation", Kind::none); };
  if (!n.domain.empty()) return why = "foreign domain", Kind::none;
  if (int8::moves_data_only(n.op))
    return observed(0) ? Kind::passthrough : (why = "input is not an activation", Kind::none);
  switch (static_rule(n.op).rule) {
    case QuantRule::conv_transpose: {
      // Per channel, axis 1 holds M / group scales but the bias M: ORT's tool fails on the
      // grouped case (it multiplies the two), so octet leaves it in float.
      const auto* w = float_constant(g, n.input(1));
      if (per_channel && w && n.attrs.i("group", 1) > 1 && w->dims.size() > 1 && w->dims[1] > 1)
        return why = "grouped ConvTranspose with per-channel weights (axis 1 holds M / group channels)", Kind::none;
      [[fallthrough]];
    }
    case QuantRule::conv:
      if (!observed(0) || !float_constant(g, n.input(1))) return why = "weights are not constant", Kind::none;
      if (n.has_input(2) && !float_constant(g, n.input(2))) return why = "bias is not constant", Kind::none;
      return Kind::compute;
    case QuantRule::gemm: {
      const auto* b = float_constant(g, n.input(1));
      if (!observed(0) || !b || b->dims.size() != 2) return why = "B is not a constant matrix", Kind::none;
      if (n.attrs.i("transA", 0) || n.attrs.f("alpha", 1.0f) != 1.0f)
        return why = "transA or alpha != 1 (QGemm form not used)", Kind::none;
      const int64_t channels = n.attrs.i("transB", 0) ? b->dims[0] : b->dims[1];
      if (n.has_input(2)) {
        const auto* c = float_constant(g, n.input(2));
        if (!c || c->count() != channels || n.attrs.f("beta", 1.0f) != 1.0f)
          return why = "C is not a constant per-column bias with beta 1", Kind::none;
      }
      return Kind::compute;
    }
    case QuantRule::matmul: {
      const auto* b = float_constant(g, n.input(1));
      if (!observed(0) || !b || b->dims.size() != 2) return why = "B is not a constant matrix", Kind::none;
      return Kind::compute;
    }
    case QuantRule::binary:
      if (!observed(0) || !observed(1)) return why = "an operand is a constant", Kind::none;
      return Kind::compute;
    case QuantRule::variadic:
      for (size_t i = 0; i < n.inputs.size(); ++i)
        if (!observed(i)) return why = "an input is not a float activation", Kind::none;
      return n.inputs.empty() ? (why = "no inputs", Kind::none) : Kind::compute;
    // ORT's quantizer quantizes Softmax too, with a fixed output range (see mark_tensors).
    case QuantRule::unary:
    case QuantRule::probability: return activation_input();
    case QuantRule::reduce: {
      // The QDQ pass fuses it into QLinearReduceMean only with a constant, non-empty axes list.
      const bool listed = n.has_input(1) && g.is_constant(n.input(1)) && g.value(n.input(1)).constant->count() > 0;
      if (!listed) return why = "axes are not a constant, non-empty list", Kind::none;
      return activation_input();
    }
    case QuantRule::none:
    case QuantRule::dynamic_conv:
    case QuantRule::dynamic_matmul: break;
  }
  why = "no INT8 form in octet";
  return Kind::none;
}

// Activation inputs a quantized compute node reads through DequantizeLinear.
std::vector<size_t> activation_slots(const ir::Node& n, QuantRule rule) {
  if (rule == QuantRule::binary) return {0, 1};
  if (rule == QuantRule::variadic) {
    std::vector<size_t> all(n.inputs.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    return all;
  }
  return {0};
}

// The axis a compute node's constant weights (input 1) are quantized along; nullopt: no weights.
std::optional<int64_t> weight_axis(const ir::Node& n, QuantRule rule) {
  switch (rule) {
    case QuantRule::conv: return 0;
    case QuantRule::conv_transpose: return 1;
    case QuantRule::gemm: return n.attrs.i("transB", 0) ? 0 : 1;
    case QuantRule::matmul: return 1;
    default: return std::nullopt;
  }
}

// Whether Q with `p` gives the same integers with or without a preceding Clip(lo, hi): true
// when the clip bounds lie at or beyond half a step outside the range Q represents
// (anything the clip would move is saturated to the same end code by Q anyway).
bool clamp_covers(const QParams& p, const QuantTarget& t, float lo, float hi) {
  const double s = p.scale;
  const double lowest = s * (t.qmin() - p.zero_point), highest = s * (t.qmax() - p.zero_point);
  return lo <= lowest + s / 2 && hi >= highest - s / 2;
}

struct ClipBounds {
  float lo = -INFINITY, hi = INFINITY;
};

std::optional<ClipBounds> clip_bounds(const ir::Graph& g, const ir::Node& act) {
  ClipBounds b;
  if (act.op == "Relu") return ClipBounds{0.0f, INFINITY};
  if (act.op != "Clip") return std::nullopt;
  for (size_t i = 1; i <= 2; ++i) {
    if (!act.has_input(i)) continue;
    const auto* t = float_constant(g, act.input(i));
    if (!t || t->count() != 1) return std::nullopt;
    (i == 1 ? b.lo : b.hi) = t->as<float>()[0];
  }
  return b;
}

class Quantizer {
 public:
  Quantizer(const ir::Graph& prepared, const Observers& obs, const QuantizeOptions& o, QuantizeReport& r)
      : g_(prepared), obs_(obs), opt_(o), report_(r) {
    act_target_.type = o.activations;
    weight_target_.type = QType::s8;
    weight_target_.symmetric = true;
    weight_target_.narrow = true;
  }

  ir::Graph run() {
    classify_nodes();
    absorb_activations();
    mark_tensors();
    emit();
    return std::move(g_);
  }

 private:
  QParams params_of(const std::string& tensor) {
    auto alias = alias_.find(tensor);
    const std::string& name = alias == alias_.end() ? tensor : alias->second;
    auto it = params_.find(name);
    if (it != params_.end()) return it->second;
    auto ob = obs_.find(name);
    if (ob == obs_.end()) throw ir::Error("internal: tensor '" + name + "' was not observed during calibration");
    const Observer& o = *ob->second;
    bool degenerate = false;
    QParams p = qparams_from_range(o.range(act_target_), act_target_, &degenerate);
    if (degenerate)
      report_.warnings.push_back("tensor '" + name + "' was 0 on every calibration image: scale 1, zero point " +
                                 std::to_string(p.zero_point));
    return params_[name] = p;
  }

  void classify_nodes() {
    for (auto& n : g_.nodes) {
      std::string why;
      Kind k = opt_.keep_float.count(n.op) ? (why = "kept in float (--keep-float)", Kind::none)
                                           : classify(g_, n, obs_, opt_.per_channel, why);
      kind_[n.name] = k;
      // Shape arithmetic (Shape, Gather, Concat of int64) computes no float tensor: nothing to report.
      bool writes_float = false;
      for (const auto& o : n.outputs) writes_float = writes_float || obs_.count(o);
      if (k == Kind::none && writes_float && n.op != "Relu" && n.op != "Clip")
        report_.float_ops.push_back(ir::Graph::describe(n) + ": " + why);
    }
  }

  // Relu / Clip right after a quantized compute node disappear into its output clamp.
  void absorb_activations() {
    std::set<const ir::Node*> dead;
    for (auto& n : g_.nodes) {
      if (kind_[n.name] != Kind::compute || !static_rule(n.op).folds_relu) continue;
      ir::Node* act = graph_edit::sole_consumer(g_, n.outputs[0]);
      if (!act || !obs_.count(act->outputs[0])) continue;
      auto bounds = clip_bounds(g_, *act);
      if (!bounds || !clamp_covers(params_of(act->outputs[0]), act_target_, bounds->lo, bounds->hi)) continue;
      report_.absorbed.push_back(ir::Graph::describe(*act) + " into " + ir::Graph::describe(n));
      n.outputs[0] = act->outputs[0];
      dead.insert(act);
    }
    graph_edit::erase_marked(g_, dead);
    for (const auto& n : g_.nodes)
      if ((n.op == "Relu" || n.op == "Clip") && kind_[n.name] == Kind::none)
        report_.float_ops.push_back(ir::Graph::describe(n) + ": not made redundant by an INT8 output clamp");
  }

  void mark_tensors() {
    for (const auto& n : g_.nodes) {
      const Kind k = kind_[n.name];
      if (k == Kind::compute) {
        const QuantRule rule = static_rule(n.op).rule;
        for (size_t slot : activation_slots(n, rule)) marked_.insert(n.input(slot));
        marked_.insert(n.outputs[0]);
        // Probabilities lie in [0, 1]: ORT's tool gives them scale 1/256 and zero point 0
        // (uint8) or -128 (int8) whatever calibration saw, and so does octet.
        if (rule == QuantRule::probability)
          params_[n.outputs[0]] = QParams{1.0f / 256.0f, act_target_.type == QType::u8 ? 0 : -128};
        report_.quantized.push_back(ir::Graph::describe(n));
      } else if (k == Kind::passthrough && marked_.count(n.input(0))) {
        // Same parameters in and out (every output of a Split), so the op runs on the integers.
        for (const auto& o : n.outputs) {
          marked_.insert(o);
          params_[o] = params_of(n.input(0));
        }
        report_.quantized.push_back(ir::Graph::describe(n));
      }
    }
    // Tensors the pass never observed (shape values and the like) cannot be quantized.
    for (auto it = marked_.begin(); it != marked_.end();)
      it = obs_.count(*it) ? std::next(it) : marked_.erase(it);
  }

  std::string scalar_scale(const std::string& hint, float s) {
    return add_constant(g_, hint, ir::TensorData::f32({}, std::vector<float>{s}));
  }
  std::string scalar_zero_point(const std::string& hint, int32_t zp, QType t) {
    ir::TensorData d = ir::TensorData::make(t == QType::u8 ? DType::u8 : DType::s8, {});
    if (t == QType::u8) d.as<uint8_t>()[0] = uint8_t(zp);
    else d.as<int8_t>()[0] = int8_t(zp);
    return add_constant(g_, hint, std::move(d));
  }

  ir::Node qdq_node(const std::string& op, const std::string& name, const std::string& in, const std::string& scale,
                    const std::string& zp, const std::string& out, std::optional<int64_t> axis = {}) {
    ir::Node n;
    n.op = op;
    n.name = unique_node_name(name);
    n.inputs = {in, scale, zp};
    n.outputs = {out};
    if (axis) n.attrs.set("axis", *axis);
    g_.values[out].name = out;
    return n;
  }

  // ONNX requires distinct node names (ORT refuses the model otherwise). A weight or bias
  // initializer shared by several nodes (torch.onnx.export deduplicates equal tensors, e.g. the
  // all-zero SE biases of EfficientNet) gets one DequantizeLinear per consumer: "_1", "_2", ...
  std::string unique_node_name(const std::string& hint) {
    std::string name = hint;
    for (int i = 1; node_names_.count(name); ++i) name = hint + "_" + std::to_string(i);
    node_names_.insert(name);
    return name;
  }

  // Q then DQ of activation T; `src` is what Q reads and `dst` what DQ writes.
  void activation_pair(std::vector<ir::Node>& out, const std::string& t, const std::string& src,
                       const std::string& dst) {
    const QParams p = params_of(t);
    const std::string scale = scalar_scale(t + "_scale", p.scale);
    const std::string zp = scalar_zero_point(t + "_zero_point", p.zero_point, act_target_.type);
    const std::string q = graph_edit::fresh_name(g_, t + "_quantized");
    out.push_back(qdq_node("QuantizeLinear", t + "_QuantizeLinear", src, scale, zp, q));
    out.push_back(qdq_node("DequantizeLinear", t + "_DequantizeLinear", q, scale, zp, dst));
  }

  // Weights as int8 symmetric (per channel along `axis` of a rank-2+ tensor, or per tensor),
  // returning the DQ output name; `scales` receives the per-channel (or single) scales.
  std::string quantize_weights(std::vector<ir::Node>& out, const ir::Node& n, size_t slot, int64_t axis,
                               std::vector<float>& scales) {
    const ir::TensorData& w = *g_.value(n.input(slot)).constant;
    const int64_t channels = w.dims.at(size_t(axis));
    const bool per_channel = opt_.per_channel;
    QuantizedWeights qw;
    try {
      qw = quantize_weights_s8(w, axis, per_channel);
    } catch (const ir::Error& e) {
      throw ir::Error(ir::Graph::describe(n) + ": " + e.what());
    }
    ir::TensorData q = std::move(qw.values);
    scales = qw.scales;
    const ir::Dims vec_dims = per_channel ? ir::Dims{channels} : ir::Dims{};
    const std::string base = n.input(slot);
    const std::string qname = add_constant(g_, base + "_quantized", std::move(q));
    const std::string sname = add_constant(g_, base + "_scale", ir::TensorData::f32(vec_dims, scales));
    const std::string zname = add_constant(g_, base + "_zero_point", ir::TensorData::make(DType::s8, vec_dims));
    const std::string dq = graph_edit::fresh_name(g_, base + "_dequantized");
    out.push_back(qdq_node("DequantizeLinear", base + "_DequantizeLinear", qname, sname, zname, dq,
                           per_channel ? std::optional<int64_t>(axis) : std::nullopt));
    return dq;
  }

  // bias int32 = round_half_even(b / (x_scale * w_scale[c])), scale x_scale * w_scale[c] in float32.
  std::string quantize_bias(std::vector<ir::Node>& out, const ir::Node& n, size_t slot, float x_scale,
                            const std::vector<float>& w_scales) {
    const ir::TensorData& b = *g_.value(n.input(slot)).constant;
    const int64_t channels = b.count();
    std::vector<float> scales;
    for (float ws : w_scales) scales.push_back(x_scale * ws);
    ir::TensorData q = ir::TensorData::make(DType::s32, {channels});
    int saturated = 0;
    for (int64_t c = 0; c < channels; ++c) {
      bool sat = false;
      q.as<int32_t>()[c] = kernels::quantize_bias_value(b.as<float>()[c], scales[scales.size() == 1 ? 0 : size_t(c)], &sat);
      saturated += sat;
    }
    if (saturated)
      report_.warnings.push_back(ir::Graph::describe(n) + ": " + std::to_string(saturated) +
                                 " bias value(s) saturated int32");
    const ir::Dims vec_dims = scales.size() == 1 ? ir::Dims{} : ir::Dims{channels};
    const std::string base = n.input(slot);
    const std::string qname = add_constant(g_, base + "_quantized", std::move(q));
    const std::string sname = add_constant(g_, base + "_scale", ir::TensorData::f32(vec_dims, scales));
    const std::string zname = add_constant(g_, base + "_zero_point", ir::TensorData::make(DType::s32, vec_dims));
    const std::string dq = graph_edit::fresh_name(g_, base + "_dequantized");
    out.push_back(qdq_node("DequantizeLinear", base + "_DequantizeLinear", qname, sname, zname, dq,
                           scales.size() == 1 ? std::nullopt : std::optional<int64_t>(0)));
    return dq;
  }

  void emit() {
    std::vector<ir::Node> out;
    for (const auto& n : g_.nodes) node_names_.insert(n.name);
    for (const auto& in : g_.inputs) {
      if (!marked_.count(in)) continue;
      const std::string dq = graph_edit::fresh_name(g_, in + "_dequantized");
      activation_pair(out, in, in, dq);
      graph_edit::replace_uses(g_, in, dq);  // g_.nodes: the Q just emitted is in `out`
      alias_[dq] = in;
    }
    std::vector<ir::Node> nodes = std::move(g_.nodes);
    g_.nodes.clear();
    for (auto& n : nodes) {
      const auto axis = kind_[n.name] == Kind::compute ? weight_axis(n, static_rule(n.op).rule) : std::nullopt;
      if (axis) {
        std::vector<float> w_scales;
        n.inputs[1] = quantize_weights(out, n, 1, *axis, w_scales);
        if (n.has_input(2)) n.inputs[2] = quantize_bias(out, n, 2, params_of(n.input(0)).scale, w_scales);
      }
      std::vector<std::pair<std::string, std::string>> pairs;  // tensor, float name its producer writes
      for (auto& o : n.outputs) {
        if (!marked_.count(o)) continue;
        const std::string raw = graph_edit::fresh_name(g_, o + "_float");
        g_.values[raw].name = raw;
        pairs.emplace_back(o, raw);
        o = raw;
      }
      out.push_back(std::move(n));
      for (const auto& [t, raw] : pairs) activation_pair(out, t, raw, t);
    }
    g_.nodes = std::move(out);
    g_.opset = std::max<int64_t>(g_.opset, 13);
    passes::remove_unused(g_);
  }

  ir::Graph g_;
  const Observers& obs_;
  const QuantizeOptions& opt_;
  QuantizeReport& report_;
  QuantTarget act_target_, weight_target_;
  std::map<std::string, Kind> kind_;
  std::map<std::string, QParams> params_;
  std::set<std::string> marked_;
  std::map<std::string, std::string> alias_;  // a graph input's DequantizeLinear output -> the input
  std::set<std::string> node_names_;          // every node name in use, original and emitted
};

}  // namespace

QuantizedWeights quantize_weights_s8(const ir::TensorData& w, int64_t axis, bool per_channel) {
  QuantTarget target;
  target.type = QType::s8;
  target.symmetric = true;
  target.narrow = true;
  const int64_t channels = w.dims.at(size_t(axis));
  int64_t inner = 1;
  for (size_t d = size_t(axis) + 1; d < w.dims.size(); ++d) inner *= w.dims[d];
  const std::vector<QParams> qp = per_channel ? weight_qparams_per_channel(w.values<float>(), channels, target, inner)
                                              : std::vector<QParams>{weight_qparams_per_tensor(w.values<float>(), target)};
  QuantizedWeights out;
  out.values = ir::TensorData::make(DType::s8, w.dims);
  for (int64_t i = 0; i < w.count(); ++i) {
    const QParams& p = qp[per_channel ? size_t((i / inner) % channels) : 0];
    out.values.as<int8_t>()[i] =
        int8_t(kernels::quantize_value(w.as<float>()[i], p.scale, 0, target.qmin(), target.qmax()));
  }
  for (const QParams& p : qp) out.scales.push_back(p.scale);
  return out;
}

ir::Graph quantize_graph(const ir::Graph& prepared, const Observers& observers, const QuantizeOptions& options,
                         QuantizeReport* report) {
  QuantizeReport local;
  QuantizeReport& r = report ? *report : local;
  ir::Graph q = Quantizer(prepared, observers, options, r).run();
  if (r.quantized.empty())
    throw ir::Error(prepared.source + ": nothing to quantize (no Conv, ConvTranspose, Gemm, MatMul, Add, Mul, pooling or "
                    "Sigmoid on activations with constant weights)");
  return q;
}

ir::Graph quantize_model(const ir::Graph& fp32, const std::vector<ir::TensorData>& batches,
                         const CalibrationOptions& calibration, const QuantizeOptions& options,
                         QuantizeReport* report, const Progress& progress) {
  ir::Graph prepared = prepare_for_quantization(fp32);
  auto observers = observe_activations(prepared, batches, calibration, progress);
  return quantize_graph(prepared, observers, options, report);
}

}  // namespace octet::calib
