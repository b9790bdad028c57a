#include "apps/cli/int8_parity.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace octet::cli {
namespace {

const ir::Node* producer(const ir::Graph& g, const std::string& tensor) {
  for (const auto& n : g.nodes)
    if (std::find(n.outputs.begin(), n.outputs.end(), tensor) != n.outputs.end()) return &n;
  return nullptr;
}

LogitsTap tap_of(const ir::Graph& g, const ir::Node& dq, bool extra) {
  LogitsTap t{dq.outputs[0], ir::Graph::describe(dq), 0.0f, extra};
  if (dq.has_input(1) && g.is_constant(dq.input(1))) {
    const ir::TensorData& s = *g.value(dq.input(1)).constant;
    if (s.dtype == ir::DType::f32 && s.count() == 1) t.scale = s.as<float>()[0];
  }
  return t;
}

}  // namespace

std::optional<LogitsTap> find_logits_tap(const ir::Graph& g) {
  if (g.outputs.empty()) return std::nullopt;
  const ir::Node* last = producer(g, g.outputs[0]);
  if (!last) return std::nullopt;
  if (last->op == "DequantizeLinear") return tap_of(g, *last, false);
  // A float tail: the op must read exactly one activation, and that activation must come
  // from a DequantizeLinear.
  const ir::Node* dq = nullptr;
  int activations = 0;
  for (const auto& in : last->inputs) {
    if (in.empty() || g.is_constant(in)) continue;
    ++activations;
    const ir::Node* p = producer(g, in);
    if (p && p->op == "DequantizeLinear") dq = p;
  }
  if (activations != 1 || !dq) return std::nullopt;
  return tap_of(g, *dq, !g.is_graph_output(dq->outputs[0]));
}

ir::Graph with_tap_output(ir::Graph g, const LogitsTap& tap) {
  if (!g.is_graph_output(tap.tensor)) g.outputs.push_back(tap.tensor);
  return g;
}

TapComparison compare_tap(std::span<const float> octet, std::span<const float> ort, float scale) {
  TapComparison c;
  c.values = int64_t(std::min(octet.size(), ort.size()));
  for (int64_t i = 0; i < c.values; ++i) {
    const double d = std::fabs(double(octet[size_t(i)]) - double(ort[size_t(i)]));
    if (d == 0) ++c.identical;
    c.max_abs_diff = std::max(c.max_abs_diff, d);
  }
  if (scale > 0) c.max_lsb = int64_t(std::nearbyint(c.max_abs_diff / double(scale)));
  return c;
}

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "octet-eval-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw ir::Error("cannot create a temporary folder in " + pattern);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace octet::cli
