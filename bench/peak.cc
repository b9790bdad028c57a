// This machine's arithmetic limits, one thread: FP32 FMA on scalar/ymm/zmm, the INT8
// sequences without VNNI (vpmaddubsw + vpmaddwd + vpaddd, and the exact vpmaddwd + vpaddd on
// int16-widened operands) on ymm and zmm, vpdpbusd on ymm (VEX and EVEX) and zmm, and the
// clock. Kernel percentages of peak are taken against these (bench/peak_values.h).
// The loops live in bench/peak_loops.cc. Best of 100 runs of ~2 ms each (see measure_peak).
//
//   build/bench/peak
#include <cstdio>

#include "bench/peak_loops.h"

int main() {
  using namespace octet::bench;
  const double ghz = measure_clock_ghz(100, 0.002);
  std::printf("%-38s %12s %14s\n", "path (1 thread, 12 accumulators)", "best of 100", "per cycle");
  for (const PeakLoop& loop : peak_loops()) {
    if (!loop.supported()) {
      std::printf("%-38s %12s\n", loop.name, "not on this CPU");
      continue;
    }
    const double rate = measure_peak(loop, 100, 0.002);
    std::printf("%-38s %8.1f %s %6.1f %s\n", loop.name, rate, loop.unit, rate / ghz,
                loop.unit[1] == 'F' ? "FLOP" : "MAC");
  }
  std::printf("%-38s %8.2f GHz   (chain of dependent 1-cycle adds)\n", "clock", ghz);
  return 0;
}
