// `octet info model.onnx`: what is in a model and what it costs.
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "engine/session.h"
#include "kernels/cache_budgets.h"
#include "kernels/isa.h"
#include "loader/onnx_loader.h"
#include "apps/cli/commands.h"
#include "apps/cli/engine_options.h"

namespace octet::cli {
namespace {

struct InfoOptions {
  std::string model;
  bool json = false;
  bool kernels = false;
  int batch = 1;
};

nlohmann::json dims_json(const ir::Dims& d) {
  nlohmann::json j = nlohmann::json::array();
  for (int64_t e : d) j.push_back(e < 0 ? nlohmann::json("N") : nlohmann::json(e));
  return j;
}

// Ops whose QDQ units octet cannot fuse in some form: why they stay float.
std::string float_reason(const ir::Node& n) {
  static const std::map<std::string, std::string> reasons = {
      {"ReduceMean", "QLinearReduceMean needs constant, non-empty axes: dequantized, averaged in float, requantized"},
      {"Slice", "no integer form in octet's QDQ fusion yet: runs on the dequantized floats"},
      {"Split", "no integer form in octet's QDQ fusion yet: runs on the dequantized floats"},
  };
  auto it = reasons.find(n.op);
  if (it != reasons.end()) return it->second;
  return "its QDQ unit did not match an INT8 op (a missing QuantizeLinear, per-channel or mixed-type activations, "
         "or no INT8 form in octet): runs in float";
}

// In a quantized model, the compute nodes left in float between DequantizeLinear and
// QuantizeLinear after the QDQ fusion: each a dequantize / requantize round trip.
std::vector<std::pair<std::string, std::string>> float_islands(const ir::Graph& g) {
  std::map<std::string, const ir::Node*> producer;
  std::map<std::string, std::vector<const ir::Node*>> readers;
  for (const auto& n : g.nodes) {
    for (const auto& o : n.outputs) producer[o] = &n;
    for (const auto& i : n.inputs) readers[i].push_back(&n);
  }
  auto is_qdq = [](const std::string& op) {
    return op == "QuantizeLinear" || op == "DequantizeLinear" || op == "DynamicQuantizeLinear" || op == "Cast";
  };
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& n : g.nodes) {
    if (is_qdq(n.op) || n.op == "Shape" || n.op == "Constant") continue;
    bool from_dq = false, to_q = false;
    for (const auto& i : n.inputs) {
      auto p = producer.find(i);
      from_dq = from_dq || (p != producer.end() && p->second->op == "DequantizeLinear");
    }
    for (const auto& o : n.outputs)
      for (const ir::Node* r : readers[o]) to_q = to_q || r->op == "QuantizeLinear";
    if (from_dq && to_q) out.emplace_back(ir::Graph::describe(n), float_reason(n));
  }
  return out;
}

int run_info(const InfoOptions& o) {
  ir::Graph original = loader::load_onnx(o.model);
  std::map<std::string, int> ops_in_file;
  for (const auto& n : original.nodes) ops_in_file[n.op]++;
  const int64_t params = original.parameter_count();

  Session session(original, engine_session_options());
  // Deciding on slices builds the slice plan, which may evict others: first, so that the plan
  // listed below stays valid (plan_for's contract).
  const bool sliced = session.slices_batches();
  const int image_threads = session.image_threads();
  const bool lockstep = session.shares_batches_in_lockstep();
  const Plan& plan = session.plan_for(session.input_dims_at(o.batch));
  int64_t total_macs = 0;
  for (const auto& s : plan.steps()) total_macs += s.macs;
  const auto file_bytes = std::filesystem::file_size(o.model);

  nlohmann::json j;
  j["model"] = o.model;
  j["file_bytes"] = file_bytes;
  j["opset"] = original.opset;
  j["parameters"] = params;
  j["batch"] = o.batch;
  for (const auto& in : session.inputs())
    j["inputs"].push_back({{"name", in.name}, {"dtype", ir::dtype_name(in.dtype)}, {"shape", dims_json(in.dims)}});
  for (const auto& out : session.outputs())
    j["outputs"].push_back({{"name", out.name}, {"dtype", ir::dtype_name(out.dtype)}, {"shape", dims_json(out.dims)}});
  j["ops_in_file"] = ops_in_file;
  for (const auto& p : session.pass_report()) j["passes"][p.pass] = p.changed;
  for (const auto& s : plan.steps()) {
    nlohmann::json step = {{"node", s.node}, {"op", s.op}, {"kernel", s.kernel}, {"scalar", s.scalar()}, {"macs", s.macs}};
    if (s.scalar() && !s.fallback.empty()) step["fallback"] = s.fallback;
    if (!s.outputs.empty()) step["output_shape"] = dims_json(s.outputs[0].dims);
    for (const auto& n : session.graph().nodes)
      if (n.name == s.node && !passes::pruned_taps_note(n).empty()) step["note"] = passes::pruned_taps_note(n);
    j["steps"].push_back(step);
  }
  for (const ir::Node* n : session.stage_cuts())
    j["stage_cuts"].push_back({{"node", n->name}, {"op", n->op}});
  j["total_macs"] = total_macs;
  j["arena_bytes"] = plan.arena_bytes();
  size_t weight_bytes = 0;
  for (const auto& [name, v] : session.graph().values)
    if (v.constant) weight_bytes += v.constant->bytes.size();
  const kernels::PackedCache& packed = session.packed_weights();
  // Every plan built so far (batch 1 at load, the slice plan, this batch) shares one copy of
  // each packing.
  j["memory"] = {{"weight_bytes", weight_bytes},
                 {"packed_weight_bytes", packed.bytes()},
                 {"packings", packed.entries()},
                 {"packings_reused", packed.hits()},
                 {"arena_bytes", plan.arena_bytes()}};
  j["isa"] = kernels::isa_name(kernels::active_isa());
  j["batch_slice"] = sliced ? session.batch_slice() : 0;
  j["image_threads"] = image_threads;
  j["images_in_lockstep"] = lockstep;
  j["activation_bytes_per_image"] = session.activation_bytes_per_image();
  const auto islands = float_islands(session.graph());
  for (const auto& [node, why] : islands) j["float_in_int8"].push_back({{"node", node}, {"reason", why}});

  if (o.json) {
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  fmt::print("model      {}\nfile       {:.1f} KB ({} bytes)\nopset      {}\nparameters {}\n", o.model,
             double(file_bytes) / 1024.0, file_bytes, original.opset, params);
  for (const auto& in : session.inputs())
    fmt::print("input      {} {} {}\n", in.name, ir::dtype_name(in.dtype), ir::dims_str(in.dims));
  for (const auto& out : session.outputs())
    fmt::print("output     {} {} {}\n", out.name, ir::dtype_name(out.dtype), ir::dims_str(out.dims));
  fmt::print("\nops in the file ({} nodes):\n", original.nodes.size());
  for (const auto& [op, count] : ops_in_file) fmt::print("  {:<20} {}\n", op, count);
  fmt::print("\ngraph passes:\n");
  for (const auto& p : session.pass_report()) fmt::print("  {:<34} {} node(s)\n", p.pass, p.changed);
  if (sliced)
    fmt::print("\nbatches    run {} image(s) at a time ({:.1f} KB of activations per image, {:.0f} KB of cache per "
               "core; --batch-slice sets it)\n",
               session.batch_slice(), double(session.activation_bytes_per_image()) / 1024.0,
               double(kernels::per_core_cache_bytes()) / 1024.0);
  else
    fmt::print("\nbatches    run whole (the images are not computed independently, or --batch-slice 0)\n");
  if (image_threads > 1)
    fmt::print("threads    a batch of 2 images or more is shared out over the {} threads, each running its own "
               "images{}; one image splits each step over them\n",
               image_threads,
               lockstep ? " whole, in lockstep: each DynamicQuantizeLinear combines the threads' ranges, so its "
                          "scale spans the batch"
                        : "");
  fmt::print("\nexecution plan at batch {} ({} steps, arena {:.1f} KB, kernels up to {}):\n", o.batch,
             plan.steps().size(), double(plan.arena_bytes()) / 1024.0, engine_summary());
  fmt::print("  {:<4} {:<34} {:<28} {:<18} {:>12}{}\n", "#", "node", "op", "output", "MACs",
             o.kernels ? "  kernel" : "");
  for (size_t i = 0; i < plan.steps().size(); ++i) {
    const auto& s = plan.steps()[i];
    std::string op = s.op, note;
    for (const auto& n : session.graph().nodes)
      if (n.name == s.node) {
        if (n.attrs.has("fused_act")) op += "+" + n.attrs.s("fused_act");
        note = passes::pruned_taps_note(n);
      }
    fmt::print("  {:<4} {:<34} {:<28} {:<18} {:>12}{}\n", i, s.node.substr(0, 34), op,
               s.outputs.empty() ? "" : ir::dims_str(s.outputs[0].dims), s.macs ? fmt::format("{}", s.macs) : "",
               o.kernels ? "  " + (s.kernel.empty() ? std::string("-") : s.kernel) +
                               (s.scalar() ? (s.fallback.empty() ? "  [scalar]" : "  [scalar: " + s.fallback + "]") : "") +
                               (note.empty() ? "" : "  (" + note + ")")
                         : "");
  }
  if (const auto cuts = session.stage_cuts(); !cuts.empty()) {
    fmt::print("  the graph runs in {} stages: the plan above is the first; after each node below (its output "
               "shape depends on its input values) the next stage is planned at run time for the shapes it gives\n",
               cuts.size() + 1);
    for (const ir::Node* n : cuts) fmt::print("  cut  {:<34} {}\n", n->name.substr(0, 34), n->op);
  }
  if (o.kernels) {
    size_t scalar = 0;
    for (const auto& s : plan.steps()) scalar += s.scalar();
    if (scalar) fmt::print("\n{} step(s) marked [scalar] run a scalar reference kernel (no SIMD kernel fits them)\n", scalar);
    else fmt::print("\nevery step runs a SIMD kernel or moves no data through one\n");
  }
  if (!islands.empty()) {
    fmt::print("\n{} node(s) of this INT8 model run in float between DequantizeLinear and QuantizeLinear:\n",
               islands.size());
    for (const auto& [node, why] : islands) fmt::print("  {}: {}\n", node, why);
  }
  fmt::print("\ntotal      {:.2f} M MACs per batch of {}\n", double(total_macs) / 1e6, o.batch);
  fmt::print("memory     {:.1f} KB of weights in the graph; {:.1f} KB packed for the kernels ({} packings held once, "
             "reused {} time(s) by the other plans built so far); {:.1f} KB of activations (arena) at batch {}\n",
             double(weight_bytes) / 1024.0, double(packed.bytes()) / 1024.0, packed.entries(), packed.hits(),
             double(plan.arena_bytes()) / 1024.0, o.batch);
  return 0;
}

}  // namespace

Command add_info_command(CLI::App& app) {
  auto o = std::make_shared<InfoOptions>();
  auto* cmd = app.add_subcommand("info", "Show a model's inputs, outputs, ops, parameters and MACs per layer");
  cmd->add_option("model", o->model, "ONNX model file")->required()->check(CLI::ExistingFile);
  cmd->add_flag("--json", o->json, "Print machine-readable JSON instead of tables");
  cmd->add_flag("--kernels", o->kernels, "Show the kernel chosen for each step (see --isa)");
  cmd->add_option("--batch", o->batch, "Batch size used for shapes and MACs")->check(positive());
  return [o, cmd]() -> int { return cmd->parsed() ? run_info(*o) : -1; };
}

}  // namespace octet::cli
