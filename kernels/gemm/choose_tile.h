#pragma once
// The memory side of the GEMM tile choice (choose_f32_gemm_kernel, choose_q8_gemm_kernel;
// docs/kernels.md, "Cost model"). Both drivers walk one chunk of packed weights block by block
// of nr columns for a group of mr rows, then the next group: a tile of mr x nr reads the
// chunk's weights once per group of rows, ceil(m / mr) passes, and a group's activations once
// per block of columns. The first pass over each is the same for every tile; the re-reads cost
// what the level they come from charges (reread_cycles, kernels/cache_budgets.h).
#include <cstddef>

#include "kernels/cache_budgets.h"
#include "kernels/isa.h"

namespace octet::kernels {

struct TileTraffic {
  size_t m = 0, n = 0;       // output rows (pixels) and columns
  size_t mr = 1, nr = 1;     // the tile
  size_t block_bytes = 0;    // packed weights of one block of nr columns
  size_t row_bytes = 0;      // activations of one row (its k values)
  size_t chunk_bytes = 0;    // packed weights walked over every row before the next chunk
};

// The compute side's one correction shared by the FP32 and INT8 choosers: the cycles of a tile
// of `mr` rows and `nv` vectors of columns at level `isa` over those of its multiply-adds
// alone, above 1 where its broadcasts of A take a vector pipe's slot (zmm levels of a core
// that runs zmm at full rate).
double zmm_broadcast_share(Isa isa, double mr, double nv);
// The same for the INT8 tiles: a dot-product tile's integer broadcasts also take a share of a
// slot on a half-rate zmm core (Zen 4), at every width.
double q8_broadcast_share(Isa isa, double mr, double nv);

// Cycles of the re-reads beyond the first pass, of the weights and of the activations; 0 when
// m is not known (m == 0).
struct TrafficCycles {
  double weights = 0.0, activations = 0.0;
  double total() const { return weights + activations; }
};
TrafficCycles tile_traffic_cycles(const TileTraffic& t, const CacheSizes& sizes = cache_sizes());

// A tile's cycles when its weight re-reads overlap its `compute` (the INT8 chooser): the slower
// of the two, then the activation re-reads.
double overlapped_tile_cycles(double compute, const TileTraffic& t, const CacheSizes& sizes = cache_sizes());

}  // namespace octet::kernels
