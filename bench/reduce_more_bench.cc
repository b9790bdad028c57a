// ReduceL2 over the channels of a 1x256x56x56 map (row-major: lanes along W, the 256 channels a
// strided walk; channels-last: lanes gathered across pixels, each summing its own channels) and
// LpNormalization p = 2 of [N, 512] embeddings and CumSum (kernels/elementwise/reduce_more.h), the scalar
// reference (the driver at level scalar) next to every level this CPU runs. One thread,
// wall-clock time; the counter is input elements per second (Melem/s).
//
//   build/bench/reduce_more_bench --benchmark_filter=l2
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench/kernel_bench_util.h"
#include "kernels/elementwise/reduce_more.h"
#include "kernels/isa.h"

namespace {

using namespace octet::kernels;
using octet::bench::Buffer;

std::vector<Isa> levels() {
  std::vector<Isa> out = {Isa::scalar};
  for (const auto& k : kF32MapReduceUkernels)
    if (isa_supported(k.isa)) out.push_back(k.isa);
  return out;
}

std::string level_name(Isa isa) { return isa == Isa::scalar ? "ref" : isa_name(isa); }

void report(benchmark::State& state, size_t n) {
  state.counters["Melem/s"] =
      benchmark::Counter(double(n) * double(state.iterations()) / 1e6, benchmark::Counter::kIsRate);
}

void register_all() {
  struct L2Case {
    const char* name;
    std::vector<int64_t> strides;
  };
  const std::vector<int64_t> dims = {1, 256, 56, 56};
  for (const L2Case& c : {L2Case{"nchw", {802816, 3136, 56, 1}}, L2Case{"nhwc", {802816, 1, 14336, 256}}})
    for (Isa isa : levels())
      benchmark::RegisterBenchmark(("reduce_l2/channels 1x256x56x56 " + std::string(c.name) + "/" + level_name(isa)).c_str(),
                                   [=](benchmark::State& state) {
                                     const bool reduced[] = {false, true, false, false};
                                     const F32MapReduce op(MapReduce::l2, 4, dims.data(), c.strides.data(), reduced, isa);
                                     const size_t n = 256 * 56 * 56;
                                     auto x = octet::bench::random_floats<Buffer<float>>(n, 3);
                                     Buffer<float> y(56 * 56);
                                     for (auto _ : state) {
                                       op.run(x.data(), y.data(), nullptr);
                                       benchmark::DoNotOptimize(y.data());
                                     }
                                     state.SetLabel(op.kernel_name());
                                     report(state, n);
                                   })
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
  for (int64_t rows : {1, 32})
    for (Isa isa : levels())
      benchmark::RegisterBenchmark(("lpnorm_p2/" + std::to_string(rows) + "x512/" + level_name(isa)).c_str(),
                                   [=](benchmark::State& state) {
                                     const F32LpNorm op(2, rows, 512, 1, isa);
                                     const size_t n = size_t(rows) * 512;
                                     auto x = octet::bench::random_floats<Buffer<float>>(n, 3);
                                     Buffer<float> y(n), norms(op.scratch_floats());
                                     for (auto _ : state) {
                                       op.run(x.data(), y.data(), norms.data(), nullptr);
                                       benchmark::DoNotOptimize(y.data());
                                     }
                                     state.SetLabel(op.kernel_name());
                                     report(state, n);
                                   })
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
  // CumSum along the channels of a row-major 1x64x56x56 map (a lane per column of 56x56) and
  // along its rows (the axis innermost: a scalar chain per row at every level, a tighter loop than
  // the reference's), exclusive.
  for (const int64_t inner : {int64_t{56 * 56}, int64_t{1}})
    for (Isa isa : levels())
      benchmark::RegisterBenchmark(("cumsum/1x64x56x56 " + std::string(inner == 1 ? "axis W" : "axis C") + "/" +
                                    level_name(isa))
                                       .c_str(),
                                   [=](benchmark::State& state) {
                                     const int64_t outer = inner == 1 ? 64 * 56 : 1, len = inner == 1 ? 56 : 64;
                                     const F32CumSum op(outer, len, inner, true, false, isa);
                                     const size_t n = 64 * 56 * 56;
                                     auto x = octet::bench::random_floats<Buffer<float>>(n, 3);
                                     Buffer<float> y(n);
                                     for (auto _ : state) {
                                       op.run(x.data(), y.data(), nullptr);
                                       benchmark::DoNotOptimize(y.data());
                                     }
                                     state.SetLabel(op.kernel_name());
                                     report(state, n);
                                   })
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
