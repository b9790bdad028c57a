// StridedCopy (kernels/elementwise/strided_copy.h) on slices with a step on the last axis: the
// gather rows of kernels/elementwise/strided_gather_list.h (the pick under active_isa()) against
// the element walk (copy_strided__ref, the form at --isa scalar). Named
// strided_copy/<case>/<elem bytes>/<kernel>; the counter is GBps, output bytes written (and as
// many read) per second. One thread.
//
//   build/bench/strided_copy_bench --benchmark_filter=focus
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bench/kernel_bench_util.h"
#include "kernels/elementwise/strided_copy.h"

namespace {

using namespace octet::kernels;
using octet::bench::Buffer;

struct SliceCase {
  const char* name;
  std::vector<int64_t> in;  // dense input dims
  int64_t step;             // on the last axis; the others are whole (or step_h on the one before)
  int64_t step_h = 1;
};

// YOLOv5's Focus slice x[..., ::2, ::2] at 640 px (3 channels), one of its four; a reversed last
// axis (a flip) over a 56x56x64 map; step 3 over long rows.
const SliceCase kCases[] = {
    {"focus 3x640x640 ::2,::2", {1, 3, 640, 640}, 2, 2},
    {"flip 64x56x56", {1, 64, 56, 56}, -1},
    {"step3 64x56x57", {1, 64, 56, 57}, 3},
    {"step2 256x7x7", {1, 256, 7, 7}, 2},
};

void slice_bench(benchmark::State& state, const SliceCase& c, int elem, Isa isa) {
  const int rank = int(c.in.size());
  std::vector<int64_t> in_strides(size_t(rank), 1);
  for (int k = rank - 1; k > 0; --k) in_strides[size_t(k - 1)] = in_strides[size_t(k)] * c.in[size_t(k)];
  std::vector<int64_t> dims = c.in, src = in_strides;
  const int64_t abs_step = c.step < 0 ? -c.step : c.step;
  dims.back() = (c.in.back() + abs_step - 1) / abs_step;
  src.back() = c.step;
  dims[size_t(rank - 2)] = (c.in[size_t(rank - 2)] + c.step_h - 1) / c.step_h;
  src[size_t(rank - 2)] *= c.step_h;
  std::vector<int64_t> dst(size_t(rank), 1);
  for (int k = rank - 1; k > 0; --k) dst[size_t(k - 1)] = dst[size_t(k)] * dims[size_t(k)];
  const int64_t in_elems = in_strides[0] * c.in[0], out_elems = dst[0] * dims[0];
  Buffer<uint8_t> x(size_t(in_elems * elem), 1), y(size_t(out_elems * elem));
  const uint8_t* first = x.data() + (c.step < 0 ? (c.in.back() - 1) * elem : 0);
  StridedCopy copy(rank, dims.data(), src.data(), dst.data(), elem, isa);
  state.SetLabel(copy.kernel_name());
  for (auto _ : state) {
    copy.run(first, y.data(), nullptr);
    benchmark::ClobberMemory();
  }
  state.counters["GBps"] = benchmark::Counter(double(out_elems * elem) * double(state.iterations()) * 1e-9,
                                              benchmark::Counter::kIsRate);
}

// Channels-last maps relayouted to row-major ([HW][C] -> [C][HW]) and back: YOLOv5's
// 255-channel head output at 80x80, a segmentation map of 21 classes at 520x520, a 64-channel
// 56x56 map, ShuffleNet v2's 116-channel stage at 28x28, an RGB input image at 224x224 (every
// ImageNet model's first step). "shuffle" is ShuffleNet's channel
// shuffle of 2 groups on a channels-last map ([HW][2][58] -> [HW][58][2]).
struct RelayoutCase {
  const char* name;
  int64_t channels, pixels;
  bool to_channels_last = false;
  int64_t groups = 0;  // a channel shuffle of the channels-last map instead
};
const RelayoutCase kRelayouts[] = {
    {"nhwc->nchw 255x80x80", 255, 80 * 80},
    {"nhwc->nchw 21x520x520", 21, 520 * 520},
    {"nhwc->nchw 64x56x56", 64, 56 * 56},
    {"nhwc->nchw 116x28x28", 116, 28 * 28},
    {"nchw->nhwc 255x80x80", 255, 80 * 80, true},
    {"nchw->nhwc 64x56x56", 64, 56 * 56, true},
    {"nchw->nhwc 116x28x28", 116, 28 * 28, true},
    {"nchw->nhwc 3x224x224", 3, 224 * 224, true},
    {"shuffle 116x28x28 g2", 116, 28 * 28, false, 2},
};

void relayout_bench(benchmark::State& state, const RelayoutCase& c, int elem, Isa isa) {
  std::vector<int64_t> dims = {c.channels, c.pixels}, src = {1, c.channels}, dst = {c.pixels, 1};
  if (c.to_channels_last) {
    src = {c.pixels, 1};
    dst = {1, c.channels};
  }
  if (c.groups) {
    const int64_t per = c.channels / c.groups;
    dims = {c.pixels, c.groups, per};
    src = {c.channels, per, 1};
    dst = {c.channels, 1, c.groups};
  }
  const int64_t n = c.channels * c.pixels;
  Buffer<uint8_t> x(size_t(n * elem), 1), y(size_t(n * elem));
  StridedCopy copy(int(dims.size()), dims.data(), src.data(), dst.data(), elem, isa);
  state.SetLabel(copy.kernel_name());
  for (auto _ : state) {
    copy.run(x.data(), y.data(), nullptr);
    benchmark::ClobberMemory();
  }
  state.counters["GBps"] =
      benchmark::Counter(double(n * elem) * double(state.iterations()) * 1e-9, benchmark::Counter::kIsRate);
}

void register_benchmarks() {
  for (const RelayoutCase& c : kRelayouts)
    for (int elem : {1, 2, 4}) {
      const std::string name = std::string("relayout/") + c.name + "/" + std::to_string(elem) + "B";
      benchmark::RegisterBenchmark(name.c_str(), [&c, elem](benchmark::State& state) {
        relayout_bench(state, c, elem, active_isa());
      })->Unit(benchmark::kMicrosecond);
    }
  for (const SliceCase& c : kCases)
    for (int elem : {1, 4})
      for (Isa isa : {active_isa(), Isa::scalar}) {
        const std::string kernel = isa == Isa::scalar ? "copy_strided__ref" : "pick";
        const std::string name = std::string("strided_copy/") + c.name + "/" + std::to_string(elem) + "B/" + kernel;
        benchmark::RegisterBenchmark(name.c_str(), [&c, elem, isa](benchmark::State& state) {
          slice_bench(state, c, elem, isa);
        })->Unit(benchmark::kMicrosecond);
      }
}

}  // namespace

int main(int argc, char** argv) {
  octet::bench::add_active_isa_context();
  register_benchmarks();
  return octet::bench::run_benchmarks(argc, argv);
}
