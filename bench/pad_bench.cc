// Pad: kernels::PadRows (the op's kernel, the tensor in its own layout) against pad__ref (the
// element walk the op ran before, on a row-major tensor). For a channels-last map "before" also
// counts the two relayouts the planner put around the row-major Pad (StridedCopy, NHWC -> NCHW
// and back). Cases: ReflectionPad2d(1) of a 64-channel 128x128 channels-last map (a generator's
// residual block), 3 px of a 3x256x256 row-major image (its first layer); constant, reflect and
// edge; 4-byte floats and 1-byte codes. Named pad/<case>/<mode>/<elem bytes>/<kernel>; the
// counter is GBps, output bytes written per second. One thread.
//
//   build/bench/pad_bench --benchmark_filter=reflect
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bench/kernel_bench_util.h"
#include "kernels/elementwise/pad.h"
#include "kernels/elementwise/strided_copy.h"
#include "kernels/ref/copy.h"

namespace {

using namespace octet::kernels;
using octet::bench::Buffer;

struct PadCase {
  const char* name;
  int64_t c, h, w, pad;
  bool channels_last;
};

const PadCase kCases[] = {
    {"nhwc 64x128x128 +1", 64, 128, 128, 1, true},
    {"nchw 3x256x256 +3", 3, 256, 256, 3, false},
};

const char* mode_name(PadMode m) {
  return m == PadMode::constant ? "constant" : m == PadMode::reflect ? "reflect" : "edge";
}

enum class Kernel { pad_rows, ref, ref_with_relayouts };

void pad_bench(benchmark::State& state, const PadCase& c, PadMode mode, int elem, Kernel kernel) {
  const int64_t oh = c.h + 2 * c.pad, ow = c.w + 2 * c.pad;
  const int64_t in_n = c.c * c.h * c.w, out_n = c.c * oh * ow;
  Buffer<uint8_t> x(size_t(in_n * elem), 1), y(size_t(out_n * elem));
  const uint64_t value = 0x3F003F003F003F00ull;
  // Logical NCHW pads (N dropped), and the same in memory order for the kernel.
  const int64_t nchw[] = {c.c, c.h, c.w}, nchw_pads[] = {0, c.pad, c.pad};
  const int64_t nhwc[] = {c.h, c.w, c.c}, nhwc_pads[] = {c.pad, c.pad, 0};
  const int64_t* dims = c.channels_last ? nhwc : nchw;
  const int64_t* pads = c.channels_last ? nhwc_pads : nchw_pads;
  if (kernel == Kernel::pad_rows) {
    PadRows pad(3, dims, pads, pads, mode, size_t(elem));
    state.SetLabel(PadRows::kernel_name());
    for (auto _ : state) {
      pad.run(x.data(), y.data(), &value, nullptr);
      benchmark::ClobberMemory();
    }
  } else if (kernel == Kernel::ref) {
    state.SetLabel("pad__ref");
    for (auto _ : state) {
      pad__ref(size_t(elem), 3, dims, pads, pads, mode, &value, x.data(), y.data());
      benchmark::ClobberMemory();
    }
  } else {
    // [HW][C] -> [C][HW], pad__ref on NCHW, [C][OH OW] -> [OH OW][C]
    const int64_t in_px = c.h * c.w, out_px = oh * ow;
    const int64_t to_nchw_dims[] = {c.c, in_px}, to_nchw_src[] = {1, c.c}, to_nchw_dst[] = {in_px, 1};
    const int64_t to_nhwc_dims[] = {c.c, out_px}, to_nhwc_src[] = {out_px, 1}, to_nhwc_dst[] = {1, c.c};
    StridedCopy in_relayout(2, to_nchw_dims, to_nchw_src, to_nchw_dst, elem);
    StridedCopy out_relayout(2, to_nhwc_dims, to_nhwc_src, to_nhwc_dst, elem);
    Buffer<uint8_t> xt(x.size()), yt(y.size());
    state.SetLabel(std::string(in_relayout.kernel_name()) + " + pad__ref + " + out_relayout.kernel_name());
    for (auto _ : state) {
      in_relayout.run(x.data(), xt.data(), nullptr);
      pad__ref(size_t(elem), 3, nchw, nchw_pads, nchw_pads, mode, &value, xt.data(), yt.data());
      out_relayout.run(yt.data(), y.data(), nullptr);
      benchmark::ClobberMemory();
    }
  }
  state.counters["GBps"] =
      benchmark::Counter(double(out_n * elem) * double(state.iterations()) * 1e-9, benchmark::Counter::kIsRate);
}

void register_benchmarks() {
  for (const PadCase& c : kCases)
    for (PadMode mode : {PadMode::reflect, PadMode::edge, PadMode::constant})
      for (int elem : {4, 1}) {
        std::vector<std::pair<Kernel, const char*>> kernels = {{Kernel::pad_rows, "pad_rows"}, {Kernel::ref, "pad__ref"}};
        if (c.channels_last) kernels.push_back({Kernel::ref_with_relayouts, "before"});
        for (auto [kernel, label] : kernels) {
          const std::string name = std::string("pad/") + c.name + "/" + mode_name(mode) + "/" + std::to_string(elem) +
                                   "B/" + label;
          const Kernel k = kernel;
          benchmark::RegisterBenchmark(name.c_str(), [&c, mode, elem, k](benchmark::State& state) {
            pad_bench(state, c, mode, elem, k);
          })->Unit(benchmark::kMicrosecond);
        }
      }
}

}  // namespace

int main(int argc, char** argv) {
  octet::bench::add_active_isa_context();
  register_benchmarks();
  return octet::bench::run_benchmarks(argc, argv);
}
