// Winograd F(2x2, 3x3) FP32 conv (F32WinogradConv) against the direct conv (F32Conv, the
// driver's pick) at every 3x3 stride-1 dense layer of bench/layer_shapes.h, in the same run.
// Names: f32_winograd/<model>/<layer>/<kernel>; Winograd entries are
// <transforms>+<GEMM microkernel>, one per transform entry x FP32 GEMM entry of the same or
// lower ISA this CPU supports; the Winograd driver's own pick for active_isa() is labelled
// "pick", the direct conv "direct". Counters: GFLOPS = the DIRECT conv's FLOPs (2 per MAC) /
// time, so Winograd and direct compare on one scale ("effective"; Winograd can exceed the
// peak), and pct_peak of that figure against the GEMM's ISA (bench/peak_values.h).
// One thread (pool = nullptr), wall-clock time.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "bench/kernel_bench_util.h"
#include "bench/layer_shapes.h"
#include "kernels/conv/f32_conv.h"
#include "kernels/conv/f32_winograd.h"
#include "kernels/gemm/f32_gemm_list.h"
#include "kernels/conv/f32_winograd_list.h"
#include "kernels/isa.h"

namespace {

using octet::bench::Arithmetic;
using octet::bench::conv_macs;
using octet::bench::random_floats;
using octet::bench::run_timed;
using octet::kernels::Activation;
using octet::kernels::Conv2dShape;
using octet::kernels::F32Conv;
using octet::kernels::F32GemmKernel;
using octet::kernels::F32WinogradConv;
using octet::kernels::F32WinogradKernel;
using octet::kernels::Isa;

struct Data {
  std::vector<float> x, w, b, y;
  explicit Data(const Conv2dShape& s)
      : x(random_floats(size_t(s.batch) * s.in_h * s.in_w * s.in_c, 1)),
        w(random_floats(size_t(s.out_c) * s.in_c * 9, 2)),
        b(random_floats(s.out_c, 3)),
        y(size_t(s.batch) * s.out_h * s.out_w * s.out_c) {}
};

void winograd_bench(benchmark::State& state, const Conv2dShape& s, const F32WinogradKernel& t,
                    const F32GemmKernel& g, bool pick) {
  Data d(s);
  F32WinogradConv conv(s, d.w.data(), d.b.data(), Activation::relu(), t, g);
  conv.bind(d.x.data());
  // Rated by the direct conv's MACs, like the direct entry.
  run_timed(state, Arithmetic::f32, g.isa, conv_macs(s), [&] { conv.run(d.x.data(), d.y.data(), nullptr); });
  if (pick) state.SetLabel("pick");
}

void direct_bench(benchmark::State& state, const Conv2dShape& s, Isa isa) {
  Data d(s);
  F32Conv conv(s, d.w.data(), d.b.data(), Activation::relu(), isa);
  conv.bind(d.x.data());
  run_timed(state, Arithmetic::f32, conv.kernel().isa, conv_macs(s),
            [&] { conv.run(d.x.data(), d.y.data(), nullptr); });
  state.SetLabel("direct");
}

void register_benchmarks() {
  const Isa active = octet::kernels::active_isa();
  if (active == Isa::scalar) return;
  for (const octet::bench::ConvLayer& layer : octet::bench::conv_layers()) {
    const Conv2dShape s = layer.shape;
    if (!F32WinogradConv::supports(s, Activation::relu())) continue;
    const std::string prefix = std::string("f32_winograd/") + layer.model + "/" + layer.name + "/";
    std::vector<float> zeros(size_t(s.out_c) * s.in_c * 9);
    F32Conv direct(s, zeros.data(), nullptr, Activation{}, active);
    benchmark::RegisterBenchmark((prefix + direct.kernel_name()).c_str(), [s, active](benchmark::State& state) {
      direct_bench(state, s, active);
    })->UseRealTime()->Unit(benchmark::kMicrosecond);
    F32WinogradConv chosen(s, zeros.data(), nullptr, Activation{}, active);
    for (const F32WinogradKernel& t : octet::kernels::f32_winograd_kernels()) {
      if (!octet::kernels::isa_runs(t.isa, active)) continue;
      for (const F32GemmKernel& g : octet::kernels::f32_gemm_kernels()) {
        if (!octet::kernels::isa_runs(g.isa, t.isa)) continue;
        const bool pick = chosen.kernel_name() == t.name && &chosen.gemm_kernel() == &g;
        benchmark::RegisterBenchmark((prefix + t.name + "+" + g.gemm_name).c_str(),
                                     [s, &t, &g, pick](benchmark::State& state) { winograd_bench(state, s, t, g, pick); })
            ->UseRealTime()
            ->Unit(benchmark::kMicrosecond);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_benchmarks();
  return octet::bench::run_benchmarks(argc, argv);
}
