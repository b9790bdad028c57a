// Resize (kernels/resize/resize.h) at the upsampling layers of the zoo's detectors and a
// segmentation head: linear and cubic (FP32) on every microkernel of kernels/resize/resize_list.h this
// CPU supports and on the scalar reference, nearest (a copy) once; named resize/<model>/<shape>/<kernel>, the
// driver's pick for active_isa() labelled "pick". The counter is GBps: input read once plus
// output written, per second. One thread, batch 1, 64-byte aligned buffers.
//
//   build/bench/resize_bench --benchmark_filter=yolov5nu
#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "bench/kernel_bench_util.h"
#include "kernels/resize/resize.h"
#include "kernels/resize/resize_list.h"

namespace {

using namespace octet::kernels;
using octet::bench::Buffer;

struct Layer {
  const char* model;
  ResizeMode mode;
  CoordinateTransform transform;
  int in_h, in_w, channels, factor;
  Resize2dShape shape() const { return {1, in_h, in_w, in_h * factor, in_w * factor, channels}; }
  Resize2dParams params() const {
    return {mode, transform, NearestRounding::floor, float(factor), float(factor)};
  }
  std::string label() const {
    const char* name = mode == ResizeMode::nearest ? "nearest " : mode == ResizeMode::linear ? "linear " : "cubic ";
    return std::string(name) + std::to_string(in_h) + "x" +
           std::to_string(in_w) + "x" + std::to_string(channels) + " x" + std::to_string(factor);
  }
};

// YOLOv5nu's two 2x nearest upsamplings at 640 px, the same as linear (U-Net / FPN necks),
// and LR-ASPP's 8x bilinear head at 224 px (21 classes).
const Layer kLayers[] = {
    {"yolov5nu", ResizeMode::nearest, CoordinateTransform::asymmetric, 20, 20, 128, 2},
    {"yolov5nu", ResizeMode::nearest, CoordinateTransform::asymmetric, 40, 40, 64, 2},
    {"fpn", ResizeMode::linear, CoordinateTransform::half_pixel, 20, 20, 128, 2},
    {"fpn", ResizeMode::linear, CoordinateTransform::half_pixel, 40, 40, 64, 2},
    {"lraspp", ResizeMode::linear, CoordinateTransform::align_corners, 28, 28, 21, 8},
    {"fpn", ResizeMode::cubic, CoordinateTransform::half_pixel, 20, 20, 128, 2},
    {"fpn", ResizeMode::cubic, CoordinateTransform::half_pixel, 40, 40, 64, 2},
    {"lraspp", ResizeMode::cubic, CoordinateTransform::align_corners, 28, 28, 21, 8},
};

template <class T>
void register_layer(const Layer& l, ResizeElement e, std::span<const ResizeUkernel> list, const char* type) {
  const Resize2dShape s = l.shape();
  const size_t in = size_t(s.in_h) * s.in_w * s.channels, out = size_t(s.out_h) * s.out_w * s.channels;
  const double bytes = double(sizeof(T)) * double(in + out);
  auto x = std::make_shared<Buffer<T>>(in, T(1));
  auto y = std::make_shared<Buffer<T>>(out);
  auto add = [&](std::shared_ptr<const Resize2d> r, bool pick) {
    const std::string name = std::string("resize/") + l.model + "/" + type + " " + l.label() + "/" + r->kernel_name();
    benchmark::RegisterBenchmark(name.c_str(),
                                 [=](benchmark::State& state) {
                                   for (auto _ : state) {
                                     r->run(x->data(), y->data(), nullptr);
                                     benchmark::ClobberMemory();
                                   }
                                   state.counters["GBps"] = benchmark::Counter(
                                       bytes * double(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
                                   if (pick) state.SetLabel("pick");
                                 })
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  };
  if (l.mode == ResizeMode::nearest) {
    add(std::make_shared<Resize2d>(s, l.params(), e, active_isa()), true);
    return;
  }
  if (l.mode == ResizeMode::cubic) {
    if (e != ResizeElement::f32) return;  // FP32 only, as ONNX Runtime
    const auto* chosen = first_runnable(kF32ResizeCubicUkernels, active_isa());
    for (const auto& k : kF32ResizeCubicUkernels)
      if (isa_supported(k.isa)) add(std::make_shared<Resize2d>(s, l.params(), k), chosen == &k);
    add(std::make_shared<Resize2d>(s, l.params(), e, Isa::scalar), chosen == nullptr);
    return;
  }
  const auto* chosen = first_runnable(list, active_isa());
  for (const auto& k : list)
    if (isa_supported(k.isa)) add(std::make_shared<Resize2d>(s, l.params(), e, k), chosen == &k);
  add(std::make_shared<Resize2d>(s, l.params(), e, Isa::scalar), chosen == nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  for (const Layer& l : kLayers) {
    register_layer<float>(l, ResizeElement::f32, kF32ResizeLinearUkernels, "f32");
    register_layer<uint8_t>(l, ResizeElement::u8, kQu8ResizeLinearUkernels, "qu8");
  }
  octet::bench::add_active_isa_context();
  return octet::bench::run_benchmarks(argc, argv);
}
