#include "apps/explain/explain.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <thread>

#include "calib/calibrate.h"
#include "engine/session.h"
#include "kernels/arch.h"
#include "loader/onnx_loader.h"
#include "loader/onnx_writer.h"
#include "apps/cli/int8_parity.h"
#include "apps/cli/model_inputs.h"
#include "apps/explain/accuracy.h"
#include "apps/explain/advice.h"
#include "apps/explain/differences.h"
#include "io/model_card.h"
#include "tools/ort/ort_client.h"
#include "apps/cli/stats.h"
#include "io/tensor_io.h"
#ifdef OCTET_EXPLAIN_PEAKS
#include "bench/peak_values.h"
#endif

namespace octet::explain {
namespace {

using json = nlohmann::json;

struct Variant {
  std::string precision;  // fp32 | int8_static | int8_dynamic
  ir::Graph graph;
  std::string file;  // written for ONNX Runtime (--compare-ort)
};

void say(const ExplainOptions& o, const std::string& line) {
  static const auto start = std::chrono::steady_clock::now();
  if (o.progress)
    std::fprintf(stderr, "explain [%5.1f s]: %s\n",
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), line.c_str());
}

std::string cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0 || line.rfind("Model", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown";
}

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// `count` images for timing: the first ones, repeated when the set is smaller.
ir::TensorData images_for(const ir::TensorData& all, int64_t count) {
  const int64_t have = all.dims.at(0);
  ir::TensorData out = ir::TensorData::make(all.dtype, [&] {
    ir::Dims d = all.dims;
    d[0] = count;
    return d;
  }());
  const size_t image_bytes = all.bytes.size() / size_t(std::max<int64_t>(1, have));
  for (int64_t i = 0; i < count; ++i)
    std::memcpy(out.bytes.data() + size_t(i) * image_bytes, all.bytes.data() + size_t(i % have) * image_bytes,
                image_bytes);
  return out;
}

// Uniform [0, 1) images for a model without data: enough to time it.
ir::TensorData random_images(const TensorSpec& input, int64_t count) {
  ir::Dims d = input.dims;
  for (auto& e : d)
    if (e < 0) e = 1;
  d[0] = count;
  ir::TensorData t = ir::TensorData::make(ir::DType::f32, d);
  uint32_t state = 12345;
  float* p = t.as<float>();
  for (int64_t i = 0; i < t.count(); ++i) {
    state = state * 1664525u + 1013904223u;
    p[i] = float(state >> 8) / float(1 << 24);
  }
  return t;
}

// This core's arithmetic limit at a level: FP32 GFLOP/s or INT8 GOP/s (bench/peak_values.h,
// measured in this process); 0 when this build has no peak loops (bench/ not built, AArch64).
double peak_of(kernels::Isa isa, bool int8) {
#ifdef OCTET_EXPLAIN_PEAKS
  return int8 ? bench::peak_gops(isa) : bench::peak_gflops(isa);
#else
  (void)isa;
  (void)int8;
  return 0;
#endif
}

json step_json(const StepProfile& s, size_t index) {
  json j = {{"index", index}, {"node", s.node}, {"op", s.op}, {"kernel", s.kernel},
            {"category", category_name(s.category)}, {"us", s.us}, {"macs", s.macs}, {"scalar", s.scalar}};
  if (s.macs > 0 && s.us > 0) j["gops"] = 2.0 * double(s.macs) / s.us / 1e3;
  if (!s.fallback.empty()) j["fallback"] = s.fallback;
  if (s.range_us > 0) j["range_us"] = s.range_us;
  return j;
}

json categories_json(const std::vector<StepProfile>& steps) {
  std::map<Category, double> sum;
  for (Category c : kCategories) sum[c] = 0;
  for (const auto& s : steps) {
    sum[Category::dynamic_range] += s.range_us;
    sum[s.category] += s.us - s.range_us;
  }
  json j = json::object();
  for (Category c : kCategories) j[category_name(c)] = sum[c];
  return j;
}

json tensor_json(const TensorAccuracy& t) {
  json j = {{"name", t.name},       {"quantized", t.quantized}, {"producer", t.producer},
            {"op", t.op},           {"scale", t.scale},         {"zero_point", t.zero_point},
            {"culprit", t.culprit}, {"values", t.values}};
  const auto [lo, hi] = t.range();
  j["range"] = {lo, hi};
  if (auto s = t.sqnr_db()) j["sqnr_db"] = *s;
  if (t.values > 0) j["clip_rate"] = double(t.clipped) / double(t.values);
  if (t.sqnr_drop_db) j["sqnr_drop_db"] = *t.sqnr_drop_db;
  json methods = json::object();
  for (const auto& [m, r] : t.methods) methods[m] = {r.first, r.second};
  j["methods"] = methods;
  return j;
}

kernels::Isa highest_without_dot_product(const std::vector<kernels::Isa>& levels) {
  kernels::Isa out = kernels::Isa::scalar;
  for (kernels::Isa isa : levels)
    if (!has_int8_dot_product(isa) && kernels::isa_rank(isa) > kernels::isa_rank(out)) out = isa;
  return out;
}

double file_size(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  return in ? double(in.tellg()) : 0.0;
}

}  // namespace

json explain_model(const ExplainOptions& o) {
  const auto started = std::chrono::steady_clock::now();
  if (o.mode != "static" && o.mode != "dynamic" && o.mode != "both")
    throw ir::Error("--mode must be static, dynamic or both, got '" + o.mode + "'");
  if (o.batches.empty()) throw ir::Error("--batch needs at least one batch size");

  // The FP32 model and its INT8 forms.
  ir::Graph given = loader::load_onnx(o.model);
  std::string fp32_path = o.model;
  std::vector<Variant> variants;
  if (std::string first; calib::is_quantized(given, &first)) {
    if (o.fp32_model.empty())
      throw ir::Error(o.model + " is already quantized (" + first +
                      "): give its FP32 original with --fp32 FILE, so INT8 can be compared with FP32");
    fp32_path = o.fp32_model;
    variants.push_back({"fp32", loader::load_onnx(o.fp32_model), o.fp32_model});
    bool dynamic = false;
    for (const auto& n : given.nodes) dynamic |= n.op == "DynamicQuantizeLinear";
    variants.push_back({dynamic ? "int8_dynamic" : "int8_static", std::move(given), o.model});
    if (!o.dynamic_model.empty()) {
      if (dynamic) throw ir::Error(o.model + " is dynamic already: give the static model with the dynamic one");
      ir::Graph d = loader::load_onnx(o.dynamic_model);
      if (std::none_of(d.nodes.begin(), d.nodes.end(), [](const ir::Node& n) { return n.op == "DynamicQuantizeLinear"; }))
        throw ir::Error(o.dynamic_model + " has no DynamicQuantizeLinear: not a dynamically quantized model");
      variants.push_back({"int8_dynamic", std::move(d), o.dynamic_model});
    }
  } else {
    if (!o.dynamic_model.empty()) throw ir::Error("a dynamic INT8 file goes with an INT8 model, not " + o.model);
    if (!o.fp32_model.empty()) throw ir::Error("--fp32 is for an INT8 model; " + o.model + " is FP32 already");
    variants.push_back({"fp32", std::move(given), o.model});
  }
  variants.reserve(3);  // `fp32` below refers into it while the INT8 forms are added
  const ir::Graph& fp32 = variants[0].graph;
  const std::optional<ModelCard> card = find_model_card(fp32_path);
  const TensorSpec input = cli::image_input(fp32, fp32_path);

  cli::TempDir temp;
  const bool quantized_here = variants.size() == 1;  // the calibration options can be varied
  if (variants.size() == 1) {
    for (const char* mode : {"static", "dynamic"}) {
      if (o.mode != mode && o.mode != "both") continue;
      say(o, fmt::format("quantizing ({})", mode));
      cli::CalibrationArgs args = o.calib;
      args.mode = mode;
      args.progress = o.progress;
      cli::QuantizeResult q = cli::quantize_for_cli(fp32, fp32_path, args);
      const std::string precision = std::string("int8_") + mode;
      const std::string file = (temp.path() / (precision + ".onnx")).string();
      loader::save_onnx(q.graph, file);
      variants.push_back({precision, std::move(q.graph), file});
    }
  }

  // The evaluation images (or random ones when there is no data to read).
  std::string data_spec = o.data.empty() && card ? card->data : o.data;
  std::string no_accuracy;
  ir::TensorData images;
  std::vector<int> labels;
  if (data_spec.empty() || data_spec == "none") {
    no_accuracy = data_spec == "none" ? "--data none" : "no --data given and no model card names a dataset";
    images = random_images(input, std::max(16, *std::max_element(o.batches.begin(), o.batches.end())));
  } else {
    say(o, "loading " + data_spec);
    const data::Dataset d =
        cli::load_dataset_for(data_spec, input, o.images, card ? card->classes : std::vector<std::string>{});
    images = cli::make_inputs(d, card.value_or(ModelCard{}), input);
    labels = d.labels;
  }

  std::vector<kernels::Isa> levels = o.levels.empty() ? kernels::runnable_isas() : o.levels;
  const kernels::Isa best = *std::max_element(levels.begin(), levels.end(), [](kernels::Isa a, kernels::Isa b) {
    return kernels::isa_rank(a) < kernels::isa_rank(b);
  });

  json report;
  report["schema"] = "octet-explain/1";
  report["created"] = now_utc();

  // Speed and profiles, every precision at every level.
  json speed = json::array(), profiles = json::array(), differences = json::array(), skipped = json::array();
  std::map<std::pair<std::string, kernels::Isa>, std::vector<StepProfile>> profile_of;
  std::vector<int> thread_counts = {o.threads};
  const int cores = int(std::thread::hardware_concurrency());
  if (o.all_cores && cores > o.threads) thread_counts.push_back(cores);
  const size_t configs = levels.size() * variants.size();
  size_t config = 0;
  for (kernels::Isa isa : levels) {
    for (const Variant& v : variants) {
      say(o, fmt::format("timing {} at {} ({}/{})", v.precision, kernels::isa_name(isa), ++config, configs));
      SessionOptions so;
      so.isa = isa;
      so.threads = o.threads;
      Session session(ir::Graph(v.graph), so);
      for (int threads : thread_counts) {
        if (threads != o.threads && isa != best && !o.all_cores_every_level) continue;
        SessionOptions to = so;
        to.threads = threads;
        std::optional<Session> other;
        if (threads != o.threads) other.emplace(ir::Graph(v.graph), to);
        Session& s = other ? *other : session;
        double batch1_ms = 0;
        for (int batch : o.batches) {
          if (o.max_run_seconds > 0 && batch1_ms > 0 && batch1_ms * batch / 1e3 > o.max_run_seconds) {
            skipped.push_back({{"precision", v.precision}, {"isa", kernels::isa_name(isa)}, {"batch", batch},
                               {"threads", threads}, {"estimated_run_seconds", batch1_ms * batch / 1e3}});
            continue;
          }
          const double ms = ms_per_image(s, images_for(images, batch), o.budget);
          if (batch == 1) batch1_ms = ms;
          speed.push_back({{"engine", "octet"}, {"precision", v.precision}, {"isa", kernels::isa_name(isa)},
                           {"batch", batch}, {"threads", threads}, {"ms_per_image", ms}});
        }
      }
      std::vector<StepProfile> steps = profile_steps(session, images_for(images, 1), o.budget);
      assign_sources(steps, v.graph);
      json p = {{"precision", v.precision}, {"isa", kernels::isa_name(isa)}, {"batch", 1}, {"threads", o.threads}};
      double total = 0;
      json step_rows = json::array();
      for (size_t i = 0; i < steps.size(); ++i) {
        total += steps[i].us;
        json row = step_json(steps[i], i);
        const bool compute = steps[i].category == Category::dense || steps[i].category == Category::depthwise;
        const double peak = compute ? peak_of(isa, v.precision != "fp32") : 0.0;
        if (peak > 0 && row.contains("gops")) row["peak_fraction"] = row["gops"].get<double>() / peak;
        step_rows.push_back(std::move(row));
      }
      p["total_us"] = total;
      p["categories"] = categories_json(steps);
      p["steps"] = std::move(step_rows);
      profiles.push_back(std::move(p));
      profile_of[{v.precision, isa}] = std::move(steps);
    }
    // Where INT8 loses time: at the best level, and at the best level without an integer dot
    // product when that is another one (scalar only when nothing else was measured).
    const bool wanted = isa == best || (levels.size() == 1) || o.differences_every_level ||
                        (!has_int8_dot_product(isa) && isa != kernels::Isa::scalar && has_int8_dot_product(best) &&
                         isa == highest_without_dot_product(levels));
    for (const Variant& v : variants) {
      if (v.precision == "fp32" || !wanted) continue;
      json d = int8_differences(v.precision, isa, profile_of[{"fp32", isa}], profile_of[{v.precision, isa}], 10);
      for (auto& row : d) differences.push_back(std::move(row));
    }
  }

  std::string ort_version;
  if (o.compare_ort) {
    if (std::string why = ort::unavailable_reason(); !why.empty())
      throw ir::Error("--compare-ort: ONNX Runtime is unavailable: " + why);
    ort_version = ort::version();
    for (const Variant& v : variants) {
      for (size_t run = 0; run < thread_counts.size() * o.batches.size(); ++run) {
        const int threads = thread_counts[run / o.batches.size()];
        const int batch = o.batches[run % o.batches.size()];
        say(o, fmt::format("timing ONNX Runtime {} at batch {}, {} thread(s)", v.precision, batch, threads));
        ort::EvalOptions eo;
        eo.batch = batch;
        eo.threads = threads;
        eo.warmup = 2;
        const npy::Array all = to_npy(images_for(images, int64_t(batch) * 8));
        const ort::EvalResult r = ort::eval(v.file, input.name, all, eo);
        const double med = r.batch_ms.empty() ? 0.0 : summarize(r.batch_ms).p50;
        speed.push_back({{"engine", "ort"}, {"precision", v.precision}, {"isa", nullptr}, {"batch", batch},
                         {"threads", threads}, {"ms_per_image", med / batch}});
      }
    }
  }

  json speedups = json::array();
  for (const auto& row : speed) {
    if (row["precision"] == "fp32") continue;
    for (const auto& base : speed) {
      if (base["precision"] != "fp32" || base["engine"] != row["engine"] || base["isa"] != row["isa"] ||
          base["batch"] != row["batch"] || base["threads"] != row["threads"])
        continue;
      speedups.push_back({{"engine", row["engine"]}, {"precision", row["precision"]}, {"isa", row["isa"]},
                          {"batch", row["batch"]}, {"threads", row["threads"]},
                          {"speedup", base["ms_per_image"].get<double>() /
                                          std::max(row["ms_per_image"].get<double>(), 1e-12)}});
    }
  }
  report["speed"] = std::move(speed);
  report["speedups"] = std::move(speedups);
  report["profiles"] = std::move(profiles);
  report["differences"] = std::move(differences);
  if (!skipped.empty()) report["skipped"] = std::move(skipped);

  // Accuracy: per tensor for the static model, outputs for every INT8 model.
  if (no_accuracy.empty()) {
    json acc = {{"images", images.dims.at(0)}};
    AccuracyOptions ao;
    ao.isa = best;
    ao.threads = std::max(o.threads, int(std::thread::hardware_concurrency()));  // nothing is timed here
    int64_t last_decile = -1;
    ao.progress = [&](int64_t done, int64_t total, const char* what) {
      if (done * 10 / total != last_decile || done == total) {
        last_decile = done * 10 / total;
        say(o, fmt::format("{} {}/{}", what, done, total));
      }
    };
    ModelScores fp32_scores;
    json top1 = json::object(), agreement = json::object(), output_sqnr = json::object();
    const bool have_labels = !labels.empty() && std::any_of(labels.begin(), labels.end(), [](int l) { return l >= 0; });
    json tensors = json::array();
    for (const Variant& v : variants) {
      if (v.precision != "int8_static") continue;
      say(o, "accuracy of every quantized tensor over " + std::to_string(images.dims.at(0)) + " images");
      AccuracyResult r = measure_accuracy(fp32, v.graph, images, ao);
      fp32_scores = r.fp32;
      for (const auto& t : r.tensors) tensors.push_back(tensor_json(t));
      if (have_labels) top1[v.precision] = top1_accuracy(r.int8, labels);
      agreement[v.precision] = top1_agreement(r.fp32, r.int8);
      if (auto s = scores_sqnr_db(r.fp32, r.int8)) output_sqnr[v.precision] = *s;
      if (quantized_here) {
        // The measured effect of another calibration method: the model quantized again with it,
        // every tensor and the outputs measured on the same images.
        const std::string other = o.calib.method == "minmax" ? "percentile" : "minmax";
        say(o, "calibrating again with " + other + " to measure its effect");
        cli::CalibrationArgs args = o.calib;
        args.mode = "static";
        args.method = other;
        args.progress = false;
        const cli::QuantizeResult alt = cli::quantize_for_cli(fp32, fp32_path, args);
        AccuracyOptions quick = ao;
        quick.methods = false;
        const AccuracyResult a = measure_accuracy(fp32, alt.graph, images, quick);
        json t = json::object();
        for (const auto& x : a.tensors)
          if (auto s = x.sqnr_db()) t[x.name] = *s;
        json alt_json = {{"method", other}, {"agreement", top1_agreement(a.fp32, a.int8)}, {"tensors_sqnr_db", t}};
        if (have_labels) alt_json["top1"] = top1_accuracy(a.int8, labels);
        if (auto s = scores_sqnr_db(a.fp32, a.int8)) alt_json["output_sqnr_db"] = *s;
        acc["alternatives"] = json::array({alt_json});
        acc["method"] = o.calib.method;
      }
      if (o.compare_ort) {
        const int64_t n = std::min<int64_t>(32, images.dims.at(0));
        say(o, fmt::format("every quantized tensor against ONNX Runtime ({} images)", n));
        json ort_rows = json::array();
        json first = nullptr;
        for (const auto& c : compare_with_ort(v.graph, images_for(images, n), ao)) {
          if (c.values == 0) continue;
          ort_rows.push_back({{"name", c.name}, {"quantized", c.quantized},
                              {"identical", double(c.identical) / double(c.values)}, {"max_lsb", c.max_lsb}});
          if (first.is_null() && c.identical != c.values) first = c.name;
        }
        acc["ort"] = std::move(ort_rows);
        acc["first_difference"] = first;
      }
    }
    if (fp32_scores.scores.empty()) fp32_scores = run_scores(fp32, images, ao);
    if (have_labels) top1["fp32"] = top1_accuracy(fp32_scores, labels);
    for (const Variant& v : variants) {
      if (v.precision != "int8_dynamic") continue;
      say(o, "accuracy of the dynamic model");
      const ModelScores s = run_scores(v.graph, images, ao);
      if (have_labels) top1[v.precision] = top1_accuracy(s, labels);
      agreement[v.precision] = top1_agreement(fp32_scores, s);
      if (auto q = scores_sqnr_db(fp32_scores, s)) output_sqnr[v.precision] = *q;
    }
    if (have_labels) acc["top1"] = top1;
    acc["agreement"] = agreement;
    acc["output_sqnr_db"] = output_sqnr;
    acc["tensors"] = std::move(tensors);
    acc["data"] = data_spec;
    report["accuracy"] = std::move(acc);
  } else {
    report["accuracy_missing"] = no_accuracy;
  }

  // The model, the machine, the options.
  json model = {{"path", o.model}, {"name", card ? card->name : std::filesystem::path(fp32_path).stem().string()},
                {"parameters", fp32.parameter_count()}};
  model["inputs"] = json::array({{{"name", input.name}, {"dims", input.dims}, {"dtype", ir::dtype_name(input.dtype)}}});
  {
    Session s{ir::Graph(fp32)};
    int64_t macs = 0;
    for (const auto& step : s.plan_for(s.input_dims_at(1)).steps()) macs += step.macs;
    model["macs_per_image"] = macs;
  }
  json sizes = json::object();
  for (const Variant& v : variants)
    if (double b = file_size(v.file); b > 0) sizes[v.precision] = b;
  model["size_bytes"] = sizes;
  report["model"] = std::move(model);

  json machine = {{"cpu", cpu_name()},
                  {"arch", OCTET_ARCH_X86 ? "x86_64" : (OCTET_ARCH_ARM64 ? "aarch64" : "other")},
                  {"cores", std::thread::hardware_concurrency()},
                  {"octet_version", o.octet_version}};
  json isa_levels = json::array();
  for (kernels::Isa isa : kernels::runnable_isas()) isa_levels.push_back(kernels::isa_name(isa));
  machine["isa_levels"] = isa_levels;
  if (!ort_version.empty()) machine["ort_version"] = ort_version;
  json peaks = json::array();
  for (kernels::Isa isa : levels)
    if (const double f = peak_of(isa, false), q = peak_of(isa, true); f > 0 || q > 0)
      peaks.push_back({{"isa", kernels::isa_name(isa)}, {"f32_gflops", f}, {"int8_gops", q}});
  if (!peaks.empty()) machine["peaks"] = std::move(peaks);
  report["machine"] = std::move(machine);

  json measured_levels = json::array();
  for (kernels::Isa isa : levels) measured_levels.push_back(kernels::isa_name(isa));
  report["options"] = {{"mode", o.mode},
                       {"batches", o.batches},
                       {"threads", o.threads},
                       {"thread_counts", thread_counts},
                       {"levels", measured_levels},
                       {"data", data_spec.empty() ? json(nullptr) : json(data_spec)},
                       {"images", images.dims.at(0)},
                       {"calib", o.calib.spec.empty() ? json(nullptr) : json(o.calib.spec)},
                       {"calib_images", o.calib.count},
                       {"method", o.calib.method},
                       {"activations", o.calib.act},
                       {"compare_ort", o.compare_ort}};

  report["recommendations"] = recommendations(report);
  report["verdict"] = verdict(report);
  report["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return report;
}

}  // namespace octet::explain
