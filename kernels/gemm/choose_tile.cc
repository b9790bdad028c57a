#include "kernels/gemm/choose_tile.h"

#include <algorithm>

namespace octet::kernels {

TrafficCycles tile_traffic_cycles(const TileTraffic& t, const CacheSizes& sizes) {
  if (t.m == 0 || t.n == 0) return {};
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
  return {.weights = weight_cycles, .activations = activation_cycles};
}

double overlapped_tile_cycles(double compute, const TileTraffic& t, const CacheSizes& sizes) {
  // The packed weights are one sequential stream the hardware prefetcher runs ahead of the
  // tile, so their re-reads from the L2 cost time only where they arrive slower than the tile
  // consumes them. Added to the compute instead (as the FP32 chooser still counts them), they
  // sent Zen 4's INT8 layers at large m to 12x16c4 (fewest passes over the weights), which
  // 4x64c4 and 6x32c4 ran up to 1.2x faster: a 4x64c4 zmm tile wants ~15 bytes a cycle there,
  // half of what the L2 delivers (bench/dispatch_results_zen4.md, "Weight re-reads overlap").
  const TrafficCycles traffic = tile_traffic_cycles(t, sizes);
  return std::max(compute, traffic.weights) + traffic.activations;
}

namespace {

// A tile's cycles over those of its mr x nv multiply-adds when each of its mr broadcasts per k
// step takes `slots` of a multiply-add's slot.
double broadcast_share(double mr, double nv, double slots) { return (mr * nv + slots * mr) / (mr * nv); }

}  // namespace

double zmm_broadcast_share(Isa isa, double mr, double nv) {
  // Per k step a tile issues mr x nv multiply-adds on the two vector pipes and mr broadcasts
  // of A. A broadcast from memory into a ymm register is a load only; into a zmm register it
  // is a load plus a shuffle-port uop on Intel (port 5, one of the two 512-bit pipes: LLVM's
  // Sapphire Rapids model), which may take a multiply-add's slot. On an Intel Xeon with
  // AVX-512 VNNI (bench/dispatch_results_avx512.md) the 12x16 FP32 tile ran 1.2-1.7x slower
  // per FMA than 8x32, INT8 12x16c4 1.12-1.27x slower than 4x64c4, 6x32c4 0-7%: between no
  // slot (1x, 1x, 1x) and a whole one (2x / 1.5x, 1.6x, 1.2x), so half a slot each. Counted
  // where zmm runs at full rate only: AMD's Zen 4 splits a zmm instruction into two halves and
  // its broadcasts take no multiply-add slot. There, counted, it made the ymm tiles win every
  // tie, and they were the slower ones (bench/dispatch_results_zen4.md: FP32 6x16 over 12x16
  // and 8x32 at a median 1.01-1.04x their time, INT8 6x16c4 over 6x32c4 1.10x).
  if (!OCTET_ARCH_X86 || !(isa_features(isa) & kZmm) || !zmm_at_full_rate() || nv <= 0.0) return 1.0;
  return broadcast_share(mr, nv, 0.5);
}

double q8_broadcast_share(Isa isa, double mr, double nv) {
  // A dot-product tile's broadcast of A (vpbroadcastd of four activation bytes) is not a plain
  // load on Zen 4 either: it counts half a ymm multiply-add slot there, a quarter of a zmm one
  // (a zmm multiply-add takes two). That predicts 12x16c4 1.11x and 1.18x slower than 6x32c4
  // and 4x64c4, 6x16c4 (ymm) as fast as 12x16c4 and 1.11x slower than 6x32c4; measured
  // (bench/dispatch_results_zen4.md) 1.09-1.17x against the faster wide tile (median over the
  // zoo's 3x3 layers with k >= 576 at batch 16, four runs), 1.03x and 1.10x (medians over 302
  // layers). FP32's vbroadcastss showed no such cost there (6x16 against 8x32: 1.01x). The
  // widening rows and every other core: zmm_broadcast_share.
  if (OCTET_ARCH_X86 && !zmm_at_full_rate() && (isa_features(isa) & kInt8DotProduct) && nv > 0.0) {
    return broadcast_share(mr, nv, (isa_features(isa) & kZmm) ? 0.25 : 0.5);
  }
  return zmm_broadcast_share(isa, mr, nv);
}

}  // namespace octet::kernels
