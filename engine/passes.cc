#include "engine/passes.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "engine/graph_edit.h"
#include "engine/op_registry.h"

namespace octet::passes {
using graph_edit::erase_marked;
using graph_edit::evaluate_node;
using graph_edit::producer_of;
using graph_edit::replace_uses;
using graph_edit::sole_consumer;

namespace {

// Readers of node n's output read its first input instead; false when n writes a graph output
// whose name cannot move to the producer of its input (n must then stay).
bool bypass(ir::Graph& g, ir::Node& n) {
  const std::string in = n.inputs.at(0), out = n.outputs.at(0);
  if (!g.is_graph_output(out)) {
    replace_uses(g, out, in);
    return true;
  }
  // Keep the output's name: rename what the input's producer writes, if it can be.
  ir::Node* p = producer_of(g, in);
  if (!p || g.is_graph_output(in) || g.consumers(in).size() != 1) return false;
  for (auto& o : p->outputs) if (o == in) o = out;
  g.values[out].dtype = g.value(in).dtype;
  return true;
}

}  // namespace

int remove_identities(ir::Graph& g) {
  std::set<const ir::Node*> dead;
  for (auto& n : g.nodes) {
    if (n.op != "Identity" && n.op != "Dropout") continue;
    if (bypass(g, n)) dead.insert(&n);
  }
  erase_marked(g, dead);
  return int(dead.size());
}

int remove_zero_pads(ir::Graph& g) {
  std::set<const ir::Node*> dead;
  for (auto& n : g.nodes) {
    if (n.op != "Pad" || !n.domain.empty() || n.outputs.size() != 1 || !n.has_input(1) || !g.is_constant(n.input(1)))
      continue;
    const std::vector<int64_t> pads = g.value(n.input(1)).constant->to_i64();
    if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; })) continue;
    if (bypass(g, n)) dead.insert(&n);
  }
  erase_marked(g, dead);
  return int(dead.size());
}

int fold_pads_into_windows(ir::Graph& g) {
  std::set<const ir::Node*> dead;
  for (auto& pad : g.nodes) {
    if (pad.op != "Pad" || !pad.domain.empty() || pad.outputs.size() != 1 || !pad.has_input(1) ||
        !g.is_constant(pad.input(1)) || pad.has_input(3) || pad.attrs.s("mode") != "constant")
      continue;
    if (pad.has_input(2)) {  // the value: +0 only (-0 would show in an all-negative window)
      if (!g.is_constant(pad.input(2))) continue;
      const auto& bytes = g.value(pad.input(2)).constant->bytes;
      if (std::any_of(bytes.begin(), bytes.end(), [](std::byte b) { return b != std::byte{0}; })) continue;
    }
    ir::Node* win = sole_consumer(g, pad.outputs[0]);
    if (!win || !win->domain.empty() || (win->op != "Conv" && win->op != "AveragePool") ||
        win->inputs.at(0) != pad.outputs[0] || win->attrs.s("auto_pad") != "NOTSET")
      continue;
    const bool pool = win->op == "AveragePool";
    // With ceil_mode a last window that starts in the right padding is dropped, but not when
    // that padding was input: the output size could change.
    if (pool && win->attrs.i("ceil_mode", 0) != 0) continue;
    const std::vector<int64_t> pads = g.value(pad.input(1)).constant->to_i64();
    const size_t rank = pads.size() / 2, spatial = rank >= 2 ? rank - 2 : 0;
    if (spatial == 0 || pads[0] || pads[1] || pads[rank] || pads[rank + 1] ||
        std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p < 0; }))
      continue;
    std::vector<int64_t> own = win->attrs.ints("pads");
    if (own.empty()) own.assign(2 * spatial, 0);
    if (own.size() != 2 * spatial) continue;
    const bool own_pads = std::any_of(own.begin(), own.end(), [](int64_t p) { return p != 0; });
    if (pool && own_pads && win->attrs.i("count_include_pad", 0) == 0) continue;
    for (size_t i = 0; i < spatial; ++i) {
      own[i] += pads[2 + i];
      own[spatial + i] += pads[rank + 2 + i];
    }
    if (pool) {  // a pool's pads must stay below its kernel (an error otherwise, in ORT too)
      const std::vector<int64_t>& k = win->attrs.ints("kernel_shape");
      bool fits = k.size() == spatial;
      for (size_t i = 0; fits && i < spatial; ++i) fits = own[i] < k[i] && own[spatial + i] < k[i];
      if (!fits) continue;
    }
    win->attrs.set("pads", own);
    if (pool) win->attrs.set("count_include_pad", int64_t{1});
    win->inputs[0] = pad.inputs[0];
    dead.insert(&pad);
  }
  erase_marked(g, dead);
  return int(dead.size());
}

int fold_constants(ir::Graph& g, const std::set<std::string>& keep_ops) {
  std::set<const ir::Node*> dead;
  for (auto& n : g.nodes) {
    if (keep_ops.count(n.op)) continue;
    auto results = evaluate_node(g, n);  // empty unless every input is a constant and the op is known
    if (results.empty()) continue;
    for (size_t i = 0; i < n.outputs.size() && i < results.size(); ++i) {
      if (n.outputs[i].empty()) continue;
      ir::Value& v = g.values[n.outputs[i]];
      v.name = n.outputs[i];
      v.dtype = results[i].dtype;
      v.dims = results[i].dims;
      v.constant = std::move(results[i]);
    }
    dead.insert(&n);
  }
  erase_marked(g, dead);
  return int(dead.size());
}

int fold_batchnorm(ir::Graph& g) {
  std::set<const ir::Node*> dead;
  for (auto& conv : g.nodes) {
    if (conv.op != "Conv" || !g.is_constant(conv.input(1)) || (conv.has_input(2) && !g.is_constant(conv.input(2))))
      continue;
    ir::Node* bn = sole_consumer(g, conv.outputs[0]);
    if (!bn || bn->op != "BatchNormalization" || conv.attrs.has("fused_act")) continue;
    bool params_const = true;
    for (size_t i = 1; i <= 4; ++i) params_const = params_const && g.is_constant(bn->input(i));
    if (!params_const) continue;
    const ir::TensorData& w = *g.value(conv.input(1)).constant;
    const int64_t out_c = w.dims.at(0);
    auto param = [&](size_t i) { return g.value(bn->input(i)).constant->values<float>(); };
    if (w.dtype != ir::DType::f32 || param(1).size() != size_t(out_c)) continue;
    auto scale = param(1), beta = param(2), mean = param(3), var = param(4);
    const double eps = bn->attrs.f("epsilon");
    ir::TensorData new_w = w;
    std::vector<float> new_b(size_t(out_c), 0.0f);
    const float* old_b = conv.has_input(2) ? g.value(conv.input(2)).constant->as<float>() : nullptr;
    const int64_t per_channel = w.count() / out_c;
    for (int64_t c = 0; c < out_c; ++c) {
      const double k = double(scale[size_t(c)]) / std::sqrt(double(var[size_t(c)]) + eps);
      for (int64_t j = 0; j < per_channel; ++j)
        new_w.as<float>()[c * per_channel + j] = float(w.as<float>()[c * per_channel + j] * k);
      const double b = old_b ? old_b[c] : 0.0;
      new_b[size_t(c)] = float((b - mean[size_t(c)]) * k + beta[size_t(c)]);
    }
    // New names: the original initializers may be shared with other nodes.
    ir::Value wv{conv.name + ".bn_folded_weight", ir::DType::f32, new_w.dims, std::move(new_w)};
    ir::Value bv{conv.name + ".bn_folded_bias", ir::DType::f32, ir::Dims{out_c},
                 ir::TensorData::f32({out_c}, new_b)};
    conv.inputs.resize(3);
    conv.inputs[1] = wv.name;
    conv.inputs[2] = bv.name;
    g.values[wv.name] = std::move(wv);
    g.values[bv.name] = std::move(bv);
    // The conv now writes what the BatchNorm wrote.
    conv.outputs[0] = bn->outputs[0];
    dead.insert(bn);
  }
  erase_marked(g, dead);
  return int(dead.size());
}

namespace {

// t = conv(...); y = Mul(t, gate(t)) (either operand order) with t and the gate used by
// nothing else: SiLU / Swish as exporters write it (gate Sigmoid), and HardSwish as torch writes
// it below opset 14 (gate HardSigmoid with alpha = 1/6 rounded to float and beta = 0.5: then
// x * HardSigmoid(x) is the HardSwish kernel's formula, bit for bit). Returns the gate, the Mul
// and the fused activation's kind, or nulls.
struct Gated {
  ir::Node* gate = nullptr;
  ir::Node* mul = nullptr;
  const char* kind = nullptr;
};
Gated gated_after(ir::Graph& g, const std::string& t) {
  if (g.is_graph_output(t)) return {};
  auto uses = g.consumers(t);
  if (uses.size() != 2) return {};
  ir::Node* a = &g.nodes[uses[0]];
  ir::Node* b = &g.nodes[uses[1]];
  if (a->op != "Sigmoid" && a->op != "HardSigmoid") std::swap(a, b);
  if (b->op != "Mul" || !a->domain.empty() || !b->domain.empty()) return {};
  const char* kind = nullptr;
  if (a->op == "Sigmoid") kind = "Silu";
  else if (a->op == "HardSigmoid" && a->attrs.f("alpha") == 1.0f / 6.0f && a->attrs.f("beta") == 0.5f) kind = "HardSwish";
  if (!kind) return {};
  const std::string& gate = a->outputs[0];
  if (g.is_graph_output(gate) || sole_consumer(g, gate) != b || b->inputs.size() != 2) return {};
  const bool pair = (b->inputs[0] == t && b->inputs[1] == gate) || (b->inputs[0] == gate && b->inputs[1] == t);
  return pair ? Gated{a, b, kind} : Gated{};
}

}  // namespace

bool fuse_activation_after(ir::Graph& g, ir::Node& p, std::set<const ir::Node*>& dead) {
  if (const Gated gated = gated_after(g, p.outputs[0]); gated.gate) {
    p.attrs.set("fused_act", std::string(gated.kind));
    p.outputs[0] = gated.mul->outputs[0];
    dead.insert(gated.gate);
    dead.insert(gated.mul);
    return true;
  }
  ir::Node* act = sole_consumer(g, p.outputs[0]);
  if (!act) return false;
  std::vector<float> params;
  if (act->op == "Clip") {
    float lo = -INFINITY, hi = INFINITY;
    bool ok = true;
    for (size_t i = 1; i <= 2; ++i) {
      if (!act->has_input(i)) continue;
      if (!g.is_constant(act->input(i))) { ok = false; break; }
      const auto& t = *g.value(act->input(i)).constant;
      if (t.dtype != ir::DType::f32 || t.count() != 1) { ok = false; break; }
      (i == 1 ? lo : hi) = t.as<float>()[0];
    }
    if (!ok) return false;
    params = {lo, hi};
  } else if (act->op == "HardSigmoid") {
    params = {act->attrs.f("alpha"), act->attrs.f("beta")};
  } else if (act->op == "LeakyRelu") {
    params = {act->attrs.f("alpha")};
  } else if (act->op != "Relu" && act->op != "Sigmoid" && act->op != "HardSwish" && act->op != "Gelu" &&
             act->op != "Tanh") {
    return false;
  }
  std::string kind = act->op;
  // A Sigmoid fuse_standalone_silu made a SiLU (its Mul gone) is a SiLU here too; no other
  // activation node carries a fused activation of its own.
  if (act->attrs.has("fused_act")) {
    if (act->op != "Sigmoid" || act->attrs.s("fused_act") != "Silu") return false;
    kind = "Silu";
  }
  if (kind == "Gelu") {
    const std::string approximate = act->attrs.has("approximate") ? act->attrs.s("approximate") : "none";
    if (approximate != "none" && approximate != "tanh") return false;
    if (approximate == "tanh") kind = "GeluTanh";
  }
  if (!act->domain.empty()) return false;
  p.attrs.set("fused_act", kind);
  if (!params.empty()) p.attrs.set("fused_act_params", params);
  p.outputs[0] = act->outputs[0];
  dead.insert(act);
  return true;
}

namespace {

// A float MatMul whose B is a 2-D constant: it runs as one GEMM (engine/ops/gemm.cc).
const ir::TensorData* matmul_constant_b(const ir::Graph& g, const ir::Node& n) {
  if (n.op != "MatMul" || !n.domain.empty() || n.inputs.size() < 2 || n.outputs.size() != 1) return nullptr;
  const ir::TensorData* b = graph_edit::float_constant(g, n.inputs[1]);
  return b && b->dims.size() == 2 ? b : nullptr;
}

}  // namespace

int fuse_matmul_bias(ir::Graph& g) {
  std::set<const ir::Node*> dead;
  for (auto& mm : g.nodes) {
    const ir::TensorData* b = matmul_constant_b(g, mm);
    if (!b || mm.inputs.size() != 2 || g.is_graph_output(mm.outputs[0])) continue;
    ir::Node* add = sole_consumer(g, mm.outputs[0]);
    if (!add || add->op != "Add" || !add->domain.empty() || add->inputs.size() != 2) continue;
    const std::string bias = add->inputs[0] == mm.outputs[0] ? add->inputs[1] : add->inputs[0];
    const ir::TensorData* t = graph_edit::float_constant(g, bias);
    if (!t || t->dims.empty() || t->dims.back() != b->dims[1] || t->count() != b->dims[1]) continue;
    mm.inputs.push_back(bias);
    mm.outputs[0] = add->outputs[0];
    dead.insert(add);
  }
  erase_marked(g, dead);
  return int(dead.size());
}

int fuse_activations(ir::Graph& g) {
  std::set<const ir::Node*> dead;
  for (auto& p : g.nodes) {
    // The integer-to-float steps of dynamic quantization too: their float epilogue is a conv's.
    const bool integer_to_float = p.op == "ConvIntegerToFloat" || p.op == "MatMulIntegerToFloat";
    // ConvTranspose applies it in its gather pass (ORT runs it apart: the same float steps).
    const bool gemm_like = p.op == "Conv" || p.op == "ConvTranspose" || p.op == "Gemm" || matmul_constant_b(g, p);
    // A BatchNormalization left standalone (fold_batchnorm found no conv before it) applies it
    // chunk by chunk after its scale and shift.
    const bool batchnorm = p.op == "BatchNormalization" && p.domain.empty();
    if ((!gemm_like && !integer_to_float && !batchnorm) || p.attrs.has("fused_act")) continue;
    fuse_activation_after(g, p, dead);
  }
  erase_marked(g, dead);
  return int(dead.size());
}

int fuse_standalone_silu(ir::Graph& g) {
  std::set<const ir::Node*> dead;
  for (auto& s : g.nodes) {
    if (s.op != "Sigmoid" || !s.domain.empty() || s.attrs.has("fused_act") || s.inputs.size() != 1) continue;
    const Gated gated = gated_after(g, s.inputs[0]);
    if (gated.gate != &s || std::string(gated.kind) != "Silu" || dead.count(gated.mul)) continue;
    s.attrs.set("fused_act", std::string("Silu"));
    s.outputs[0] = gated.mul->outputs[0];
    dead.insert(gated.mul);
  }
  erase_marked(g, dead);
  return int(dead.size());
}

int remove_unused(ir::Graph& g) {
  std::set<std::string> needed(g.outputs.begin(), g.outputs.end());
  std::set<const ir::Node*> dead;
  for (auto it = g.nodes.rbegin(); it != g.nodes.rend(); ++it) {
    bool used = false;
    for (const auto& o : it->outputs) used = used || needed.count(o);
    if (!used) {
      dead.insert(&*it);
      continue;
    }
    for (const auto& in : it->inputs) needed.insert(in);
  }
  erase_marked(g, dead);
  int removed = int(dead.size());
  for (auto it = g.values.begin(); it != g.values.end();) {
    bool is_input = std::find(g.inputs.begin(), g.inputs.end(), it->first) != g.inputs.end();
    if (!needed.count(it->first) && !is_input) it = g.values.erase(it);
    else ++it;
  }
  return removed;
}

std::vector<PassCount> optimize(ir::Graph& g, const Options& o) {
  std::vector<PassCount> report;
  report.push_back({"remove Identity/Dropout", remove_identities(g)});
  if (int n = expand_dynamic_quantize_matmul(g))
    report.push_back({"expand DynamicQuantizeMatMul", n});
  if (o.fuse_qdq) {
    // Weights stay DequantizeLinear(int8 constant) until the node units are matched;
    // whatever is left unmatched is folded to float right after.
    fold_constants(g, {"DequantizeLinear"});
    report.push_back({"fuse QDQ node units into INT8 ops", fuse_qdq(g)});
  }
  report.push_back({"fold constants", fold_constants(g)});
  report.push_back({"remove Pad by zeros", remove_zero_pads(g)});
  report.push_back({"fold Pad into Conv / AveragePool padding", fold_pads_into_windows(g)});
  report.push_back({"fold BatchNorm into Conv", fold_batchnorm(g)});
  if (o.fuse_dynamic)
    report.push_back({"fuse dynamic quantization into integer-to-float steps", fuse_dynamic_quantization(g)});
  if (o.fuse_decompositions) {
    report.push_back({"fuse GELU chains (Erf or Tanh form) into Gelu", fuse_gelu(g)});
    report.push_back({"fuse decomposed LayerNormalization", fuse_layer_norm(g)});
  }
  if (o.fuse_activations) report.push_back({"fuse bias Add into MatMul", fuse_matmul_bias(g)});
  if (o.fuse_activations) report.push_back({"fuse activations into Conv/ConvTranspose/Gemm", fuse_activations(g)});
  if (o.fuse_activations) report.push_back({"fuse other SiLUs (Sigmoid, Mul) into one step", fuse_standalone_silu(g)});
  if (o.fuse_activations && o.fuse_squeeze_excitation)
    report.push_back({"fuse squeeze-excitation blocks", fuse_squeeze_excitation(g)});
  report.push_back({"remove unused nodes", remove_unused(g)});
  // After remove_unused: fuse_qdq leaves the DequantizeLinear nodes it bypassed reading the
  // chain's tensors until then, which would hide that each link has one reader.
  if (o.fuse_activations && o.fuse_pointwise_depthwise)
    report.push_back({"fuse 1x1 + depthwise Conv pairs", fuse_pointwise_depthwise(g)});
  if (o.fuse_channel_shuffle) {
    report.push_back({"fuse channel shuffles", fuse_channel_shuffle(g)});
    report.push_back({"fuse Reshape + Transpose pairs", fuse_reshape_transpose(g)});
  }
  if (o.fuse_qdq && o.fuse_activations) {
    report.push_back({"fuse INT8 SiLU and hard swish (Sigmoid or HardSigmoid, Mul) into tables", fuse_qlinear_silu(g)});
    report.push_back({"fuse float chains between DequantizeLinear and QuantizeLinear into tables",
                      fuse_qdq_float_chains(g)});
    report.push_back({"fuse float BatchNormalization between DequantizeLinear and QuantizeLinear", fuse_qdq_batchnorm(g)});
    report.push_back({"fuse INT8 table lookups into QLinearConv", fuse_conv_output_tables(g)});
    report.push_back({"fuse QLinearConcat requantization into QLinearConv", fuse_concat_requantization(g)});
  }
  if (o.fuse_dynamic)
    report.push_back({"gather DynamicQuantizeLinear ranges in their producers", compute_ranges_in_producers(g)});
  return report;
}

}  // namespace octet::passes
