// Softmax / LogSoftmax along an axis (kernels/elementwise/softmax.h): the contiguous form (the
// axis innermost in memory: a classifier's [N, 1000], a segmentation head's channels-last map)
// and the strided form (YOLOv8's DFL Softmax over 16 bins of [1, 16, 4 * 8400], a segmentation
// head's row-major [1, 21, H * W]), the scalar reference next to every microkernel this CPU
// runs. One thread, wall-clock time; the counter is elements normalised per second (Melem/s).
//
//   build/bench/softmax_bench --benchmark_filter=dfl
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "bench/kernel_bench_util.h"
#include "kernels/elementwise/softmax.h"
#include "kernels/elementwise/eltwise_list.h"
#include "kernels/isa.h"
#include "kernels/ref/softmax.h"

namespace {

using namespace octet::kernels;
using octet::bench::Buffer;

struct Case {
  const char* name;
  int64_t outer, len, inner;
};

const Case kCases[] = {
    {"classifier 64x1000 (rows)", 64, 1000, 1},
    {"seghead nhwc 96x96x21 (rows)", 96 * 96, 21, 1},
    {"dfl 16x4x8400 (columns)", 1, 16, 4 * 8400},
    {"seghead nchw 21x96x96 (columns)", 1, 21, 96 * 96},
};

void report(benchmark::State& state, const Case& c) {
  state.counters["Melem/s"] = benchmark::Counter(double(c.outer * c.len * c.inner) * double(state.iterations()) / 1e6,
                                                 benchmark::Counter::kIsRate);
}

void register_all() {
  for (const Case& c : kCases) {
    for (bool log : {false, true}) {
      const std::string op = log ? "logsoftmax" : "softmax";
      const size_t n = size_t(c.outer * c.len * c.inner);
      benchmark::RegisterBenchmark(("softmax/" + std::string(c.name) + "/" + op + "__ref").c_str(),
                                   [=](benchmark::State& state) {
                                     auto x = octet::bench::random_floats<Buffer<float>>(n, 3);
                                     for (float& v : x) v *= 8.0f;
                                     Buffer<float> y(n);
                                     for (auto _ : state) {
                                       (log ? f32_logsoftmax__ref : f32_softmax__ref)(c.outer, c.len, c.inner,
                                                                                      x.data(), y.data());
                                       benchmark::DoNotOptimize(y.data());
                                     }
                                     report(state, c);
                                   })
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
      for (const auto& k : log ? kF32LogSoftmaxUkernels : kF32SoftmaxUkernels) {
        if (!isa_supported(k.isa)) continue;
        const Isa isa = k.isa;
        benchmark::RegisterBenchmark(("softmax/" + std::string(c.name) + "/" + k.name).c_str(),
                                     [=](benchmark::State& state) {
                                       const F32Softmax sm(log, c.outer, c.len, c.inner, isa);
                                       auto x = octet::bench::random_floats<Buffer<float>>(n, 3);
                                       for (float& v : x) v *= 8.0f;
                                       Buffer<float> y(n);
                                       for (auto _ : state) {
                                         sm.run(x.data(), y.data(), nullptr);
                                         benchmark::DoNotOptimize(y.data());
                                       }
                                       report(state, c);
                                     })
            ->UseRealTime()
            ->Unit(benchmark::kMicrosecond);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
