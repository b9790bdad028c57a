// `octet diff`: every intermediate tensor of two runs side by side, and the first one that
// departs: one model at two ISA levels, an FP32 model against its INT8 form, or octet against
// ONNX Runtime on the same file.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <random>

#include "calib/calibrate.h"
#include "engine/session.h"
#include "loader/onnx_loader.h"
#include "loader/onnx_writer.h"
#include "apps/cli/commands.h"
#include "apps/cli/int8_parity.h"
#include "apps/explain/accuracy.h"
#include "io/npy.h"
#include "tools/ort/ort_client.h"
#include "io/tensor_io.h"

namespace octet::cli {
namespace {

struct DiffArgs {
  std::vector<std::string> models;
  std::string isa_a = "scalar", isa_b;
  bool ort = false;
  std::string input;
  int batch = 1;
  uint64_t seed = 1;
  float random_lo = 0.0f, random_hi = 1.0f;
  double tolerance = 1e-5;
  double min_sqnr = 20.0;
  bool all = false;
};

struct Values {
  std::vector<std::string> order;  // step order
  std::map<std::string, std::vector<double>> by_name;
  std::map<std::string, ir::DType> dtype;
  std::map<std::string, std::string> writer;  // step (node) that wrote it
};

Values capture(const ir::Graph& g, std::optional<kernels::Isa> isa, const ir::TensorData& input) {
  SessionOptions so;
  so.isa = isa;
  // Kept apart, the expand conv's output is a tensor to compare; fused, it never exists.
  so.passes.fuse_pointwise_depthwise = false;
  Session session{ir::Graph(g), so};
  Values v;
  std::string step;
  ValueObserver watch = [&](const std::string& name, const TensorInfo& info, const void* data) {
    std::vector<double> x = explain::row_major_values(info, data);
    if (x.empty() || v.by_name.count(name)) return;
    v.order.push_back(name);
    v.dtype[name] = info.dtype;
    v.by_name[name] = std::move(x);
  };
  session.run({input}, nullptr, &watch);
  return v;
}

bool is_model_input(const ir::Graph& g, const std::string& name) {
  return std::find(g.inputs.begin(), g.inputs.end(), name) != g.inputs.end();
}

struct Row {
  std::string name;
  std::string measure;  // what was compared, in words
  bool departs = false;
};

// Prints the rows (all, or only the departing ones) and the first departure; returns the exit code.
int report(const std::vector<Row>& rows, const std::string& what, bool all) {
  fmt::print("{}: {} tensor(s) compared\n", what, rows.size());
  const Row* first = nullptr;
  for (const Row& r : rows) {
    if (r.departs && !first) first = &r;
    if (all || r.departs) fmt::print("  {:<7} {:<48} {}\n", r.departs ? "DEPARTS" : "ok", r.name.substr(0, 48), r.measure);
  }
  if (!first) {
    fmt::print("no tensor departs\n");
    return 0;
  }
  fmt::print("first departure: {} ({})\n", first->name, first->measure);
  return 1;
}

Row compare_values(const std::string& name, ir::DType dtype, const std::vector<double>& a, const std::vector<double>& b,
                   double tolerance) {
  Row r{name, "", false};
  if (a.size() != b.size()) {
    r.measure = fmt::format("{} vs {} values", a.size(), b.size());
    r.departs = true;
    return r;
  }
  // NaN against NaN and an infinity against the same infinity are the same value (a model fed
  // NaN must not depart at its input); a NaN or infinity against anything else departs.
  double max_diff = 0, max_ref = 0;
  int64_t unmatched = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const bool same = a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i]));
    if (same) {
      if (std::isfinite(a[i])) max_ref = std::max(max_ref, std::fabs(a[i]));
      continue;
    }
    if (!std::isfinite(a[i]) || !std::isfinite(b[i])) {
      ++unmatched;
      continue;
    }
    max_diff = std::max(max_diff, std::fabs(a[i] - b[i]));
    max_ref = std::max(max_ref, std::fabs(a[i]));
  }
  if (unmatched) {
    r.measure = fmt::format("{} value(s) NaN or infinite in one run only", unmatched);
    r.departs = true;
    return r;
  }
  if (dtype == ir::DType::f32 || dtype == ir::DType::f64) {
    const double rel = max_diff / std::max(max_ref, 1e-30);
    r.measure = fmt::format("max |diff| {:.3g}, relative {:.3g}", max_diff, rel);
    r.departs = rel > tolerance;
  } else {
    r.measure = fmt::format("{} max difference {:.0f}", ir::dtype_name(dtype), max_diff);
    r.departs = max_diff > 0;
  }
  return r;
}

ir::TensorData make_input(const DiffArgs& a, const ir::Graph& g) {
  if (!a.input.empty()) return from_npy(npy::read(a.input));
  if (g.inputs.size() != 1) throw ir::Error("octet diff: the model has several inputs; give --input for one-input models only");
  const ir::Value& v = g.value(g.inputs[0]);
  if (!v.dims) throw ir::Error("octet diff: the input's shape is unknown; give --input FILE.npy");
  ir::Dims d = *v.dims;
  for (auto& e : d)
    if (e < 0) e = a.batch;
  ir::TensorData t = ir::TensorData::make(ir::DType::f32, d);
  std::mt19937_64 rng(a.seed);
  std::uniform_real_distribution<float> u(a.random_lo, a.random_hi);
  for (int64_t i = 0; i < t.count(); ++i) t.as<float>()[i] = u(rng);
  return t;
}

int run_diff(const DiffArgs& a) {
  if (a.models.empty() || a.models.size() > 2) throw UsageError("give one model (two ISA levels or --ort) or two (FP32 and INT8)");
  const ir::Graph first = loader::load_onnx(a.models[0]);
  const ir::TensorData input = make_input(a, first);

  if (a.models.size() == 2) {  // FP32 against INT8
    if (a.ort) throw UsageError("--ort compares one model with ONNX Runtime: give one model");
    ir::Graph second = loader::load_onnx(a.models[1]);
    const bool first_int8 = calib::is_quantized(first), second_int8 = calib::is_quantized(second);
    if (first_int8 == second_int8)
      throw UsageError("two models: one FP32 and its INT8 (QDQ) form; both are " +
                       std::string(first_int8 ? "quantized" : "FP32"));
    const ir::Graph& fp32 = first_int8 ? second : first;
    const ir::Graph& qdq = first_int8 ? first : second;
    explain::AccuracyOptions ao;
    ao.methods = false;
    ao.batch = int(input.dims.at(0));
    const auto r = explain::measure_accuracy(fp32, qdq, input, ao);
    std::vector<Row> rows;
    for (const auto& t : r.tensors) {
      if (t.values == 0) continue;
      Row row{t.name, "", false};
      const auto s = t.sqnr_db();
      row.measure = fmt::format("SQNR {}, {:.2f}% clipped{}", s ? fmt::format("{:.1f} dB", *s) : "exact",
                                100.0 * double(t.clipped) / double(t.values),
                                t.producer.empty() ? "" : ", written by " + t.producer);
      row.departs = s && *s < a.min_sqnr;
      rows.push_back(std::move(row));
    }
    return report(rows, fmt::format("FP32 vs INT8 (departs below {:.1f} dB SQNR)", a.min_sqnr), a.all);
  }

  if (a.ort) {  // octet against ONNX Runtime on the same file
    if (std::string why = ort::unavailable_reason(); !why.empty()) throw ir::Error("--ort: " + why);
    const Values mine = capture(first, std::nullopt, input);
    ir::Graph tapped = first;
    std::vector<std::string> names;
    for (const auto& n : mine.order) {
      if (!first.values.count(n) || first.is_constant(n)) continue;  // octet's own intermediate values
      if (is_model_input(first, n)) continue;  // the same file fed to both
      bool after_dq = false;  // tapping a DequantizeLinear output would stop ORT fusing the QDQ unit
      for (const auto& node : first.nodes)
        if (node.op == "DequantizeLinear" && !node.outputs.empty() && node.outputs[0] == n) after_dq = true;
      if (after_dq) continue;
      names.push_back(n);
      tapped.value(n).dtype = mine.dtype.at(n);  // an output is declared with its value's type
      if (!tapped.is_graph_output(n)) tapped.outputs.push_back(n);
    }
    TempDir temp;
    const std::string file = (temp.path() / "tapped.onnx").string();
    loader::save_onnx(tapped, file);
    const auto theirs = ort::run(file, {{first.inputs.at(0), to_npy(input)}});
    std::vector<Row> rows;
    for (const auto& n : names) {
      auto it = theirs.find(n);
      if (it == theirs.end()) continue;
      const ir::TensorData t = from_npy(it->second);
      TensorInfo info;
      info.dtype = t.dtype;
      info.dims = t.dims;
      rows.push_back(compare_values(n, mine.dtype.at(n), mine.by_name.at(n),
                                    explain::row_major_values(info, t.bytes.data()), a.tolerance));
    }
    return report(rows, "octet vs ONNX Runtime", a.all);
  }

  // One model at two ISA levels.
  auto level = [](const std::string& name) {
    auto isa = kernels::parse_isa(name);
    if (!isa) throw UsageError("unknown ISA level '" + name + "' (levels: " + kernels::isa_names() + ")");
    if (!kernels::isa_supported(*isa)) throw UsageError("this CPU does not run " + name);
    return *isa;
  };
  const kernels::Isa isa_a = level(a.isa_a);
  const kernels::Isa isa_b = a.isa_b.empty() ? kernels::active_isa() : level(a.isa_b);
  const Values va = capture(first, isa_a, input), vb = capture(first, isa_b, input);
  std::vector<Row> rows;
  for (const auto& n : va.order)
    if (vb.by_name.count(n) && !is_model_input(first, n)) rows.push_back(compare_values(n, va.dtype.at(n), va.by_name.at(n), vb.by_name.at(n), a.tolerance));
  return report(rows, fmt::format("{} vs {}", kernels::isa_name(isa_a), kernels::isa_name(isa_b)), a.all);
}

}  // namespace

Command add_diff_command(CLI::App& app) {
  auto a = std::make_shared<DiffArgs>();
  auto* cmd = app.add_subcommand(
      "diff",
      "Compare every intermediate tensor of two runs and name the first that departs: one model at two ISA levels "
      "(--isa-a, --isa-b), an FP32 model and its INT8 form (two models), or octet and ONNX Runtime (--ort). Exit "
      "code 1 when a tensor departs");
  cmd->add_option("models", a->models, "One model, or an FP32 model and its INT8 QDQ form")->required()->check(CLI::ExistingFile);
  cmd->add_option("--isa-a", a->isa_a, "Level of the first run (default scalar)");
  cmd->add_option("--isa-b", a->isa_b, "Level of the second run (default: the best this CPU has)");
  cmd->add_flag("--ort", a->ort, "Compare octet with ONNX Runtime on the same model");
  cmd->add_option("--input", a->input, "The input as .npy (default: random, see --random-range)")->check(CLI::ExistingFile);
  cmd->add_option("--batch", a->batch, "Batch of the random input (default 1)")->check(positive());
  cmd->add_option("--seed", a->seed, "Seed of the random input");
  add_range_option(cmd, "--random-range", a->random_lo, a->random_hi, "LO HI of the random input (default 0 1)");
  cmd->add_option("--tolerance", a->tolerance,
                  "Float tensors depart when max|a-b| / max|a| exceeds this (default 1e-5); integer tensors on any "
                  "difference")
      ->check(non_negative());
  cmd->add_option("--min-sqnr", a->min_sqnr, "FP32 vs INT8: a tensor departs below this SQNR in dB (default 20)")
      ->check(finite());
  cmd->add_flag("--all", a->all, "List every tensor, not only the departing ones");
  return [a, cmd]() -> int { return cmd->parsed() ? run_diff(*a) : -1; };
}

}  // namespace octet::cli
