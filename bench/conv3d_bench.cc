// 3-D convolutions and pools at the layers of torchvision's video classifiers (r3d_18,
// r2plus1d_18; 8 frames at 28x28, a quarter of their layer1 maps in H and W): FP32 F32Conv and
// INT8 Q8Conv (uint8 activations) as the engine picks them for active_isa(), next to their
// scalar references, and 3-D MaxPool / AveragePool on the pooling kernels against theirs.
// Named conv3d/<layer>/<kernel>. Counters: GFLOPS (2 per MAC) / GOPS and pct_peak. One thread.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "bench/kernel_bench_util.h"
#include "kernels/conv/f32_conv.h"
#include "kernels/conv/q8_conv.h"
#include "kernels/isa.h"
#include "kernels/pool/pool2d.h"
#include "kernels/ref/conv2d.h"
#include "kernels/ref/pool2d.h"
#include "kernels/ref/qconv2d.h"

namespace {

using octet::bench::Arithmetic;
using octet::bench::conv_macs;
using octet::bench::random_floats;
using octet::bench::random_ints;
using octet::bench::run_timed;
using namespace octet::kernels;

struct Layer {
  const char* name;
  int in_c, out_c, kd, k, sd, s, in_d, in_hw;
  bool ref;  // also time the scalar reference (slow: seconds per run on the big layers)
};

Conv2dShape shape(const Layer& l) {
  Conv2dShape s;
  s.in_c = l.in_c, s.out_c = l.out_c;
  s.in_d = l.in_d, s.in_h = s.in_w = l.in_hw;
  s.kernel_d = l.kd, s.kernel_h = s.kernel_w = l.k;
  s.stride_d = l.sd, s.stride_h = s.stride_w = l.s;
  s.pad_front = l.kd / 2, s.pad_top = s.pad_left = l.k / 2;
  s.out_d = (l.in_d + 2 * s.pad_front - l.kd) / l.sd + 1;
  s.out_h = s.out_w = (l.in_hw + 2 * s.pad_top - l.k) / l.s + 1;
  return s;
}

size_t in_count(const Conv2dShape& s) { return size_t(s.batch) * s.in_d * s.in_h * s.in_w * s.in_c; }
size_t out_count(const Conv2dShape& s) { return size_t(s.batch) * s.out_d * s.out_h * s.out_w * s.out_c; }
size_t w_count(const Conv2dShape& s) { return size_t(s.out_c) * s.in_c * s.kernel_d * s.kernel_h * s.kernel_w; }

void f32_bench(benchmark::State& state, const Conv2dShape& s, bool ref) {
  const auto x = random_floats(in_count(s), 1), w = random_floats(w_count(s), 2), b = random_floats(s.out_c, 3);
  std::vector<float> y(out_count(s));
  if (ref) {
    run_timed(state, Arithmetic::f32, Isa::scalar, conv_macs(s),
              [&] { f32_conv2d_nhwc__ref(s, x.data(), w.data(), b.data(), Activation::relu(), y.data()); });
    return;
  }
  F32Conv conv(s, w.data(), b.data(), Activation::relu(), active_isa());
  conv.bind(x.data());
  state.SetLabel(conv.kernel_name());
  run_timed(state, Arithmetic::f32, conv.kernel().isa, conv_macs(s), [&] { conv.run(x.data(), y.data(), nullptr); });
}

void q8_bench(benchmark::State& state, const Conv2dShape& s, bool ref) {
  const auto x = random_ints<uint8_t>(in_count(s), 0, 255, 1);
  const auto w = random_ints<int8_t>(w_count(s), -127, 127, 2);
  const auto b = random_ints<int32_t>(size_t(s.out_c), -1000, 1000, 3);
  const Requantization rq{std::vector<float>(size_t(s.out_c), 1e-4f), 128, 0, 255};
  std::vector<uint8_t> y(out_count(s));
  const int32_t w_zp[] = {0};
  if (ref) {
    run_timed(state, Arithmetic::int8, Isa::scalar, conv_macs(s), [&] {
      q8_conv2d_nhwc__ref<uint8_t, int8_t, uint8_t>(s, x.data(), 128, w.data(), w_zp, b.data(), rq, y.data());
    });
    return;
  }
  Q8Conv conv(s, Q8::u8, 128, w.data(), b.data(), rq, Q8::u8, active_isa());
  conv.bind(x.data());
  state.SetLabel(conv.kernel_name());
  run_timed(state, Arithmetic::int8, active_isa(), conv_macs(s), [&] { conv.run(x.data(), y.data(), nullptr); });
}

// MaxPool / AveragePool 3x3x3 stride 2 pad 1 over 64 channels (a video stem's pool).
void pool_bench(benchmark::State& state, bool avg, bool ref) {
  Pool2dShape s;
  s.channels = 64;
  s.in_d = 8, s.in_h = s.in_w = 28;
  s.kernel_d = s.kernel_h = s.kernel_w = 3;
  s.stride_d = s.stride_h = s.stride_w = 2;
  s.pad_front = s.pad_top = s.pad_left = s.pad_back = s.pad_bottom = s.pad_right = 1;
  s.out_d = 4, s.out_h = s.out_w = 14;
  const auto x = random_floats(size_t(s.in_d) * s.in_h * s.in_w * s.channels, 1);
  std::vector<float> y(size_t(s.out_d) * s.out_h * s.out_w * s.channels);
  const int64_t taps = int64_t(y.size()) * 27;
  if (ref) {
    const int rows = f32_avgpool_sum_rows(s, 0);
    run_timed(state, Arithmetic::f32, Isa::scalar, taps, [&] {
      if (avg) f32_avgpool2d_nhwc__ref(s, false, x.data(), y.data(), rows);
      else f32_maxpool2d_nhwc__ref(s, x.data(), y.data());
    });
    return;
  }
  if (avg) {
    F32AvgPool2d pool(s, false, active_isa());
    pool.bind(x.data());
    state.SetLabel(pool.kernel_name());
    run_timed(state, Arithmetic::f32, active_isa(), taps, [&] { pool.run(x.data(), y.data(), nullptr); });
  } else {
    F32MaxPool2d pool(s, active_isa());
    pool.bind(x.data());
    state.SetLabel(pool.kernel_name());
    run_timed(state, Arithmetic::f32, active_isa(), taps, [&] { pool.run(x.data(), y.data(), nullptr); });
  }
}

void register_benchmarks() {
  const Layer layers[] = {
      {"r3d_18 conv3x3x3 64->64 @8x28x28", 64, 64, 3, 3, 1, 1, 8, 28, true},
      {"r3d_18 stem 3x7x7 3->64 s(1,2,2) @8x56x56", 3, 64, 3, 7, 1, 2, 8, 56, false},
      {"r3d_18 conv3x3x3 64->128 s2 @8x28x28", 64, 128, 3, 3, 2, 2, 8, 28, false},
      {"r2plus1d conv1x3x3 64->144 @8x28x28", 64, 144, 1, 3, 1, 1, 8, 28, false},
      {"r2plus1d conv3x1x1 144->64 @8x28x28", 144, 64, 3, 1, 1, 1, 8, 28, false},
      {"r3d_18 shortcut 1x1x1 64->128 s2 @8x28x28", 64, 128, 1, 1, 2, 2, 8, 28, false},
  };
  const bool simd = active_isa() != Isa::scalar;
  for (const Layer& l : layers) {
    const Conv2dShape s = shape(l);
    for (bool ref : {false, true}) {
      if ((ref && !l.ref) || (!ref && !simd)) continue;
      const std::string tail = ref ? "/ref" : "/pick";
      benchmark::RegisterBenchmark((std::string("conv3d/f32/") + l.name + tail).c_str(),
                                   [s, ref](benchmark::State& st) { f32_bench(st, s, ref); })
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark((std::string("conv3d/q8/") + l.name + tail).c_str(),
                                   [s, ref](benchmark::State& st) { q8_bench(st, s, ref); })
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
    }
  }
  for (bool avg : {false, true})
    for (bool ref : {false, true}) {
      if (!ref && !simd) continue;
      const std::string name =
          std::string("pool3d/") + (avg ? "avg" : "max") + " 3x3x3 s2 64ch @8x28x28" + (ref ? "/ref" : "/pick");
      benchmark::RegisterBenchmark(name.c_str(), [avg, ref](benchmark::State& st) { pool_bench(st, avg, ref); })
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
    }
}

}  // namespace

int main(int argc, char** argv) {
  octet::bench::add_active_isa_context();
  octet::bench::add_peak_context("peak_f32_ymm_gflops", octet::bench::peak_gflops(Isa::avx2));
  register_benchmarks();
  return octet::bench::run_benchmarks(argc, argv);
}
