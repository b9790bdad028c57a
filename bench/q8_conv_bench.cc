// INT8 dense conv and GEMM kernels (Q8Conv / Q8Gemm on kernels/gemm/q8_gemm_list.h) at every dense
// conv and FC layer of bench/layer_shapes.h and at large_gemms(), one entry per (layer x
// microkernel this CPU supports), named q8_conv/<model>/<layer>/<kernel> (q8_gemm/... for FC
// and large GEMMs), plus the scalar ref kernel at three shapes. u8 activations everywhere; the
// s8 microkernels run at the MLPerf ResNet8 layers only. The driver's pick for active_isa() is
// labelled "pick". Counters: GOPS (2 per MAC) and pct_peak of that kernel's ISA
// (bench/peak_values.h). One thread (pool = nullptr), wall-clock time.
// qlinear_matmul/<M>x<K>x<N>/<variant>: QLinearMatMul (u8 A, u8 Y) on q8_qlinear_matmul__ref
// against Q8MatMul at active_isa(): s8 B with zero point 0 (tiles requantize), u8 B with a
// zero point per column (int32 tiles corrected by row sums), and B packed every run.
#include <benchmark/benchmark.h>

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bench/kernel_bench_util.h"
#include "bench/layer_shapes.h"
#include "kernels/conv/q8_conv.h"
#include "kernels/gemm/q8_gemm.h"
#include "kernels/gemm/q8_matmul.h"
#include "kernels/gemm/q8_pack.h"
#include "kernels/isa.h"
#include "kernels/gemm/q8_gemm_list.h"
#include "kernels/ref/qconv2d.h"
#include "kernels/ref/qgemm.h"

namespace {

using octet::bench::Arithmetic;
using octet::bench::conv_macs;
using octet::bench::run_timed_with_best;
using octet::kernels::Conv2dShape;
using octet::kernels::Isa;
using octet::kernels::Q8;
using octet::kernels::Q8Conv;
using octet::kernels::Q8Gemm;
using octet::kernels::Q8GemmKernel;
using octet::kernels::Requantization;

// u8 activations over the whole type, s8 weights symmetric (no -128).
std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  return octet::bench::random_ints<uint8_t>(n, 0, 255, seed);
}
std::vector<int8_t> random_weights(size_t n, uint32_t seed) {
  return octet::bench::random_ints<int8_t>(n, -127, 127, seed);
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
  if (kernel == nullptr) {  // the reference kernel, the oracle (not a list row)
    const int32_t w_zero_point[] = {0};
    run_timed_with_best(state, Arithmetic::int8, Isa::scalar, conv_macs(s), [&] {
      octet::kernels::q8_conv2d_nhwc__ref<uint8_t, int8_t, uint8_t>(s, x.data(), x_zp, w.data(), w_zero_point,
                                                                    bias.data(), rq, y.data());
    });
    return;
  }
  Q8Conv conv(s, x_type, x_zp, w.data(), bias.data(), rq, Q8::u8, *kernel);
  conv.bind(x.data());
  run_timed_with_best(state, Arithmetic::int8, kernel->isa, conv_macs(s),
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
  run_timed_with_best(state, Arithmetic::int8, kernel.isa, int64_t(m) * n * k,
                      [&] { gemm.run(m, a.data(), y.data(), nullptr); });
  if (pick) state.SetLabel("pick");
}

enum class QMatMulVariant { ref, fused, corrected, run_time_b };

void qlinear_matmul_bench(benchmark::State& state, int m, int k, int n, QMatMulVariant v) {
  const auto a = random_bytes(size_t(m) * k, 1);
  const bool u8_b = v == QMatMulVariant::corrected;
  const auto b = u8_b ? random_bytes(size_t(k) * n, 2) : std::vector<uint8_t>();
  const auto b8 = random_weights(size_t(k) * n, 2);
  const void* bp = u8_b ? static_cast<const void*>(b.data()) : b8.data();
  std::vector<int32_t> b_zp = u8_b ? octet::bench::random_ints<int32_t>(size_t(n), 90, 160, 3) : std::vector<int32_t>{0};
  std::vector<uint8_t> y(size_t(m) * n);
  const float a_scale[] = {0.02f}, b_scale[] = {0.01f}, y_scale = 0.5f;
  const int32_t a_zp[] = {128};
  const Isa isa = v == QMatMulVariant::ref ? Isa::scalar : octet::kernels::active_isa();
  if (v == QMatMulVariant::ref) {
    octet::kernels::GemmShape s;
    s.m = m;
    s.n = n;
    s.k = k;
    run_timed_with_best(state, Arithmetic::int8, isa, int64_t(m) * n * k, [&] {
      octet::kernels::q8_qlinear_matmul__ref<uint8_t, int8_t, uint8_t>(s, a.data(), a_scale, a_zp, b8.data(), b_scale,
                                                                        b_zp, y_scale, 3, y.data());
    });
    return;
  }
  const float multiplier[] = {octet::kernels::requant_multiplier(a_scale[0], b_scale[0], y_scale)};
  const Requantization rq{multiplier, 3, 0, 255};
  const bool run_time_b = v == QMatMulVariant::run_time_b;
  octet::kernels::Q8MatMul mm(k, n, Q8::u8, 128, u8_b ? Q8::u8 : Q8::s8, run_time_b ? nullptr : bp, b_zp, &rq, Q8::u8,
                              m, isa);
  run_timed_with_best(state, Arithmetic::int8, isa, int64_t(m) * n * k, [&] {
    if (run_time_b) mm.pack(bp);
    mm.run(m, a.data(), y.data(), nullptr);
  });
  state.SetLabel(mm.kernel_id().name);
}

std::vector<std::pair<std::string, Conv2dShape>> resnet50_layers() {
  using octet::bench::conv;
  Conv2dShape stem = conv(224, 3, 64, 7, 2, 3, 3);
  return {{"conv7x7 3->64 s2 @224", stem},
          {"conv1x1 64->64 @56", conv(56, 64, 64, 1, 1, 0, 0)},
          {"conv3x3 64->64 @56", conv(56, 64, 64, 3, 1, 1, 1)},
          {"conv1x1 64->256 @56", conv(56, 64, 256, 1, 1, 0, 0)},
          {"conv1x1 256->64 @56", conv(56, 256, 64, 1, 1, 0, 0)},
          {"conv1x1 256->512 s2 @56", conv(56, 256, 512, 1, 2, 0, 0)},
          {"conv3x3 128->128 @28", conv(28, 128, 128, 3, 1, 1, 1)},
          {"conv1x1 512->128 @28", conv(28, 512, 128, 1, 1, 0, 0)},
          {"conv3x3 256->256 @14", conv(14, 256, 256, 3, 1, 1, 1)},
          {"conv1x1 1024->256 @14", conv(14, 1024, 256, 1, 1, 0, 0)},
          {"conv1x1 256->1024 @14", conv(14, 256, 1024, 1, 1, 0, 0)},
          {"conv3x3 512->512 @7", conv(7, 512, 512, 3, 1, 1, 1)},
          {"conv1x1 2048->512 @7", conv(7, 2048, 512, 1, 1, 0, 0)}};
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
  // ResNet-50's layer kinds at 224 px (the full-size zoo file, bench/zoo_results.md), where the
  // AVX2 static INT8 path is timed against ONNX Runtime: the u8 rows only.
  for (const auto& [label, s] : resnet50_layers()) {
    for (const Q8GemmKernel* k : kernels) {
      if (k->x_type != Q8::u8 || k->isa == Isa::scalar) continue;
      const Conv2dShape shape = s;
      benchmark::RegisterBenchmark((std::string("q8_conv/resnet50/") + label + "/" + k->name).c_str(),
                                   [shape, k](benchmark::State& state) { conv_bench(state, shape, k, false); })
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
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
  for (auto [mb, kb, nb] : {std::tuple{4, 64, 32}, {49, 256, 256}, {196, 384, 384}})
    for (auto [vb, label] : {std::pair{QMatMulVariant::ref, "q8_qlinear_matmul__ref"},
                             {QMatMulVariant::fused, "simd_s8_b"},
                             {QMatMulVariant::corrected, "simd_u8_b_zero_points"},
                             {QMatMulVariant::run_time_b, "simd_b_packed_per_run"}}) {
      const int m = mb, k = kb, n = nb;  // copies: clang 14 cannot capture structured bindings
      const QMatMulVariant variant = vb;
      benchmark::RegisterBenchmark(
          ("qlinear_matmul/" + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n) + "/" + label)
              .c_str(),
          [m, k, n, variant](benchmark::State& state) { qlinear_matmul_bench(state, m, k, n, variant); })
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
    }
  for (const octet::bench::FcLayer& layer : octet::bench::fc_layers())
    register_gemm(layer.model, layer.name, 1, layer.n, layer.k);
  for (const octet::bench::GemmSize& g : octet::bench::large_gemms())
    register_gemm("large",
                  std::to_string(g.m) + "x" + std::to_string(g.n) + "x" + std::to_string(g.k), g.m,
                  g.n, g.k);
}

}  // namespace

int main(int argc, char** argv) {
  octet::bench::add_active_isa_context();
  octet::bench::add_peak_context("peak_vnni_zmm_gops", octet::bench::peak_gops(Isa::avx512vnni));
  register_benchmarks();
  return octet::bench::run_benchmarks(argc, argv);
}
