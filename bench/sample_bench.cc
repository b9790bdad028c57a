// RoiAlign and GridSample (kernels/sample/sample_list.h through kernels/sample/roi_align.h and
// grid_sample.h) next to their scalar references, at a detection head's and a spatial
// transformer's sizes: RoiAlign of 1000 rois (random boxes of 4..40 pixels a side on a stride-16
// map, adaptive sampling, 7x7 bins) over a 256x50x68 map, avg and max; GridSample of a
// 64x56x56 map at a 56x56 affine grid, bilinear (zeros padding) and bicubic. One entry per
// (problem x microkernel this CPU supports), named <op>/<problem>/<kernel>; the driver's pick for
// active_isa() is labelled "pick". One thread.
//
//   build/bench/sample_bench --benchmark_filter=roialign
#include <benchmark/benchmark.h>

#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/kernel_bench_util.h"
#include "kernels/ref/sample.h"
#include "kernels/sample/grid_sample.h"
#include "kernels/sample/roi_align.h"
#include "kernels/sample/sample_list.h"

namespace {

using namespace octet::kernels;
using octet::bench::Buffer;

void add_bench(const std::string& name, bool pick, std::function<void()> body) {
  benchmark::RegisterBenchmark(name.c_str(),
                               [=](benchmark::State& state) {
                                 for (auto _ : state) {
                                   body();
                                   benchmark::ClobberMemory();
                                 }
                                 if (pick) state.SetLabel("pick");
                               })
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
}

void add_roi_align(RoiAlignMode mode) {
  const RoiAlignShape s{1, 256, 50, 68, 1000};
  RoiAlignParams p;
  p.mode = mode;
  p.out_h = p.out_w = 7;
  p.sampling_ratio = 0;
  p.spatial_scale = 1.0f / 16;
  auto x = std::make_shared<Buffer<float>>(octet::bench::random_floats<Buffer<float>>(s.height * s.width * s.channels, 1));
  auto rois = std::make_shared<std::vector<float>>();
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> at(0.0f, 68.0f * 16), side(4.0f * 16, 40.0f * 16);
  for (size_t r = 0; r < s.rois; ++r) {
    const float x0 = at(rng), y0 = at(rng) * 50 / 68;
    rois->insert(rois->end(), {x0, y0, x0 + side(rng), y0 + side(rng)});
  }
  auto idx = std::make_shared<std::vector<int64_t>>(s.rois, 0);
  auto y = std::make_shared<Buffer<float>>(s.rois * 49 * s.channels);
  const std::string problem = std::string("roialign/") + (mode == RoiAlignMode::max ? "max" : "avg") + "_1000x7x7_256x50x68/";
  const auto list = mode == RoiAlignMode::max ? kF32RoiAlignMaxUkernels : kF32RoiAlignAvgUkernels;
  const RoiAlignUkernel* chosen = first_runnable(list, active_isa());
  for (const RoiAlignUkernel& k : list) {
    if (!isa_supported(k.isa)) continue;
    auto d = std::make_shared<F32RoiAlign>(p, s, k);
    add_bench(problem + k.name, chosen == &k, [=] { d->run(x->data(), rois->data(), idx->data(), y->data(), nullptr); });
  }
  add_bench(problem + "roi_align_nhwc__ref", chosen == nullptr,
            [=] { roi_align_nhwc__ref(p, s, x->data(), rois->data(), idx->data(), y->data()); });
}

void add_grid_sample(GridSampleMode mode) {
  const GridSampleShape s{1, 64, 56, 56, 56, 56};
  const GridSampleParams p{mode, GridSamplePadding::zeros, false};
  auto x = std::make_shared<Buffer<float>>(octet::bench::random_floats<Buffer<float>>(s.in_h * s.in_w * s.channels, 1));
  auto grid = std::make_shared<std::vector<float>>();
  for (size_t i = 0; i < s.out_h; ++i)
    for (size_t j = 0; j < s.out_w; ++j) {  // a rotation by 0.3 rad, scaled by 0.9
      const float u = -1.0f + 2.0f * (float(j) + 0.5f) / float(s.out_w), v = -1.0f + 2.0f * (float(i) + 0.5f) / float(s.out_h);
      grid->push_back(0.9f * (std::cos(0.3f) * u - std::sin(0.3f) * v));
      grid->push_back(0.9f * (std::sin(0.3f) * u + std::cos(0.3f) * v));
    }
  auto y = std::make_shared<Buffer<float>>(s.out_h * s.out_w * s.channels);
  const std::string problem = std::string("gridsample/") + (mode == GridSampleMode::cubic ? "bicubic" : "bilinear") +
                              "_64x56x56_to56x56/";
  // Bilinear with zeros padding, align_corners 0: the linear4 kernels (ORT's fast path's arithmetic).
  const auto list = mode == GridSampleMode::cubic ? kF32GridSampleCubicUkernels : kF32GridSampleLinear4Ukernels;
  const GridSampleUkernel* chosen = first_runnable(list, active_isa());
  for (const GridSampleUkernel& k : list) {
    if (!isa_supported(k.isa)) continue;
    auto d = std::make_shared<F32GridSample>(p, s, k);
    add_bench(problem + k.name, chosen == &k, [=] { d->run(x->data(), grid->data(), y->data(), nullptr); });
  }
  add_bench(problem + "grid_sample_nhwc__ref", chosen == nullptr,
            [=] { grid_sample_nhwc__ref(p, s, x->data(), grid->data(), y->data()); });
}

}  // namespace

int main(int argc, char** argv) {
  add_roi_align(RoiAlignMode::avg);
  add_roi_align(RoiAlignMode::max);
  add_grid_sample(GridSampleMode::linear);
  add_grid_sample(GridSampleMode::cubic);
  octet::bench::add_active_isa_context();
  return octet::bench::run_benchmarks(argc, argv);
}
