// GELU and LayerNormalization as exporters write them before ONNX had the ops (Gelu: opset 20,
// LayerNormalization: 17), each chain rewritten into the one op octet runs on its own kernel:
//
//   GELU, erf form (torch):  x ─┬─ Div(√2) | Mul(1/√2) ─ Erf ─ Add(1) ─┐
//                               └──────────────────────────────────── Mul ─ Mul(0.5) ─ y
//     with the 0.5 multiplied in at any of the three places (x · 0.5, the bracket · 0.5, or last);
//   GELU, tanh form: the same with Tanh(√(2/π) · (x + 0.044715 · x³)) in place of the Erf,
//     x³ as Pow(x, 3), x · (x · x) or (x · x) · x;
//   LayerNormalization:  m = ReduceMean(x, trailing axes); d = x − m;
//     y = d / Sqrt(ReduceMean(Pow(d, 2) | d · d) + eps) · gamma [+ beta], gamma and beta constants.
//
// Every intermediate tensor must be read by the chain alone (and not be a graph output). An erf
// form with Div stays unfused where ONNX Runtime leaves it so (ort_fuses_erf_gelu).
// Constants are matched with a relative tolerance of 1e-4 (torch writes 1.4142135381698608).
#include <cmath>
#include <set>

#include "engine/graph_edit.h"
#include "engine/passes.h"

namespace octet::passes {
namespace {

using graph_edit::float_constant;
using graph_edit::producer_of;
using graph_edit::sole_consumer;

bool is_op(const ir::Node* n, const char* op, size_t inputs) {
  return n && n->op == op && n->domain.empty() && n->inputs.size() == inputs && n->outputs.size() == 1;
}

bool is_scalar(const ir::Graph& g, const std::string& name, double value) {
  const ir::TensorData* t = float_constant(g, name);
  if (!t || t->count() != 1) return false;
  const double v = t->as<float>()[0];
  return std::fabs(v - value) <= 1e-4 * std::fabs(value);
}

// The operand of a binary node other than `one` ("" when `one` is not an operand).
std::string other_operand(const ir::Node& n, const std::string& one) {
  if (n.inputs[0] == one) return n.inputs[1];
  if (n.inputs[1] == one) return n.inputs[0];
  return "";
}

// Mul(x, c) or Mul(c, x) with the scalar constant c: returns x, or "".
std::string mul_by(const ir::Graph& g, const ir::Node* n, double c) {
  if (!is_op(n, "Mul", 2)) return "";
  if (is_scalar(g, n->inputs[1], c)) return n->inputs[0];
  if (is_scalar(g, n->inputs[0], c)) return n->inputs[1];
  return "";
}

// From `inner` (the Erf or Tanh output) on: Add(1), then the products with x and 0.5 in any of
// their orders. Returns the node writing y, with the chain's other nodes added to `chain`.
ir::Node* gelu_tail(ir::Graph& g, const std::string& inner, const std::string& x, std::vector<ir::Node*>& chain) {
  ir::Node* add = sole_consumer(g, inner);
  if (!is_op(add, "Add", 2) || !is_scalar(g, other_operand(*add, inner), 1.0)) return nullptr;
  chain.push_back(add);
  ir::Node* m1 = sole_consumer(g, add->outputs[0]);
  if (!is_op(m1, "Mul", 2)) return nullptr;
  const std::string o = other_operand(*m1, add->outputs[0]);
  if (o == x) {  // (x · bracket) · 0.5
    ir::Node* m2 = sole_consumer(g, m1->outputs[0]);
    if (mul_by(g, m2, 0.5) != m1->outputs[0]) return nullptr;
    chain.push_back(m1);
    return m2;
  }
  if (is_scalar(g, o, 0.5)) {  // x · (bracket · 0.5)
    ir::Node* m2 = sole_consumer(g, m1->outputs[0]);
    if (!is_op(m2, "Mul", 2) || other_operand(*m2, m1->outputs[0]) != x) return nullptr;
    chain.push_back(m1);
    return m2;
  }
  ir::Node* half = producer_of(g, o);  // (x · 0.5) · bracket
  if (mul_by(g, half, 0.5) != x || sole_consumer(g, o) != m1) return nullptr;
  chain.push_back(half);
  return m1;
}

// The x of the tanh form's argument √(2/π) · (x + 0.044715 · x³), or "".
std::string tanh_gelu_input(ir::Graph& g, const std::string& arg, std::vector<ir::Node*>& chain) {
  ir::Node* scaled = producer_of(g, arg);
  const std::string sum = mul_by(g, scaled, std::sqrt(2.0 / M_PI));
  ir::Node* add = producer_of(g, sum);
  if (sum.empty() || !is_op(add, "Add", 2) || sole_consumer(g, sum) != scaled) return "";
  for (int k = 0; k < 2; ++k) {
    const std::string x = add->inputs[size_t(k)], term = add->inputs[size_t(1 - k)];
    ir::Node* mul = producer_of(g, term);
    const std::string cube = mul_by(g, mul, 0.044715);
    ir::Node* c = producer_of(g, cube);
    if (cube.empty() || sole_consumer(g, term) != add || !c || sole_consumer(g, cube) != mul) continue;
    std::vector<ir::Node*> found = {scaled, add, mul, c};
    bool ok = false;
    if (is_op(c, "Pow", 2)) {
      ok = c->inputs[0] == x && is_scalar(g, c->inputs[1], 3.0);
    } else if (is_op(c, "Mul", 2)) {
      const std::string sq = other_operand(*c, x);
      ir::Node* s = producer_of(g, sq);
      ok = is_op(s, "Mul", 2) && s->inputs[0] == x && s->inputs[1] == x && sole_consumer(g, sq) == c;
      found.push_back(s);
    }
    if (!ok) continue;
    chain.insert(chain.end(), found.begin(), found.end());
    return x;
  }
  return "";
}

// Writes op `op` over `inputs` into `last` (keeping its outputs and place in the order) and
// marks the rest of the chain dead.
void replace_chain(ir::Node& last, const std::string& op, std::vector<std::string> inputs,
                   const std::vector<ir::Node*>& chain, std::set<const ir::Node*>& dead) {
  last.op = op;
  last.domain.clear();
  last.inputs = std::move(inputs);
  last.attrs = {};
  for (ir::Node* n : chain)
    if (n != &last) dead.insert(n);
}

// ReduceMean over trailing axes with keepdims: how many (k, the normalised rank), or 0.
int trailing_mean_axes(const ir::Graph& g, const ir::Node* n) {
  if (!n || n->op != "ReduceMean" || !n->domain.empty() || n->outputs.size() != 1) return 0;
  if (n->attrs.i("keepdims", 1) != 1 || !n->has_input(1) || !g.is_constant(n->input(1))) return 0;
  std::vector<int64_t> axes = g.value(n->input(1)).constant->to_i64();
  const auto x = g.values.find(n->input(0));
  const int64_t rank = x == g.values.end() || !x->second.dims ? 0 : int64_t(x->second.dims->size());
  std::set<int64_t> set;
  for (int64_t a : axes) {
    if (a >= 0 && rank == 0) return 0;  // a positive axis needs the rank
    set.insert(a < 0 ? a : a - rank);
  }
  const int k = int(set.size());
  if (k == 0 || *set.begin() != -k || *set.rbegin() != -1) return 0;
  return k;
}

// Whether ONNX Runtime's GeluFusion turns this erf-form chain into its Gelu, which computes
// erf(x * (1/√2)): otherwise ORT runs the chain's ops, and a Div by √2 rounds differently from
// that product, so octet keeps the ops too (the Mul(1/√2) form computes the same either way).
// ORT fuses a Div(√2) chain only in its two patterns: (x · 0.5) · bracket, and (x · bracket) · 0.5
// where no parent of the product x · bracket is a Mul (it takes such a parent for the first
// pattern's x · 0.5 and gives up): not when x is itself a Mul's output, as a squeeze-excitation
// block's gated features are (fastvit's final conv), nor for x · (bracket · 0.5).
bool ort_fuses_erf_gelu(ir::Graph& g, const std::string& x, const ir::Node& scale, const ir::Node& add) {
  if (scale.op != "Div") return true;
  const ir::Node* product = sole_consumer(g, add.outputs[0]);
  const std::string other = other_operand(*product, add.outputs[0]);
  if (other == x) return !is_op(producer_of(g, x), "Mul", 2);
  const ir::Node* half = producer_of(g, other);
  return half && mul_by(g, half, 0.5) == x;
}

}  // namespace

int fuse_gelu(ir::Graph& g) {
  std::set<const ir::Node*> dead;
  int fused = 0;
  for (auto& n : g.nodes) {
    if (dead.count(&n) || !n.domain.empty() || n.outputs.size() != 1 || (n.op != "Erf" && n.op != "Tanh") ||
        n.inputs.size() != 1)
      continue;
    std::vector<ir::Node*> chain = {&n};
    std::string x;
    const bool tanh_form = n.op == "Tanh";
    if (tanh_form) {
      x = tanh_gelu_input(g, n.inputs[0], chain);
    } else {
      ir::Node* scale = producer_of(g, n.inputs[0]);
      if (scale && sole_consumer(g, n.inputs[0]) == &n) {
        if (is_op(scale, "Div", 2) && is_scalar(g, scale->inputs[1], std::sqrt(2.0))) x = scale->inputs[0];
        else x = mul_by(g, scale, std::sqrt(0.5));
        chain.push_back(scale);
      }
    }
    if (x.empty()) continue;
    ir::Node* last = gelu_tail(g, n.outputs[0], x, chain);
    if (!last) continue;
    if (!tanh_form && !ort_fuses_erf_gelu(g, x, *chain[1], *chain[2])) continue;
    bool clash = false;
    for (ir::Node* c : chain) clash = clash || dead.count(c);
    if (clash || dead.count(last)) continue;
    chain.push_back(last);
    replace_chain(*last, "Gelu", {x}, chain, dead);
    last->attrs.set("approximate", std::string(tanh_form ? "tanh" : "none"));
    ++fused;
  }
  graph_edit::erase_marked(g, dead);
  return fused;
}

int fuse_layer_norm(ir::Graph& g) {
  std::set<const ir::Node*> dead;
  int fused = 0;
  for (auto& mean : g.nodes) {
    const int k = trailing_mean_axes(g, &mean);
    if (!k || dead.count(&mean)) continue;
    const std::string x = mean.inputs[0];
    ir::Node* sub = sole_consumer(g, mean.outputs[0]);
    if (!is_op(sub, "Sub", 2) || sub->inputs[0] != x || sub->inputs[1] != mean.outputs[0]) continue;
    const std::string d = sub->outputs[0];
    if (g.is_graph_output(d)) continue;
    ir::Node *square = nullptr, *div = nullptr;
    bool other = false;
    for (size_t i : g.consumers(d)) {
      ir::Node* c = &g.nodes[i];
      if (is_op(c, "Pow", 2) && c->inputs[0] == d && is_scalar(g, c->inputs[1], 2.0) && !square) square = c;
      else if (is_op(c, "Mul", 2) && c->inputs[0] == d && c->inputs[1] == d && (!square || square == c)) square = c;
      else if (is_op(c, "Div", 2) && c->inputs[0] == d && c->inputs[1] != d && !div) div = c;
      else other = true;
    }
    if (other || !square || !div) continue;
    ir::Node* var = sole_consumer(g, square->outputs[0]);
    if (trailing_mean_axes(g, var) != k || var->inputs[0] != square->outputs[0]) continue;
    ir::Node* add_eps = sole_consumer(g, var->outputs[0]);
    if (!is_op(add_eps, "Add", 2)) continue;
    const ir::TensorData* eps = float_constant(g, other_operand(*add_eps, var->outputs[0]));
    if (!eps || eps->count() != 1) continue;
    ir::Node* sqrt = sole_consumer(g, add_eps->outputs[0]);
    if (!is_op(sqrt, "Sqrt", 1) || sole_consumer(g, sqrt->outputs[0]) != div || div->inputs[1] != sqrt->outputs[0])
      continue;
    ir::Node* mul = sole_consumer(g, div->outputs[0]);
    if (!is_op(mul, "Mul", 2)) continue;
    const std::string gamma = other_operand(*mul, div->outputs[0]);
    if (!float_constant(g, gamma)) continue;
    std::vector<ir::Node*> chain = {&mean, sub, square, div, var, add_eps, sqrt, mul};
    std::vector<std::string> inputs = {x, gamma};
    ir::Node* last = mul;
    if (ir::Node* add = sole_consumer(g, mul->outputs[0]); is_op(add, "Add", 2)) {
      const std::string beta = other_operand(*add, mul->outputs[0]);
      if (float_constant(g, beta)) {
        inputs.push_back(beta);
        chain.push_back(add);
        last = add;
      }
    }
    bool clash = false;
    for (ir::Node* c : chain) clash = clash || dead.count(c);
    if (clash) continue;
    const float epsilon = eps->as<float>()[0];
    replace_chain(*last, "LayerNormalization", inputs, chain, dead);
    last->attrs.set("axis", int64_t(-k));
    last->attrs.set("epsilon", epsilon);
    ++fused;
  }
  graph_edit::erase_marked(g, dead);
  return fused;
}

}  // namespace octet::passes
