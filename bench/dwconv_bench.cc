// Depthwise conv kernels (F32DwConv / Q8DwConv on kernels/conv/dwconv_list.h) at every depthwise
// layer of bench/layer_shapes.h, FP32 and INT8 side by side: one entry per (layer x
// microkernel this CPU supports), named dwconv/<model>/<layer>/<kernel>, plus the scalar ref
// convs at two shapes. The drivers' pick for active_isa() is labelled "pick".
// Counters: GFLOPS (FP32) or GOPS (INT8), 2 per MAC, and pct_peak of the kernel's ISA
// (bench/peak_values.h: zmm FMA for FP32; for INT8 vpmaddwd+vpaddd, or vpdpbusd on the VNNI
// levels). One thread (pool = nullptr), wall-clock time; the picks also run on a pool of two
// (".../threads:2"), whose best_us beside the one-thread entry's is how the split scales.
//
//   build/bench/dwconv_bench --benchmark_filter='dw3x3 48 @32'
#include <benchmark/benchmark.h>
#include <pthreadpool.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "bench/kernel_bench_util.h"
#include "bench/layer_shapes.h"
#include "bench/peak_values.h"
#include "kernels/conv/f32_dwconv.h"
#include "kernels/conv/q8_dwconv.h"
#include "kernels/conv/q8_dwconv_dequantized.h"
#include "kernels/conv/dwconv_list.h"
#include "kernels/isa.h"
#include "kernels/ref/conv2d.h"
#include "kernels/ref/qconv2d.h"

namespace {

using octet::kernels::Activation;
using octet::kernels::Conv2dShape;
using octet::kernels::F32DwConv;
using octet::kernels::F32DwConvKernel;
using octet::kernels::Isa;
using octet::kernels::Q8;
using octet::kernels::Q8DwConv;
using octet::kernels::Q8DwConvKernel;
using octet::kernels::Requantization;

size_t in_size(const Conv2dShape& s) { return size_t(s.batch) * s.in_h * s.in_w * s.in_c; }
size_t out_size(const Conv2dShape& s) { return size_t(s.batch) * s.out_h * s.out_w * s.out_c; }
size_t weight_size(const Conv2dShape& s) { return size_t(s.out_c) * s.kernel_h * s.kernel_w; }

using octet::bench::Arithmetic;
using octet::bench::Buffer;
using octet::bench::run_timed;

Buffer<float> random_floats(size_t n, uint32_t seed) { return octet::bench::random_floats<Buffer<float>>(n, seed); }

template <typename T>
Buffer<T> random_ints(size_t n, int lo, int hi, uint32_t seed) {
  return octet::bench::random_ints<T, Buffer<T>>(n, lo, hi, seed);
}

// A pool of `threads` workers for the split entries (empty for one thread: the caller runs).
using Pool = std::unique_ptr<std::remove_pointer_t<pthreadpool_t>, decltype(&pthreadpool_destroy)>;
Pool make_pool(size_t threads) { return Pool(threads > 1 ? pthreadpool_create(threads) : nullptr, &pthreadpool_destroy); }

void f32_bench(benchmark::State& state, const Conv2dShape& s, const F32DwConvKernel* kernel, bool pick,
               size_t threads = 1) {
  const auto x = random_floats(in_size(s), 1);
  const auto w = random_floats(weight_size(s), 2);
  const auto b = random_floats(s.out_c, 3);
  Buffer<float> y(out_size(s));
  if (kernel == nullptr) {  // the scalar ref
    run_timed(state, Arithmetic::f32, Isa::scalar, octet::bench::conv_macs(s), [&] {
      octet::kernels::f32_conv2d_nhwc__ref(s, x.data(), w.data(), b.data(), Activation::clip(0, 6), y.data());
    });
    return;
  }
  F32DwConv conv(s, w.data(), b.data(), Activation::clip(0, 6), *kernel);
  conv.bind(x.data());
  const Pool pool = make_pool(threads);
  run_timed_with_best(state, Arithmetic::f32, kernel->isa, octet::bench::conv_macs(s),
                      [&] { conv.run(x.data(), y.data(), pool.get()); });
  if (pick) state.SetLabel("pick");
}

// u8 activations (zero point 128), s8 weights, per-channel multipliers, u8 output: the
// configuration octet's quantizer writes.
void q8_bench(benchmark::State& state, const Conv2dShape& s, const Q8DwConvKernel* kernel, bool pick,
              size_t threads = 1) {
  const auto x = random_ints<uint8_t>(in_size(s), 0, 255, 1);
  const auto w = random_ints<int8_t>(weight_size(s), -127, 127, 2);
  const auto b = random_ints<int32_t>(s.out_c, -2000, 2000, 3);
  std::vector<float> multiplier(s.out_c);
  for (int c = 0; c < s.out_c; ++c) multiplier[c] = 1.0f / 512 * (1.0f + 0.01f * c);
  const Requantization rq{multiplier, 3, 3, 255};
  Buffer<uint8_t> y(out_size(s));
  if (kernel == nullptr) {
    const int32_t w_zero_point = 0;
    run_timed(state, Arithmetic::int8, Isa::scalar, octet::bench::conv_macs(s), [&] {
      octet::kernels::q8_conv2d_nhwc__ref<uint8_t, int8_t, uint8_t>(s, x.data(), 128, w.data(), {&w_zero_point, 1},
                                                                    b.data(), rq, y.data());
    });
    return;
  }
  Q8DwConv conv(s, Q8::u8, 128, w.data(), b.data(), rq, Q8::u8, *kernel);
  conv.bind(x.data());
  const Pool pool = make_pool(threads);
  run_timed_with_best(state, Arithmetic::int8, kernel->isa, octet::bench::conv_macs(s),
                      [&] { conv.run(x.data(), y.data(), pool.get()); });
  if (pick) state.SetLabel("pick");
}

// The dynamic path's depthwise layer: u8 codes -> float(x - zp), the FP32 microkernel with
// integer-valued weights, then the float epilogue (scale, bias, Relu6), image by image.
void dequantized_bench(benchmark::State& state, const Conv2dShape& s, Isa isa) {
  const auto x = random_ints<uint8_t>(in_size(s), 0, 255, 1);
  const auto w = random_ints<int8_t>(weight_size(s), -127, 127, 2);
  octet::kernels::DequantizedOutput out;
  out.w_scale.assign(size_t(s.out_c), 0.01f);
  out.bias.assign(size_t(s.out_c), 0.5f);
  out.lo = 0.0f;
  out.hi = 6.0f;
  Buffer<float> y(out_size(s));
  octet::kernels::Q8DequantizedDwConv conv(s, Q8::u8, w.data(), out, isa);
  run_timed(state, Arithmetic::int8, isa, octet::bench::conv_macs(s),
            [&] { conv.run(x.data(), 0.02f, 128, y.data(), nullptr); });
  state.SetLabel(conv.kernel_name() + " + " + octet::kernels::choose_dequantized_epilogue(isa).name);
}

void register_benchmarks() {
  const Isa active = octet::kernels::active_isa();
  const F32DwConvKernel* f32_pick = octet::kernels::choose_f32_dwconv_kernel(active);
  auto add = [](const std::string& name, auto fn) {
    benchmark::RegisterBenchmark(name.c_str(), fn)->UseRealTime()->Unit(benchmark::kMicrosecond);
  };
  for (const octet::bench::ConvLayer& layer : octet::bench::conv_layers()) {
    if (layer.shape.groups == 1) continue;
    const Conv2dShape s = layer.shape;
    const std::string prefix = std::string("dwconv/") + layer.model + "/" + layer.name + "/";
    const Q8DwConvKernel* q8_pick = octet::kernels::choose_q8_dwconv_kernel(active, s);
    for (const F32DwConvKernel& k : octet::kernels::kF32DwConvKernels) {
      if (!octet::kernels::isa_supported(k.isa)) continue;
      const F32DwConvKernel* kp = &k;
      add(prefix + k.name, [s, kp, f32_pick](benchmark::State& st) { f32_bench(st, s, kp, kp == f32_pick); });
    }
    for (const Q8DwConvKernel& k : octet::kernels::kQ8DwConvKernels) {
      if (!octet::kernels::isa_supported(k.isa) || !k.fits(s)) continue;
      const Q8DwConvKernel* kp = &k;
      add(prefix + k.name, [s, kp, q8_pick](benchmark::State& st) { q8_bench(st, s, kp, kp == q8_pick); });
    }
    if (f32_pick)
      add(prefix + f32_pick->name + "/threads:2",
          [s, f32_pick](benchmark::State& st) { f32_bench(st, s, f32_pick, true, 2); });
    if (q8_pick)
      add(prefix + q8_pick->name + "/threads:2",
          [s, q8_pick](benchmark::State& st) { q8_bench(st, s, q8_pick, true, 2); });
    if (octet::kernels::Q8DequantizedDwConv::supports(s))
      add(prefix + "q8_dequantized_dwconv", [s, active](benchmark::State& st) { dequantized_bench(st, s, active); });
    if (std::string(layer.name) == "dw3x3 48 @32" || std::string(layer.name) == "dw3x3 96 s2 @14") {
      add(prefix + "f32_conv2d_nhwc__ref", [s](benchmark::State& st) { f32_bench(st, s, nullptr, false); });
      add(prefix + "q8_conv2d_nhwc__ref", [s](benchmark::State& st) { q8_bench(st, s, nullptr, false); });
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  octet::bench::add_active_isa_context();
  register_benchmarks();
  return octet::bench::run_benchmarks(argc, argv);
}
