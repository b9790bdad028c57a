// `octet serve model.onnx [more.onnx...]`: every model over the Open Inference Protocol (/v2), in
// the versions fp32, int8 (static: --int8 FILE, or quantized at start-up exactly as `octet
// quantize` does it) and dynamic; and, when the first model is an image classifier, the
// FP32-vs-INT8 demo as a web page and a JSON API.
#include <httplib.h>
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "calib/quantize.h"
#include "kernels/isa.h"
#include "loader/onnx_loader.h"
#include "apps/cli/calibration.h"
#include "apps/cli/commands.h"
#include "apps/cli/engine_options.h"
#include "apps/cli/model_inputs.h"
#include "io/datasets/image_decode.h"
#include "apps/serve/classifier.h"
#include "apps/serve/gallery.h"
#include "apps/serve/guarded_server.h"
#include "apps/serve/memory_budget.h"
#include "apps/serve/model_repository.h"
#include "apps/serve/no_paths.h"
#include "apps/serve/routes.h"
#include "apps/serve/speed_table.h"
#include "apps/serve/stop_signals.h"

namespace octet::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct ServeOptions {
  std::vector<std::string> models, names, int8;  // --name and --int8: none, or one per model
  std::string default_version = "fp32";
  int max_batch = 0;  // 0: serve::default_max_batch
  int64_t max_delay_us = 2000;
  CalibrationArgs calib;
  std::string host = "127.0.0.1";
  int port = 8080;
  size_t max_upload_bytes = size_t{4} << 20;
  int64_t max_pixels = int64_t{4096} * 4096;
  int samples = 24;
  std::string samples_data;  // default: the card's dataset
  int http_threads = 8;
  serve::ConnectionLimits connections;
  size_t memory_mib = 512;
  double speed_seconds = 0.5;
  bool log = false;
};

void say(const std::string& line) { fmt::print(stderr, "octet serve: {}\n", line); }

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The model's image input, which must be [N, C, H, W] float32 with C, H and W fixed.
TensorSpec checked_input(const ir::Graph& g, const std::string& path) {
  const TensorSpec in = image_input(g, path);
  const bool fixed = in.dims.size() == 4 && in.dims[1] > 0 && in.dims[2] > 0 && in.dims[3] > 0;
  if (!fixed || in.dtype != ir::DType::f32 || (in.dims[1] != 1 && in.dims[1] != 3))
    throw ir::Error(fmt::format("{}: input '{}' is {} {}; octet serve needs an image model with one float32 "
                                "[N,C,H,W] input of fixed size and 1 or 3 channels",
                                path, in.name, ir::dtype_name(in.dtype), ir::dims_str(in.dims)));
  return in;
}

struct Int8Source {
  ir::Graph graph;
  json info;  // /api/model's "int8"
};

// The model's static INT8 form: --int8 FILE, or quantized here with the calibration options.
Int8Source int8_model(const ir::Graph& fp32, const std::string& model, const std::string& int8_file,
                      const CalibrationArgs& calib) {
  Int8Source s;
  if (!int8_file.empty()) {
    if (!fs::is_regular_file(int8_file)) throw ir::Error("--int8 " + int8_file + ": no such file");
    say("loading the INT8 model " + int8_file);
    s.graph = loader::load_onnx(int8_file);
    if (!calib::is_quantized(s.graph))
      throw ir::Error("--int8 " + int8_file + " is not quantized (no QuantizeLinear, QLinear or integer op): give the "
                      "INT8 model octet quantize wrote, or leave --int8 out to quantize " + model + " here");
    if (s.graph.inputs.size() != fp32.inputs.size() || s.graph.outputs.size() != fp32.outputs.size())
      throw ir::Error(fmt::format("--int8 {} has {} inputs and {} outputs, {} has {} and {}: they are not the same "
                                  "model", int8_file, s.graph.inputs.size(), s.graph.outputs.size(), model,
                                  fp32.inputs.size(), fp32.outputs.size()));
    s.info = {{"source", "file"}, {"file", fs::path(int8_file).filename().string()}};
    return s;
  }
  const auto t0 = std::chrono::steady_clock::now();
  QuantizeResult q = quantize_for_cli(fp32, model, calib);
  const std::string how = q.settings.dynamic
                              ? std::string("dynamic quantization, no calibration")
                              : fmt::format("{} calibration on the {} of {}",
                                            calib::method_name(q.settings.calibration.method), q.selection, q.data);
  say(fmt::format("quantized in {:.1f} s: {}", seconds_since(t0), how));
  for (const std::string& w : q.report.warnings) say("warning: " + w);
  s.graph = std::move(q.graph);
  json report = quantize_report_json(q);
  report["data"] = serve::without_paths(report["data"].get<std::string>());
  for (json& w : report["warnings"]) w = serve::without_paths(w.get<std::string>());
  s.info = {{"source", "quantized"}, {"calibration", serve::without_paths(how)}, {"report", report}};
  return s;
}

serve::Gallery gallery(const ServeOptions& o, const ModelCard& card, const TensorSpec& input) {
  const std::string spec = o.samples_data.empty() ? card.data : o.samples_data;
  if (o.samples == 0) return {};
  if (spec.empty()) {
    say("no test images for the page: " + o.models.at(0) + " has no model card naming a dataset (--samples-data SPEC)");
    return {};
  }
  try {
    serve::Gallery g = serve::load_gallery(spec, input, o.samples, card.classes);
    say(fmt::format("{} test images from {}", g.samples.size(), g.data));
    return g;
  } catch (const std::exception& e) {
    say(std::string("warning: no test images for the page: ") + e.what());
    return {};
  }
}

// A model input for the start-up runs: the first test image, or mid-gray.
ir::TensorData probe_input(const serve::Gallery& g, const ModelCard& card, const TensorSpec& input,
                           const serve::UploadLimits& limits) {
  if (!g.samples.empty()) return serve::prepare_image(g.samples[0].png, input, card, limits).input;
  data::Dataset d;
  d.channels = int(input.dims[1]);
  d.height = int(input.dims[2]);
  d.width = int(input.dims[3]);
  d.pixels.assign(size_t(d.image_bytes()), 128);
  d.labels = {-1};
  return make_inputs(d, card, input);
}

std::vector<serve::SpeedRow> speed_table(const ir::Graph& fp32, const ir::Graph& int8, const ir::TensorData& input,
                                         double seconds) {
  if (seconds <= 0) return {};
  explain::TimingBudget budget;
  budget.min_runs = 5;
  budget.max_seconds = seconds;
  budget.min_seconds = std::min(seconds, 0.25);
  const auto t0 = std::chrono::steady_clock::now();
  auto rows = serve::measure_speed(fp32, int8, input, budget, engine_session_options(), [](const std::string& isa) {
    say("timing FP32 and INT8 at " + isa + " (batch 1, 1 thread)");
  });
  for (const auto& r : rows)
    say(fmt::format("  {:<11} FP32 {:.3f} ms  INT8 {:.3f} ms  INT8 {:.2f}x {}", r.isa, r.fp32_ms, r.int8_ms,
                    r.speedup(), r.speedup() >= 1 ? "faster" : "(slower)"));
  say(fmt::format("timed in {:.1f} s", seconds_since(t0)));
  return rows;
}

json model_json(const ServeOptions& o, const ModelCard& card, const TensorSpec& input, const serve::Classifier& c,
                const json& int8_info, const std::vector<serve::SpeedRow>& speed, const serve::Gallery& g) {
  json levels = json::array();
  for (kernels::Isa isa : kernels::runnable_isas()) levels.push_back(kernels::isa_name(isa));
  ir::Dims shape = input.dims;
  shape[0] = 1;
  return {{"model", card.name.empty() ? fs::path(o.models.at(0)).stem().string() : card.name},
          {"file", fs::path(o.models.at(0)).filename().string()},
          {"input",
           {{"name", input.name},
            {"shape", shape},
            {"channels", input.dims[1]},
            {"height", input.dims[2]},
            {"width", input.dims[3]},
            {"scale", card.scale},
            {"mean", card.mean},
            {"std", card.stddev}}},
          {"output", card.output_kind},
          {"classes", c.classes()},
          {"int8", int8_info},
          {"isa", kernels::isa_name(kernels::active_isa())},
          {"isa_levels", levels},
          {"threads", engine_threads()},
          {"speed", serve::to_json(speed)},
          {"samples", g.samples.size()},
          {"limits",
           {{"max_upload_bytes", o.max_upload_bytes},
            {"max_pixels", o.max_pixels},
            {"http_threads", o.http_threads},
            {"memory_budget_bytes", o.memory_mib << 20},
            {"header_timeout_s", o.connections.header_seconds},
            {"body_timeout_s", o.connections.body_seconds},
            {"max_connections", o.connections.max_connections},
            {"max_connections_per_client", o.connections.max_per_client}}}};
}

// Each connection is a socket: the soft limit of open files (often 1024) is raised to what
// --max-connections needs, as far as the hard limit allows.
void raise_open_files_limit(int connections) {
  rlimit r{};
  const rlim_t want = rlim_t(connections) + 128;  // model files, pipes, the listening socket
  if (getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur >= want) return;
  r.rlim_cur = r.rlim_max == RLIM_INFINITY ? want : std::min(want, r.rlim_max);
  setrlimit(RLIMIT_NOFILE, &r);
  if (r.rlim_cur < want)
    say(fmt::format("warning: this process may open {} files (ulimit -n), too few for --max-connections {}",
                    r.rlim_cur, connections));
}

std::string url_host(const std::string& host) {
  return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

// One model's versions, loaded and quantized, with what the page needs of its INT8 form.
struct LoadedModel {
  std::string name, path;
  ir::Graph fp32, int8;  // int8: the page's INT8 side (static, else dynamic)
  std::vector<std::pair<std::string, std::shared_ptr<Session>>> versions;  // fp32, [int8], dynamic
  json int8_info;
};

LoadedModel load_model(const ServeOptions& o, size_t i) {
  LoadedModel m;
  m.path = o.models[i];
  m.name = o.names.empty() ? fs::path(m.path).stem().string() : o.names[i];
  say(fmt::format("loading {} as '{}' ({})", m.path, m.name, engine_summary()));
  m.fp32 = loader::load_onnx(m.path);
  if (std::string node; calib::is_quantized(m.fp32, &node))
    throw ir::Error(m.path + " is already quantized (" + node + "): give the FP32 model, and the INT8 one with --int8");
  auto session = [](const ir::Graph& g) { return std::make_shared<Session>(g, engine_session_options()); };
  m.versions.emplace_back("fp32", session(m.fp32));
  // Static INT8 from --int8 or a calibration; --mode dynamic asks for none.
  const std::string int8_file = o.int8.empty() ? std::string() : o.int8[i];
  if (!int8_file.empty() || o.calib.mode != "dynamic") {
    Int8Source int8 = int8_model(m.fp32, m.path, int8_file, o.calib);
    m.versions.emplace_back("int8", session(int8.graph));
    m.int8_info = int8.info;
    m.int8 = std::move(int8.graph);
  }
  CalibrationArgs dynamic = o.calib;
  dynamic.mode = "dynamic";
  dynamic.progress = false;
  QuantizeResult q = quantize_for_cli(m.fp32, m.path, dynamic);
  m.versions.emplace_back("dynamic", session(q.graph));
  if (m.int8_info.is_null()) {
    m.int8 = q.graph;
    json report = quantize_report_json(q);
    report["data"] = serve::without_paths(report["data"].get<std::string>());
    for (json& w : report["warnings"]) w = serve::without_paths(w.get<std::string>());
    m.int8_info = {{"source", "quantized"}, {"calibration", "dynamic quantization, no calibration"}, {"report", report}};
  }
  return m;
}

int run_serve(const ServeOptions& o) {
  // Before any thread starts, so that every thread inherits the blocked signals; never freed:
  // its watcher thread lives as long as the process.
  static serve::StopSignals* signals = new serve::StopSignals;
  signal(SIGPIPE, SIG_IGN);  // a client that hangs up mid-answer is an error on that socket only
  if (o.int8.empty()) parse_settings(o.calib);  // a bad --method or --act fails before anything is read
  if (!o.names.empty() && o.names.size() != o.models.size())
    throw ir::Error(fmt::format("{} --name for {} models: give one per model, in their order, or none",
                                o.names.size(), o.models.size()));
  if (!o.int8.empty() && o.int8.size() != o.models.size())
    throw ir::Error(fmt::format("{} --int8 for {} models: give one per model, in their order, or none",
                                o.int8.size(), o.models.size()));
  for (const std::string& m : o.models) {
    if (!fs::exists(m)) throw ir::Error(m + ": no such file");
    if (!fs::is_regular_file(m)) throw ir::Error(m + ": not a regular file");
  }

  // Bound before the calibration and the timing, so that a busy port fails at once; connections
  // wait in the backlog until the server listens.
  serve::ServerState state;
  serve::MemoryBudget memory(o.memory_mib << 20);
  serve::GuardedServer server(o.connections);
  raise_open_files_limit(o.connections.max_connections);
  errno = 0;
  const int port = serve::bind_server(server, o.host, o.port);
  if (port <= 0) {
    const int err = errno;
    throw ir::Error(fmt::format("cannot listen on {}:{}: {}", o.host, o.port,
                                err == EADDRINUSE ? "the port is in use (pick another with --port, or --port 0)"
                                : err         ? std::strerror(err)
                                              : "the address is not one of this machine's"));
  }
  state.limits.max_bytes = o.max_upload_bytes;
  state.limits.max_pixels = o.max_pixels;
  state.limits.memory = &memory;

  serve::ModelRepository models;
  serve::Batcher::Options batching;
  batching.max_delay = std::chrono::microseconds(o.max_delay_us);
  // A batch waits for company only while every core runs one already.
  batching.max_running = std::max(1, int(std::thread::hardware_concurrency()) / std::max(1, engine_threads()));
  batching.max_batch = o.max_batch > 0 ? o.max_batch : serve::default_max_batch(batching.max_running);
  std::vector<LoadedModel> loaded;
  for (size_t i = 0; i < o.models.size(); ++i) {
    loaded.push_back(load_model(o, i));
    LoadedModel& m = loaded.back();
    models.add(m.name, fs::path(m.path).filename().string(), m.versions, o.default_version, batching);
    const serve::ServedModel& served = *models.find(m.name);
    std::string versions;
    for (const serve::ModelVersion& v : served.versions)
      versions += fmt::format("{}{} ({})", versions.empty() ? "" : ", ", v.name,
                              v.batcher->options().max_batch > 1 ? fmt::format("batches of {}", v.batcher->options().max_batch)
                                                                 : std::string("one request per run"));
    say(fmt::format("/v2/models/{}: {}", m.name, versions));
  }
  state.models = &models;
  state.infer_slots = o.http_threads * std::max(1, batching.max_batch);

  // The page and /api/classify: the first model, when it is an image classifier.
  std::unique_ptr<serve::Classifier> classifier;
  const LoadedModel& first = loaded.front();
  try {
    const TensorSpec input = checked_input(first.fp32, first.path);
    const ModelCard card = find_model_card(first.path).value_or(ModelCard{});
    card.check_channels(input.dims[1]);  // three means for a one-channel model would be read as one
    state.card = card;
    ServeOptions page = o;
    page.models = {first.path};
    state.gallery = gallery(page, card, input);
    const ir::TensorData probe = probe_input(state.gallery, card, input, state.limits);
    const std::shared_ptr<Session>& int8 = first.versions.at(1).second;  // int8, else dynamic
    const auto speed = speed_table(first.fp32, first.int8, probe, o.speed_seconds);
    classifier = std::make_unique<serve::Classifier>(first.versions.at(0).second, int8, card.classes,
                                                     card.output_kind == "probabilities", probe);
    state.classifier = classifier.get();
    state.model = model_json(page, card, input, *classifier, first.int8_info, speed, state.gallery);
    state.model["model"] = first.name;
  } catch (const ir::Error& e) {
    say(std::string("no page nor /api/classify (they need an image classifier first): ") +
        serve::without_paths(e.what()));
    state.gallery = {};
  }

  serve::setup_server(server, state, o.http_threads);
  if (o.log)
    server.set_logger([](const httplib::Request& req, const httplib::Response& res) {
      fmt::print(stderr, "octet serve: {} {} -> {} ({} bytes in, {} out)\n", req.method, req.path, res.status,
                 req.body.size(), res.body.size());
    });
  signals->attach(&server);
  const std::string url = fmt::format("http://{}:{}/", url_host(o.host), port);
  say(fmt::format("serving {} at {} ({} inference threads, at most {} connections; Ctrl-C stops)",
                  state.classifier ? state.model["model"].get<std::string>() : first.name, url, o.http_threads,
                  o.connections.max_connections));
  fmt::print("{}\n", url);
  std::fflush(stdout);
  const bool clean = server.listen_after_bind();
  signals->detach();
  if (!clean) throw ir::Error(fmt::format("the server at {} stopped accepting connections", url));
  for (const serve::ModelVersion* v : {models.find(first.name)->version(o.default_version)})
    if (v && o.log) say(fmt::format("{} requests in {} runs", v->batcher->requests(), v->batcher->runs()));
  say("stopped");
  return 0;
}

}  // namespace

Command add_serve_command(CLI::App& app) {
  auto o = std::make_shared<ServeOptions>();
  auto* cmd = app.add_subcommand(
      "serve",
      "Any model over the Open Inference Protocol (KServe v2 REST, with binary tensors and request batching), in "
      "FP32, static and dynamic INT8; for an image classifier also a web page and a JSON API that classify an "
      "image with the FP32 model and its INT8 form side by side");
  cmd->add_option("model", o->models,
                  "FP32 ONNX model(s), each served at /v2/models/<its file's stem>; the first one, when an image "
                  "classifier, is also the page's (its card model.json gives preprocessing, classes and data)")
      ->required();
  cmd->add_option("--name", o->names, "A model's name in /v2 URLs instead of its file's stem: once per model, in order");
  auto* int8 = cmd->add_option("--int8", o->int8,
                               "The INT8 model (e.g. written by octet quantize), version 'int8': once per model, in "
                               "order; default: quantize MODEL at start-up with the calibration options below "
                               "(--mode dynamic: no version 'int8')");
  cmd->add_option("--default-version", o->default_version,
                  "The version /v2/models/<name>/infer runs when the URL names none: fp32, int8 or dynamic "
                  "(default fp32)")
      ->check(CLI::IsMember({"fp32", "int8", "dynamic"}));
  cmd->add_option("--max-batch", o->max_batch,
                  "/v2 requests for the same model version and shapes gathered into one run, in batch items "
                  "(default: 8 when one run takes every core (--threads >= cores), 1 when runs share the cores "
                  "side by side, which already keeps every core busy; bench/RESULTS.md measures both). "
                  "The dynamic version never gathers: its range spans the batch")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--max-delay-us", o->max_delay_us,
                  "Microseconds the first request of a batch waits at most for others; it leaves sooner when a core is free "
                  "(default 2000)")
      ->check(CLI::Range(int64_t{0}, int64_t{1000000}));
  add_calibration_options(cmd, o->calib);
  for (const char* name : {"--calib", "--calib-count", "--per-class", "--method", "--percentile", "--per-tensor",
                           "--act", "--keep-float", "--mode", "--per-channel", "--allow-test-calibration"})
    cmd->get_option(name)->excludes(int8);
  cmd->add_option("--port", o->port, "TCP port (default 8080; 0: any free port, printed at start-up)")
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--host", o->host,
                  "Address to listen on (default 127.0.0.1: this machine only; 0.0.0.0: every interface)");
  cmd->add_option("--max-upload-bytes", o->max_upload_bytes, "Largest image accepted, in bytes (default 4194304)")
      ->check(CLI::Range(size_t{1}, size_t{1} << 30));
  cmd->add_option("--max-pixels", o->max_pixels,
                  "Largest image accepted, in pixels as its header says (default 16777216 = 4096x4096; at most "
                  "33554432)")
      ->check(CLI::Range(int64_t{1}, data::kMaxDecodedPixels));
  cmd->add_option("--samples", o->samples, "Test images the page offers (default 24; 0: none)")
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--samples-data", o->samples_data, "Dataset the test images come from (default: the model card's)");
  cmd->add_option("--http-threads", o->http_threads,
                  "Classifications (decoding and both models) run at once (default 8); one more waits up to 10 s "
                  "for its turn, then answers 503. Connections are read by threads of their own (--max-connections)")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--max-connections", o->connections.max_connections,
                  "Connections open at once, in all (default 256); one more is answered 503 at once")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--max-connections-per-client", o->connections.max_per_client,
                  "Connections open at once from one client address (default 128); one more is answered 503 at once")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--header-timeout", o->connections.header_seconds,
                  "Seconds a request's line and headers may take to arrive, in all, from its first byte (default 5); "
                  "later: 408 and the connection closes")
      ->check(CLI::Range(0.1, 3600.0));
  cmd->add_option("--body-timeout", o->connections.body_seconds,
                  "Seconds a request's body may take to arrive, in all, from the end of its headers (default 10, "
                  "enough for 4 MiB at 4 Mbit/s); later: 408 and the connection closes")
      ->check(CLI::Range(0.1, 3600.0));
  cmd->add_option("--memory-budget", o->memory_mib,
                  "MiB that request bodies and image decodes may hold at once, in all (default 512): a request "
                  "reserves twice its Content-Length before its body is read, a decode what the image's header "
                  "says it can take; over it they wait up to 2 s, then answer 503 (413 for an image that alone "
                  "needs more)")
      ->check(CLI::Range(size_t{16}, size_t{1} << 20));
  cmd->add_option("--speed-seconds", o->speed_seconds,
                  "Time spent timing each ISA level and precision at start-up for the speed table (default 0.5; "
                  "0: no table)")
      ->check(non_negative());
  cmd->add_flag("--log", o->log, "One line on stderr per request");
  cmd->add_flag("!--no-progress", o->calib.progress, "No calibration progress on stderr");
  cmd->footer(
      "The page (GET /) takes an upload or one of the test images and shows the FP32 and INT8 top-3 with\n"
      "probabilities, both times, whether they agree and the INT8 speed-up at each ISA level.\n"
      "JSON API:\n"
      "  POST /api/classify          the image as multipart field 'image' or as the raw body ->\n"
      "                              {\"fp32\": {\"top\": [{\"class\", \"label\", \"probability\"}...], \"ms\"},\n"
      "                               \"int8\": {...}, \"agree\": true, \"image\": {\"width\", \"height\", ...}}\n"
      "  GET  /api/model             model, input, classes, INT8 origin, speed table, limits\n"
      "  GET  /api/samples           the test images: index, class, label, url\n"
      "  GET  /api/samples/<i>.png   one test image\n"
      "Open Inference Protocol (KServe v2 REST; every model, whatever it computes):\n"
      "  GET  /v2                                  server metadata (extensions: binary_tensor_data)\n"
      "  GET  /v2/health/live, /v2/health/ready    200 while serving\n"
      "  GET  /v2/models/<name>[/versions/<v>]     name, versions (fp32, int8, dynamic), platform onnx_onnxv1,\n"
      "                                            inputs and outputs (name, datatype, shape, -1 for the batch)\n"
      "  GET  /v2/models/<name>[/versions/<v>]/ready\n"
      "  POST /v2/models/<name>[/versions/<v>]/infer  {\"id\", \"inputs\": [{\"name\", \"shape\", \"datatype\",\n"
      "                                            \"data\"}], \"outputs\": [{\"name\"}]} -> {\"model_name\",\n"
      "                                            \"model_version\", \"outputs\": [{\"name\", \"shape\", \"datatype\",\n"
      "                                            \"data\"}]}; binary tensors after the JSON with the header\n"
      "                                            Inference-Header-Content-Length, parameters binary_data_size,\n"
      "                                            binary_data (an output) and binary_data_output (all outputs)\n"
      "  Concurrent requests for one version with the same shapes run as one batch (--max-batch,\n"
      "  --max-delay-us), each answered with its own rows; 400 bad JSON, datatype or shape, 404 unknown\n"
      "  model or version, 413 a body over --max-upload-bytes.\n"
      "Errors answer 4xx with {\"error\": \"...\"}: 400 empty or damaged image or malformed request (e.g. a\n"
      "Content-Length that is no number), 404 unknown path, 405 wrong method (with Allow), 408 request not\n"
      "arrived in time, 411 no Content-Length, 413 too many bytes or pixels or a PNG that inflates past its\n"
      "declared size, 415 not an image or a Content-Encoding, 431 headers over 64 KiB; 501 a Transfer-Encoding\n"
      "other than chunked; 503 when the server is full (connections, classification threads or memory\n"
      "budget: try again).\n"
      "Limits against slow or hostile clients (defaults): a request's headers arrive within 5 s of its first\n"
      "byte and its body within 10 s of them; 256 connections at once, 128 from one address, each read\n"
      "by a thread of its own, so a slow client never holds one of the 8 classification threads; request\n"
      "bodies and decodes hold at most 512 MiB; a PNG's pixel data is inflated in small pieces and refused\n"
      "as soon as it exceeds what its declared size needs. Answers name files by name, never by path.\n"
      "SIGINT / SIGTERM stop the server after the requests in flight.\n"
      "Example: octet serve models/tinynet.onnx --port 8080, then\n"
      "  curl -F image=@shoe.png http://127.0.0.1:8080/api/classify\n"
      "  curl -d '{\"inputs\": [{\"name\": \"input\", \"shape\": [1, 1, 28, 28], \"datatype\": \"FP32\", \"data\": [...]}]}' \\\n"
      "       http://127.0.0.1:8080/v2/models/tinynet/versions/int8/infer");
  return [o, cmd]() -> int { return cmd->parsed() ? run_serve(*o) : -1; };
}

}  // namespace octet::cli
