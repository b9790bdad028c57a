// `octet eval model.onnx`: accuracy and latency on a dataset, optionally side by side with
// ONNX Runtime on the same images, batch size and thread count; in FP32, in INT8 (the model
// quantized in memory, or an already-quantized model) or both side by side.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include <fmt/format.h>

#include "engine/session.h"
#include "loader/onnx_loader.h"
#include "loader/onnx_writer.h"
#include "apps/cli/calibration.h"
#include "apps/cli/commands.h"
#include "apps/cli/engine_options.h"
#include "apps/cli/eval_report.h"
#include "apps/cli/int8_parity.h"
#include "apps/cli/model_inputs.h"
#include "io/datasets/dataset.h"
#include "apps/cli/metrics.h"
#include "io/model_card.h"
#include "tools/ort/ort_client.h"
#include "apps/cli/progress.h"

namespace octet::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct EvalOptions {
  std::string model, data;
  std::string precision;  // fp32 | int8 | dynamic | both | all; empty: int8 for a quantized model, else fp32
  int64_t limit = -1;
  int batch = 64;
  int threads = 0;  // 0: the engine's --threads (before the command); set here, it applies to both engines
  int latency_images = 200;
  int warmup = 3;
  bool json = false;
  bool compare_ort = false;
  bool progress = true;
  CalibrationArgs calib;
};

// One latency measurement: per-run milliseconds at a batch size and thread count.
struct Timing {
  std::string engine;
  int batch, threads;
  std::vector<double> run_ms;
  int64_t images;
};

// Runs octet over every image in batches; returns the [count, classes] scores (output 0) and,
// when tap_index >= 0, that output too; times each batch.
std::vector<float> run_octet(Session& s, const ir::TensorData& all, int batch, Timing& timing, bool progress,
                             const std::string& label, int tap_index, std::vector<float>* tap) {
  const int64_t n = all.dims[0];
  std::vector<float> scores;
  Progress bar(label, n, progress);
  for (int64_t b = 0; b < n; b += batch) {
    auto in = slice(all, b, std::min<int64_t>(n, b + batch));
    auto t0 = std::chrono::steady_clock::now();
    auto out = s.run({in});
    auto t1 = std::chrono::steady_clock::now();
    timing.run_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    const float* p = out[0].as<float>();
    scores.insert(scores.end(), p, p + out[0].count());
    if (tap_index >= 0) {
      const ir::TensorData& t = out[size_t(tap_index)];
      tap->insert(tap->end(), t.as<float>(), t.as<float>() + t.count());
    }
    bar.update(std::min<int64_t>(n, b + batch));
  }
  timing.images = n;
  return scores;
}

Timing time_octet_batch1(Session& s, const ir::TensorData& all, int images, int warmup) {
  Timing t{"octet", 1, 1, {}, 0};
  const int64_t n = std::min<int64_t>(images, all.dims[0]);
  auto first = slice(all, 0, 1);
  s.warm_up({first});
  for (int i = 0; i < warmup; ++i) s.run({first});
  for (int64_t i = 0; i < n; ++i) {
    auto in = slice(all, i, i + 1);
    auto t0 = std::chrono::steady_clock::now();
    s.run({in});
    t.run_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  t.images = n;
  return t;
}

Timing time_ort(const std::string& model, const std::string& input, const npy::Array& all, int batch, int threads,
                const EvalOptions& o, std::map<std::string, npy::Array>* outputs) {
  ort::EvalOptions eo;
  eo.batch = batch;
  eo.threads = threads;
  eo.warmup = o.warmup;
  eo.progress = o.progress && outputs;  // only the long accuracy pass reports progress
  auto r = ort::eval(model, input, all, eo);
  if (outputs) *outputs = std::move(r.outputs);
  Timing t{"ORT", batch, threads, r.batch_ms, 0};
  for (auto n : r.images_per_run) t.images += n;
  return t;
}

json timing_json(const Timing& t) { return cli::timing_json(t.engine, t.batch, t.threads, t.run_ms, t.images); }

// The evaluation set, shared by every precision.
struct EvalData {
  data::Dataset dataset;
  ir::TensorData inputs;
  npy::Array inputs_np;  // the same floats, for ONNX Runtime
  std::vector<std::string> classes;
  bool classes_from_card = false;  // then they must match the model's output
  std::string input_name;
};

// One precision: octet on `session` and, with --compare-ort, ONNX Runtime on `ort_model`.
// `tap` names an extra output of both (the INT8 logits) whose values are returned.
struct PrecisionRun {
  json report;  // "octet", "ort", "agreement", "latency"
  std::vector<float> octet_tap, ort_tap;
};

PrecisionRun evaluate(Session& session, const std::string& label, const std::string& ort_model, const EvalData& e,
                      const EvalOptions& o, const std::string& tap = "") {
  PrecisionRun run;
  json& report = run.report;
  const int64_t count = e.dataset.count();
  int tap_index = -1;
  for (size_t i = 0; i < session.outputs().size(); ++i)
    if (!tap.empty() && session.outputs()[i].name == tap) tap_index = int(i);

  // Accuracy pass, timed per batch, on the session's threads (o.threads, both engines).
  Timing octet_batch{"octet", o.batch, o.threads, {}, 0};
  std::vector<float> scores = run_octet(session, e.inputs, o.batch, octet_batch, o.progress, label, tap_index,
                                        &run.octet_tap);
  const int n_classes = int(scores.size() / size_t(count));
  if (e.classes_from_card && e.classes.size() != size_t(n_classes))
    throw ir::Error(fmt::format("the model card names {} classes but the model's output has {} scores per image: the "
                                "card does not belong to this model",
                                e.classes.size(), n_classes));
  auto metrics = classify(scores.data(), count, n_classes, e.dataset.labels);
  report["octet"]["accuracy"] = metrics_json(metrics, e.classes);
  Timing octet_b1 = time_octet_batch1(session, e.inputs, o.latency_images, o.warmup);
  warn_scalar_steps(session.plan_for(session.input_dims_at(1)), label + ", batch 1");

  // Latency rows: octet at its threads; ORT also at 1 thread and all cores.
  const int all_cores = int(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::pair<int, int>> configs = {{1, 1}, {o.batch, 1}};
  if (all_cores > 1) configs.insert(configs.end(), {{1, all_cores}, {o.batch, all_cores}});
  if (o.threads > 1 && o.threads != all_cores) configs.insert(configs.end(), {{1, o.threads}, {o.batch, o.threads}});
  std::map<std::pair<int, int>, json> rows;
  octet_b1.threads = o.threads;
  rows[{1, o.threads}]["octet"] = timing_json(octet_b1);
  rows[{o.batch, o.threads}]["octet"] = timing_json(octet_batch);

  if (o.compare_ort) {
    std::map<std::string, npy::Array> ort_out;
    Timing ob = time_ort(ort_model, e.input_name, e.inputs_np, o.batch, o.threads, o, &ort_out);
    const auto scores_it = ort_out.find(session.outputs()[0].name);
    if (scores_it == ort_out.end() || scores_it->second.count() != int64_t(scores.size()))
      throw ir::Error("ONNX Runtime's output '" + session.outputs()[0].name + "' is missing or has another size");
    const npy::Array& ort_scores = scores_it->second;
    auto ort_metrics = classify(ort_scores.as<float>(), count, n_classes, e.dataset.labels);
    report["ort"]["accuracy"] = metrics_json(ort_metrics, e.classes);
    report["ort"]["version"] = ort::version();
    auto agree = compare_scores(scores.data(), ort_scores.as<float>(), count, n_classes);
    report["agreement"] = {{"same_top1", agree.same_top1}, {"images", agree.images},
                           {"max_abs_diff", agree.max_abs_diff}, {"max_abs_ref", agree.max_abs_ref}};
    if (tap_index >= 0 && ort_out.count(tap)) {
      const npy::Array& t = ort_out.at(tap);
      run.ort_tap.assign(t.as<float>(), t.as<float>() + t.count());
    }
    rows[{o.batch, o.threads}]["ort"] = timing_json(ob);
    const int64_t b1_images = std::min<int64_t>(o.latency_images, count);
    npy::Array head = e.inputs_np;
    head.shape[0] = b1_images;
    head.data.resize(e.inputs_np.data.size() / size_t(count) * size_t(b1_images));
    for (const auto& [batch, threads] : configs) {
      if (rows[{batch, threads}].contains("ort")) continue;
      const npy::Array& src = batch == 1 ? head : e.inputs_np;
      rows[{batch, threads}]["ort"] = timing_json(time_ort(ort_model, e.input_name, src, batch, threads, o, nullptr));
    }
  }
  for (const auto& [batch, threads] : configs) {
    json row = rows[{batch, threads}];
    if (!row.contains("octet") && !row.contains("ort")) continue;
    row["batch"] = batch;
    row["threads"] = threads;
    if (!row.contains("octet")) row["octet"] = nullptr;
    report["latency"].push_back(row);
  }
  if (all_cores > 1)
    report["note"] = fmt::format("octet ran with {} thread{} (--threads); rows with another thread count show ONNX "
                                 "Runtime only",
                                 o.threads, o.threads == 1 ? "" : "s");
  return run;
}

// The INT8 model to evaluate: the QDQ graph (quantized here, or the model itself), the file
// ONNX Runtime runs, and where the final INT8 logits can be compared.
struct Int8Model {
  ir::Graph graph;         // for the octet Session (with the logits tap as an extra output)
  std::string ort_path;    // the model file ORT runs (a temporary file unless it is MODEL itself)
  int64_t bytes = 0;       // serialized QDQ model
  std::optional<LogitsTap> tap;
  std::optional<QuantizeResult> quantized;  // when quantized in memory
};

// `calib` may differ from o.calib (the dynamic column of --precision all).
Int8Model prepare_int8(const ir::Graph& graph, bool model_is_quantized, const EvalOptions& o, const CalibrationArgs& calib,
                       const TempDir* tmp, const std::string& file_name) {
  Int8Model m;
  if (model_is_quantized) {
    m.graph = graph;
    m.bytes = int64_t(fs::file_size(o.model));
  } else {
    m.quantized = quantize_for_cli(graph, o.model, calib);
    m.graph = m.quantized->graph;
    m.bytes = int64_t(loader::save_onnx_bytes(m.graph).size());
  }
  m.tap = find_logits_tap(m.graph);
  if (m.tap) m.graph = with_tap_output(std::move(m.graph), *m.tap);
  m.ort_path = o.model;
  if (tmp && (!model_is_quantized || (m.tap && m.tap->extra_output))) {
    m.ort_path = (tmp->path() / file_name).string();
    loader::save_onnx(m.graph, m.ort_path);
  }
  return m;
}

json tap_json(const Int8Model& m, const PrecisionRun& run) {
  if (!m.tap) return {{"skipped", "the output is not computed from a DequantizeLinear"}};
  if (run.octet_tap.empty() || run.octet_tap.size() != run.ort_tap.size())
    return {{"tensor", m.tap->tensor}, {"skipped", "ONNX Runtime did not return the tensor"}};
  TapComparison c = compare_tap(run.octet_tap, run.ort_tap, m.tap->scale);
  json j = {{"tensor", m.tap->tensor}, {"node", m.tap->node}, {"values", c.values}, {"identical", c.identical},
            {"identical_share", c.values ? double(c.identical) / double(c.values) : 0.0},
            {"max_abs_diff", c.max_abs_diff}, {"added_as_output", m.tap->extra_output}};
  if (m.tap->scale > 0) {
    j["scale"] = m.tap->scale;
    j["max_lsb"] = c.max_lsb;
  }
  return j;
}

json int8_origin_json(const Int8Model& m) {
  return {{"source", m.quantized ? "quantized in memory" : "model"}, {"bytes", m.bytes}};
}

// The session of `graph`, whose first output eval scores as classes: it must be [batch,
// classes] floats. Anything else (an image, a detection head) would be read as thousands of
// "classes", with a confusion matrix of their square. Checked on the planned shapes, before
// calibration or data are touched.
Session classifier_session(const ir::Graph& graph, const std::string& path) {
  Session session(graph, engine_session_options());
  const TensorSpec& out = session.outputs().at(0);
  if (out.dtype == ir::DType::f32 && out.dims.size() == 2 && out.dims[1] > 0) return session;
  throw ir::Error(fmt::format("{}: output '{}' is {} {}, not [batch, classes]: eval measures classifiers; use `octet "
                              "run` to see any model's outputs, `octet diff` to compare them between precisions or "
                              "with ONNX Runtime",
                              path, out.name, ir::dtype_name(out.dtype), ir::dims_str(out.dims)));
}

int run_eval(EvalOptions o) {
  // One thread count for both engines: eval's --threads when given, else the global one.
  if (o.threads > 0) set_engine_threads(o.threads);
  o.threads = engine_threads();
  ir::Graph graph = loader::load_onnx(o.model);
  std::string quantized_node;
  const bool model_is_quantized = calib::is_quantized(graph, &quantized_node);
  if (o.precision.empty()) o.precision = model_is_quantized ? "int8" : "fp32";
  const std::string& p = o.precision;
  if (p != "fp32" && p != "int8" && p != "dynamic" && p != "both" && p != "all")
    throw ir::Error("--precision must be fp32, int8, dynamic, both or all, got '" + p + "'");
  if (model_is_quantized && p != "int8")
    throw ir::Error(o.model + " is already quantized (" + quantized_node + "): there is no FP32 original to " +
                    (p == "both" || p == "all" ? "compare with" : "run") +
                    "; use --precision int8, or evaluate the FP32 model with --precision " + (p == "dynamic" ? "dynamic" : "both"));
  // int8 follows --mode (static unless --mode dynamic); dynamic and all's third column are dynamic.
  const bool want_fp32 = p == "fp32" || p == "both" || p == "all";
  const bool want_int8 = p == "int8" || p == "both" || p == "all";
  const bool want_dynamic = p == "dynamic" || p == "all";
  if (p == "all" && parse_settings(o.calib).dynamic)
    throw ir::Error("--precision all already has a dynamic column; --mode dynamic would make the INT8 column dynamic too");
  CalibrationArgs dynamic_args = o.calib;
  dynamic_args.mode = "dynamic";
  dynamic_args.per_tensor = false;
  if (want_int8 && !model_is_quantized) parse_settings(o.calib);  // fail on a bad option before any work
  if (want_dynamic) parse_settings(dynamic_args);
  if (o.compare_ort)
    if (auto why = ort::unavailable_reason(); !why.empty()) throw ir::Error("--compare-ort: " + why);

  const TensorSpec input = image_input(graph, o.model);
  // Planned (and its weights packed) once: the FP32 column below runs this session.
  Session fp32_session = classifier_session(graph, o.model);
  ModelCard card = find_model_card(o.model).value_or(ModelCard{});
  if (o.data.empty()) o.data = card.data;
  if (o.data.empty())
    throw ir::Error(o.model + " has no model card with a default dataset: give --data SPEC (e.g. "
                    "fashion-mnist:test, cifar10:FILE.bin, images:DIR)");

  // INT8 first: a calibration problem (a test split, an empty set) fails before the long FP32 pass.
  std::optional<TempDir> tmp;
  if (want_int8 && o.compare_ort) tmp.emplace();
  if ((want_int8 || want_dynamic) && o.compare_ort && !tmp) tmp.emplace();
  std::optional<Int8Model> int8, dynamic;
  o.calib.batch = dynamic_args.batch = o.batch;
  o.calib.progress = dynamic_args.progress = o.progress;
  if (want_int8) int8 = prepare_int8(graph, model_is_quantized, o, o.calib, tmp ? &*tmp : nullptr, "int8.onnx");
  if (want_dynamic) dynamic = prepare_int8(graph, false, o, dynamic_args, tmp ? &*tmp : nullptr, "int8_dynamic.onnx");

  EvalData e;
  e.dataset = load_dataset_for(o.data, input, o.limit, card.classes);
  if (e.dataset.count() == 0) throw ir::Error("the dataset '" + o.data + "' has no images");
  e.classes = card.classes.empty() ? e.dataset.class_names : card.classes;
  e.classes_from_card = !card.classes.empty();
  e.inputs = make_inputs(e.dataset, card, input);
  e.input_name = input.name;
  e.inputs_np.dtype = npy::DType::f32;
  e.inputs_np.shape = e.inputs.dims;
  e.inputs_np.data = e.inputs.bytes;

  json report;
  report["model"] = o.model;
  report["file_bytes"] = fs::file_size(o.model);
  report["parameters"] = graph.parameter_count();
  report["data"] = e.dataset.description;
  report["classes"] = e.classes;
  report["precision"] = o.precision;
  report["batch"] = o.batch;
  if (int8) {
    report["int8_model"] = int8_origin_json(*int8);
    if (int8->quantized) report["calibration"] = quantize_report_json(*int8->quantized);
  }
  if (dynamic) {
    report["dynamic_model"] = int8_origin_json(*dynamic);
    report["dynamic_calibration"] = quantize_report_json(*dynamic->quantized);
  }

  const bool side_by_side = p == "both" || p == "all";
  std::optional<PrecisionRun> fp32_run, int8_run, dynamic_run;
  if (want_fp32) {
    fp32_run = evaluate(fp32_session, side_by_side ? "octet FP32" : "octet", o.model, e, o);
  }
  auto run_int8 = [&](Int8Model& m, const char* label) {
    Session session(m.graph, engine_session_options());
    PrecisionRun run = evaluate(session, label, m.ort_path, e, o, m.tap ? m.tap->tensor : "");
    if (o.compare_ort) run.report["int8_logits"] = tap_json(m, run);
    run.report["bytes"] = m.bytes;
    return run;
  };
  if (int8) int8_run = run_int8(*int8, p == "all" ? "octet INT8 static" : "octet INT8");
  if (dynamic) dynamic_run = run_int8(*dynamic, "octet INT8 dynamic");

  if (side_by_side) {
    report["fp32"] = fp32_run->report;
    report["int8"] = int8_run->report;
    report["int8_bytes"] = int8->bytes;
    report["size_ratio"] = int8->bytes ? double(report["file_bytes"].get<int64_t>()) / double(int8->bytes) : 0.0;
    if (dynamic_run) report["dynamic"] = dynamic_run->report;
    if (o.json) fmt::print("{}\n", report.dump(2));
    else print_side_by_side_report(report);
    return 0;
  }
  report.update(fp32_run ? fp32_run->report : int8_run ? int8_run->report : dynamic_run->report);
  if (o.json) fmt::print("{}\n", report.dump(2));
  else print_single_report(report);
  return 0;
}

}  // namespace

Command add_eval_command(CLI::App& app) {
  auto o = std::make_shared<EvalOptions>();
  auto* cmd = app.add_subcommand("eval", "Accuracy and latency on a dataset, in FP32, INT8 or both, optionally side by "
                                         "side with ONNX Runtime");
  cmd->add_option("model", o->model, "ONNX model file (its card model.json gives preprocessing and data)")
      ->required()->check(CLI::ExistingFile);
  cmd->add_option("--data", o->data,
                  "Dataset: fashion-mnist[:train|:test][@DIR], cifar10:FILE[,FILE...], images:DIR (one folder per "
                  "class, named after the card's class or its number), "
                  "idx:IMAGES,LABELS (default: the model card's)");
  cmd->add_option("--precision", o->precision,
                  "fp32; int8 (the model quantized in memory with the calibration options below, or the model itself "
                  "when it is already quantized); dynamic (quantized in memory as --mode dynamic: no calibration); "
                  "both (fp32 and int8 side by side); all (fp32, static int8 and dynamic int8 side by side). Default: "
                  "fp32; int8 for a quantized model");
  cmd->add_option("--limit", o->limit, "Evaluate at most N images")->check(positive());
  cmd->add_option("--batch", o->batch, "Batch size of the accuracy pass, the batch-N latency row and calibration")
      ->check(positive());
  cmd->add_option("--threads", o->threads,
                  "Threads for both engines (default: octet's --threads, 1); latency rows also time ORT at 1 thread "
                  "and all cores")
      ->check(positive());
  cmd->add_option("--latency-images", o->latency_images, "Images timed one by one for the batch-1 rows")
      ->check(positive());
  cmd->add_option("--warmup", o->warmup, "Untimed runs before timing");
  cmd->add_flag("--compare-ort", o->compare_ort, "Run ONNX Runtime on the same inputs (and the same INT8 QDQ model) "
                                                "and report it side by side");
  cmd->add_flag("--json", o->json, "Print the report as JSON");
  cmd->add_flag("!--no-progress", o->progress, "No progress output on stderr");
  add_calibration_options(cmd, o->calib);
  return [o, cmd]() -> int { return cmd->parsed() ? run_eval(*o) : -1; };
}

}  // namespace octet::cli
