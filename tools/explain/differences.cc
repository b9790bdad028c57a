#include "tools/explain/differences.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace octet::explain {

using json = nlohmann::json;

std::vector<std::string> step_nodes(const std::string& step) {
  std::vector<std::string> nodes;
  size_t from = 0;
  for (;;) {
    const size_t plus = step.find('+', from);
    std::string node = step.substr(from, plus == std::string::npos ? std::string::npos : plus - from);
    const std::string suffix = "_quant";
    if (node.size() > suffix.size() && node.compare(node.size() - suffix.size(), suffix.size(), suffix) == 0)
      node.resize(node.size() - suffix.size());
    if (!node.empty()) nodes.push_back(std::move(node));
    if (plus == std::string::npos) return nodes;
    from = plus + 1;
  }
}

json int8_differences(const std::string& precision, kernels::Isa isa, const std::vector<StepProfile>& fp32,
                      const std::vector<StepProfile>& int8, size_t limit) {
  std::map<std::string, std::string> parent;  // union-find over node names
  auto find = [&](std::string n) {
    while (parent.count(n) && parent[n] != n) n = parent[n];
    return n;
  };
  auto unite = [&](const std::vector<std::string>& nodes) {
    for (const auto& n : nodes)
      if (!parent.count(n)) parent[n] = n;
    for (size_t i = 1; i < nodes.size(); ++i) parent[find(nodes[i])] = find(nodes[0]);
  };
  for (const auto* plan : {&fp32, &int8})
    for (const auto& s : *plan) unite(step_nodes(s.node));

  struct Group {
    std::vector<const StepProfile*> fp32, int8;
  };
  std::map<std::string, Group> groups;
  std::vector<std::string> order;  // groups in the INT8 plan's order
  auto group_of = [&](const StepProfile& s) {
    const std::vector<std::string> nodes = step_nodes(s.node);
    return nodes.empty() ? "step " + s.node : find(nodes[0]);
  };
  for (const auto& s : int8) {
    const std::string g = group_of(s);
    if (!groups.count(g)) order.push_back(g);
    groups[g].int8.push_back(&s);
  }
  for (const auto& s : fp32)
    if (auto it = groups.find(group_of(s)); it != groups.end()) it->second.fp32.push_back(&s);

  std::vector<std::pair<double, json>> rows;
  for (const std::string& key : order) {
    const Group& g = groups[key];
    double int8_us = 0, fp32_us = 0;
    for (const auto* s : g.int8) int8_us += s->us;
    for (const auto* s : g.fp32) fp32_us += s->us;
    const double delta = int8_us - fp32_us;
    if (delta <= 0) continue;
    // The reason is the heaviest INT8 step's, against the FP32 step of its group (their sum
    // when the FP32 plan runs the group in several).
    const StepProfile* heaviest = *std::max_element(
        g.int8.begin(), g.int8.end(), [](const StepProfile* a, const StepProfile* b) { return a->us < b->us; });
    StepProfile fp32_side;
    const StepProfile* f = nullptr;
    if (g.fp32.size() == 1) {
      f = g.fp32[0];
    } else if (!g.fp32.empty()) {
      fp32_side = *g.fp32[0];
      for (size_t i = 1; i < g.fp32.size(); ++i) {
        fp32_side.us += g.fp32[i]->us;
        fp32_side.macs += g.fp32[i]->macs;
        fp32_side.scalar |= g.fp32[i]->scalar;
        fp32_side.kernel += ", " + g.fp32[i]->kernel;
      }
      f = &fp32_side;
    }
    std::string reason = slowdown_reason({heaviest, f}, isa);
    std::string node = heaviest->node, op = heaviest->op;
    if (g.int8.size() > 1 || g.fp32.size() > 1) {
      std::string int8_nodes;
      for (const auto* s : g.int8) int8_nodes += (int8_nodes.empty() ? "" : " + ") + s->node;
      node = int8_nodes;
      op = "";
      for (const auto* s : g.int8) op += (op.empty() ? "" : " + ") + s->op;
      reason = fmt::format("INT8 runs these nodes as {} step(s), FP32 as {} ({}); the heaviest INT8 step ({}): {}",
                           g.int8.size(), g.fp32.size(), f ? f->kernel : "none", heaviest->op, reason);
    }
    json row = {{"precision", precision}, {"isa", kernels::isa_name(isa)}, {"node", node}, {"op", op},
                {"int8_us", int8_us}, {"delta_us", delta}, {"reason", reason},
                {"int8_steps", g.int8.size()}, {"fp32_steps", g.fp32.size()}};
    row["fp32_us"] = g.fp32.empty() ? json(nullptr) : json(fp32_us);
    rows.emplace_back(delta, std::move(row));
  }
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  json out = json::array();
  for (size_t i = 0; i < rows.size() && i < limit; ++i) out.push_back(std::move(rows[i].second));
  return out;
}

}  // namespace octet::explain
