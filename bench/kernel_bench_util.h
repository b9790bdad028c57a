#pragma once
// What every kernel benchmark program (bench/<family>_bench.cc) needs around its own kernels:
// seeded random data, the MAC count of a conv, the timed loop that turns wall-clock time into
// GFLOPS / GOPS and pct_peak (bench/peak_values.h), 64-byte aligned buffers and main().
// Header-only, so each program stays one .cc file in bench/CMakeLists.txt.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "bench/peak_values.h"
#include "kernels/isa.h"
#include "kernels/ref/conv2d.h"

namespace octet::bench {

// Activations 64-byte aligned like the engine's arena: a misaligned NHWC row makes every zmm
// load split across two cache lines.
template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(std::aligned_alloc(64, (n * sizeof(T) + 63) / 64 * 64)); }
  void deallocate(T* p, size_t) { std::free(p); }
  bool operator==(const CacheLineAllocator&) const { return true; }
};
template <typename T>
using Buffer = std::vector<T, CacheLineAllocator<T>>;

// Uniform in [-1, 1): no denormals, no overflow in any FP32 kernel.
template <class Vector = std::vector<float>>
Vector random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Vector v(n);
  for (float& e : v) e = dist(rng);
  return v;
}

// Uniform integers in [lo, hi], e.g. u8 activations over [0, 255], s8 weights over [-127, 127].
template <typename T, class Vector = std::vector<T>>
Vector random_ints(size_t n, int lo, int hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  Vector v(n);
  for (T& e : v) e = static_cast<T>(dist(rng));
  return v;
}

// Multiply-accumulates of one conv (grouped convs: in_c / groups inputs per output).
inline int64_t conv_macs(const kernels::Conv2dShape& s) {
  return int64_t(s.batch) * s.out_d * s.out_h * s.out_w * s.out_c * (s.in_c / s.groups) * s.kernel_d * s.kernel_h *
         s.kernel_w;
}

// FP32 kernels report GFLOPS against peak_gflops, INT8 kernels GOPS against peak_gops.
enum class Arithmetic { f32, int8 };

inline double peak_of(Arithmetic arithmetic, kernels::Isa isa) {
  return arithmetic == Arithmetic::f32 ? peak_gflops(isa) : peak_gops(isa);
}

// Sets GFLOPS or GOPS (2 per MAC) from `iterations` runs of `macs` in `seconds`, and pct_peak
// against the peak of `isa`, as plain numbers (no Google Benchmark rate, so no "/s").
inline void set_rate_counters(benchmark::State& state, Arithmetic arithmetic, kernels::Isa isa, int64_t macs,
                                double seconds) {
  const double rate = 2.0 * double(macs) * double(state.iterations()) / seconds * 1e-9;
  state.counters[arithmetic == Arithmetic::f32 ? "GFLOPS" : "GOPS"] = rate;
  const double peak = peak_of(arithmetic, isa);
  if (peak > 0) state.counters["pct_peak"] = 100.0 * rate / peak;
}

// Runs `body` in the benchmark loop and sets the rate counters from the loop's own wall-clock
// time.
template <class Body>
void run_timed(benchmark::State& state, Arithmetic arithmetic, kernels::Isa isa, int64_t macs, Body body) {
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    body();
    benchmark::ClobberMemory();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  set_rate_counters(state, arithmetic, isa, macs, seconds);
}

// run_timed plus best_us and best_pct_peak from the fastest single call: the shared host
// preempts often; the fastest call is the kernel's own speed, the mean is not. Times each call,
// so it is for kernels that run well over a microsecond.
template <class Body>
void run_timed_with_best(benchmark::State& state, Arithmetic arithmetic, kernels::Isa isa, int64_t macs, Body body) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  double best = 1e30;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    body();
    benchmark::ClobberMemory();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  set_rate_counters(state, arithmetic, isa, macs, seconds);
  state.counters["best_us"] = best * 1e6;
  const double peak = peak_of(arithmetic, isa);
  if (peak > 0) state.counters["best_pct_peak"] = 100.0 * (2.0 * double(macs) / best * 1e-9) / peak;
}

// Context lines printed above the table.
inline void add_active_isa_context() {
  benchmark::AddCustomContext("active_isa", kernels::isa_name(kernels::active_isa()));
}
inline void add_peak_context(const char* key, double peak) { benchmark::AddCustomContext(key, std::to_string(peak)); }

// The body of main() once the benchmarks are registered.
inline int run_benchmarks(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace octet::bench
