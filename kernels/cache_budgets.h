#pragma once
// The cost model's memory side (docs/kernels.md, "Cost model"): every blocking budget of the
// drivers is a fraction of a cache level of the CPU it runs on, detected at run time, never a
// byte count tuned on one machine. The fractions were measured on Zen 1 (512 KiB L2, 32 KiB
// L1D) and Zen 5 (1 MiB L2, 48 KiB L1D); the comments at each use say where.
#include <cstddef>

namespace octet::kernels {

// Bytes one core streams a cycle from each level, the cost model's only rates on the memory
// side: assumptions, since no CPUID field gives them. Memory about 4 (12-16 GB/s at 3-4 GHz,
// what one core of Zen 1, Zen 4 and Zen 5 sustains); the L2 32 (half a 64-byte line a cycle,
// what Zen 1-4 and Arm's big cores deliver to the L1D), 64 on the cores that fill a whole line a
// cycle, known by vendor and family (CacheSizes::l2_bytes_per_cycle: Intel's since Haswell,
// AMD's Zen 5); the L3 share in between, 16, but 8 on Intel's (CacheSizes::l3_bytes_per_cycle:
// a mesh or ring stop per core, where AMD's cores share a CCX's L3 a few hops away; a plain
// read loop on an Intel Xeon guest held 29 GB/s at 3.99 GHz, 7.3 bytes a cycle, from 4 to 64 MB).
inline constexpr double kMemoryBytesPerCycle = 4.0;
inline constexpr double kL3BytesPerCycle = 16.0;
inline constexpr double kL2BytesPerCycle = 32.0;
inline constexpr double kIntelL3BytesPerCycle = 8.0;

struct CacheSizes {
  size_t l1d = 0;       // per core
  size_t l2 = 0;        // per core (a cluster's shared L2 counts as its share)
  size_t l3_share = 0;  // the last level over the cores that share it
  bool detected = false;  // false: every size below is the assumption of cache_sizes()
  // Bytes a cycle the L2 delivers to the L1D (kL2BytesPerCycle unless the vendor says more).
  double l2_bytes_per_cycle = kL2BytesPerCycle;
  double l3_bytes_per_cycle = kL3BytesPerCycle;  // and the L3 (kIntelL3BytesPerCycle on Intel's)
};

// This CPU's, detected once (cpuinfo on x86, sysconf on Arm Linux). A level the system hides
// (some VMs, qemu-user) is assumed the smallest of the cores octet targets: 32 KiB L1D,
// 512 KiB L2, 1 MiB of L3, so that no budget overflows the cache it was meant to fit.
const CacheSizes& cache_sizes();
CacheSizes assumed_cache_sizes();  // the assumption alone (tests)

// The budgets, each from the sizes given (this CPU's by default).
struct CacheBudgets {
  // Winograd: scratch per block of tiles (transformed input and products), the L1D: what the
  // input transform writes is still there when the GEMMs read it.
  size_t winograd_block_bytes;
  // ... unless the transformed weights exceed the L2: every block reads them all again from
  // beyond it, so a block then holds the L2's worth of tiles (the scratch stays in the L2, the
  // weights stream once per L2 of tiles instead of once per L1D of them).
  size_t winograd_block_bytes_streamed;
  // Winograd is not taken for a layer whose transformed weights exceed this with too few tiles
  // to reuse them (they stream from memory once a run): two L2s.
  size_t winograd_weight_limit;
  // FP32 GEMM / IGEMM: packed weights past this run chunk by chunk of columns over every row;
  // with fewer rows than columns (A the small stream) the chunk stays in half the L2, else two
  // L2s (the rows of A come back once per chunk).
  size_t f32_weight_chunk_few_rows, f32_weight_chunk;
  // INT8 IGEMM: a quarter of the L2 of weights per chunk (A's rows and the tiles keep the rest).
  size_t q8_weight_chunk;
  // FP32 depthwise: the channel blocks one group of rows walks, half the L1D.
  size_t f32_dw_chunk;
  // ... and the largest input and output maps together it runs a slice of channels at a time
  // over every row (each input row then comes from the L2 once per slice, not once per output
  // row reading it): half the L2. Past it a slice's pass pushes the input out of the L2 before
  // the next slice reads it again (on an Intel Xeon guest: 72 channels at 56x56, 1.8 MB of
  // maps, 1.11x slower sliced; 32 channels at 112x112 1.8x).
  size_t f32_dw_sliced_map;
  // Fused 1x1 + depthwise: the ring of expanded rows, and the largest intermediate image run
  // whole (the L2). The ring measured best at 192 KiB both on Zen 1 (512 KiB L2) and on Zen 4
  // (1 MiB L2: 384 KiB ran MnasNet-0.5 2-3% slower), so it follows no fraction of the L2; both
  // have a 32 KiB L1D: six L1Ds.
  size_t pwdw_ring, pwdw_whole_image;
  // The most a model's weights may total and still come back from the L3 on the next run: this
  // core's share of it, but at most eight L2s. Every core octet was measured on has at most four
  // L2s of L3 per core, so the cap only binds where a VM divides a whole socket's L3 over its
  // few vCPUs (an Intel Xeon guest: 480 MiB over 2). There, whole models at batch 1 streamed
  // their Winograd weights at ~16 GB/s with 13 MB of weights (alexnet_mini) and at ~7.5 GB/s,
  // slower than memory is assumed, with 46 MB (ResNet-18): the socket's other tenants use it too.
  size_t model_weights_in_l3;
};
CacheBudgets cache_budgets(const CacheSizes& sizes);
const CacheBudgets& cache_budgets();  // this CPU's, computed once

// The cache one core can count on between runs and steps: its L2 plus the L3 a run can count
// on finding there again (CacheBudgets::model_weights_in_l3, the core's share capped at eight
// L2s). The automatic batch slice sizes its images by it (Session::automatic_batch_slice).
size_t per_core_cache_bytes();
// Cycles to read `bytes` again when what is re-read spans `working_set` bytes: from the smallest
// level that holds it. Within half the L1D (the rest for what streams past it) they cost 0: the
// loads are the compute side's.
double reread_cycles(double bytes, size_t working_set, const CacheSizes& sizes = cache_sizes());

}  // namespace octet::kernels
