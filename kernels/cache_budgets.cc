#include "kernels/cache_budgets.h"

#include "kernels/isa.h"

#include <algorithm>

#if defined(__x86_64__) || defined(_M_X64)
#include <cpuinfo.h>
#elif defined(__linux__)
#include <unistd.h>
#endif

namespace octet::kernels {

CacheSizes assumed_cache_sizes() { return {size_t{32} << 10, size_t{512} << 10, size_t{1} << 20, false}; }

namespace {

// A 64-byte line a cycle from the L2 into the L1D: Intel's cores since Haswell (the only
// AVX2 Intel cores there are) and AMD's since Zen 5 (family 1Ah); Zen 1-4 fill 32 bytes. On a
// Sapphire Rapids-class Xeon the tiles that re-read their weights from the L2 most (4x64c4 INT8)
// ran fastest, which 32 bytes a cycle, added to the compute, had counted 1.3x too slow.
double l2_fill_bytes_per_cycle() {
  const CpuVendor& v = cpu_vendor();
  if (v.id == "GenuineIntel") return 64.0;
  return v.id == "AuthenticAMD" && v.family >= 0x1A ? 64.0 : kL2BytesPerCycle;
}

CacheSizes detect() {
  CacheSizes c = assumed_cache_sizes();
  size_t found = 0;
#if defined(__x86_64__) || defined(_M_X64)
  if (cpuinfo_initialize()) {
    if (cpuinfo_get_l1d_caches_count() > 0) c.l1d = cpuinfo_get_l1d_cache(0)->size, ++found;
    // x86 L2s are private to a core (its SMT siblings share it: one thread of a core is the
    // case the budgets are for), so not divided.
    if (cpuinfo_get_l2_caches_count() > 0) c.l2 = cpuinfo_get_l2_cache(0)->size, ++found;
    if (cpuinfo_get_l3_caches_count() > 0) {
      const cpuinfo_cache* l3 = cpuinfo_get_l3_cache(0);
      c.l3_share = l3->size / std::max<uint32_t>(l3->processor_count, 1), ++found;
    }
  }
#elif defined(__linux__) && defined(_SC_LEVEL1_DCACHE_SIZE)
  if (const long v = sysconf(_SC_LEVEL1_DCACHE_SIZE); v > 0) c.l1d = size_t(v), ++found;
  if (const long v = sysconf(_SC_LEVEL2_CACHE_SIZE); v > 0) c.l2 = size_t(v), ++found;
  if (const long v = sysconf(_SC_LEVEL3_CACHE_SIZE); v > 0) c.l3_share = size_t(v), ++found;
#endif
  c.l2_bytes_per_cycle = l2_fill_bytes_per_cycle();
  if (cpu_vendor().id == "GenuineIntel") c.l3_bytes_per_cycle = kIntelL3BytesPerCycle;
  c.detected = found > 0;
  return c;
}

}  // namespace

const CacheSizes& cache_sizes() {
  static const CacheSizes sizes = detect();
  return sizes;
}

CacheBudgets cache_budgets(const CacheSizes& c) {
  CacheBudgets b;
  b.winograd_block_bytes = c.l1d;
  b.winograd_block_bytes_streamed = c.l2;
  b.winograd_weight_limit = 2 * c.l2;
  b.f32_weight_chunk_few_rows = c.l2 / 2;
  b.f32_weight_chunk = 2 * c.l2;
  b.q8_weight_chunk = c.l2 / 4;
  b.f32_dw_chunk = c.l1d / 2;
  b.f32_dw_sliced_map = c.l2 / 2;
  b.pwdw_ring = 6 * c.l1d;
  b.pwdw_whole_image = c.l2;
  b.model_weights_in_l3 = std::min(c.l3_share, 8 * c.l2);
  return b;
}

size_t per_core_cache_bytes() { return cache_sizes().l2 + cache_budgets().model_weights_in_l3; }

double reread_cycles(double bytes, size_t working_set, const CacheSizes& c) {
  if (working_set <= c.l1d / 2) return 0.0;
  if (working_set <= c.l2) return bytes / c.l2_bytes_per_cycle;
  if (working_set <= c.l2 + c.l3_share) return bytes / c.l3_bytes_per_cycle;
  return bytes / kMemoryBytesPerCycle;
}

const CacheBudgets& cache_budgets() {
  static const CacheBudgets budgets = cache_budgets(cache_sizes());
  return budgets;
}

}  // namespace octet::kernels
