// Whole-model latency, octet against ONNX Runtime on the same .onnx file, same batch, same
// thread count, in interleaved rounds: each round times octet `--iters` runs and ORT `--iters`
// runs (the order alternates between rounds so slow drifts of this shared host hit both),
// and the per-round medians give the ratio. Prints the median over rounds and the spread.
//
//   build/bench/model_bench models/resnet8.onnx q.onnx --batch 1 --rounds 7 --iters 200
//
// Pins itself (and the ORT child it starts) to one CPU unless --cpu -1.
#include <sched.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <random>

#include "engine/session.h"
#include "io/output_file.h"
#include "kernels/isa.h"
#include "tools/ort/ort_client.h"
#include "apps/cli/stats.h"
#include "io/tensor_io.h"

namespace {

using namespace octet;

struct Options {
  std::vector<std::string> models;
  int batch = 1;
  int rounds = 7;
  int iters = 100;
  int threads = 1;
  int cpu = 0;
  std::string isa;
  std::string json_out;
  int batch_slice = -1;  // -1: the Session's default
  std::string ort_u8s8 = "exact";
  int ort_warmup = 5;  // untimed ORT runs per round (its session stays loaded across rounds)
};

double median(const std::vector<double>& v) { return summarize(v).p50; }

ir::TensorData random_input(const TensorSpec& spec, int batch, uint32_t seed) {
  ir::Dims dims = spec.dims;
  for (auto& d : dims) if (d < 0) d = batch;
  if (!dims.empty()) dims[0] = batch;
  if (spec.dtype != ir::DType::f32) throw std::runtime_error("input '" + spec.name + "' is not float32");
  ir::TensorData t = ir::TensorData::make(ir::DType::f32, dims);
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  float* v = t.as<float>();
  for (int64_t i = 0; i < t.count(); ++i) v[i] = dist(rng);
  return t;
}

// The same `batch` images repeated `runs` times along dim 0: ORT's runner times one
// session.run per batch.
ir::TensorData repeat_batches(const ir::TensorData& one, int runs) {
  ir::Dims dims = one.dims;
  dims[0] *= runs;
  ir::TensorData t = ir::TensorData::make(one.dtype, dims);
  for (int r = 0; r < runs; ++r)
    std::copy(one.bytes.begin(), one.bytes.end(), t.bytes.begin() + static_cast<ptrdiff_t>(r * one.bytes.size()));
  return t;
}

// What "--ort-u8s8 exact" runs in ORT on this CPU (tools/ort/session.mjs decides the same way).
std::string ort_u8s8_label(const std::string& mode) {
  if (mode != "exact") return mode;
  const bool vnni = kernels::isa_supported(kernels::Isa::avx512vnni) || kernels::isa_supported(kernels::Isa::avxvnni);
  return vnni ? "exact: ORT's own VNNI kernels" : "exact: x64quantprecision";
}

std::vector<double> time_octet(Session& s, const ir::TensorData& in, int iters) {
  // Built once: s.run({in}) would copy the input into a fresh vector inside the timed region,
  // and a copy of more than 32 MB (batch 64 at 224 px) is a fresh mmap whose page faults cost
  // several times the inference on a VM (ORT's runner times prepared tensors).
  const std::vector<ir::TensorData> inputs{in};
  std::vector<double> ms;
  s.warm_up(inputs);
  for (int i = 0; i < 4; ++i) s.run(inputs);  // and a few more runs, as ORT's runner makes
  for (int i = 0; i < iters; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    s.run(inputs);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return ms;
}

struct ModelResult {
  std::string model;
  std::vector<double> octet_ms, ort_ms, ratio;  // per round: median ms per image, octet / ORT
};

ModelResult bench_model(const std::string& path, const Options& o) {
  SessionOptions so;
  so.threads = o.threads;
  so.isa = kernels::active_isa();
  if (o.batch_slice >= 0) so.batch_slice = o.batch_slice;
  Session session = Session::load(path, so);
  if (session.inputs().size() != 1) throw std::runtime_error(path + ": model_bench handles one input");
  const TensorSpec& spec = session.inputs()[0];
  const ir::TensorData input = random_input(spec, o.batch, 1234);
  const npy::Array ort_input = to_npy(repeat_batches(input, o.iters));
  ort::EvalOptions eo;
  eo.batch = o.batch;
  eo.threads = o.threads;
  eo.u8s8 = o.ort_u8s8;
  eo.warmup = o.ort_warmup;

  ModelResult r{path, {}, {}, {}};
  for (int round = 0; round < o.rounds; ++round) {
    double octet_ms = 0, ort_ms = 0;
    auto run_octet = [&] { octet_ms = median(time_octet(session, input, o.iters)) / o.batch; };
    auto run_ort = [&] { ort_ms = median(ort::eval(path, spec.name, ort_input, eo).batch_ms) / o.batch; };
    if (round % 2 == 0) {
      run_octet();
      run_ort();
    } else {
      run_ort();
      run_octet();
    }
    r.octet_ms.push_back(octet_ms);
    r.ort_ms.push_back(ort_ms);
    r.ratio.push_back(octet_ms / ort_ms);
    fmt::print(stderr, "  round {}/{}: octet {:.4f} ms/image, ORT {:.4f} ms/image, ratio {:.3f}\n", round + 1,
               o.rounds, octet_ms, ort_ms, octet_ms / ort_ms);
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"Whole-model latency of octet vs ONNX Runtime, interleaved rounds, median and spread"};
  app.add_option("models", o.models, "ONNX models (FP32 or QDQ INT8); each is run by both engines")->required();
  app.add_option("--batch", o.batch, "Images per run")->check(CLI::PositiveNumber);
  app.add_option("--rounds", o.rounds, "Interleaved rounds (median over rounds)")->check(CLI::PositiveNumber);
  app.add_option("--iters", o.iters, "Timed runs per engine per round (median within a round)")
      ->check(CLI::PositiveNumber);
  app.add_option("--threads", o.threads, "Threads for both engines")->check(CLI::Range(1, 256));
  app.add_option("--cpu", o.cpu, "Pin to this CPU (with --threads 1); -1 leaves scheduling alone");
  app.add_option("--isa", o.isa, "Cap octet's kernels: " + kernels::isa_names());
  app.add_option("--batch-slice", o.batch_slice,
                 "Images octet runs at a time through a batch it can split (0: the whole batch; default: the "
                 "Session's own choice)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--ort-u8s8", o.ort_u8s8,
                 "exact (default): ORT's exact uint8 x int8 kernels (session.x64quantprecision where the CPU lacks "
                 "VNNI; with VNNI ORT's default kernels, exact already); native: ORT's default, which on x86 CPUs "
                 "without VNNI saturates int16 pair sums (faster, not exact)")
      ->check(CLI::IsMember({"exact", "native"}));
  app.add_option("--ort-warmup", o.ort_warmup,
                 "Untimed ONNX Runtime runs before each round's timed ones (default 5; fewer for runs of seconds)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--json", o.json_out, "Also write the results as JSON to this file");
  CLI11_PARSE(app, argc, argv);
  try {
    if (!o.isa.empty()) {
      auto isa = kernels::parse_isa(o.isa);
      if (!isa) throw std::invalid_argument("--isa " + o.isa + " is not one of " + kernels::isa_names());
      kernels::set_isa_limit(*isa);
    }
    if (o.cpu >= 0 && o.threads == 1) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(o.cpu, &set);
      if (sched_setaffinity(0, sizeof(set), &set) != 0) throw std::runtime_error("cannot pin to CPU " + std::to_string(o.cpu));
    }
    if (std::string why = ort::unavailable_reason(); !why.empty()) throw std::runtime_error(why);
    if (!o.json_out.empty()) octet::check_output_path(o.json_out);  // before the minutes of timing
    fmt::print("octet ({}, {} thread(s)) vs ONNX Runtime {} (u8s8 {}) — batch {}, {} rounds × {} runs each, {}\n",
               kernels::isa_name(kernels::active_isa()), o.threads, ort::version(), ort_u8s8_label(o.ort_u8s8), o.batch, o.rounds,
               o.iters,
               o.cpu >= 0 && o.threads == 1 ? fmt::format("pinned to CPU {}", o.cpu) : "not pinned");
    nlohmann::json j = nlohmann::json::array();
    fmt::print("{:<44} {:>12} {:>12} {:>9} {:>17}\n", "model", "octet ms/img", "ORT ms/img", "ratio",
               "ratio min..max");
    for (const auto& m : o.models) {
      fmt::print(stderr, "{}\n", m);
      ModelResult r = bench_model(m, o);
      auto [lo, hi] = std::minmax_element(r.ratio.begin(), r.ratio.end());
      fmt::print("{:<44} {:>12.4f} {:>12.4f} {:>9.3f} {:>8.3f}..{:<8.3f}\n", m, median(r.octet_ms), median(r.ort_ms),
                 median(r.ratio), *lo, *hi);
      j.push_back({{"model", m}, {"batch", o.batch}, {"threads", o.threads},
                   {"isa", kernels::isa_name(kernels::active_isa())}, {"octet_ms_per_image", r.octet_ms},
                   {"ort_ms_per_image", r.ort_ms}, {"ratio", r.ratio}, {"median_ratio", median(r.ratio)},
                   {"median_octet_ms", median(r.octet_ms)}, {"median_ort_ms", median(r.ort_ms)}});
    }
    if (!o.json_out.empty()) octet::write_file_atomically(o.json_out, j.dump(2) + "\n");
  } catch (const std::exception& e) {
    fmt::print(stderr, "model_bench: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
