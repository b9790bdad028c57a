#include "kernels/gemm/choose_tile.h"

#include <algorithm>

namespace octet::kernels {

double tile_traffic_cycles(const TileTraffic& t, const CacheSizes& sizes) {
  if (t.m == 0 || t.n == 0) return 0.0;
  const size_t groups = (t.m + t.mr - 1) / t.mr;
  const size_t blocks = (t.n + t.nr - 1) / t.nr;
  const double weights = double(blocks) * double(t.block_bytes);
  const size_t chunk = std::min(blocks * t.block_bytes, std::max(t.chunk_bytes, t.block_bytes));
  const size_t chunks = (blocks * t.block_bytes + chunk - 1) / chunk;
  // Weights: every group after the first reads the chunk again, from where the chunk fits.
  const double weight_cycles = reread_cycles(double(groups - 1) * weights, chunk, sizes);
  // Activations: a group's rows stay in the L1D from one block to the next unless the block
  // streaming past them evicts them (reread_cycles' L1 rule: their sum within half the L1D).
  const size_t group_bytes = t.mr * t.row_bytes;
  const double activation_rereads = double(groups) * double(group_bytes) * double(blocks - std::min(blocks, chunks));
  const double activation_cycles = reread_cycles(activation_rereads, group_bytes + t.block_bytes, sizes);
  return weight_cycles + activation_cycles;
}

}  // namespace octet::kernels
