#include "apps/explain/differences.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <set>

namespace octet::explain {

using json = nlohmann::json;

namespace {

bool is_qdq(const std::string& op) {
  return op == "QuantizeLinear" || op == "DequantizeLinear" || op == "DynamicQuantizeLinear";
}

// The name a node has in both models: the dynamic quantizer's integer form of X is "X_quant".
std::string node_key(std::string name) {
  const std::string suffix = "_quant";
  if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
    name.resize(name.size() - suffix.size());
  return name;
}

bool is_overhead(const StepProfile& s) {
  return s.category == Category::quantize || s.category == Category::dynamic_range;
}

// The step's share of time spent quantizing: the whole of a quantize step, the range pass of
// another (a fused dynamic quantization).
double overhead_us(const StepProfile& s) { return is_overhead(s) ? s.us : s.range_us; }

// The group's ONNX nodes other than Q/DQ and Constant, as a row names them: FP32's (the model's own nodes)
// when the FP32 plan runs the group, else INT8's; each once, in plan order.
std::vector<StepProfile::Source> group_nodes(const std::vector<const StepProfile*>& fp32,
                                             const std::vector<const StepProfile*>& int8) {
  std::vector<StepProfile::Source> out;
  std::set<std::string> seen;
  for (const auto* side : {&fp32, &int8}) {
    for (const StepProfile* s : *side)
      for (const auto& n : s->sources)
        if (!is_qdq(n.op) && n.op != "Constant" && seen.insert(node_key(n.name)).second) out.push_back(n);
    if (!out.empty()) break;
  }
  return out;
}

// "Conv_12 (+BatchNormalization, Relu)": the node of the group's main INT8 step, and the op
// types of the others.
std::string group_label(const std::vector<StepProfile::Source>& nodes, const StepProfile& main) {
  if (nodes.empty()) return main.node;
  const std::vector<std::string> named = step_nodes(main.node);
  size_t at = nodes.size();
  for (size_t i = 0; i < nodes.size() && !named.empty(); ++i)
    if (node_key(nodes[i].name) == node_key(named[0])) at = i;
  static const std::set<std::string> kDense = {"Conv", "ConvTranspose", "Gemm", "MatMul"};
  for (size_t i = 0; i < nodes.size() && at == nodes.size(); ++i)
    if (kDense.count(nodes[i].op)) at = i;
  if (at == nodes.size()) at = 0;
  std::string label = nodes[at].name, others;
  constexpr size_t kShown = 6;
  size_t shown = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (i == at) continue;
    if (shown++ == kShown) {
      others += fmt::format(", +{} more", nodes.size() - 1 - kShown);
      break;
    }
    others += (others.empty() ? "" : ", ") + nodes[i].op;
  }
  return others.empty() ? label : label + " (+" + others + ")";
}

}  // namespace

std::vector<std::string> step_nodes(const std::string& step) {
  std::vector<std::string> nodes;
  size_t from = 0;
  for (;;) {
    const size_t plus = step.find('+', from);
    std::string node = node_key(step.substr(from, plus == std::string::npos ? std::string::npos : plus - from));
    if (!node.empty()) nodes.push_back(std::move(node));
    if (plus == std::string::npos) return nodes;
    from = plus + 1;
  }
}

void assign_sources(std::vector<StepProfile>& steps, const ir::Graph& model) {
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < model.nodes.size(); ++i)
    for (const auto& o : model.nodes[i].outputs)
      if (!o.empty()) producer[o] = i;
  std::set<std::string> written;
  for (const auto& s : steps) written.insert(s.outputs.begin(), s.outputs.end());
  for (auto& s : steps) {
    std::set<size_t> found;
    std::vector<std::string> todo = s.outputs;
    while (!todo.empty()) {
      const std::string value = std::move(todo.back());
      todo.pop_back();
      const auto it = producer.find(value);
      if (it == producer.end() || !found.insert(it->second).second) continue;
      for (const auto& in : model.nodes[it->second].inputs)
        if (!in.empty() && !written.count(in) && !model.is_constant(in)) todo.push_back(in);
    }
    s.sources.clear();
    for (size_t i : found) s.sources.push_back({model.nodes[i].name, model.nodes[i].op});
  }
}

std::vector<CoFusionGroup> co_fusion_groups(const std::vector<StepProfile>& fp32, const std::vector<StepProfile>& int8) {
  const size_t first_int8 = fp32.size(), count = fp32.size() + int8.size();
  auto step = [&](size_t id) -> const StepProfile& { return id < first_int8 ? fp32[id] : int8[id - first_int8]; };
  std::vector<size_t> parent(count);
  std::iota(parent.begin(), parent.end(), size_t{0});
  auto find = [&](size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  auto unite = [&](size_t a, size_t b) { parent[find(a)] = find(b); };

  // Steps of either plan that run the same node are one group.
  std::map<std::string, std::vector<size_t>> runs;
  std::map<std::string, unsigned> plans;  // bit 0: the FP32 plan runs the node, bit 1: the INT8 plan
  for (size_t id = 0; id < count; ++id)
    for (const auto& n : step(id).sources) {
      if (is_qdq(n.op)) continue;
      const std::string key = node_key(n.name);
      runs[key].push_back(id);
      plans[key] |= id < first_int8 ? 1u : 2u;
    }
  for (const auto& [key, ids] : runs)
    for (size_t id : ids) unite(id, ids[0]);

  // Steps sharing no node with the other plan join a neighbour in their own plan.
  const size_t plan_begin[2] = {0, first_int8}, plan_end[2] = {first_int8, count};
  auto reader_after = [&](size_t id, const std::vector<std::string>& values) -> std::optional<size_t> {
    const int p = id < first_int8 ? 0 : 1;
    for (size_t j = id + 1; j < plan_end[p]; ++j)
      for (const auto& in : step(j).inputs)
        if (std::find(values.begin(), values.end(), in) != values.end()) return j;
    return std::nullopt;
  };
  auto writer_before = [&](size_t id) -> std::optional<size_t> {
    const int p = id < first_int8 ? 0 : 1;
    for (const auto& in : step(id).inputs)
      for (size_t j = id; j-- > plan_begin[p];) {
        const auto& out = step(j).outputs;
        if (std::find(out.begin(), out.end(), in) != out.end()) return j;
      }
    return std::nullopt;
  };
  for (size_t id = 0; id < count; ++id) {
    const StepProfile& s = step(id);
    bool shared = false;
    for (const auto& n : s.sources) shared |= !is_qdq(n.op) && plans[node_key(n.name)] == 3u;
    if (shared) continue;
    std::optional<size_t> target;
    if (s.sources.empty() && s.op.rfind("Relayout", 0) == 0) {
      target = reader_after(id, s.inputs);  // its readers name the value it relayouts
      if (!target) target = writer_before(id);  // a graph output's
    } else if (s.sources.empty() || s.op == "QuantizeLinear" || s.op == "DynamicQuantizeLinear") {
      target = reader_after(id, s.outputs);
      // A quantize-dequantize round trip between two float steps drains the first.
      if (!target || (is_qdq(step(*target).op) && writer_before(id))) target = writer_before(id);
    } else {
      target = writer_before(id);
      if (!target) target = reader_after(id, s.outputs);
    }
    if (target) unite(id, *target);
  }

  std::map<size_t, size_t> index_of;  // root -> group
  std::vector<CoFusionGroup> groups;
  auto group_of = [&](size_t id) -> CoFusionGroup& {
    const auto [it, added] = index_of.emplace(find(id), groups.size());
    if (added) groups.emplace_back();
    return groups[it->second];
  };
  for (size_t i = 0; i < int8.size(); ++i) group_of(first_int8 + i).int8.push_back(i);
  for (size_t i = 0; i < fp32.size(); ++i) group_of(i).fp32.push_back(i);
  return groups;
}

json int8_differences(const std::string& precision, kernels::Isa isa, const std::vector<StepProfile>& fp32,
                      const std::vector<StepProfile>& int8, size_t limit) {
  std::vector<std::pair<double, json>> rows;
  for (const CoFusionGroup& g : co_fusion_groups(fp32, int8)) {
    if (g.int8.empty()) continue;
    std::vector<const StepProfile*> f, q;
    for (size_t i : g.fp32) f.push_back(&fp32[i]);
    for (size_t i : g.int8) q.push_back(&int8[i]);
    double int8_us = 0, fp32_us = 0, overhead = 0;
    std::string overhead_ops;
    for (const auto* s : q) {
      int8_us += s->us;
      overhead += overhead_us(*s);
      if (overhead_us(*s) > 0) overhead_ops += (overhead_ops.empty() ? "" : ", ") + s->op;
    }
    for (const auto* s : f) fp32_us += s->us;
    const double delta = int8_us - fp32_us;
    if (delta <= 0) continue;

    // The reason comes from the group's main INT8 step (its heaviest that is neither a
    // quantize step nor a relayout; a scalar fallback first), against the FP32 steps' sum.
    auto heavier = [](const StepProfile* a, const StepProfile* b) { return a->us < b->us; };
    const StepProfile* main = nullptr;
    for (const auto* s : q)
      if (!is_overhead(*s) && s->category != Category::layout && (!main || s->us > main->us)) main = s;
    if (!main) main = *std::max_element(q.begin(), q.end(), heavier);
    for (const auto* s : q)
      if (s->scalar && isa != kernels::Isa::scalar && (!main->scalar || s->us > main->us)) main = s;
    StepProfile fp32_side;
    if (!f.empty()) {
      fp32_side = **std::max_element(f.begin(), f.end(), heavier);
      fp32_side.us = fp32_us;
      fp32_side.macs = 0;
      fp32_side.kernel.clear();
      for (const auto* s : f) {
        fp32_side.macs += s->macs;
        fp32_side.scalar |= s->scalar;
        if (s->category != Category::layout)
          fp32_side.kernel += (fp32_side.kernel.empty() ? "" : ", ") + s->kernel;
      }
    }
    StepPair pair;
    pair.int8 = main;
    pair.fp32 = f.empty() ? nullptr : &fp32_side;
    pair.overhead_us = overhead;
    pair.overhead_ops = overhead_ops;
    pair.delta_us = delta;
    std::string reason = slowdown_reason(pair, isa);
    std::string op;
    for (const auto* s : q) op += (op.empty() ? "" : " + ") + s->op;
    if (q.size() > 1 || f.size() > 1)
      reason = fmt::format("INT8 runs these nodes as {} step(s) (main: {}), FP32 as {}: {}", q.size(), main->op,
                           f.size(), reason);
    const std::vector<StepProfile::Source> nodes = group_nodes(f, q);
    json names = json::array();
    for (const auto& n : nodes) names.push_back(n.name);
    json row = {{"precision", precision}, {"isa", kernels::isa_name(isa)}, {"node", group_label(nodes, *main)},
                {"op", op}, {"nodes", names}, {"int8_us", int8_us}, {"delta_us", delta}, {"reason", reason},
                {"int8_steps", q.size()}, {"fp32_steps", f.size()}, {"overhead_us", overhead},
                {"step_indices", {{"fp32", g.fp32}, {"int8", g.int8}}}};
    row["fp32_us"] = f.empty() ? json(nullptr) : json(fp32_us);
    rows.emplace_back(delta, std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  json out = json::array();
  for (size_t i = 0; i < rows.size() && i < limit; ++i) out.push_back(std::move(rows[i].second));
  return out;
}

}  // namespace octet::explain
