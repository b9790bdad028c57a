#pragma once
// How the INT8 GEMM and conv drivers walk their tiles when the packed weights outgrow L2.
// Walking every column block for one group of rows, then the next group, reads all the packed
// weights once per group: past L2 they come back from L3 each time. ResNet-50's last 3x3 conv
// (512 -> 512 at 7x7, 2.3 MB of INT8 weights, 13 groups of 4 pixels) ran at 55% of the VNNI
// peak that way, against ~85% for the layers whose weights fit. Then one chunk of blocks runs
// over every group before the next, so each chunk is read from L3 once and reused from L2.
#include <pthreadpool.h>

#include <algorithm>
#include <cstddef>

#include "kernels/cache_budgets.h"
#include "kernels/gemm/even_chunks.h"

namespace octet::kernels {

// A quarter of the L2 (cache_budgets): the rows of A and the output tiles keep the rest. On
// that conv (Zen 5, 1 MiB L2, 1 thread) chunks of 128 KiB to 512 KiB all took 356-400 us
// against 490-541 us unchunked, and 1 MiB chunks 402-458 us.
inline size_t q8_weight_chunk_bytes() { return cache_budgets().q8_weight_chunk; }

// Column blocks per chunk: all of them when the packed weights fit the budget, else chunks of
// nearly equal size (the last one no sliver).
inline size_t q8_blocks_per_chunk(size_t blocks, size_t block_bytes) {
  return even_chunk(blocks, std::max<size_t>(1, q8_weight_chunk_bytes() / std::max<size_t>(block_bytes, 1)));
}

// tile(group, block) over groups x blocks, chunk by chunk of blocks. One parallel loop over
// (chunk, group, block): threads take whole chunks (each its own stream of weights) and wait
// for each other once per call, not once per chunk. One thread runs the same order either way.
template <class Tile>
void run_q8_tiles(pthreadpool_t pool, size_t groups, size_t blocks, size_t block_bytes, const Tile& tile) {
  const size_t chunk = q8_blocks_per_chunk(blocks, block_bytes);
  auto chunk_tile = [&](size_t c, size_t g, size_t b) {
    const size_t block = c * chunk + b;
    if (block < blocks) tile(g, block);  // the last chunk may be narrower
  };
  pthreadpool_parallelize_3d(pool, chunk_tile, (blocks + chunk - 1) / chunk, groups, chunk);
}

// The same walk, then done(group, first_block, end_block) once the group's blocks of a chunk
// are all written (a pass over those output rows while they are in cache: a fused lookup). The
// threads take (chunk, group) pairs.
template <class Tile, class Done>
void run_q8_tiles(pthreadpool_t pool, size_t groups, size_t blocks, size_t block_bytes, const Tile& tile,
                  const Done& done) {
  const size_t chunk = q8_blocks_per_chunk(blocks, block_bytes);
  auto chunk_group = [&](size_t c, size_t g) {
    const size_t first = c * chunk, end = std::min(blocks, first + chunk);
    for (size_t b = first; b < end; ++b) tile(g, b);
    done(g, first, end);
  };
  pthreadpool_parallelize_2d(pool, chunk_group, (blocks + chunk - 1) / chunk, groups);
}

}  // namespace octet::kernels
