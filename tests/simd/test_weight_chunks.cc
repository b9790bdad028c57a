// kernels/gemm/q8_weight_chunks.h: the walk of the INT8 drivers over (row group, column block)
// when the packed weights outgrow the chunk budget.
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <atomic>
#include <utility>
#include <vector>

#include "kernels/gemm/q8_weight_chunks.h"
#include "tests/simd/simd_test_util.h"

namespace {

using octet::kernels::q8_blocks_per_chunk;
using octet::kernels::run_q8_tiles;

struct Walk {
  size_t groups, blocks, block_bytes;
};

// Budget-sized, over-budget with chunks of unequal width, one block per chunk, one group.
const size_t kBudget = octet::kernels::q8_weight_chunk_bytes();
const Walk kWalks[] = {
    {7, 5, 1024},
    {13, 16, kBudget / 3},
    {3, 11, kBudget / 4 + 1},
    {4, 9, 2 * kBudget},
    {1, 7, kBudget / 2},
};

TEST(Q8WeightChunks, EveryTileRunsOnceOnOneOrTwoThreads) {
  octet::kernels::testing::Pool pool(pthreadpool_create(2));
  ASSERT_NE(pool, nullptr);
  for (const Walk& w : kWalks) {
    for (pthreadpool_t threads : {static_cast<pthreadpool_t>(nullptr), pool.get()}) {
      std::vector<std::atomic<int>> runs(w.groups * w.blocks);
      run_q8_tiles(threads, w.groups, w.blocks, w.block_bytes, [&](size_t g, size_t b) {
        ASSERT_LT(g, w.groups);
        ASSERT_LT(b, w.blocks);
        runs[g * w.blocks + b]++;
      });
      for (size_t i = 0; i < runs.size(); ++i)
        EXPECT_EQ(runs[i].load(), 1) << "group " << i / w.blocks << " block " << i % w.blocks << " of " << w.groups
                                     << " x " << w.blocks << (threads ? ", 2 threads" : "");
    }
  }
}

// One thread: chunk after chunk of blocks, every group through a chunk before the next, so a
// chunk's weights are read from L3 once and reused from L2.
TEST(Q8WeightChunks, OneThreadWalksChunkByChunk) {
  for (const Walk& w : kWalks) {
    const size_t chunk = q8_blocks_per_chunk(w.blocks, w.block_bytes);
    std::vector<std::pair<size_t, size_t>> order;
    run_q8_tiles(nullptr, w.groups, w.blocks, w.block_bytes, [&](size_t g, size_t b) { order.emplace_back(g, b); });
    std::vector<std::pair<size_t, size_t>> expected;
    for (size_t first = 0; first < w.blocks; first += chunk)
      for (size_t g = 0; g < w.groups; ++g)
        for (size_t b = first; b < std::min(first + chunk, w.blocks); ++b) expected.emplace_back(g, b);
    EXPECT_EQ(order, expected) << w.groups << " x " << w.blocks << ", chunks of " << chunk;
  }
}

}  // namespace
