// The passes of DynamicQuantizeLinear (and a static model's input QuantizeLinear) at the
// activation shapes of the bundled models: the range pass (f32_range) and the quantize pass
// (q8_quantize, a multiply by 1/scale with a division only near rounding boundaries), per
// microkernel this CPU runs, and the scalar ref kernels. Counter: GBps (bytes read + written).
//
//   build/bench/quantize_bench --benchmark_filter='tinynet'
#include <benchmark/benchmark.h>

#include <functional>
#include <random>
#include <string>

#include "bench/kernel_bench_util.h"
#include "kernels/quantize/quantize.h"
#include "kernels/ref/qlinear.h"

namespace {

using namespace octet::kernels;
using octet::bench::Buffer;

struct Map {
  const char* model;
  int h, w, c;
  size_t count() const { return size_t(h) * w * c; }
  std::string label() const { return std::to_string(h) + "x" + std::to_string(w) + "x" + std::to_string(c); }
};
const Map kMaps[] = {{"resnet8-mlperf", 32, 32, 16}, {"resnet8-mlperf", 16, 16, 32}, {"resnet8-mlperf", 8, 8, 64},
                     {"tinynet", 28, 28, 48},        {"tinynet", 14, 14, 72},        {"tinynet", 7, 7, 96}};

Buffer<float> activations(size_t n) {
  std::mt19937 rng(5);
  std::normal_distribution<float> d(0.3f, 1.5f);
  Buffer<float> x(n);
  for (float& v : x) v = d(rng);
  return x;
}

void add(const std::string& name, double bytes, std::function<void(benchmark::State&)> body) {
  benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
    body(state);
    state.counters["GBps"] = benchmark::Counter(bytes * double(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
  })->UseRealTime()->Unit(benchmark::kMicrosecond);
}

void register_map(const Map& m) {
  const size_t n = m.count();
  const std::string base = std::string("quantize/") + m.model + "/" + m.label() + "/";
  for (const auto& k : kQ8QuantizeKernels) {
    if (!isa_supported(k.isa)) continue;
    const Q8QuantizeKernel* kp = &k;
    add(base + "range/" + k.name, 4.0 * n, [=](benchmark::State& state) {
      auto x = activations(n);
      for (auto _ : state) benchmark::DoNotOptimize(f32_range(kp, n, x.data()));
    });
    add(base + "quantize/" + k.name, 5.0 * n, [=](benchmark::State& state) {
      auto x = activations(n);
      Buffer<uint8_t> y(n);
      const DynamicQuantization q = qu8_dynamic_params(-2.0f, 5.0f);
      for (auto _ : state) {
        q8_quantize(*kp, Q8::u8, n, x.data(), q.scale, q.zero_point, y.data());
        benchmark::DoNotOptimize(y.data());
      }
    });
  }
  add(base + "dynamic_quantize/ref", 9.0 * n, [=](benchmark::State& state) {
    auto x = activations(n);
    Buffer<uint8_t> y(n);
    for (auto _ : state) benchmark::DoNotOptimize(qu8_dynamic_quantize_linear__ref(int64_t(n), x.data(), y.data()));
  });
}

}  // namespace

int main(int argc, char** argv) {
  for (const Map& m : kMaps) register_map(m);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
