// ConvTranspose (FP32, NHWC): F32ConvTranspose (a GEMM on the FP32 microkernels, then the gather
// pass) on each GEMM tile this CPU runs, next to the scalar reference, at the decoder shapes of
// segmentation / detection heads: named deconv/<shape>/<kernel>, "pick" on the driver's choice
// for active_isa(). GFLOPS counts 2 per multiply-add of the definition. One thread, batch 1.
// The "3-D" layers (NDHWC, a volumetric decoder's upsampling) have the same kernel, stride and
// pads on the depth axis.
//
// deconv+act/<shape>/<act>/{fused,separate}: the driver's choice with the activation in its
// gather pass (what passes::fuse_activations makes of ConvTranspose -> act), next to the same
// ConvTranspose followed by the activation as its own step over the output (F32Unary, what the
// plan ran before; a SiLU written as Sigmoid and Mul was two such passes, timed here as one).
//
//   build/bench/deconv_bench --benchmark_filter=up2x
//   build/bench/deconv_bench --benchmark_filter='deconv\+act'
//   build/bench/deconv_bench --benchmark_filter='^deconv/3-D'

#include <benchmark/benchmark.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/kernel_bench_util.h"
#include "kernels/conv/f32_conv_transpose.h"
#include "kernels/elementwise/eltwise.h"
#include "kernels/gemm/f32_gemm_list.h"
#include "kernels/ref/conv_transpose.h"

namespace {

using namespace octet::kernels;
using octet::bench::Arithmetic;
using octet::bench::Buffer;

struct Layer {
  const char* name;
  int in, c, m, k, stride, pad, adj, groups;
  int depth = 0;  // 3-D: the input's depth; 0: a 2-D layer
  ConvTranspose2dShape shape() const {
    ConvTranspose2dShape s;
    if (depth > 0) {
      s.in_d = depth;
      s.kernel_d = k, s.stride_d = stride, s.pad_front = pad;
      s.out_d = (depth - 1) * stride + k - 2 * pad + adj;
    }
    s.in_h = s.in_w = in;
    s.in_c = c, s.out_c = m, s.groups = groups;
    s.kernel_h = s.kernel_w = k;
    s.stride_h = s.stride_w = stride;
    s.pad_top = s.pad_left = pad;
    s.out_h = s.out_w = (in - 1) * stride + k - 2 * pad + adj;
    return s;
  }
};

const Layer kLayers[] = {
    {"up2x 28x28 64->32 k2 s2", 28, 64, 32, 2, 2, 0, 0, 1},
    {"14x14 128->64 k3 s2 p1 op1", 14, 128, 64, 3, 2, 1, 1, 1},
    {"depthwise 28x28x32 k4 s2 p1", 28, 32, 32, 4, 2, 1, 0, 32},
    {"up2x 56x56 32->16 k2 s2", 56, 32, 16, 2, 2, 0, 0, 1},
    {"3-D up2x 8x16x16 32->16 k2 s2", 16, 32, 16, 2, 2, 0, 0, 1, 8},
    {"3-D 4x8x8 64->32 k3 s2 p1 op1", 8, 64, 32, 3, 2, 1, 1, 1, 4},
    {"3-D depthwise 4x16x16x16 k4 s2 p1", 16, 16, 16, 4, 2, 1, 0, 16, 4},
};

size_t in_count(const ConvTranspose2dShape& s) { return size_t(s.in_d) * s.in_h * s.in_w * s.in_c; }
size_t out_count(const ConvTranspose2dShape& s) { return size_t(s.out_d) * s.out_h * s.out_w * s.out_c; }
size_t w_count(const ConvTranspose2dShape& s) {
  return size_t(s.in_c) * (s.out_c / s.groups) * s.kernel_d * s.kernel_h * s.kernel_w;
}

int64_t macs(const ConvTranspose2dShape& s) {
  return int64_t(in_count(s)) * (s.out_c / s.groups) * s.kernel_d * s.kernel_h * s.kernel_w;
}

void add(const Layer& l, const std::string& kernel, bool pick, Isa isa, std::function<void()> body,
         const char* prefix = "deconv/") {
  const ConvTranspose2dShape s = l.shape();
  const std::string name = prefix + std::string(l.name) + "/" + kernel;
  benchmark::RegisterBenchmark(name.c_str(),
                               [=](benchmark::State& state) {
                                 octet::bench::run_timed_with_best(state, Arithmetic::f32, isa, macs(s), body);
                                 if (pick) state.SetLabel("pick");
                               })
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
}

}  // namespace

int main(int argc, char** argv) {
  for (const Layer& l : kLayers) {
    const ConvTranspose2dShape s = l.shape();
    auto x = std::make_shared<Buffer<float>>(octet::bench::random_floats<Buffer<float>>(in_count(s), 1));
    auto w = std::make_shared<Buffer<float>>(octet::bench::random_floats<Buffer<float>>(w_count(s), 2));
    auto b = std::make_shared<Buffer<float>>(octet::bench::random_floats<Buffer<float>>(size_t(s.out_c), 3));
    auto y = std::make_shared<Buffer<float>>(out_count(s));
    auto scratch = std::make_shared<std::vector<float>>(F32ConvTranspose::scratch_floats(s));
    const F32ConvTranspose chosen(s, w->data(), b->data(), {}, active_isa());
    std::vector<std::string> seen;  // a depthwise layer runs no GEMM: one entry
    for (const F32GemmKernel& k : f32_gemm_kernels()) {
      if (!isa_supported(k.isa)) continue;
      auto d = std::make_shared<F32ConvTranspose>(s, w->data(), b->data(), Activation{}, k);
      if (std::find(seen.begin(), seen.end(), d->kernel_id().name) != seen.end()) continue;
      seen.push_back(d->kernel_id().name);
      add(l, d->kernel_id().name, d->kernel_id().name == chosen.kernel_id().name, k.isa,
          [=] { d->run(x->data(), y->data(), scratch->data(), nullptr); });
    }
    add(l, "f32_conv_transpose2d_nhwc__ref", false, Isa::scalar,
        [=] { f32_conv_transpose2d_nhwc__ref(s, x->data(), w->data(), b->data(), {}, y->data()); });
    const int64_t out = int64_t(out_count(s));
    for (const auto& [act_name, act] : {std::pair{"Relu", Activation::relu()}, {"Sigmoid", Activation::sigmoid()},
                                        {"HardSwish", Activation::hard_swish()}, {"SiLU", Activation::silu()}}) {
      const Isa isa = active_isa();
      auto fused = std::make_shared<F32ConvTranspose>(s, w->data(), b->data(), act, isa);
      auto plain = std::make_shared<F32ConvTranspose>(s, w->data(), b->data(), Activation{}, isa);
      auto step = std::make_shared<F32Unary>(act.kind, isa);
      const Activation a = act;
      add(l, std::string(act_name) + "/fused", false, isa,
          [=] { fused->run(x->data(), y->data(), scratch->data(), nullptr); }, "deconv+act/");
      add(l, std::string(act_name) + "/separate", false, isa, [=] {
            plain->run(x->data(), y->data(), scratch->data(), nullptr);
            step->run(a, out, y->data(), y->data(), nullptr);
          }, "deconv+act/");
    }
  }
  octet::bench::add_active_isa_context();
  return octet::bench::run_benchmarks(argc, argv);
}
