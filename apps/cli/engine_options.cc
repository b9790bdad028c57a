#include "apps/cli/engine_options.h"

#include <algorithm>
#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "kernels/isa.h"

namespace octet::cli {
namespace {

struct EngineOptions {
  std::string isa;
  int threads = 1;
  bool direct_conv = false;
  bool copies = false;
  int batch_slice = -1;
};

EngineOptions& options() {
  static EngineOptions o;
  return o;
}

}  // namespace

void add_engine_options(CLI::App& app) {
  app.fallthrough();
  app.add_option("--isa", options().isa,
                 "Highest instruction set the kernels may use: " + kernels::isa_names() +
                     " (default: the best this CPU has; same as the OCTET_ISA variable)")
      ->check([](const std::string& v) -> std::string {
        return kernels::parse_isa(v) ? "" : "must be one of " + kernels::isa_names();
      });
  app.add_option("--threads", options().threads, "Threads the kernels split their work over (default 1)")
      ->check(CLI::Range(1, 256));
  app.add_flag("--direct-conv", options().direct_conv,
               "FP32 3x3 stride-1 convs run as direct convs instead of Winograd F(2x2,3x3) (to compare the two)");
  app.add_flag("--copies", options().copies,
               "Every Reshape and Concat copies its input, as if no producer could write where they are read (to "
               "measure what the in-place views save)");
  app.add_option("--batch-slice", options().batch_slice,
                 "Images run at a time through a batch the model computes image by image (0: the whole batch at "
                 "once; default: as many as fit this core's cache, up to 16; octet info shows the choice)")
      ->check(CLI::Range(0, 1 << 20));
  app.parse_complete_callback([] {
    set_engine_threads(options().threads);
    if (options().isa.empty()) return;
    try {
      kernels::set_isa_limit(*kernels::parse_isa(options().isa));
    } catch (const std::invalid_argument& e) {
      throw CLI::ValidationError(e.what());
    }
  });
}

int engine_threads() { return options().threads; }

void set_engine_threads(int threads) {
  // pthreadpool's workers spin while they wait: more of them than cores take turns spinning
  // (3 threads on 2 cores ran 40x slower than 1), so the extra ones are dropped.
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  if (threads > cores) {
    fmt::print(stderr, "warning: --threads {} is more than this machine's {} core(s); using {} (threads beyond the "
                       "cores only spin against each other)\n",
               threads, cores, cores);
    threads = cores;
  }
  options().threads = std::max(1, threads);
}

SessionOptions engine_session_options() {
  SessionOptions s;
  s.threads = options().threads;
  s.isa = kernels::active_isa();
  s.winograd = !options().direct_conv;
  s.views = !options().copies;
  s.batch_slice = options().batch_slice;
  return s;
}

std::string engine_summary() {
  const int t = options().threads;
  return fmt::format("{}, {} thread{}{}{}", kernels::isa_name(kernels::active_isa()), t, t == 1 ? "" : "s",
                     options().direct_conv ? ", direct convs only" : "", options().copies ? ", copies" : "");
}

void warn_scalar_steps(const Plan& plan, const std::string& context) {
  if (kernels::active_isa() == kernels::Isa::scalar) return;
  // A step that writes a few values (a classifier's QLinearSoftmax over 10 logits) takes
  // microseconds whatever its kernel: not worth a warning. `info --kernels` still marks it.
  constexpr int64_t kTinyStepValues = 4096;
  std::string list;
  int count = 0;
  for (const PlanStep& s : plan.steps()) {
    if (!s.scalar()) continue;
    int64_t values = 0;
    for (const TensorInfo& out : s.outputs) values += out.count();
    if (values <= kTinyStepValues) continue;
    if (count++ < 8)
      list += fmt::format("{}{} ({}{})", list.empty() ? "" : ", ", s.node, s.kernel,
                          s.fallback.empty() ? "" : ": " + s.fallback);
  }
  if (count == 0) return;
  if (count > 8) list += fmt::format(", and {} more", count - 8);
  fmt::print(stderr,
             "warning: {} step(s) at {} run scalar reference kernels, so their time measures octet, not the "
             "hardware: {}\n",
             count, context, list);
}

}  // namespace octet::cli
