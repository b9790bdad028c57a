// FP32 dense conv and GEMM kernels (F32Conv / F32Gemm on kernels/gemm/f32_gemm_list.h) at every
// dense conv and FC layer of bench/layer_shapes.h and at large_gemms(), one entry per
// (layer x microkernel this CPU supports), named f32_conv/<model>/<layer>/<kernel>, plus the
// scalar ref kernel at three shapes. Grouped layers of 2 or 4 channels per group also run
// F32NarrowGroupConv's kernels (kernels/conv/f32_gconv_list.h) under the same names. The driver's pick for active_isa() is labelled "pick".
// Counters: GFLOPS (2 per MAC) and pct_peak of that kernel's ISA (bench/peak_values.h).
// One thread (pool = nullptr), wall-clock time.
#include <benchmark/benchmark.h>

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bench/kernel_bench_util.h"
#include "bench/layer_shapes.h"
#include "kernels/conv/f32_conv.h"
#include "kernels/conv/f32_narrow_group_conv.h"
#include "kernels/gemm/f32_gemm_list.h"
#include "kernels/gemm/f32_batched_gemm.h"
#include "kernels/gemm/f32_gemm.h"
#include "kernels/isa.h"
#include "kernels/ref/conv2d.h"
#include "kernels/ref/gemm.h"

namespace {

using octet::bench::Arithmetic;
using octet::bench::conv_macs;
using octet::bench::random_floats;
using octet::bench::run_timed;
using octet::kernels::Activation;
using octet::kernels::Conv2dShape;
using octet::kernels::F32Conv;
using octet::kernels::F32Gemm;
using octet::kernels::F32GemmKernel;
using octet::kernels::Isa;

void conv_bench(benchmark::State& state, const Conv2dShape& s, const F32GemmKernel& kernel, bool pick) {
  const auto x = random_floats(size_t(s.batch) * s.in_h * s.in_w * s.in_c, 1);
  const auto w = random_floats(size_t(s.out_c) * s.in_c * s.kernel_h * s.kernel_w, 2);
  const auto b = random_floats(s.out_c, 3);
  std::vector<float> y(size_t(s.batch) * s.out_h * s.out_w * s.out_c);
  F32Conv conv(s, w.data(), b.data(), Activation::relu(), kernel);
  conv.bind(x.data());
  run_timed(state, Arithmetic::f32, kernel.isa, conv_macs(s), [&] { conv.run(x.data(), y.data(), nullptr); });
  if (pick) state.SetLabel("pick");
}

void gconv_bench(benchmark::State& state, const Conv2dShape& s, const octet::kernels::F32GconvKernel& kernel,
                 bool pick) {
  const auto x = random_floats(size_t(s.batch) * s.in_h * s.in_w * s.in_c, 1);
  const auto w = random_floats(size_t(s.out_c) * (s.in_c / s.groups) * s.kernel_h * s.kernel_w, 2);
  const auto b = random_floats(s.out_c, 3);
  std::vector<float> y(size_t(s.batch) * s.out_h * s.out_w * s.out_c);
  octet::kernels::F32NarrowGroupConv conv(s, w.data(), b.data(), Activation::relu(), kernel);
  conv.bind(x.data());
  run_timed(state, Arithmetic::f32, kernel.isa, conv_macs(s), [&] { conv.run(x.data(), y.data(), nullptr); });
  if (pick) state.SetLabel("pick");
}

void conv_ref_bench(benchmark::State& state, const Conv2dShape& s) {
  const auto x = random_floats(size_t(s.batch) * s.in_h * s.in_w * s.in_c, 1);
  const auto w = random_floats(size_t(s.out_c) * s.in_c * s.kernel_h * s.kernel_w, 2);
  const auto b = random_floats(s.out_c, 3);
  std::vector<float> y(size_t(s.batch) * s.out_h * s.out_w * s.out_c);
  run_timed(state, Arithmetic::f32, Isa::scalar, conv_macs(s), [&] {
    octet::kernels::f32_conv2d_nhwc__ref(s, x.data(), w.data(), b.data(), Activation::relu(), y.data());
  });
}

void gemm_bench(benchmark::State& state, int m, int n, int k, const F32GemmKernel& kernel, bool pick) {
  const auto a = random_floats(size_t(m) * k, 1);
  const auto b = random_floats(size_t(k) * n, 2);
  const auto bias = random_floats(n, 3);
  std::vector<float> y(size_t(m) * n);
  F32Gemm gemm(k, n, b.data(), false, bias.data(), Activation{}, kernel);
  run_timed(state, Arithmetic::f32, kernel.isa, int64_t(m) * n * k, [&] { gemm.run(m, a.data(), y.data(), nullptr); });
  if (pick) state.SetLabel("pick");
}

// ONNX Gemm with C [M, N] (beta · C added in each tile's epilogue) and B a constant or an input
// (F32BatchedGemm: B, transposed, packed at each run), against f32_gemm__ref.
enum class GemmB { constant, input, ref };
void gemm_c_bench(benchmark::State& state, int m, int n, int k, GemmB which) {
  const auto a = random_floats(size_t(m) * k, 1);
  const auto b = random_floats(size_t(k) * n, 2);
  const auto c = random_floats(size_t(m) * n, 3);
  std::vector<float> y(size_t(m) * n);
  const Isa isa = which == GemmB::ref ? Isa::scalar : octet::kernels::active_isa();
  if (which == GemmB::constant) {
    F32Gemm gemm(k, n, b.data(), true, nullptr, Activation{}, isa);
    state.SetLabel(gemm.kernel_name() + " + C");
    run_timed(state, Arithmetic::f32, isa, int64_t(m) * n * k, [&] { gemm.run(m, a.data(), y.data(), nullptr, c.data()); });
  } else if (which == GemmB::input) {
    octet::kernels::F32BatchedGemm gemm(m, k, n, isa, true);
    state.SetLabel(gemm.kernel_id().name + " + C");
    run_timed(state, Arithmetic::f32, isa, int64_t(m) * n * k,
              [&] { gemm.run(a.data(), b.data(), y.data(), nullptr, {1.0f, nullptr, c.data()}); });
  } else {
    octet::kernels::GemmShape s;
    s.m = m;
    s.n = n;
    s.k = k;
    s.trans_b = true;
    run_timed(state, Arithmetic::f32, isa, int64_t(m) * n * k, [&] {
      octet::kernels::f32_gemm__ref(s, 1.0f, a.data(), b.data(), 1.0f, c.data(), n, 1, Activation{}, y.data());
    });
  }
}

void register_benchmarks() {
  const Isa active = octet::kernels::active_isa();
  std::vector<const F32GemmKernel*> kernels;
  for (const F32GemmKernel& k : octet::kernels::f32_gemm_kernels())
    if (octet::kernels::isa_supported(k.isa)) kernels.push_back(&k);
  const bool any = active != Isa::scalar && !kernels.empty();

  std::vector<octet::bench::ConvLayer> layers = octet::bench::conv_layers();
  for (const octet::bench::ConvLayer& layer : octet::bench::grouped_conv_layers()) layers.push_back(layer);
  for (const octet::bench::ConvLayer& layer : layers) {
    if (layer.shape.groups != 1 && layer.shape.groups == layer.shape.in_c) continue;  // depthwise: bench/dwconv_bench
    const Conv2dShape s = layer.shape;
    const bool narrow = any && octet::kernels::F32NarrowGroupConv::faster_than_tile(s, active);
    if (octet::kernels::F32NarrowGroupConv::supports(s, Activation{})) {
      const auto* narrow_pick = octet::kernels::choose_f32_gconv_kernel(active, s.in_c / s.groups);
      for (const auto& k : octet::kernels::kF32GconvKernels) {
        if (!octet::kernels::isa_supported(k.isa) || k.group_width != s.in_c / s.groups) continue;
        const bool pick = narrow && &k == narrow_pick;
        const std::string name = std::string("f32_conv/") + layer.model + "/" + layer.name + "/" + k.name;
        benchmark::RegisterBenchmark(name.c_str(), [s, &k, pick](benchmark::State& state) {
          gconv_bench(state, s, k, pick);
        })->UseRealTime()->Unit(benchmark::kMicrosecond);
      }
    }
    const F32GemmKernel* pick =
        any && !narrow ? &octet::kernels::choose_f32_gemm_kernel(active, int64_t(s.out_h) * s.out_w, s.out_c / s.groups,
                                                       int64_t(s.kernel_h) * s.kernel_w * (s.in_c / s.groups))
            : nullptr;
    for (const F32GemmKernel* k : kernels) {
      F32Conv probe(s, std::vector<float>(size_t(s.out_c) * s.in_c * s.kernel_h * s.kernel_w).data(), nullptr,
                    Activation{}, *k);
      const std::string name = std::string("f32_conv/") + layer.model + "/" + layer.name + "/" + probe.kernel_name();
      benchmark::RegisterBenchmark(name.c_str(), [s, k, pick](benchmark::State& state) {
        conv_bench(state, s, *k, k == pick);
      })->UseRealTime()->Unit(benchmark::kMicrosecond);
    }
  }
  for (const char* layer_name : {"conv3x3 3->16 @32", "conv3x3 16->16 @32", "conv3x3 64->64 @8"}) {
    for (const octet::bench::ConvLayer& layer : octet::bench::conv_layers()) {
      if (std::string(layer.model) != "resnet8-mlperf" || layer.name != std::string(layer_name)) continue;
      const Conv2dShape s = layer.shape;
      benchmark::RegisterBenchmark(
          (std::string("f32_conv/") + layer.model + "/" + layer.name + "/f32_conv2d_nhwc__ref").c_str(),
          [s](benchmark::State& state) { conv_ref_bench(state, s); })
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
    }
  }
  auto register_gemm = [&](const std::string& model, const std::string& label, int m, int n, int k) {
    const F32GemmKernel* pick = any ? &octet::kernels::choose_f32_gemm_kernel(active, 0, n, k) : nullptr;
    for (const F32GemmKernel* kernel : kernels) {
      const std::string name = "f32_gemm/" + model + "/" + label + "/" + kernel->gemm_name;
      benchmark::RegisterBenchmark(name.c_str(), [m, n, k, kernel, pick](benchmark::State& state) {
        gemm_bench(state, m, n, k, *kernel, kernel == pick);
      })->UseRealTime()->Unit(benchmark::kMicrosecond);
    }
  };
  for (const octet::bench::FcLayer& layer : octet::bench::fc_layers())
    register_gemm(layer.model, layer.name, 1, layer.n, layer.k);
  for (auto [gm, gn, gk] : {std::tuple{4, 16, 32}, std::tuple{64, 256, 256}})
    for (auto [gb, label] : {std::pair{GemmB::constant, "Bconst"}, std::pair{GemmB::input, "Binput"},
                             std::pair{GemmB::ref, "f32_gemm__ref"}}) {
      const int m = gm, n = gn, k = gk;  // structured bindings cannot be captured before C++20's clang 16
      const GemmB which = gb;
      if (which != GemmB::ref && !any) continue;
      const std::string name = "f32_gemm_cmn/" + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
                               "/" + label;
      benchmark::RegisterBenchmark(name.c_str(), [m, n, k, which](benchmark::State& state) {
        gemm_c_bench(state, m, n, k, which);
      })->UseRealTime()->Unit(benchmark::kMicrosecond);
    }
  for (const octet::bench::GemmSize& g : octet::bench::large_gemms())
    register_gemm("large", std::to_string(g.m) + "x" + std::to_string(g.n) + "x" + std::to_string(g.k), g.m, g.n,
                  g.k);
}

}  // namespace

int main(int argc, char** argv) {
  octet::bench::add_active_isa_context();
  octet::bench::add_peak_context("peak_f32_ymm_gflops", octet::bench::peak_gflops(Isa::avx2));
  octet::bench::add_peak_context("peak_f32_zmm_gflops", octet::bench::peak_gflops(Isa::avx512));
  register_benchmarks();
  return octet::bench::run_benchmarks(argc, argv);
}
