// fuse_qdq: QDQ node units into INT8 ops, the way ONNX Runtime's CPU provider fuses them, so
// that a QDQ model (octet's own export or one written by onnxruntime.quantization) runs in
// integers and agrees with ORT. A node unit is an op whose float inputs all come from
// DequantizeLinear and whose single output feeds exactly one QuantizeLinear:
//
//   DQ(x) ─┐
//   DQ(w) ─┼─ Conv ─(Relu|Clip)─ Q   ==>   QLinearConv(x, w, bias_int32) with Q's scale/zp
//   DQ(b) ─┘
//
// A Relu (Clip) between the op and Q is dropped when Q's own clamp already does its work:
// Relu when Q's zero point is the type's minimum (so q >= zp means real >= 0), Clip when the
// range Q can represent lies inside [min, max]. Units that do not match stay in float between
// their Q/DQ pairs; fold_constants then turns the weights' DequantizeLinear into float.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string_view>

#include "core/int8_ops.h"
#include "engine/graph_edit.h"
#include "engine/passes.h"
#include "kernels/ref/qmath.h"

namespace octet::passes {
namespace {

using graph_edit::add_constant;
using graph_edit::is_8bit;
using graph_edit::producer_of;
using graph_edit::sole_consumer;
using ir::DType;

const ir::TensorData* constant_of(const ir::Graph& g, const std::string& name) {
  if (name.empty() || !g.is_constant(name)) return nullptr;
  return &*g.value(name).constant;
}

std::optional<DType> output_type(ir::Graph& g, const ir::Node& n);

// The element type of a tensor that a DequantizeLinear reads: a constant's, a graph
// input's, what a QuantizeLinear writes (its zero point's type, uint8 without one), what a
// QOperator node of the file writes (its y zero point's type), or what a unit fused earlier
// in this pass writes (recorded in its value's dtype).
std::optional<DType> quantized_type(ir::Graph& g, const std::string& name) {
  if (const auto* c = constant_of(g, name)) return c->dtype;
  if (std::find(g.inputs.begin(), g.inputs.end(), name) != g.inputs.end()) return g.value(name).dtype;
  const ir::Node* p = producer_of(g, name);
  if (p && p->op == "QuantizeLinear" && p->domain.empty()) {
    if (!p->has_input(2)) return DType::u8;
    if (const auto* zp = constant_of(g, p->input(2))) return zp->dtype;
  }
  if (const int8::Int8Op* q = p ? int8::find(p->op) : nullptr; q && q->has_slot("y_zero_point"))
    if (auto t = output_type(g, *p); t && is_8bit(*t)) return t;
  if (auto it = g.values.find(name); it != g.values.end() && is_8bit(it->second.dtype)) return it->second.dtype;
  return std::nullopt;
}

// Scale and zero point of a Q or DQ node, both constants. per_tensor: one value each.
struct QuantArgs {
  std::string data;     // the quantized tensor (DQ's input, Q's output)
  std::string scale, zero_point;
  DType type = DType::u8;
  const ir::TensorData* scale_c = nullptr;
  const ir::TensorData* zp_c = nullptr;  // nullptr: no zero point (0)
  int64_t axis = 1;
  int64_t count() const { return scale_c->count(); }
  int32_t zp = 0;  // the (first) zero point; the units that read it are per tensor
  float scale_at(int64_t i) const { return scale_c->as<float>()[scale_c->count() == 1 ? 0 : i]; }
};

std::optional<QuantArgs> quant_args(ir::Graph& g, const ir::Node& n, const std::string& data, DType type) {
  QuantArgs a;
  a.data = data;
  a.type = type;
  a.scale = n.input(1);
  a.scale_c = constant_of(g, a.scale);
  if (!a.scale_c || a.scale_c->dtype != DType::f32 || a.scale_c->dims.size() > 1) return std::nullopt;
  if (n.has_input(2)) {
    a.zero_point = n.input(2);
    a.zp_c = constant_of(g, a.zero_point);
    if (!a.zp_c || a.zp_c->count() != a.scale_c->count() || a.zp_c->dtype != type) return std::nullopt;
    if (a.zp_c->count() > 0) a.zp = int32_t(a.zp_c->to_i64()[0]);
  }
  a.axis = n.attrs.i("axis", 1);
  for (float s : a.scale_c->values<float>())
    if (!(s > 0) || !std::isfinite(s)) return std::nullopt;
  return a;
}

// The DequantizeLinear producing `name`, when its parameters are constants.
std::optional<QuantArgs> dq_input(ir::Graph& g, const std::string& name) {
  const ir::Node* p = producer_of(g, name);
  if (!p || p->op != "DequantizeLinear" || !p->domain.empty()) return std::nullopt;
  auto type = quantized_type(g, p->input(0));
  if (!type || !(is_8bit(*type) || *type == DType::s32)) return std::nullopt;
  return quant_args(g, *p, p->input(0), *type);
}

std::optional<QuantArgs> per_tensor_dq(ir::Graph& g, const std::string& name) {
  auto a = dq_input(g, name);
  if (!a || a->count() != 1 || !is_8bit(a->type)) return std::nullopt;
  return a;
}

// The QuantizeLinear that is the only reader of `name`, possibly through a Relu or Clip
// that its clamp makes redundant. `removed` receives the nodes the unit absorbs.
std::optional<QuantArgs> q_output(ir::Graph& g, const std::string& name, std::vector<const ir::Node*>& removed) {
  ir::Node* c = sole_consumer(g, name);
  ir::Node* act = nullptr;
  if (c && (c->op == "Relu" || c->op == "Clip") && c->domain.empty()) {
    act = c;
    c = sole_consumer(g, act->outputs[0]);
  }
  if (!c || c->op != "QuantizeLinear" || !c->domain.empty()) return std::nullopt;
  DType type = DType::u8;
  if (c->has_input(2)) {
    const auto* zp = constant_of(g, c->input(2));
    if (!zp) return std::nullopt;
    type = zp->dtype;
  }
  if (!is_8bit(type)) return std::nullopt;
  auto q = quant_args(g, *c, c->outputs[0], type);
  if (!q || q->count() != 1) return std::nullopt;
  if (act) {
    const int32_t qmin = type == DType::u8 ? 0 : -128, qmax = type == DType::u8 ? 255 : 127;
    const float lowest = q->scale_at(0) * float(qmin - q->zp);
    const float highest = q->scale_at(0) * float(qmax - q->zp);
    if (act->op == "Relu") {
      if (q->zp != qmin) return std::nullopt;
    } else {
      float lo = -INFINITY, hi = INFINITY;
      for (size_t i = 1; i <= 2; ++i) {
        if (!act->has_input(i)) continue;
        const auto* b = constant_of(g, act->input(i));
        if (!b || b->dtype != DType::f32 || b->count() != 1) return std::nullopt;
        (i == 1 ? lo : hi) = b->as<float>()[0];
      }
      if (!(lo <= lowest && highest <= hi)) return std::nullopt;
    }
    removed.push_back(act);
  }
  removed.push_back(c);
  return q;
}

std::string zero_point_name(ir::Graph& g, const QuantArgs& a, const std::string& hint) {
  if (!a.zero_point.empty()) return a.zero_point;
  return add_constant(g, hint, ir::TensorData::make(a.type, {}));
}

// A float bias quantized as ORT's quantizer does it (kernels::quantize_bias_value).
std::string quantize_bias(ir::Graph& g, const ir::TensorData& b, const QuantArgs& x, const QuantArgs& w,
                          const std::string& hint) {
  ir::TensorData q = ir::TensorData::make(DType::s32, b.dims);
  for (int64_t c = 0; c < b.count(); ++c)
    q.as<int32_t>()[c] = kernels::quantize_bias_value(b.as<float>()[c], x.scale_at(0) * w.scale_at(c));
  return add_constant(g, hint, std::move(q));
}

// The int32 bias of a conv or gemm unit: a DequantizeLinear of an int32 constant (used as
// is, like ORT), or a float constant quantized here. "" when there is none; nullopt when
// the bias cannot be expressed.
std::optional<std::string> int32_bias(ir::Graph& g, const ir::Node& n, size_t slot, const QuantArgs& x,
                                      const QuantArgs& w, int64_t channels) {
  if (!n.has_input(slot)) return std::string();
  const std::string& name = n.input(slot);
  if (auto b = dq_input(g, name)) {
    const auto* c = constant_of(g, b->data);
    if (!c || b->type != DType::s32 || c->count() != channels) return std::nullopt;
    return b->data;
  }
  const auto* f = constant_of(g, name);
  if (!f || f->dtype != DType::f32 || f->count() != channels) return std::nullopt;
  return quantize_bias(g, *f, x, w, n.name + ".bias_int32");
}

// Weights quantized per tensor, or per channel along `axis` with `channels` values.
bool weights_fit(const QuantArgs& w, int64_t axis, int64_t channels, int64_t rank) {
  if (!is_8bit(w.type)) return false;
  if (w.count() == 1) return true;
  const int64_t a = w.axis < 0 ? w.axis + rank : w.axis;
  return a == axis && w.count() == channels;
}

// A fused node's inputs, placed by the names of its row's slots (core/int8_ops.cc).
class SlotInputs {
 public:
  SlotInputs(ir::Graph& g, const ir::Node& n, const int8::Int8Op& op) : g_(g), n_(n), op_(op), names_(op.slots.size()) {}
  SlotInputs& set(std::string_view slot, std::string name) {
    names_[op_.slot(slot)] = std::move(name);
    return *this;
  }
  // `tensor`, `tensor`_scale and `tensor`_zero_point (a zero constant when the Q/DQ had none).
  SlotInputs& set_quantized(const std::string& tensor, const QuantArgs& a) {
    set(tensor, a.data);
    return set_parameters(tensor, a);
  }
  SlotInputs& set_parameters(const std::string& tensor, const QuantArgs& a) {
    set(tensor + "_scale", a.scale);
    return set(tensor + "_zero_point", zero_point_name(g_, a, n_.name + "." + tensor + "_zero_point"));
  }
  // The inputs in order, without the omitted ones at the end.
  std::vector<std::string> take() {
    while (!names_.empty() && names_.back().empty()) names_.pop_back();
    return std::move(names_);
  }

 private:
  ir::Graph& g_;
  const ir::Node& n_;
  const int8::Int8Op& op_;
  std::vector<std::string> names_;
};

void become(ir::Node& n, const int8::Int8Op& op, std::vector<std::string> inputs, const std::string& output) {
  n.op = op.op;
  n.domain = op.domain;
  n.inputs = std::move(inputs);
  n.outputs = {output};
}

bool fuse_conv(ir::Graph& g, ir::Node& n, const int8::Int8Op& q, std::vector<const ir::Node*>& removed) {
  auto x = per_tensor_dq(g, n.input(0));
  auto w = dq_input(g, n.input(1));
  if (!x || !w || !constant_of(g, w->data)) return false;
  const auto& wd = constant_of(g, w->data)->dims;
  const int64_t channels = wd.empty() ? 0 : wd[0];
  if (!weights_fit(*w, 0, channels, int64_t(wd.size()))) return false;
  auto bias = int32_bias(g, n, 2, *x, *w, channels);
  if (!bias) return false;
  auto y = q_output(g, n.outputs[0], removed);
  if (!y) return false;
  SlotInputs in(g, n, q);
  in.set_quantized("x", *x).set_quantized("w", *w).set_parameters("y", *y).set("bias", *bias);
  become(n, q, in.take(), y->data);
  return true;
}

bool fuse_gemm(ir::Graph& g, ir::Node& n, const int8::Int8Op& q, std::vector<const ir::Node*>& removed) {
  if (n.attrs.i("transA", 0) != 0 || (n.has_input(2) && n.attrs.f("beta", 1.0f) != 1.0f)) return false;
  auto a = per_tensor_dq(g, n.input(0));
  auto b = dq_input(g, n.input(1));
  if (!a || !b || !constant_of(g, b->data)) return false;
  const auto& bd = constant_of(g, b->data)->dims;
  if (bd.size() != 2) return false;
  const bool trans_b = n.attrs.i("transB", 0) != 0;
  const int64_t channels = trans_b ? bd[0] : bd[1];
  if (!weights_fit(*b, trans_b ? 0 : 1, channels, 2)) return false;
  auto bias = int32_bias(g, n, 2, *a, *b, channels);
  if (!bias) return false;
  // Without a Q after it the unit still runs in integers, with a float output (ORT does the same).
  std::vector<const ir::Node*> absorbed;
  auto y = q_output(g, n.outputs[0], absorbed);
  SlotInputs in(g, n, q);
  in.set_quantized("a", *a).set_quantized("b", *b).set("bias", *bias);
  std::string out = n.outputs[0];
  if (y) {
    in.set_parameters("y", *y);
    out = y->data;
    removed.insert(removed.end(), absorbed.begin(), absorbed.end());
  }
  ir::Attrs attrs;
  attrs.set("alpha", n.attrs.f("alpha", 1.0f));
  attrs.set("transA", int64_t{0});
  attrs.set("transB", int64_t{trans_b});
  n.attrs = attrs;
  become(n, q, in.take(), out);
  return true;
}

// B per tensor, or per column when B is a matrix [K, N] with N values along axis 1: the one
// per-column form ORT's QLinearMatMul takes from a 1-D scale (any 1-D scale of N values on a
// matrix reads as per column there, so an axis-0 scale of a square B stays in float here).
bool matmul_b_fits(ir::Graph& g, const QuantArgs& b) {
  if (!is_8bit(b.type)) return false;
  if (b.count() == 1) return true;
  const auto* c = constant_of(g, b.data);
  const std::optional<ir::Dims> dims = c ? std::optional<ir::Dims>(c->dims) : g.value(b.data).dims;
  return dims && dims->size() == 2 && weights_fit(b, 1, (*dims)[1], 2);
}

bool fuse_matmul(ir::Graph& g, ir::Node& n, const int8::Int8Op& q, std::vector<const ir::Node*>& removed) {
  auto a = per_tensor_dq(g, n.input(0));
  auto b = dq_input(g, n.input(1));
  if (!a || !b || !matmul_b_fits(g, *b)) return false;
  auto y = q_output(g, n.outputs[0], removed);
  if (!y) return false;
  SlotInputs in(g, n, q);
  in.set_quantized("a", *a).set_quantized("b", *b).set_parameters("y", *y);
  become(n, q, in.take(), y->data);
  return true;
}

// Add and Mul: both operands and the output per tensor, all of one 8-bit type (ORT's rule).
bool fuse_binary(ir::Graph& g, ir::Node& n, const int8::Int8Op& q, std::vector<const ir::Node*>& removed) {
  auto a = per_tensor_dq(g, n.input(0));
  auto b = per_tensor_dq(g, n.input(1));
  if (!a || !b || a->type != b->type) return false;
  auto y = q_output(g, n.outputs[0], removed);
  if (!y || y->type != a->type) return false;
  SlotInputs in(g, n, q);
  in.set_quantized("a", *a).set_quantized("b", *b).set_parameters("y", *y);
  become(n, q, in.take(), y->data);
  return true;
}

// GlobalAveragePool, AveragePool, Sigmoid, Softmax, HardSwish, HardSigmoid: one input, same
// type in and out; the row's fused_attrs adapts the attributes.
bool fuse_unary(ir::Graph& g, ir::Node& n, const int8::Int8Op& q, std::vector<const ir::Node*>& removed) {
  auto x = per_tensor_dq(g, n.input(0));
  if (!x) return false;
  auto y = q_output(g, n.outputs[0], removed);
  if (!y || y->type != x->type) return false;
  if (q.fused_attrs) q.fused_attrs(n, g);
  SlotInputs in(g, n, q);
  in.set_quantized("x", *x).set_parameters("y", *y);
  become(n, q, in.take(), y->data);
  return true;
}

// ReduceMean with constant, non-empty axes (the loader moved them to input 1): ORT's
// QLinearReduceMean form, axes as an attribute. An empty axes list (all axes, or none with
// noop_with_empty_axes) stays in float.
bool fuse_reduce_mean(ir::Graph& g, ir::Node& n, const int8::Int8Op& q, std::vector<const ir::Node*>& removed) {
  const ir::TensorData* axes = n.has_input(1) ? constant_of(g, n.input(1)) : nullptr;
  if (!axes || axes->count() == 0) return false;
  auto x = per_tensor_dq(g, n.input(0));
  if (!x) return false;
  auto y = q_output(g, n.outputs[0], removed);
  if (!y || y->type != x->type) return false;
  n.attrs.set("axes", axes->to_i64());
  if (n.attrs.has("noop_with_empty_axes")) n.attrs.erase("noop_with_empty_axes");
  SlotInputs in(g, n, q);
  in.set_quantized("x", *x).set_parameters("y", *y);
  become(n, q, in.take(), y->data);
  return true;
}

// Concat of per-tensor DQ inputs of one type, read by one QuantizeLinear: QLinearConcat, which
// copies the inputs whose parameters equal the output's and requantizes the others.
bool fuse_concat(ir::Graph& g, ir::Node& n, const int8::Int8Op& q, std::vector<const ir::Node*>& removed) {
  std::vector<std::string> repeated;  // the row's repeated group (x, x_scale, x_zero_point), once per input
  auto place = [&](const char* slot, std::string name) {
    const auto& group = q.repeated;
    repeated.at(repeated.size() - group.size() + size_t(std::find(group.begin(), group.end(), slot) - group.begin())) = name;
  };
  std::optional<DType> type;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    auto x = per_tensor_dq(g, n.input(i));
    if (!x || (type && x->type != *type)) return false;
    type = x->type;
    repeated.resize(repeated.size() + q.repeated.size());
    place("x", x->data);
    place("x_scale", x->scale);
    place("x_zero_point", zero_point_name(g, *x, n.name + ".x" + std::to_string(i) + "_zero_point"));
  }
  if (!type) return false;
  auto y = q_output(g, n.outputs[0], removed);
  if (!y || y->type != *type) return false;
  SlotInputs in(g, n, q);
  std::vector<std::string> inputs = in.set_parameters("y", *y).take();
  inputs.insert(inputs.end(), repeated.begin(), repeated.end());
  become(n, q, inputs, y->data);
  return true;
}

// Data movement between equal Q/DQ parameters runs on the integers: DQ -> Reshape -> Q
// becomes Reshape of the quantized tensor. Every output (Split has several) must end in its own
// QuantizeLinear with the input's parameters, so that each code comes back unchanged.
bool fuse_data_movement(ir::Graph& g, ir::Node& n, std::vector<const ir::Node*>& removed,
                        const std::vector<size_t>& data_slots = {0}) {
  auto x = per_tensor_dq(g, n.input(0));
  if (!x || n.outputs.empty()) return false;
  std::vector<std::string> data_codes;
  for (size_t slot : data_slots) {
    auto d = n.has_input(slot) ? per_tensor_dq(g, n.input(slot)) : std::nullopt;
    if (!d || d->type != x->type || d->scale_at(0) != x->scale_at(0) || d->zp != x->zp) return false;
    data_codes.push_back(d->data);
  }
  std::vector<const ir::Node*> absorbed;
  std::vector<std::string> codes;
  for (const std::string& out : n.outputs) {
    ir::Node* c = sole_consumer(g, out);
    if (!c || c->op != "QuantizeLinear") return false;
    auto y = q_output(g, out, absorbed);
    if (!y || y->type != x->type || y->scale_at(0) != x->scale_at(0) || y->zp != x->zp) return false;
    codes.push_back(y->data);
  }
  removed.insert(removed.end(), absorbed.begin(), absorbed.end());
  for (size_t i = 0; i < data_slots.size(); ++i) n.inputs[data_slots[i]] = data_codes[i];
  n.outputs = std::move(codes);
  if (n.op == "Trilu") n.attrs.set(int8::kZeroCodeAttr, int64_t(x->zp));
  return true;
}

// A scatter that replaces, or keeps the max / min, moves codes; add and mul compute on values.
bool scatters_codes(const ir::Node& n) {
  const std::string r = n.attrs.has("reduction") ? n.attrs.s("reduction") : "none";
  return r == "none" || r == "max" || r == "min";
}

// The 8-bit type a fused node writes: its y_zero_point's type (QGemm without one writes float).
std::optional<DType> output_type(ir::Graph& g, const ir::Node& n) {
  if (n.op == "Shape") return DType::s64;
  const int8::Int8Op* q = int8::find(n.op);
  if (!q || !q->has_slot("y_zero_point")) return quantized_type(g, n.input(0));  // data movement keeps its input's type
  const size_t zp_slot = q->slot("y_zero_point");
  if (!n.has_input(zp_slot) || !g.is_constant(n.input(zp_slot))) return std::nullopt;
  return g.value(n.input(zp_slot)).constant->dtype;
}

// A linear or cubic Resize between equal Q/DQ parameters stays in float: ONNX Runtime keeps that
// QDQ unit (it drops the pair only around a nearest one, which copies values), so it rounds the
// float result to a code where resizing the integers would truncate. So does a nearest one that
// extrapolates (tf_crop_and_resize): ORT's outputs there are extrapolation_value quantized, not
// its conversion to a code.
bool interpolates(const ir::Node& n) {
  if (n.op != "Resize" && n.op != "Upsample") return false;
  return (n.attrs.has("mode") && n.attrs.s("mode") != "nearest") ||
         (n.attrs.has("coordinate_transformation_mode") &&
          n.attrs.s("coordinate_transformation_mode") == "tf_crop_and_resize");
}

}  // namespace

int fuse_qdq(ir::Graph& g) {
  int fused = 0;
  std::set<const ir::Node*> dead;
  for (auto& n : g.nodes) {
    if (!n.domain.empty() || dead.count(&n) || n.outputs.empty()) continue;
    std::vector<const ir::Node*> removed;
    bool done = false;
    if (const int8::Int8Op* q = int8::fused_from(n.op)) {
      switch (q->fusion) {
        case int8::Fusion::conv: done = fuse_conv(g, n, *q, removed); break;
        case int8::Fusion::gemm: done = fuse_gemm(g, n, *q, removed); break;
        case int8::Fusion::matmul: done = fuse_matmul(g, n, *q, removed); break;
        case int8::Fusion::binary: done = fuse_binary(g, n, *q, removed); break;
        case int8::Fusion::unary: done = fuse_unary(g, n, *q, removed); break;
        case int8::Fusion::reduce: done = fuse_reduce_mean(g, n, *q, removed); break;
        case int8::Fusion::variadic: done = fuse_concat(g, n, *q, removed); break;
        case int8::Fusion::none: break;
      }
    } else if (int8::moves_data_only(n.op) && !interpolates(n)) {
      done = fuse_data_movement(g, n, removed);
    } else if (int8::scatters_data_only(n.op) && scatters_codes(n)) {
      done = fuse_data_movement(g, n, removed, {0, 2});
    } else if (n.op == "Shape") {
      // Shape does not care whether it reads the float or the quantized tensor.
      if (auto x = dq_input(g, n.input(0)); x && !constant_of(g, x->data)) {
        n.inputs[0] = x->data;
        done = true;
      }
    }
    if (!done) continue;
    ++fused;
    dead.insert(removed.begin(), removed.end());
    // The output is now what the absorbed QuantizeLinear wrote (the loader typed it float).
    for (const auto& o : n.outputs) {
      ir::Value& v = g.values[o];
      v.name = o;
      v.dims.reset();
      if (auto t = output_type(g, n)) v.dtype = *t;
    }
  }
  graph_edit::erase_marked(g, dead);
  return fused;
}

}  // namespace octet::passes
