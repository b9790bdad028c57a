// Max and average pooling (kernels/pool/pool_list.h through kernels/pool/pool2d.h) at the
// pooling layers of the torchvision zoo models, next to the scalar ref kernels: one entry per
// (layer x op x microkernel this CPU supports), named pool/<model>/<op shape>/<kernel>; the
// driver's pick for active_isa() is labelled "pick". The counter is GBps: the input read once
// plus the output written, per second. One thread, batch 1, 64-byte aligned buffers.
//
//   build/bench/pool_bench --benchmark_filter=resnet18
#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>

#include "bench/kernel_bench_util.h"
#include "kernels/pool/pool2d.h"
#include "kernels/pool/pool_list.h"
#include "kernels/ref/pool2d.h"

namespace {

using namespace octet::kernels;
using octet::bench::Buffer;

struct Layer {
  const char* model;
  int in, channels, pad;
  bool ceil_mode;
  bool global = false;  // GlobalMaxPool: one window over the in x in input, as one row (its op's shape)
  int kernel = 3, stride = 2;

  Pool2dShape shape() const {
    Pool2dShape s;
    if (global) {
      s.channels = channels;
      s.in_w = s.kernel_w = in * in;
      return s;
    }
    s.in_h = s.in_w = in;
    s.channels = channels;
    s.kernel_h = s.kernel_w = kernel;
    s.stride_h = s.stride_w = stride;
    s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = pad;
    const int room = in + 2 * pad - kernel;
    s.out_h = s.out_w = (ceil_mode ? (room + stride - 1) / stride : room / stride) + 1;
    return s;
  }
  std::string label(const char* op) const {
    std::string window = " global";
    if (!global) {
      window = " k" + std::to_string(kernel) + " s" + std::to_string(stride) + " ";
      window += ceil_mode ? "ceil" : "p";
      if (!ceil_mode) window += std::to_string(pad);
    }
    return std::string(op) + " " + std::to_string(in) + "x" + std::to_string(in) + "x" + std::to_string(channels) +
           window;
  }
};

// 3x3 stride-2 max pools: ResNet-18/50 and ShuffleNetV2 (pad 1), SqueezeNet 1.1 (ceil_mode),
// Inception-v3's grid reductions (no pad, many channels).
const Layer kLayers[] = {
    {"resnet18", 112, 64, 1, false},     {"shufflenet_v2_x0_5", 112, 24, 1, false},
    {"squeezenet1_1", 111, 64, 0, true}, {"squeezenet1_1", 55, 128, 0, true},
    {"squeezenet1_1", 27, 256, 0, true}, {"inception_v3", 35, 288, 0, false},
    {"inception_v3", 17, 768, 0, false},
};

size_t in_count(const Pool2dShape& s) { return size_t(s.in_h) * s.in_w * s.channels; }
size_t out_count(const Pool2dShape& s) { return size_t(s.out_h) * s.out_w * s.channels; }

void add_bench(const Layer& l, const std::string& op, const std::string& kernel, double bytes, bool pick,
               std::function<void()> body) {
  const std::string name = std::string("pool/") + l.model + "/" + l.label(op.c_str()) + "/" + kernel;
  benchmark::RegisterBenchmark(name.c_str(),
                               [=](benchmark::State& state) {
                                 for (auto _ : state) {
                                   body();
                                   benchmark::ClobberMemory();
                                 }
                                 state.counters["GBps"] = benchmark::Counter(
                                     bytes * double(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
                                 if (pick) state.SetLabel("pick");
                               })
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
}

template <class T>
Buffer<T> random_buffer(size_t n, uint32_t seed) {
  if constexpr (std::is_same_v<T, float>) return octet::bench::random_floats<Buffer<float>>(n, seed);
  else return octet::bench::random_ints<T, Buffer<T>>(n, 0, 255, seed);
}

// One driver per microkernel of `list` and the ref (the driver at Isa::scalar).
template <class T, class Fn, class Make>
void register_op(const Layer& l, const char* op, std::span<const PoolUkernel<Fn>> list, Make make) {
  const Pool2dShape s = l.shape();
  const double bytes = double(sizeof(T)) * double(in_count(s) + out_count(s));
  auto x = std::make_shared<Buffer<T>>(random_buffer<T>(in_count(s), 1));
  auto y = std::make_shared<Buffer<T>>(out_count(s));
  auto add = [&](auto driver, bool pick) {
    driver->bind(x->data());
    add_bench(l, op, driver->kernel_name(), bytes, pick, [=] { driver->run(x->data(), y->data(), nullptr); });
  };
  const auto* chosen = first_runnable(list, active_isa());
  for (const auto& k : list)
    if (isa_supported(k.isa)) add(make(s, &k), chosen == &k);
  add(make(s, static_cast<const PoolUkernel<Fn>*>(nullptr)), chosen == nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  for (const Layer& l : kLayers) {
    register_op<float>(l, "f32 max", kF32MaxPoolUkernels, [](const Pool2dShape& s, const auto* k) {
      return k ? std::make_shared<F32MaxPool2d>(s, *k) : std::make_shared<F32MaxPool2d>(s, Isa::scalar);
    });
    register_op<uint8_t>(l, "qu8 max", kQu8MaxPoolUkernels, [](const Pool2dShape& s, const auto* k) {
      return k ? std::make_shared<Q8MaxPool2d>(Q8::u8, s, *k) : std::make_shared<Q8MaxPool2d>(Q8::u8, s, Isa::scalar);
    });
  }
  // GlobalMaxPool over a classifier head's map and a mid-network one.
  for (const Layer& l : {Layer{"head", 7, 512, 0, false, true}, Layer{"mid", 28, 128, 0, false, true}}) {
    register_op<float>(l, "f32 global max", kF32MaxPoolUkernels, [](const Pool2dShape& s, const auto* k) {
      return k ? std::make_shared<F32MaxPool2d>(s, *k) : std::make_shared<F32MaxPool2d>(s, Isa::scalar);
    });
    register_op<uint8_t>(l, "qu8 global max", kQu8MaxPoolUkernels, [](const Pool2dShape& s, const auto* k) {
      return k ? std::make_shared<Q8MaxPool2d>(Q8::u8, s, *k) : std::make_shared<Q8MaxPool2d>(Q8::u8, s, Isa::scalar);
    });
  }
  // The same windows averaged (count_include_pad off), at the first two layers; Inception-v4's
  // 3x3 stride-1 branch pools and ResNet-D's 2x2 stride-2 shortcut pool.
  for (const Layer& l : {kLayers[0], kLayers[2], Layer{"inception_v4", 12, 1024, 1, false, false, 3, 1},
                         Layer{"inception_v4", 25, 384, 1, false, false, 3, 1},
                         Layer{"resnet26d", 56, 256, 0, false, false, 2, 2}}) {
    register_op<float>(l, "f32 avg", kF32AvgPoolUkernels, [](const Pool2dShape& s, const auto* k) {
      return k ? std::make_shared<F32AvgPool2d>(s, false, *k) : std::make_shared<F32AvgPool2d>(s, false, Isa::scalar);
    });
  }
  octet::bench::add_active_isa_context();
  return octet::bench::run_benchmarks(argc, argv);
}
