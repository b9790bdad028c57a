// LRN (kernels/pool/lrn_list.h through kernels/pool/lrn.h) at the LRN layers of AlexNet /
// CaffeNet (size 5 after conv1 and conv2: 96x55x55 and 256x27x27) and GoogLeNet (64x56x56,
// 192x56x56), plus 192x27x27, next to the scalar reference: one entry per (layer x microkernel
// this CPU supports), named lrn/<C>x<H>x<W>/<kernel>; the driver's pick for active_isa() is
// labelled "pick". Counter: elements per second. One thread, batch 1, inputs uniform in [-30, 30).
//
//   build/bench/lrn_bench --benchmark_filter=96x55
#include <benchmark/benchmark.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/kernel_bench_util.h"
#include "kernels/pool/lrn.h"
#include "kernels/pool/lrn_list.h"
#include "kernels/ref/lrn.h"

namespace {

using namespace octet::kernels;
using octet::bench::Buffer;

struct Layer {
  int c, h, w;
};
const Layer kLayers[] = {{96, 55, 55}, {192, 27, 27}, {256, 27, 27}, {64, 56, 56}, {192, 56, 56}};
const LrnParams kParams{5, 1e-4f, 0.75f, 1.0f};

void add_bench(const Layer& l, const std::string& kernel, bool pick, std::function<void()> body) {
  const std::string name = "lrn/" + std::to_string(l.c) + "x" + std::to_string(l.h) + "x" + std::to_string(l.w) + "/" + kernel;
  const double elements = double(l.c) * l.h * l.w;
  benchmark::RegisterBenchmark(name.c_str(),
                               [=](benchmark::State& state) {
                                 for (auto _ : state) {
                                   body();
                                   benchmark::ClobberMemory();
                                 }
                                 state.counters["elements"] = benchmark::Counter(
                                     elements * double(state.iterations()), benchmark::Counter::kIsRate);
                                 if (pick) state.SetLabel("pick");
                               })
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
}

}  // namespace

int main(int argc, char** argv) {
  for (const Layer& l : kLayers) {
    const size_t pixels = size_t(l.h) * l.w, n = pixels * l.c;
    auto x = std::make_shared<Buffer<float>>(octet::bench::random_floats<Buffer<float>>(n, 1));
    for (float& v : *x) v *= 30.0f;
    auto y = std::make_shared<Buffer<float>>(n);
    const LrnUkernel* chosen = first_runnable(kF32LrnUkernels, active_isa());
    for (const LrnUkernel& k : kF32LrnUkernels) {
      if (!isa_supported(k.isa)) continue;
      auto d = std::make_shared<F32Lrn>(kParams, size_t(l.c), k);
      auto scratch = std::make_shared<Buffer<char>>(d->scratch_bytes(1));
      add_bench(l, k.name, chosen == &k, [=] { d->run(x->data(), y->data(), pixels, scratch->data(), nullptr); });
    }
    add_bench(l, "f32_lrn_nhwc__ref", chosen == nullptr,
              [=] { f32_lrn_nhwc__ref(kParams, pixels, size_t(l.c), x->data(), y->data()); });
  }
  octet::bench::add_active_isa_context();
  return octet::bench::run_benchmarks(argc, argv);
}
