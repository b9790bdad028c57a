// `octet run model.onnx`: run a model on .npy input or random data and show the top classes.
#include <algorithm>
#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "engine/session.h"
#include "io/output_file.h"
#include "apps/cli/commands.h"
#include "apps/cli/engine_options.h"
#include "apps/cli/metrics.h"
#include "apps/cli/stats.h"
#include "io/tensor_io.h"

namespace octet::cli {
namespace {

struct RunOptions {
  std::string model;
  std::vector<std::string> inputs;  // .npy files, one per model input, in order
  bool random = false;
  uint64_t seed = 1;
  float random_lo = 0.0f, random_hi = 1.0f;
  int batch = 1;
  int top = 5;
  std::string output_dir;
  std::string save_inputs_dir;
  bool profile = false;
  int profile_runs = 200;
};

ir::TensorData random_input(const TensorSpec& spec, const RunOptions& o, std::mt19937_64& rng) {
  ir::Dims d = spec.dims;
  for (auto& e : d) if (e < 0) e = o.batch;
  if (spec.dtype != ir::DType::f32) throw ir::Error("--random fills float32 inputs only; '" + spec.name + "' is " +
                                                    ir::dtype_name(spec.dtype));
  ir::TensorData t;
  try {
    t = ir::TensorData::make(ir::DType::f32, d);  // element_count throws on a count past 64 bits
  } catch (const std::bad_alloc&) {
    throw ir::Error(fmt::format("{}: random input '{}' {} needs {:.1f} GiB, which this machine cannot allocate (try a "
                                "smaller --batch)", o.model, spec.name, ir::dims_str(d),
                                double(ir::element_count(d)) * 4 / double(1 << 30)));
  }
  std::uniform_real_distribution<float> dist(o.random_lo, o.random_hi);
  const int64_t count = t.count();
  float* values = t.as<float>();
  for (int64_t i = 0; i < count; ++i) values[i] = dist(rng);
  return t;
}

void print_top_k(const TensorSpec& spec, const ir::TensorData& t, int k) {
  if (t.dtype != ir::DType::f32 || t.dims.size() != 2) {
    fmt::print("output '{}' {}: not a [batch, classes] tensor, no top-k\n", spec.name, ir::dims_str(t.dims));
    return;
  }
  const int64_t rows = t.dims[0], classes = t.dims[1];
  k = int(std::min<int64_t>(k, classes));
  fmt::print("output '{}' {}: top-{} per image (class: value)\n", spec.name, ir::dims_str(t.dims), k);
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = t.as<float>() + r * classes;
    std::string line;
    for (int c : top_classes(row, int(classes), k)) line += fmt::format("  {:>4}: {:<12.6g}", c, row[c]);
    fmt::print("  image {:>4}{}\n", r, line);
  }
}

std::string file_name_for(const std::string& tensor) {
  std::string s = tensor;
  for (char& c : s) if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') c = '_';
  return s + ".npy";
}

// File names for tensors, one each: sanitized names that collide ("a/b" and "a_b") get the
// tensor's position appended, so no file overwrites another.
std::vector<std::string> file_names_for(const std::vector<TensorSpec>& tensors) {
  std::vector<std::string> names;
  std::set<std::string> used;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const std::string first = file_name_for(tensors[i].name), stem = first.substr(0, first.size() - 4);
    std::string name = first;
    for (size_t k = i; used.count(name); ++k) name = stem + "_" + std::to_string(k) + ".npy";
    used.insert(name);
    names.push_back(name);
  }
  return names;
}

// DIR/<file name> for each tensor; none when DIR is not given.
std::vector<std::string> files_in(const std::string& dir, const std::vector<TensorSpec>& tensors) {
  std::vector<std::string> paths;
  if (dir.empty()) return paths;
  for (const auto& name : file_names_for(tensors)) paths.push_back((std::filesystem::path(dir) / name).string());
  return paths;
}

double median_of(const std::vector<double>& v) { return summarize(v).p50; }

// Median time of every step over `runs` runs (after a warm-up run), with the kernel each step
// runs and its arithmetic rate: where the time goes.
// Dynamic quantization layer by layer: the DynamicQuantizeLinear feeding each integer-to-float
// step (its range and quantize passes, attributed to the first layer that reads it) and the
// step itself (the integer GEMM with its int32 -> float epilogue fused into the store). A range
// gathered by the DynamicQuantizeLinear's producer (its part "range") counts as that
// DynamicQuantizeLinear's range, and not in the producer's own column.
void print_dynamic_split(const Session& session, const Plan& plan, const std::vector<double>& med,
                         const std::vector<std::map<std::string, std::vector<double>>>& parts) {
  std::map<std::string, size_t> step_of;
  for (size_t i = 0; i < plan.steps().size(); ++i) step_of[plan.steps()[i].node] = i;
  std::map<std::string, const ir::Node*> producer;
  for (const auto& n : session.graph().nodes)
    for (const auto& o : n.outputs) producer[o] = &n;
  auto part = [&](size_t step, const char* name) {
    auto it = parts[step].find(name);
    return it == parts[step].end() ? 0.0 : median_of(it->second);
  };
  std::set<size_t> counted;
  double range_sum = 0, quantize_sum = 0, gemm_sum = 0;
  std::vector<std::string> rows;
  for (size_t i = 0; i < plan.steps().size() && i < med.size(); ++i) {
    const PlanStep& s = plan.steps()[i];
    if (s.op.rfind("IntegerToFloat") == std::string::npos) continue;
    const ir::Node* node = nullptr;
    for (const auto& n : session.graph().nodes)
      if (n.name == s.node) node = &n;
    double range = 0, quantize = 0;
    std::string note;
    if (node && !node->inputs.empty()) {
      auto p = producer.find(node->inputs[0]);
      if (p != producer.end() && p->second->op == "DynamicQuantizeLinear" && step_of.count(p->second->name)) {
        const size_t q = step_of[p->second->name];
        if (counted.insert(q).second) {
          range = part(q, "range");
          quantize = part(q, "quantize");
          const ir::Node& dq = *p->second;
          if (dq.inputs.size() == 2) {  // the range came with x from x's producer
            auto x_producer = producer.find(dq.inputs[0]);
            if (x_producer != producer.end() && step_of.count(x_producer->second->name))
              range += part(step_of[x_producer->second->name], "range");
          }
        } else {
          note = "input quantized for an earlier layer";
        }
      }
    }
    const double gemm = med[i] - part(i, "range");  // its output's range belongs to the next layer
    range_sum += range;
    quantize_sum += quantize;
    gemm_sum += gemm;
    const double total = range + quantize + gemm;
    rows.push_back(fmt::format("  {:<34} {:>8.2f} {:>9.2f} {:>12.2f} {:>9.2f} {:>9.0f}%  {}", s.node.substr(0, 34), range,
                               quantize, gemm, total, 100.0 * (range + quantize) / std::max(total, 1e-9), note));
  }
  if (rows.empty()) return;
  fmt::print("\ndynamic quantization by layer (us; range and quantize: the DynamicQuantizeLinear feeding the layer, "
             "its range gathered by the producer of its input where it could be; the GEMM includes its int32 -> "
             "float epilogue)\n");
  fmt::print("  {:<34} {:>8} {:>9} {:>12} {:>9} {:>10}\n", "layer", "range", "quantize", "GEMM+float", "total",
             "dynamic");
  for (const auto& r : rows) fmt::print("{}\n", r);
  const double total = range_sum + quantize_sum + gemm_sum;
  fmt::print("  {:<34} {:>8.2f} {:>9.2f} {:>12.2f} {:>9.2f} {:>9.0f}%\n", "all layers", range_sum, quantize_sum,
             gemm_sum, total, 100.0 * (range_sum + quantize_sum) / std::max(total, 1e-9));
}

void print_profile(Session& session, const std::vector<ir::TensorData>& inputs, int runs) {
  std::vector<std::vector<double>> us;
  std::vector<std::map<std::string, std::vector<double>>> parts;
  std::vector<double> totals;
  std::vector<StepTiming> last;
  session.warm_up(inputs);
  for (int r = 0; r < runs; ++r) {
    std::vector<StepTiming> timings;
    session.run(inputs, &timings);
    us.resize(timings.size());
    parts.resize(timings.size());
    double total = 0;
    for (size_t i = 0; i < timings.size(); ++i) {
      us[i].push_back(timings[i].microseconds);
      // A part may be reported several times in one run (per chunk): one sum per run.
      std::map<std::string, double> run_parts;
      for (const StepPart& p : timings[i].parts) run_parts[p.name] += p.microseconds;
      for (const auto& [name, t] : run_parts) parts[i][name].push_back(t);
      total += timings[i].microseconds;
    }
    totals.push_back(total);
    last = std::move(timings);
  }
  const Plan& plan = session.plan_for(inputs);
  std::vector<double> med;
  double sum = 0;
  for (const auto& v : us) sum += med.emplace_back(median_of(v));
  fmt::print("\nprofile: median of {} runs per step ({})\n", runs, engine_summary());
  fmt::print("  {:<4} {:<34} {:<20} {:<28} {:>9} {:>6} {:>9}\n", "#", "node", "op", "kernel", "us", "%", "GFLOP/s");
  // A graph run in stages (Session::stage_cuts) times every stage's steps and its cuts; plan_for
  // holds the first stage's only: the others are named from the timings.
  // On threads, a step that ran faster alone than split over them (Plan::run_steps) says so.
  const bool pooled = std::any_of(plan.steps().begin(), plan.steps().end(), [](const PlanStep& s) { return s.threads > 1; });
  for (size_t i = 0; i < med.size() && (i < plan.steps().size() || i < last.size()); ++i) {
    const bool planned = i < plan.steps().size();
    const std::string node = planned ? plan.steps()[i].node : last[i].node, op = planned ? plan.steps()[i].op : last[i].op;
    std::string kernel = planned ? plan.steps()[i].kernel : last[i].kernel;
    if (pooled && planned && plan.steps()[i].threads == 1) kernel = (kernel.empty() ? "-" : kernel) + " (1 thread)";
    const int64_t macs = planned ? plan.steps()[i].macs : last[i].macs;
    const std::string rate = macs ? fmt::format("{:.1f}", 2.0 * double(macs) / med[i] / 1e3) : "";
    fmt::print("  {:<4} {:<34} {:<20} {:<28} {:>9.2f} {:>6.1f} {:>9}\n", i, node.substr(0, 34), op.substr(0, 20),
               kernel.empty() ? "-" : kernel, med[i], 100.0 * med[i] / std::max(sum, 1e-9), rate);
  }
  fmt::print("  {:<4} {:<34} {:<20} {:<28} {:>9.2f}   (median whole run {:.2f} us)\n", "", "sum of step medians", "",
             "", sum, median_of(totals));
  print_dynamic_split(session, plan, med, parts);
  warn_scalar_steps(plan, "this batch");
}

int run_model(const RunOptions& o) {
  if (o.random == !o.inputs.empty()) throw UsageError("give either --input FILE.npy (one per model input) or --random");
  Session session = Session::load(o.model, engine_session_options());
  std::vector<ir::TensorData> inputs;
  std::mt19937_64 rng(o.seed);
  if (o.random) {
    for (const auto& spec : session.inputs()) inputs.push_back(random_input(spec, o, rng));
  } else {
    if (o.inputs.size() != session.inputs().size())
      throw ir::Error(fmt::format("the model has {} input(s), got {} --input file(s)", session.inputs().size(),
                                 o.inputs.size()));
    for (size_t i = 0; i < o.inputs.size(); ++i) {
      inputs.push_back(from_npy(npy::read(o.inputs[i])));
      const TensorSpec& spec = session.inputs()[i];
      const ir::TensorData& t = inputs.back();
      bool fits = t.dtype == spec.dtype && t.dims.size() == spec.dims.size();
      for (size_t a = 0; fits && a < t.dims.size(); ++a) fits = spec.dims[a] < 0 || spec.dims[a] == t.dims[a];
      if (!fits)
        throw ir::Error(fmt::format("{}: holds {} {}, the model's input '{}' takes {} {}", o.inputs[i],
                                    ir::dtype_name(t.dtype), ir::dims_str(t.dims), spec.name, ir::dtype_name(spec.dtype),
                                    ir::dims_str(spec.dims)));
    }
  }
  // Every file this run will write is checked before it starts, so a device, a pipe or a folder
  // standing where an output goes fails at once and nothing is half written.
  const auto output_paths = files_in(o.output_dir, session.outputs());
  const auto input_paths = files_in(o.save_inputs_dir, session.inputs());
  for (const auto* paths : {&output_paths, &input_paths})
    for (const auto& p : *paths) check_output_path(p);
  if (!o.save_inputs_dir.empty()) {
    std::filesystem::create_directories(o.save_inputs_dir);
    for (size_t i = 0; i < inputs.size(); ++i) npy::write(input_paths[i], to_npy(inputs[i]));
  }
  auto outputs = session.run(inputs);
  for (size_t i = 0; i < outputs.size(); ++i) print_top_k(session.outputs()[i], outputs[i], o.top);
  if (o.profile) print_profile(session, inputs, o.profile_runs);
  if (!o.output_dir.empty()) {
    std::filesystem::create_directories(o.output_dir);
    for (size_t i = 0; i < outputs.size(); ++i) {
      npy::write(output_paths[i], to_npy(outputs[i]));
      fmt::print("wrote {} (output '{}')\n", output_paths[i], session.outputs()[i].name);
    }
  }
  return 0;
}

}  // namespace

Command add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "Run a model (FP32 or quantized) on .npy inputs or random data; print top-k per image");
  cmd->add_option("model", o->model, "ONNX model file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--input", o->inputs, ".npy file for each model input, in order")->check(CLI::ExistingFile);
  cmd->add_flag("--random", o->random, "Use uniform random inputs instead of --input");
  cmd->add_option("--seed", o->seed, "Seed for --random");
  add_range_option(cmd, "--random-range", o->random_lo, o->random_hi,
                   "LO HI: range of --random values (default 0 1; e.g. 0 255 for raw-pixel models)");
  cmd->add_option("--batch", o->batch, "Batch size for --random (the dynamic dimension)")->check(positive());
  cmd->add_option("--top", o->top, "How many classes to print per image")->check(positive());
  cmd->add_option("--output-dir", o->output_dir, "Write every output as DIR/<output name>.npy");
  cmd->add_option("--save-inputs", o->save_inputs_dir, "Write the inputs used as DIR/<input name>.npy");
  cmd->add_flag("--profile", o->profile, "Print the median time of every step, its kernel and GFLOP/s (the whole --batch through one "
                "plan: the automatic batch slice is not applied while steps are timed)");
  cmd->add_option("--profile-runs", o->profile_runs, "Runs the --profile medians are taken over (default 200)")
      ->check(positive());
  return [o, cmd]() -> int { return cmd->parsed() ? run_model(*o) : -1; };
}

}  // namespace octet::cli
