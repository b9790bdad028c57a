// `octet atlas`: the paradox atlas of a zoo on this machine. Every model explained (FP32, static
// and dynamic INT8 at every ISA level, batch 1 and 16, one thread and every core, ONNX Runtime
// alongside) by explain's own measuring code, summed up as one JSON and one self-contained page
// with the INT8 ÷ FP32 heat map (apps/explain/atlas.h, docs/atlas.md).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include "core/ir.h"
#include "engine/session.h"
#include "io/output_file.h"
#include "loader/onnx_loader.h"
#include "loader/onnx_writer.h"
#include "apps/cli/calibration.h"
#include "apps/cli/commands.h"
#include "apps/cli/explain_report.h"
#include "apps/cli/int8_parity.h"
#include "apps/explain/atlas.h"
#include "apps/explain/explain.h"
#include "tools/ort/ort_client.h"
#include "core/version.h"

namespace octet::cli {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

struct AtlasArgs {
  std::string zoo = "build/zoo", only, output, json_out, render, compare, levels = "all", commit;
  bool quick = false, no_ort = false, progress = true;
  double max_run_seconds = 1.5;
};

struct ZooModel {
  std::string name;
  fs::path fp32, folder;
};

json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ir::Error("cannot read " + path);
  try {
    return json::parse(in);
  } catch (const json::parse_error& e) {
    throw ir::Error(path + ": not JSON: " + e.what());
  }
}

json read_atlas(const std::string& path) {
  json j = read_json(path);
  try {
    explain::check_atlas(j, path);
  } catch (const std::runtime_error& e) {
    throw ir::Error(e.what());
  }
  return j;
}

// The zoo's models in zoo.json's order, else every sub-folder holding a model.onnx, by name.
std::vector<ZooModel> zoo_models(const fs::path& zoo, const std::string& only) {
  if (!fs::is_directory(zoo))
    throw ir::Error("zoo folder " + zoo.string() +
                    " does not exist (export the small zoo with /usr/bin/python3 tools/zoo/export.py, or give --zoo DIR)");
  std::vector<ZooModel> models;
  if (fs::exists(zoo / "zoo.json")) {
    const json manifest = read_json((zoo / "zoo.json").string());
    if (!manifest.contains("models") || !manifest["models"].is_array())
      throw ir::Error((zoo / "zoo.json").string() + ": no \"models\" list");
    for (const auto& m : manifest["models"]) {
      const std::string name = m.value("name", ""), file = m.value("file", name + "/model.onnx");
      if (name.empty()) throw ir::Error((zoo / "zoo.json").string() + ": a model without a \"name\"");
      models.push_back({name, zoo / file, (zoo / file).parent_path()});
    }
  } else {
    for (const auto& e : fs::directory_iterator(zoo))
      if (e.is_directory() && fs::exists(e.path() / "model.onnx"))
        models.push_back({e.path().filename().string(), e.path() / "model.onnx", e.path()});
    std::sort(models.begin(), models.end(), [](const ZooModel& a, const ZooModel& b) { return a.name < b.name; });
  }
  if (!only.empty()) {
    std::set<std::string> wanted;
    std::stringstream ss(only);
    for (std::string n; std::getline(ss, n, ',');)
      if (!n.empty()) wanted.insert(n);
    for (const auto& n : wanted)
      if (std::none_of(models.begin(), models.end(), [&](const ZooModel& m) { return m.name == n; }))
        throw UsageError("--only: " + n + " is not a model of " + zoo.string());
    std::erase_if(models, [&](const ZooModel& m) { return !wanted.count(m.name); });
  }
  if (models.empty())
    throw ir::Error("no model in " + zoo.string() + " (a zoo holds NAME/model.onnx folders, listed in zoo.json or not)");
  return models;
}

// model name, family, model and stepping, and the vector flags, from /proc/cpuinfo.
json cpu_facts() {
  json j = json::object();
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  auto value = [](const std::string& l) {
    const auto colon = l.find(':');
    if (colon == std::string::npos) return std::string();
    const auto start = l.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? std::string() : l.substr(start);
  };
  auto key_is = [](const std::string& l, const char* k) {
    return l.rfind(k, 0) == 0 && l.find_first_not_of(" \t", std::strlen(k)) == l.find(':');
  };
  while (std::getline(in, line)) {
    if (line.empty()) break;  // the first processor is enough
    if (key_is(line, "model name")) j["cpu"] = value(line);
    else if (key_is(line, "cpu family")) j["family"] = value(line);
    else if (key_is(line, "model")) j["model"] = value(line);
    else if (key_is(line, "stepping")) j["stepping"] = value(line);
    else if (key_is(line, "flags") || key_is(line, "Features")) {
      json flags = json::array();
      std::stringstream ss(value(line));
      for (std::string f; ss >> f;)
        for (const char* prefix : {"sse4", "avx", "fma", "f16c", "amx", "vnni", "asimd", "sve", "i8mm", "dotprod", "bf16"})
          if (f.rfind(prefix, 0) == 0 || f.find("vnni") != std::string::npos) {
            flags.push_back(f);
            break;
          }
      j["flags"] = flags;
    }
  }
  return j;
}

std::string git_commit() {
  FILE* p = popen("git rev-parse --short=12 HEAD 2>/dev/null", "r");
  if (!p) return "unknown";
  char buf[64] = {};
  const size_t n = std::fread(buf, 1, sizeof buf - 1, p);
  pclose(p);
  std::string s(buf, n);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s.empty() ? "unknown" : s;
}

// The 1-minute load average: other processes on the cores skew every time, the 2-thread ones most.
double load_average() {
  std::ifstream in("/proc/loadavg");
  double one = -1;
  return in >> one ? one : -1;
}

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string minutes(double seconds) {
  return seconds < 90 ? fmt::format("{:.0f} s", seconds) : fmt::format("{:.1f} min", seconds / 60);
}

json measure_atlas(const AtlasArgs& a) {
  const auto started = std::chrono::steady_clock::now();
  const double load_at_start = load_average();
  const std::string commit = a.commit.empty() ? git_commit() : a.commit;  // before any edit during the run
  const std::vector<ZooModel> models = zoo_models(a.zoo, a.only);
  std::vector<kernels::Isa> levels = parse_isa_levels(a.levels);
  if (levels.empty()) levels = kernels::runnable_isas();
  std::string no_ort = a.no_ort ? "--no-ort" : ort::unavailable_reason();
  if (!a.no_ort && !no_ort.empty())
    fmt::print(stderr, "atlas: ONNX Runtime is unavailable ({}): octet alone\n", no_ort);

  // What each model costs, for the ETA: its MACs per image plus a fixed part (loading,
  // profiles, starting ORT) worth 20 M MACs.
  std::vector<double> weight;
  for (const ZooModel& m : models) {
    double macs = 0;
    try {
      if (fs::exists(m.fp32)) {
        Session s{loader::load_onnx(m.fp32.string())};
        for (const auto& step : s.plan_for(s.input_dims_at(1)).steps()) macs += double(step.macs);
      }
    } catch (const std::exception&) {
    }
    weight.push_back(macs + 2e7);
  }
  const double total_weight = [&] {
    double s = 0;
    for (double w : weight) s += w;
    return s;
  }();

  json entries = json::array(), skipped = json::array(), machine;
  double done_weight = 0;
  cli::TempDir temp;
  for (size_t i = 0; i < models.size(); ++i) {
    const ZooModel& m = models[i];
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const std::string eta =
        done_weight > 0 ? ", about " + minutes(elapsed / done_weight * (total_weight - done_weight)) + " left" : "";
    if (a.progress) fmt::print(stderr, "atlas: model {}/{} {} ({} elapsed{})\n", i + 1, models.size(), m.name,
                               minutes(elapsed), eta);
    done_weight += weight[i];
    auto skip = [&](const std::string& why) {
      fmt::print(stderr, "atlas: skipping {}: {}\n", m.name, why);
      skipped.push_back({{"name", m.name}, {"why", why}});
    };
    if (!fs::exists(m.fp32)) {
      skip(m.fp32.string() + " does not exist");
      continue;
    }
    try {
      // The static INT8 file the zoo holds, else one quantized here from the folder's calib.npy;
      // the dynamic one likewise (it needs no calibration).
      fs::path int8 = m.folder / "model_int8.onnx", dynamic = m.folder / "model_dynamic.onnx";
      const fs::path calib = m.folder / "calib.npy";
      std::optional<ir::Graph> fp32;
      auto quantize = [&](const char* mode, const fs::path& out) {
        if (!fp32) fp32 = loader::load_onnx(m.fp32.string());
        CalibrationArgs c;
        c.mode = mode;
        c.progress = false;
        if (std::string(mode) == "static") c.spec = "npy:" + calib.string();
        loader::save_onnx(quantize_for_cli(*fp32, m.fp32.string(), c).graph, out.string());
      };
      if (!fs::exists(int8)) {
        if (!fs::exists(calib)) {
          skip("no model_int8.onnx, and no calib.npy to quantize it with (write one with octet quantize " +
               m.fp32.string() + " -o " + int8.string() + ")");
          continue;
        }
        fmt::print(stderr, "atlas: {} has no model_int8.onnx: quantizing it with its calib.npy\n", m.name);
        int8 = temp.path() / (m.name + "_int8.onnx");
        quantize("static", int8);
      }
      if (!fs::exists(dynamic)) {
        dynamic = temp.path() / (m.name + "_dynamic.onnx");
        quantize("dynamic", dynamic);
      }
      explain::ExplainOptions o;
      o.model = int8.string();
      o.fp32_model = m.fp32.string();
      o.dynamic_model = dynamic.string();
      o.data = "none";
      o.mode = "both";
      o.levels = levels;
      o.batches = {1, 16};
      o.threads = 1;
      o.all_cores = true;
      o.all_cores_every_level = true;
      o.differences_every_level = true;
      o.compare_ort = no_ort.empty();
      o.progress = false;
      o.octet_version = OCTET_VERSION;
      o.max_run_seconds = a.quick ? 0.5 : a.max_run_seconds;
      if (a.quick) {
        o.budget = {1, 3, 0.0, 0.05};
      } else {
        o.budget = {3, 50, 0.1, 0.3};
      }
      const json report = explain::explain_model(o);
      entries.push_back(explain::atlas_model(m.name, report));
      entries.back()["file"] = fs::path(m.fp32).lexically_relative(a.zoo).generic_string();
      if (machine.is_null()) machine = report["machine"];
      if (a.progress)
        fmt::print(stderr, "atlas: {} done in {}\n", m.name, minutes(report.value("seconds", 0.0)));
    } catch (const std::exception& e) {
      skip(e.what());
    }
  }
  if (entries.empty()) throw ir::Error("no model of " + a.zoo + " could be measured (each was skipped, see above)");

  const json cpu = cpu_facts();
  for (const auto& [k, v] : cpu.items()) machine[k] = v;
  if (load_at_start >= 0) machine["load_average"] = {load_at_start, load_average()};
  json columns = json::array();
  const int cores = int(std::thread::hardware_concurrency());
  for (kernels::Isa isa : levels)
    for (int batch : {1, 16})
      for (int threads : cores > 1 ? std::vector<int>{1, cores} : std::vector<int>{1})
        columns.push_back({{"isa", kernels::isa_name(isa)}, {"batch", batch}, {"threads", threads}});
  json atlas = {{"schema", "octet-atlas/1"},
                {"created", now_utc()},
                {"octet_version", OCTET_VERSION},
                {"commit", commit},
                {"machine", machine},
                {"options", {{"zoo", fs::path(a.zoo).lexically_normal().string()}, {"quick", a.quick},
                             {"batches", {1, 16}}, {"max_run_seconds", a.quick ? 0.5 : a.max_run_seconds},
                             {"ort", no_ort.empty() ? json(true) : json(no_ort)}}},
                {"columns", columns},
                {"models", entries},
                {"skipped_models", skipped}};
  atlas["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return atlas;
}

int run_atlas(const AtlasArgs& a) {
  if (a.output.empty() && a.json_out.empty()) throw UsageError("give -o ATLAS.html, --json ATLAS.json or both");
  for (const std::string* path : {&a.output, &a.json_out})
    if (!path->empty()) check_output_path(*path);
  if (!a.compare.empty() && a.output.empty()) throw UsageError("--compare writes a page: give -o PAGE.html");
  json atlas = a.render.empty() ? measure_atlas(a) : read_atlas(a.render);
  // Everything rendered before anything is written: a page that cannot be drawn leaves no file.
  std::string html;
  try {
    html = a.compare.empty() ? explain::render_atlas_html(atlas)
                             : explain::render_atlas_comparison_html(atlas, read_atlas(a.compare));
  } catch (const std::runtime_error& e) {
    throw ir::Error(e.what());
  }
  if (!a.json_out.empty()) {
    write_explain_file(a.json_out, atlas.dump(1) + "\n");
    fmt::print(stderr, "atlas: wrote {}\n", a.json_out);
  }
  if (!a.output.empty()) {
    write_explain_file(a.output, html);
    fmt::print(stderr, "atlas: wrote {}\n", a.output);
  }
  if (a.render.empty())
    fmt::print("atlas: {} model(s) in {}\n", atlas["models"].size(), minutes(atlas.value("seconds", 0.0)));
  return 0;
}

}  // namespace

Command add_atlas_command(CLI::App& app) {
  auto a = std::make_shared<AtlasArgs>();
  auto* cmd = app.add_subcommand(
      "atlas",
      "The paradox atlas: every model of a zoo in FP32, static and dynamic INT8 at every ISA level this CPU runs, "
      "batch 1 and 16, one thread and every core, ONNX Runtime alongside; one HTML page with the INT8 ÷ FP32 heat map, "
      "each cell linking to the model's reason (docs/atlas.md), and the numbers as JSON");
  cmd->add_option("--zoo", a->zoo,
                  "Zoo folder: NAME/model.onnx folders (zoo.json gives their order), each with model_int8.onnx (else "
                  "quantized from its calib.npy, else skipped) and model_dynamic.onnx (else quantized here); "
                  "default build/zoo");
  cmd->add_option("--only", a->only, "Comma-separated model names of the zoo: those only");
  cmd->add_option("-o,--output", a->output, "Write the atlas as a self-contained HTML page");
  cmd->add_option("--json", a->json_out, "Write the atlas as JSON (schema: docs/atlas.md)");
  cmd->add_option("--isa-levels", a->levels,
                  "all (default: every level this CPU runs) or a comma-separated list, e.g. scalar,avx2");
  cmd->add_flag("--quick", a->quick,
                "CI-size timing: one to three runs per configuration and no batch whose single run would take over "
                "0.5 s (the numbers are noisy; the page and JSON have every part)");
  cmd->add_option("--max-run-seconds", a->max_run_seconds,
                  "Skip a batch-16 configuration whose one run the batch-1 time puts above this (default 1.5: the "
                  "scalar level of the larger models); listed on the page")
      ->check(positive());
  cmd->add_flag("--no-ort", a->no_ort, "Do not time ONNX Runtime");
  cmd->add_option("--render", a->render, "Re-render a saved --json atlas instead of measuring")
      ->check(CLI::ExistingFile);
  cmd->add_option("--compare", a->compare,
                  "Another machine's --json atlas: the page shows both side by side and the ratio of their speed-ups")
      ->check(CLI::ExistingFile);
  cmd->add_option("--commit", a->commit, "The octet commit to name (default: git rev-parse HEAD in this folder)");
  cmd->add_flag("!--no-progress", a->progress, "No progress lines on stderr");
  return [a, cmd]() -> int { return cmd->parsed() ? run_atlas(*a) : -1; };
}

}  // namespace octet::cli
