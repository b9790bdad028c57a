// QLinearSoftmax (kernels/elementwise/softmax.h, Q8Softmax) at the zoo's shapes: YOLOv5nu's
// DFL head (16 bins along axis 1 of [1, 16, 4, 8400] at 640 px: columns) and a 1000-class
// classifier's last-axis softmax (a contiguous row), uint8 and int8, on the scalar reference and
// every microkernel of kernels/elementwise/qsoftmax_list.h this CPU runs; the driver's pick for active_isa()
// labelled "pick". One thread, wall-clock time; the counter is input elements per second.
//
//   build/bench/qsoftmax_bench --benchmark_filter=dfl
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <type_traits>

#include "bench/kernel_bench_util.h"
#include "kernels/elementwise/softmax.h"
#include "kernels/isa.h"
#include "kernels/elementwise/qsoftmax_list.h"

namespace {

using namespace octet::kernels;
using octet::bench::Buffer;

struct Case {
  const char* name;
  int64_t outer, len, inner;
  float x_scale;
};

const Case kCases[] = {
    {"yolov5nu dfl 16x4x8400 (columns)", 1, 16, 4 * 8400, 0.14f},
    {"classifier 1x1000 (rows)", 1, 1000, 1, 0.21f},
};

template <class T>
void register_case(const Case& c, std::span<const Q8SoftmaxEntry> list, const char* type) {
  constexpr bool is_signed = std::is_same_v<T, int8_t>;
  const size_t n = size_t(c.outer * c.len * c.inner);
  auto x = std::make_shared<Buffer<T>>(
      octet::bench::random_ints<T, Buffer<T>>(n, is_signed ? -128 : 0, is_signed ? 127 : 255, 3));
  auto y = std::make_shared<Buffer<T>>(n);
  auto table = std::make_shared<QSoftmaxTable>(qsoftmax_table(c.x_scale, size_t(c.len), is_signed));
  const int32_t zp = is_signed ? -128 : 0;
  auto add = [&](std::shared_ptr<const Q8Softmax> sm, bool pick) {
    const std::string name = std::string("qsoftmax/") + type + " " + c.name + "/" + sm->kernel_name();
    benchmark::RegisterBenchmark(name.c_str(),
                                 [=](benchmark::State& state) {
                                   for (auto _ : state) {
                                     sm->run(x->data(), y->data(), *table, 1.0f / 256.0f, zp, nullptr);
                                     benchmark::ClobberMemory();
                                   }
                                   state.counters["Melem/s"] = benchmark::Counter(
                                       double(n) * double(state.iterations()) / 1e6, benchmark::Counter::kIsRate);
                                   if (pick) state.SetLabel("pick");
                                 })
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  };
  const auto* chosen = first_runnable(list, active_isa());
  add(std::make_shared<Q8Softmax>(is_signed, c.outer, c.len, c.inner, Isa::scalar), chosen == nullptr);
  for (const auto& k : list)
    if (isa_supported(k.isa)) add(std::make_shared<Q8Softmax>(is_signed, c.outer, c.len, c.inner, k), chosen == &k);
}

}  // namespace

int main(int argc, char** argv) {
  for (const Case& c : kCases) {
    register_case<uint8_t>(c, kQu8SoftmaxUkernels, "qu8");
    register_case<int8_t>(c, kQs8SoftmaxUkernels, "qs8");
  }
  octet::bench::add_active_isa_context();
  return octet::bench::run_benchmarks(argc, argv);
}
