#pragma once
// The 100% of every kernel benchmark's pct_peak counter: this machine's one-thread arithmetic
// limit for the instructions each ISA level's kernels are built on. Measured by
// bench/peak_loops.h on first use of each level (~0.1 s), one thread, best of 40 runs of 2 ms,
// then cached for the life of the process, so a percentage is always against a figure taken
// on the same machine in the same run (the host's rate varies; see bench/README.md).
#include "kernels/isa.h"

namespace octet::bench {

// FP32 GFLOP/s (2 per FMA lane): scalar = vfmadd231ss, avx2, avxvnni and avx256vnni = ymm
// FMA, avx512 and avx512vnni = zmm FMA. 0 when the CPU cannot run that level.
double peak_gflops(kernels::Isa isa);

// INT8 GOPS (2 per multiply-accumulate): scalar = 32-bit imul+add, avx2 = ymm vpmaddwd+vpaddd
// (the exact int16 path), avxvnni = ymm vpdpbusd (VEX), avx256vnni = ymm vpdpbusd (EVEX),
// avx512 = zmm vpmaddwd+vpaddd, avx512vnni = zmm vpdpbusd, avx512amx = AMX tdpbusd. 0 when the CPU
// cannot run that level.
double peak_gops(kernels::Isa isa);

}  // namespace octet::bench
