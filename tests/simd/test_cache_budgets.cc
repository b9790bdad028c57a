// kernels/cache_budgets.h: every blocking budget follows the cache it was measured against, so
// the CPUs it was measured on get back exactly the values measured there.
#include <gtest/gtest.h>

#include <algorithm>

#include "kernels/cache_budgets.h"

namespace {

using octet::kernels::cache_budgets;
using octet::kernels::CacheBudgets;
using octet::kernels::CacheSizes;

constexpr size_t KiB = 1024, MiB = 1024 * KiB;

TEST(CacheBudgets, Zen5GetsTheBudgetsMeasuredThere) {
  const CacheBudgets b = cache_budgets(CacheSizes{48 * KiB, 1 * MiB, 4 * MiB, true});
  EXPECT_EQ(b.winograd_block_bytes, 48 * KiB);
  EXPECT_EQ(b.winograd_block_bytes_streamed, 1 * MiB);
  EXPECT_EQ(b.winograd_weight_limit, 2 * MiB);
  EXPECT_EQ(b.f32_weight_chunk_few_rows, 512 * KiB);
  EXPECT_EQ(b.f32_weight_chunk, 2 * MiB);
  EXPECT_EQ(b.q8_weight_chunk, 256 * KiB);
}

TEST(CacheBudgets, Zen1GetsTheBudgetsMeasuredThere) {
  const CacheBudgets b = cache_budgets(CacheSizes{32 * KiB, 512 * KiB, 2 * MiB, true});
  EXPECT_EQ(b.f32_dw_chunk, 16 * KiB);
  EXPECT_EQ(b.pwdw_ring, 192 * KiB);
  // MobileNetV2's 14x14x576 (451 KiB) ran faster whole, 56x56x144 (1.8 MiB) through a ring.
  EXPECT_GT(b.pwdw_whole_image, 451 * KiB);
  EXPECT_LT(b.pwdw_whole_image, 1800 * KiB);
}

TEST(CacheBudgets, ScaleWithTheCaches) {
  const CacheBudgets small = cache_budgets(CacheSizes{32 * KiB, 512 * KiB, 1 * MiB, true});
  const CacheBudgets large = cache_budgets(CacheSizes{64 * KiB, 2 * MiB, 8 * MiB, true});
  EXPECT_EQ(large.winograd_block_bytes, 2 * small.winograd_block_bytes);
  EXPECT_EQ(large.winograd_block_bytes_streamed, 4 * small.winograd_block_bytes_streamed);
  EXPECT_EQ(large.f32_dw_chunk, 2 * small.f32_dw_chunk);
  EXPECT_EQ(large.q8_weight_chunk, 4 * small.q8_weight_chunk);
  EXPECT_EQ(large.f32_weight_chunk, 4 * small.f32_weight_chunk);
  EXPECT_EQ(large.pwdw_ring, 2 * small.pwdw_ring);
}

// A VM may report a whole socket's L3 over its few vCPUs; a run counts on eight L2s at most.
TEST(CacheBudgets, ModelWeightsInTheL3AreCappedAtEightL2s) {
  EXPECT_EQ(cache_budgets(CacheSizes{48 * KiB, 1 * MiB, 4 * MiB, true}).model_weights_in_l3, 4 * MiB);
  EXPECT_EQ(cache_budgets(CacheSizes{48 * KiB, 2 * MiB, 240 * MiB, true}).model_weights_in_l3, 16 * MiB);
}

// The batch slice's cache: this core's L2 and the L3 a run counts on (a VM's reported socket
// L3 capped like the weights').
TEST(CacheBudgets, PerCoreCacheIsTheL2AndTheL3ARunCountsOn) {
  const CacheSizes& c = octet::kernels::cache_sizes();
  EXPECT_EQ(octet::kernels::per_core_cache_bytes(), c.l2 + std::min(c.l3_share, 8 * c.l2));
  EXPECT_LE(octet::kernels::per_core_cache_bytes(), 9 * c.l2);
}

// A hidden level is assumed the smallest target core's, so no budget is 0 or overflows it.
TEST(CacheBudgets, ThisCpuHasEveryLevelAndEveryBudget) {
  const CacheSizes& c = octet::kernels::cache_sizes();
  EXPECT_GE(c.l1d, 16 * KiB);
  EXPECT_GE(c.l2, 128 * KiB);
  EXPECT_GT(c.l3_share, 0u);
  const CacheBudgets& b = cache_budgets();
  for (size_t v : {b.winograd_block_bytes, b.winograd_block_bytes_streamed, b.winograd_weight_limit, b.f32_weight_chunk_few_rows, b.f32_weight_chunk,
                   b.q8_weight_chunk, b.f32_dw_chunk, b.f32_dw_sliced_map, b.pwdw_ring, b.pwdw_whole_image, b.model_weights_in_l3})
    EXPECT_GT(v, 0u);
  const CacheSizes assumed = octet::kernels::assumed_cache_sizes();
  EXPECT_FALSE(assumed.detected);
  EXPECT_EQ(assumed.l2, 512 * KiB);
}

}  // namespace
