// INT8 dense conv and GEMM kernels (Q8Conv / Q8Gemm on kernels/q8_gemm_list.h) at every dense
// conv and FC layer of bench/layer_shapes.h and at large_gemms(), one entry per (layer x
// microkernel this CPU supports), named q8_conv/<model>/<layer>/<kernel> (q8_gemm/... for FC
// and large GEMMs), plus the scalar ref kernel at three shapes. u8 activations everywhere; the
// s8 microkernels run at the MLPerf ResNet8 layers only. The driver's pick for active_isa() is
// labelled "pick". Counters: GOPS (2 per MAC) and pct_peak of that kernel's ISA
// (bench/peak_values.h). One thread (pool = nullptr), wall-clock time.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "bench/layer_shapes.h"
#include "bench/peak_values.h"
#include "kernels/conv/q8_conv.h"
#include "kernels/gemm/q8_gemm.h"
#include "kernels/gemm/q8_pack.h"
#include "kernels/isa.h"
#include "kernels/q8_gemm_list.h"
#include "kernels/ref/qconv2d.h"

namespace {

using octet::kernels::Conv2dShape;
using octet::kernels::Isa;
using octet::kernels::Q8;
using octet::kernels::Q8Conv;
using octet::kernels::Q8Gemm;
using octet::kernels::Q8GemmKernel;
using octet::kernels::Requantization;

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(0, 255);
  std::vector<uint8_t> v(n);
  for (uint8_t& e : v) e = static_cast<uint8_t>(dist(rng));
  return v;
}

std::vector<int8_t> random_weights(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-127, 127);
  std::vector<int8_t> v(n);
  for (int8_t& e : v) e = static_cast<int8_t>(dist(rng));
  return v;
}

int64_t conv_macs(const Conv2dShape& s) {
  return int64_t(s.batch) * s.out_h * s.out_w * s.out_c * s.in_c * s.kernel_h * s.kernel_w;
}

// Runs `body` in the benchmark loop and sets GOPS and pct_peak from the loop's own wall-clock
// time (plain numbers, so they print without "/s"), plus best_us: the fastest single call. The
// shared host preempts often; the fastest call is the kernel's own speed, the mean is not.
template <class Body>
void run_timed(benchmark::State& state, int64_t macs, Isa isa, Body body) {
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
  const double gops = 2.0 * double(macs) * double(state.iterations()) / seconds * 1e-9;
  state.counters["GOPS"] = gops;
  state.counters["best_us"] = best * 1e6;
  const double peak = octet::bench::peak_gops(isa);
  if (peak > 0) {
    state.counters["pct_peak"] = 100.0 * gops / peak;
    state.counters["best_pct_peak"] = 100.0 * (2.0 * double(macs) / best * 1e-9) / peak;
  }
}

const float kMultiplier[] = {0.0005f};

void conv_bench(benchmark::State& state, const Conv2dShape& s, const Q8GemmKernel* kernel,
                bool pick) {
  const Q8 x_type = kernel != nullptr ? kernel->x_type : Q8::u8;
  const int32_t x_zp = x_type == Q8::u8 ? 128 : 0;
  const auto x = random_bytes(size_t(s.batch) * s.in_h * s.in_w * s.in_c, 1);
  const auto w = random_weights(size_t(s.out_c) * s.in_c * s.kernel_h * s.kernel_w, 2);
  std::vector<int32_t> bias(s.out_c, 1000);
  std::vector<uint8_t> y(size_t(s.batch) * s.out_h * s.out_w * s.out_c);
  const Requantization rq{kMultiplier, 3, 0, 255};
  Q8Conv conv = kernel != nullptr
                    ? Q8Conv(s, x_type, x_zp, w.data(), bias.data(), rq, Q8::u8, *kernel)
                    : Q8Conv(s, x_type, x_zp, w.data(), bias.data(), rq, Q8::u8, Isa::scalar);
  conv.bind(x.data());
  run_timed(state, conv_macs(s), kernel != nullptr ? kernel->isa : Isa::scalar,
            [&] { conv.run(x.data(), y.data(), nullptr); });
  if (pick) state.SetLabel("pick");
}

void gemm_bench(benchmark::State& state, int m, int n, int k, const Q8GemmKernel& kernel,
                bool pick) {
  const auto a = random_bytes(size_t(m) * k, 1);
  const auto b = random_weights(size_t(k) * n, 2);
  std::vector<int32_t> bias(n, 1000);
  std::vector<uint8_t> y(size_t(m) * n);
  const Requantization rq{kMultiplier, 3, 0, 255};
  Q8Gemm gemm(k, n, kernel.x_type, 128, b.data(), false, bias.data(), rq, Q8::u8, kernel);
  run_timed(state, int64_t(m) * n * k, kernel.isa,
            [&] { gemm.run(m, a.data(), y.data(), nullptr); });
  if (pick) state.SetLabel("pick");
}

void register_benchmarks() {
  const Isa active = octet::kernels::active_isa();
  std::vector<const Q8GemmKernel*> kernels;
  for (const Q8GemmKernel& k : octet::kernels::kQ8GemmKernels)
    if (octet::kernels::isa_supported(k.isa)) kernels.push_back(&k);

  for (const octet::bench::ConvLayer& layer : octet::bench::conv_layers()) {
    if (layer.shape.groups != 1) continue;  // depthwise: bench/dwconv_bench
    const Conv2dShape s = layer.shape;
    const bool mlperf = std::string(layer.model) == "resnet8-mlperf";
    for (Q8 x_type : {Q8::u8, Q8::s8}) {
      if (x_type == Q8::s8 && !mlperf) continue;
      const Q8GemmKernel* pick =
          octet::kernels::choose_q8_gemm_kernel(active, x_type, size_t(s.batch) * s.out_h * s.out_w,
                                                s.out_c, size_t(s.in_c) * s.kernel_h * s.kernel_w);
      for (const Q8GemmKernel* k : kernels) {
        if (k->x_type != x_type) continue;
        const std::string name =
            std::string("q8_conv/") + layer.model + "/" + layer.name + "/" + k->name;
        benchmark::RegisterBenchmark(
            name.c_str(),
            [s, k, pick](benchmark::State& state) { conv_bench(state, s, k, k == pick); })
            ->UseRealTime()
            ->Unit(benchmark::kMicrosecond);
      }
    }
  }
  for (const char* layer_name : {"conv3x3 3->16 @32", "conv3x3 16->16 @32", "conv3x3 64->64 @8"}) {
    for (const octet::bench::ConvLayer& layer : octet::bench::conv_layers()) {
      if (std::string(layer.model) != "resnet8-mlperf" || layer.name != std::string(layer_name))
        continue;
      const Conv2dShape s = layer.shape;
      benchmark::RegisterBenchmark(
          (std::string("q8_conv/") + layer.model + "/" + layer.name + "/q8_conv2d_nhwc__ref")
              .c_str(),
          [s](benchmark::State& state) { conv_bench(state, s, nullptr, false); })
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
    }
  }
  auto register_gemm = [&](const std::string& model, const std::string& label, int m, int n,
                           int k) {
    const Q8GemmKernel* pick = octet::kernels::choose_q8_gemm_kernel(active, Q8::u8, 16, n, k);
    for (const Q8GemmKernel* kernel : kernels) {
      if (kernel->x_type != Q8::u8) continue;
      const std::string name = "q8_gemm/" + model + "/" + label + "/" + kernel->name;
      benchmark::RegisterBenchmark(name.c_str(),
                                   [m, n, k, kernel, pick](benchmark::State& state) {
                                     gemm_bench(state, m, n, k, *kernel, kernel == pick);
                                   })
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
    }
  };
  for (const octet::bench::FcLayer& layer : octet::bench::fc_layers())
    register_gemm(layer.model, layer.name, 1, layer.n, layer.k);
  for (const octet::bench::GemmSize& g : octet::bench::large_gemms())
    register_gemm("large",
                  std::to_string(g.m) + "x" + std::to_string(g.n) + "x" + std::to_string(g.k), g.m,
                  g.n, g.k);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::AddCustomContext("active_isa", octet::kernels::isa_name(octet::kernels::active_isa()));
  benchmark::AddCustomContext("peak_vnni_zmm_gops",
                              std::to_string(octet::bench::peak_gops(Isa::avx512vnni)));
  register_benchmarks();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
