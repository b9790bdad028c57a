#pragma once
// Throughput loops that measure this machine's arithmetic limits on one thread: FP32 FMA,
// the INT8 instruction sequences the kernels use, and the core clock. Each loop keeps
// independent accumulators in registers and touches no memory, so it runs at the rate of
// its instruction's execution pipes (the generated code is checked in bench/README.md).
// Used by the `peak` program and by bench/peak_values.h.
#include <cstdint>
#include <vector>

namespace octet::bench {

enum class PeakLoopId {
  f32_fma_scalar,      // vfmadd231ss: what the scalar ref kernels could reach at best
  f32_fma_ymm,         // AVX2 + FMA
  f32_fma_zmm,         // AVX-512F
  u8s8_maddubs_ymm,    // vpmaddubsw + vpmaddwd(ones) + vpaddd: fast, saturates in int16
  u8s8_maddubs_zmm,    // the same on AVX-512BW
  s16_maddwd_ymm,      // vpmaddwd + vpaddd on int16-widened operands: the exact AVX2 INT8 path
  s16_maddwd_zmm,      // the same on AVX-512BW
  u8s8_dpbusd_ymm_vex,   // AVX-VNNI (VEX): the `avxvnni` kernel level; skipped where CPUID lacks it
  u8s8_dpbusd_ymm_evex,  // AVX512-VNNI + VL: the `avx256vnni` kernel level
  u8s8_dpbusd_zmm,       // AVX512-VNNI
  u8s8_tdpbusd_amx,      // AMX-INT8 tiles: the `avx512amx` level (the OS must grant the tile state)
  i32_imul_scalar,     // imul + add on 32-bit integers: the scalar INT8 ref kernels at best
};

struct PeakLoop {
  PeakLoopId id;
  const char* name;        // e.g. "f32 FMA zmm (AVX-512F)"
  const char* unit;        // "GFLOP/s" or "GMAC/s"
  int accumulators;        // independent dependency chains in the loop
  double ops_per_iteration;  // FLOPs (2 per FMA lane) or MACs done by one loop iteration
  bool (*supported)();     // whether this CPU can execute the loop
  void (*run)(int64_t iterations);
};

// Every loop, in the order the `peak` program prints them.
const std::vector<PeakLoop>& peak_loops();
const PeakLoop& peak_loop(PeakLoopId id);

// Best of `repeats` timed runs of ~`seconds` each, after a warm-up, in units of 1e9
// `unit` per second. The loop must be supported. Many short runs rather than a few long
// ones: on a shared 2-vCPU machine a run of a few milliseconds often fits between two
// preemptions, one of 20 ms or more rarely does, so short runs find the true rate under load.
double measure_peak(const PeakLoop& loop, int repeats = 40, double seconds = 0.002);

// The core clock (GHz), from a chain of dependent 1-cycle integer adds, best of short runs.
double measure_clock_ghz(int repeats = 40, double seconds = 0.002);

}  // namespace octet::bench
