// `octet eval model.onnx`: accuracy and latency on a dataset, optionally side by side with
// ONNX Runtime on the same images, batch size and thread count.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include <fmt/format.h>

#include "engine/session.h"
#include "tools/cli/commands.h"
#include "tools/datasets/dataset.h"
#include "tools/metrics.h"
#include "tools/model_card.h"
#include "tools/ort_client.h"
#include "tools/progress.h"
#include "tools/stats.h"

namespace octet::cli {
namespace {

using json = nlohmann::json;

struct EvalOptions {
  std::string model, data;
  int64_t limit = -1;
  int batch = 64;
  int threads = 1;
  int latency_images = 200;
  int warmup = 3;
  bool json = false;
  bool compare_ort = false;
  bool progress = true;
};

// One latency measurement: per-run milliseconds at a batch size and thread count.
struct Timing {
  std::string engine;
  int batch, threads;
  std::vector<double> run_ms;
  int64_t images;
};

ir::TensorData make_inputs(const data::Dataset& d, const ModelCard& card, const TensorSpec& spec) {
  if (spec.dims.size() != 4) throw ir::Error("octet eval needs an image model with one [N,C,H,W] input");
  const int64_t c = spec.dims[1], h = spec.dims[2], w = spec.dims[3];
  if (d.channels != c || d.height != h || d.width != w)
    throw ir::Error(fmt::format("the data has {}x{}x{} images (CxHxW), the model takes {}x{}x{}: pick data that "
                                "fits the model (--data)", d.channels, d.height, d.width, c, h, w));
  ir::TensorData t = ir::TensorData::make(ir::DType::f32, {d.count(), c, h, w});
  float* out = t.as<float>();
  const int64_t plane = h * w;
  for (int64_t i = 0; i < d.count(); ++i) {
    const uint8_t* img = d.image(i);
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < plane; ++p)
        out[(i * c + ch) * plane + p] = card.normalize(int(ch), img[ch * plane + p]);
  }
  return t;
}

ir::TensorData slice(const ir::TensorData& all, int64_t begin, int64_t end) {
  ir::Dims d = all.dims;
  d[0] = end - begin;
  ir::TensorData t = ir::TensorData::make(all.dtype, d);
  const size_t row = all.bytes.size() / size_t(all.dims[0]);
  ir::copy_bytes(t.bytes.data(), all.bytes.data() + size_t(begin) * row, t.bytes.size());
  return t;
}

// Runs octet over every image in batches; returns the [count, classes] scores and times
// each batch.
std::vector<float> run_octet(Session& s, const ir::TensorData& all, int batch, Timing& timing, bool progress) {
  const int64_t n = all.dims[0];
  std::vector<float> scores;
  Progress bar("octet", n, progress);
  for (int64_t b = 0; b < n; b += batch) {
    auto in = slice(all, b, std::min<int64_t>(n, b + batch));
    auto t0 = std::chrono::steady_clock::now();
    auto out = s.run({in});
    auto t1 = std::chrono::steady_clock::now();
    timing.run_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    const float* p = out[0].as<float>();
    scores.insert(scores.end(), p, p + out[0].count());
    bar.update(std::min<int64_t>(n, b + batch));
  }
  timing.images = n;
  return scores;
}

Timing time_octet_batch1(Session& s, const ir::TensorData& all, int images, int warmup) {
  Timing t{"octet", 1, 1, {}, 0};
  const int64_t n = std::min<int64_t>(images, all.dims[0]);
  auto first = slice(all, 0, 1);
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

json stats_json(const LatencyStats& s) {
  return {{"samples", s.samples}, {"mean", s.mean}, {"std", s.stddev}, {"cv", s.cv}, {"p50", s.p50},
          {"p95", s.p95}, {"iqr", s.iqr}, {"min", s.min}, {"max", s.max}};
}

json timing_json(const Timing& t) {
  // Per-run figures are per batch; per-image figures divide by the batch (the last, smaller
  // batch of a pass is left out of the statistics so every sample has the same size).
  std::vector<double> full;
  const size_t runs = t.run_ms.size();
  for (size_t i = 0; i < runs; ++i)
    if (t.batch == 1 || i + 1 < runs || t.images % t.batch == 0) full.push_back(t.run_ms[i]);
  if (full.empty()) full = t.run_ms;
  auto per_batch = summarize(full);
  return {{"engine", t.engine}, {"batch", t.batch}, {"threads", t.threads},
          {"per_batch_ms", stats_json(per_batch)}, {"per_image_ms", stats_json(per_item(per_batch, t.batch))}};
}

json metrics_json(const ClassificationMetrics& m, const std::vector<std::string>& classes) {
  json per_class = json::array();
  for (size_t c = 0; c < m.per_class_total.size(); ++c)
    per_class.push_back({{"class", c < classes.size() ? classes[c] : std::to_string(c)},
                         {"correct", m.per_class_correct[c]}, {"total", m.per_class_total[c]}});
  return {{"images", m.images}, {"labelled", m.labelled}, {"top1", m.top1()}, {"top5", m.top5()},
          {"top1_correct", m.top1_correct}, {"per_class", per_class}, {"confusion", m.confusion}};
}

void print_report(const json& r) {
  fmt::print("model    {} ({:.1f} KB, {} parameters)\n", r["model"].get<std::string>(),
             r["file_bytes"].get<double>() / 1024.0, r["parameters"].get<int64_t>());
  fmt::print("data     {}\n", r["data"].get<std::string>());
  const bool ort = r.contains("ort");
  auto pct = [](double v) { return fmt::format("{:.2f}%", 100 * v); };
  fmt::print("\n{:<34} {:>14} {:>14} {:>10}\n", "", "octet", ort ? "ORT " + r["ort"]["version"].get<std::string>() : "",
             ort ? "octet/ORT" : "");
  const auto& om = r["octet"]["accuracy"];
  fmt::print("{:<34} {:>14} {:>14}\n", "top-1", pct(om["top1"]), ort ? pct(r["ort"]["accuracy"]["top1"]) : "");
  fmt::print("{:<34} {:>14} {:>14}\n", "top-5", pct(om["top5"]), ort ? pct(r["ort"]["accuracy"]["top5"]) : "");
  if (ort) {
    const auto& a = r["agreement"];
    fmt::print("{:<34} {:>14}\n", "top-1 agreement",
               fmt::format("{}/{}", a["same_top1"].get<int64_t>(), a["images"].get<int64_t>()));
    fmt::print("{:<34} {:>14}\n", "max |octet - ORT| (max |ORT|)",
               fmt::format("{:.2g} ({:.3g})", a["max_abs_diff"].get<double>(), a["max_abs_ref"].get<double>()));
  }
  fmt::print("\nlatency, ms per image after warm-up (per-batch figures in --json)\n");
  fmt::print("  {:<20} {:^42} {:^42} {:>9}\n", "", "octet", ort ? "ORT" : "", ort ? "octet/ORT" : "");
  std::string head;
  for (const char* h : {"mean", "P50", "P95", "std", "IQR", "CV"}) head += fmt::format("{:>7}", h);
  fmt::print("  {:<20} {:>42} {:>42} {:>9}\n", "", head, ort ? head : "", ort ? "(P50)" : "");
  auto cells = [](const json& e) {
    if (e.is_null()) return fmt::format("{:>42}", "-");
    const auto& s = e["per_image_ms"];
    std::string out;
    for (const char* k : {"mean", "p50", "p95", "std", "iqr"}) out += fmt::format("{:>7.3f}", s[k].get<double>());
    return out + fmt::format("{:>6.0f}%", 100 * s["cv"].get<double>());
  };
  for (const auto& t : r["latency"]) {
    const json& o = t["octet"];
    const json ortj = t.contains("ort") ? t["ort"] : json();
    std::string ratio;
    if (!o.is_null() && !ortj.is_null() && ortj["per_image_ms"]["p50"].get<double>() > 0)
      ratio = fmt::format("{:.2f}x", o["per_image_ms"]["p50"].get<double>() / ortj["per_image_ms"]["p50"].get<double>());
    const int threads = t["threads"];
    fmt::print("  {:<20} {} {} {:>9}\n", fmt::format("batch {}, {} thread{}", t["batch"].get<int>(), threads,
                                                      threads > 1 ? "s" : ""),
               cells(o), ort ? cells(ortj) : "", ratio);
  }
  if (r.contains("note")) fmt::print("\nnote: {}\n", r["note"].get<std::string>());

  const auto& pc = om["per_class"];
  fmt::print("\nper class (octet)      correct/total   top-1\n");
  for (const auto& c : pc) {
    int64_t total = c["total"], correct = c["correct"];
    fmt::print("  {:<20} {:>6}/{:<6} {:>7.2f}%\n", c["class"].get<std::string>(), correct, total,
               total ? 100.0 * double(correct) / double(total) : 0.0);
  }
  fmt::print("\nconfusion matrix (octet; rows = true class, columns = predicted)\n      ");
  const auto& cm = om["confusion"];
  for (size_t j = 0; j < cm.size(); ++j) fmt::print("{:>6}", j);
  fmt::print("\n");
  for (size_t i = 0; i < cm.size(); ++i) {
    fmt::print("  {:>3} ", i);
    for (const auto& v : cm[i]) fmt::print("{:>6}", v.get<int64_t>());
    fmt::print("\n");
  }
}

int run_eval(EvalOptions o) {
  Session session = Session::load(o.model);
  if (session.inputs().size() != 1 || session.outputs().empty())
    throw ir::Error("octet eval needs a model with one image input and a [N, classes] output");
  ModelCard card = find_model_card(o.model).value_or(ModelCard{});
  if (o.data.empty()) o.data = card.data;
  if (o.data.empty())
    throw ir::Error(o.model + " has no model card with a default dataset: give --data SPEC (e.g. "
                    "fashion-mnist:test, cifar10:FILE.bin, images:DIR)");
  const TensorSpec& in_spec = session.inputs()[0];
  data::LoadOptions lo;
  lo.limit = o.limit;
  // Pictures from a folder are resized and converted to what the model takes; a dataset of
  // fixed-size images must already fit (checked by make_inputs).
  if (in_spec.dims.size() == 4 && o.data.rfind("images:", 0) == 0) {
    lo.channels = int(in_spec.dims[1]);
    lo.height = int(in_spec.dims[2]);
    lo.width = int(in_spec.dims[3]);
  }
  data::Dataset d = data::load_dataset(o.data, lo);
  if (d.count() == 0) throw ir::Error("the dataset '" + o.data + "' has no images");
  std::vector<std::string> classes = card.classes.empty() ? d.class_names : card.classes;
  ir::TensorData all = make_inputs(d, card, in_spec);

  json report;
  report["model"] = o.model;
  report["file_bytes"] = std::filesystem::file_size(o.model);
  report["parameters"] = session.graph().parameter_count();
  report["data"] = d.description;
  report["classes"] = classes;

  // Accuracy pass, timed per batch.
  Timing octet_batch{"octet", o.batch, 1, {}, 0};
  std::vector<float> scores = run_octet(session, all, o.batch, octet_batch, o.progress);
  const int n_classes = int(scores.size() / size_t(d.count()));
  auto metrics = classify(scores.data(), d.count(), n_classes, d.labels);
  report["octet"]["accuracy"] = metrics_json(metrics, classes);
  Timing octet_b1 = time_octet_batch1(session, all, o.latency_images, o.warmup);

  // Latency rows: octet runs single-threaded (its thread pool comes with the fast kernels).
  const int all_cores = int(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::pair<int, int>> configs = {{1, 1}, {o.batch, 1}};
  if (all_cores > 1) configs.insert(configs.end(), {{1, all_cores}, {o.batch, all_cores}});
  if (o.threads > 1 && o.threads != all_cores) configs.insert(configs.end(), {{1, o.threads}, {o.batch, o.threads}});
  std::map<std::pair<int, int>, json> rows;
  rows[{1, 1}]["octet"] = timing_json(octet_b1);
  rows[{o.batch, 1}]["octet"] = timing_json(octet_batch);

  if (o.compare_ort) {
    if (auto why = ort::unavailable_reason(); !why.empty()) throw ir::Error("--compare-ort: " + why);
    npy::Array all_np;
    all_np.dtype = npy::DType::f32;
    all_np.shape = all.dims;
    all_np.data = all.bytes;
    std::map<std::string, npy::Array> ort_out;
    Timing ob = time_ort(o.model, in_spec.name, all_np, o.batch, o.threads, o, &ort_out);
    const npy::Array& ort_scores = ort_out.at(session.outputs()[0].name);
    if (ort_scores.count() != int64_t(scores.size())) throw ir::Error("ORT returned a different output size");
    auto ort_metrics = classify(ort_scores.as<float>(), d.count(), n_classes, d.labels);
    report["ort"]["accuracy"] = metrics_json(ort_metrics, classes);
    report["ort"]["version"] = ort::version();
    auto agree = compare_scores(scores.data(), ort_scores.as<float>(), d.count(), n_classes);
    report["agreement"] = {{"same_top1", agree.same_top1}, {"images", agree.images},
                           {"max_abs_diff", agree.max_abs_diff}, {"max_abs_ref", agree.max_abs_ref}};
    rows[{o.batch, o.threads}]["ort"] = timing_json(ob);
    const int64_t b1_images = std::min<int64_t>(o.latency_images, d.count());
    npy::Array head = all_np;
    head.shape[0] = b1_images;
    head.data.resize(all_np.data.size() / size_t(d.count()) * size_t(b1_images));
    for (const auto& [batch, threads] : configs) {
      if (rows[{batch, threads}].contains("ort")) continue;
      const npy::Array& src = batch == 1 ? head : all_np;
      rows[{batch, threads}]["ort"] = timing_json(time_ort(o.model, in_spec.name, src, batch, threads, o, nullptr));
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
  if (all_cores > 1) report["note"] = "octet runs single-threaded for now (its reference kernels have no thread pool); "
                                      "multi-thread rows show ONNX Runtime only";
  if (o.json) fmt::print("{}\n", report.dump(2));
  else print_report(report);
  return 0;
}

}  // namespace

Command add_eval_command(CLI::App& app) {
  auto o = std::make_shared<EvalOptions>();
  auto* cmd = app.add_subcommand("eval", "Accuracy and latency on a dataset, optionally side by side with ONNX Runtime");
  cmd->add_option("model", o->model, "ONNX model file (its card model.json gives preprocessing and data)")
      ->required()->check(CLI::ExistingFile);
  cmd->add_option("--data", o->data,
                  "Dataset: fashion-mnist[:train|:test][@DIR], cifar10:FILE[,FILE...], images:DIR, "
                  "idx:IMAGES,LABELS (default: the model card's)");
  cmd->add_option("--limit", o->limit, "Evaluate at most N images")->check(CLI::PositiveNumber);
  cmd->add_option("--batch", o->batch, "Batch size of the accuracy pass and the batch-N latency row")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--threads", o->threads, "Threads for ONNX Runtime's accuracy pass (latency rows also use 1 and all cores)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--latency-images", o->latency_images, "Images timed one by one for the batch-1 rows")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--warmup", o->warmup, "Untimed runs before timing");
  cmd->add_flag("--compare-ort", o->compare_ort, "Run ONNX Runtime on the same inputs and report it side by side");
  cmd->add_flag("--json", o->json, "Print the report as JSON");
  cmd->add_flag("!--no-progress", o->progress, "No progress output on stderr");
  return [o, cmd]() -> int { return cmd->parsed() ? run_eval(*o) : -1; };
}

}  // namespace octet::cli
