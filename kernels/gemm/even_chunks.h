#pragma once
// The one rule both GEMM drivers split their weights' column blocks by when the packed
// weights outgrow the cache (kernels/gemm/f32_gemm.cc, kernels/gemm/q8_weight_chunks.h).
#include <cstddef>

namespace octet::kernels {

// Blocks per chunk: all `blocks` when at most `most` (>= 1) of them, else chunks of nearly
// equal size under `most`, so the last one is not a sliver.
inline size_t even_chunk(size_t blocks, size_t most) {
  if (most >= blocks) return blocks;
  const size_t chunks = (blocks + most - 1) / most;
  return (blocks + chunks - 1) / chunks;
}

}  // namespace octet::kernels
