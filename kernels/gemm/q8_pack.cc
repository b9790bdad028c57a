#include "kernels/gemm/q8_pack.h"

#include "kernels/fallback.h"
#include "kernels/cache_budgets.h"
#include "kernels/gemm/choose_tile.h"

#include <algorithm>
#include <cmath>
#include <new>

namespace octet::kernels {

AlignedBytes::AlignedBytes(size_t size) : size_(size) {
  const size_t rounded = (std::max<size_t>(size, 1) + 63) / 64 * 64;
  data_.reset(static_cast<uint8_t*>(std::aligned_alloc(64, rounded)));
  if (!data_) throw std::bad_alloc();
  std::memset(data_.get(), 0, rounded);
}

namespace {

// Rough cycles of one problem on one entry: tiles x (k steps x the busier of the multiply
// pipes (MR * NV vpdpbusd / vpmaddwd, 2 per cycle, and the MR broadcasts too where they take a
// slot: q8_broadcast_share) and the load ports (MR broadcasts + NV weight vectors, 2 per
// cycle)) + a per-tile epilogue. Rows / columns beyond m / n are computed anyway, so the
// padding of the last tile counts.
//
// The int16 entries (w_bytes 2) splat each row's activation pair with one broadcast load from
// a row they widened to int16 first (a vpmovzxbw and a store per 16 bytes of each row, for
// every block of NR channels): counted as 1.2 broadcasts, the weight that matched
// bench/check_dispatch.py on an AVX2-only Zen 1 when the pair was built by a scalar load, a
// broadcast and a vpshufb (at equal padding 12x8 ran 1.16-1.36x slower than 6x16; 12x8 still
// won at 24 output channels, where 6x16 pads a third), and still matches it with the widened
// rows on an AVX2-only Zen 4 (2026-11-30: the pick the faster tile at every INT8 dense layer of
// ResNet-50, MobileNetV2, SqueezeNet 1.0 and GoogLeNet at batch 1, 12x8 at 24 channels).
double estimated_cycles(const Q8GemmKernel& e, size_t m, size_t n, size_t k) {
  const double tiles_m = static_cast<double>((m + e.mr - 1) / e.mr);
  const double tiles_n = static_cast<double>((n + e.nr - 1) / e.nr);
  const double nv = static_cast<double>(e.nr) / e.lanes;
  const double k_steps = static_cast<double>((k + e.kr - 1) / e.kr);
  const double row_load = e.w_bytes == 2 ? 1.2 : 1.0;
  const double step = std::max(e.mr * nv / 2.0 * q8_broadcast_share(e.isa, e.mr, nv), (e.mr * row_load + nv) / 2.0);
  const double epilogue = 4.0 * e.mr * nv + 20.0;
  // The steps count vector instructions: one on 16 lanes costs two 8-lane ones unless the core
  // has the full 512-bit datapath (vector_rate). The epilogue's count is not scaled on x86: on
  // a Zen 4 a zmm tile's per-tile cost measured 76-107 cycles, near the count of its
  // instructions (68-84) and not twice it (bench/dispatch_results_zen4.md; a least-squares fit
  // over the zoo's 625 INT8 layers), as the ymm tiles' did (71-82 against 68-84): it waits on
  // conversions and stores more than on the vector pipes.
  const double width = e.lanes / 8.0 / vector_rate(e.isa);
  const double epilogue_width = OCTET_ARCH_X86 ? 1.0 : width;
  return tiles_m * tiles_n * (k_steps * step * width + epilogue * epilogue_width);
}

// An AMX row (kernels/x86/q8_gemm__avx512amx.cc) per tile of 16 rows and up to 64 columns:
// for each tap, steps of 64 k bytes (a tap's last step as long as a whole one), each a
// tdpbusd per tile of 16 columns (20 cycles: 3.36 TMAC/s at 3.9 GHz in build/bench/peak's loop,
// above the 16 of its documented rate) plus the step's activations, gathered row by row into
// a tile buffer (60 cycles) or, for one tap, often loaded in place (10); then a fixed 600 cycles
// (the tiles' stores wait for the unit to finish the queued multiplies, nothing overlaps them)
// and the vector epilogue, 50 cycles per tile of 16 columns. Fitted on an Intel Xeon of the
// Sapphire Rapids class against bench/check_dispatch.py's times of the zoo's INT8 layers
// (bench/dispatch_results_amx.md): a few-channel layer of one or two steps takes the vector
// tiles, which finish a row group in a third of the fixed cost. Once per layer, 4000 cycles
// (1 µs): a layer of one or two tiles ran 2-5 µs slower on AMX than on the vector tiles when
// timed alone after other work, and 1-2 µs in a model (the CIFAR MobileNetV2's INT8 steps), the
// unit's start after the vector steps between.
double amx_estimated_cycles(const Q8GemmKernel& e, size_t m, size_t n, size_t k, size_t tap_k) {
  constexpr double kTdpbusdCycles = 20.0, kGatherCycles = 60.0, kInPlaceCycles = 10.0;
  constexpr double kDrainCycles = 600.0, kEpilogueCycles = 50.0, kColumns = 16.0, kStartCycles = 4000.0;
  const size_t kc = tap_k == 0 ? k : tap_k;
  const size_t taps = (k + kc - 1) / kc;
  const double steps = static_cast<double>(taps * ((kc + 63) / 64));
  const double a_cycles = taps == 1 ? kInPlaceCycles : kGatherCycles;
  const double tiles_m = static_cast<double>((m + e.mr - 1) / e.mr);
  auto block = [&](double column_tiles) {
    return kDrainCycles + kEpilogueCycles * column_tiles + steps * (kTdpbusdCycles * column_tiles + a_cycles);
  };
  const size_t whole = n / e.nr, rest = n % e.nr;
  const double per_row_group =
      static_cast<double>(whole) * block(e.nr / kColumns) + (rest != 0 ? block(std::ceil(rest / kColumns)) : 0.0);
  return kStartCycles + tiles_m * per_row_group;
}

}  // namespace

namespace {

// Per block of NR channels: int32 bias'[NR], float multiplier[NR], then per tap, per group of
// KR k's, w[NR][KR] as int8 (w_bytes 1) or int16 (w_bytes 2); zero past n and kc. The kernel
// reads activation x as x + x_shift (q8_read_shift), so the fold is
//   bias'[c] = bias[c] - (x_zero_point + x_shift) * sum_k w[k][c].
// Into `packed`, whose bytes are reused when they have the size (QLinearMatMul's run-time B is
// packed every run into the same bytes): every byte of the blocks is written.
void pack_q8_blocks(const Q8GemmKernel& kernel, const Q8WeightsToPack& in, int32_t x_shift, Q8PackedWeights& packed) {
  const size_t nr = static_cast<size_t>(kernel.nr);
  const size_t kr = static_cast<size_t>(kernel.kr);
  const size_t kc_padded = (in.kc + kr - 1) / kr * kr;
  const size_t blocks = (in.n + nr - 1) / nr;
  auto weight = [&](size_t c, size_t t, size_t k) { return in.w[(c * in.ks + t) * in.kc + k]; };
  packed.block_bytes = nr * 8 + in.ks * kc_padded * nr * static_cast<size_t>(kernel.w_bytes);
  if (packed.bytes.size() != blocks * packed.block_bytes) packed.bytes = AlignedBytes(blocks * packed.block_bytes);
  const int64_t zp = int64_t{in.x_zero_point} + x_shift;
  for (size_t b = 0; b < blocks; ++b) {
    uint8_t* block = packed.bytes.data() + b * packed.block_bytes;
    int32_t* bias_out = reinterpret_cast<int32_t*>(block);
    float* mult_out = reinterpret_cast<float*>(block + nr * 4);
    uint8_t* w_out = block + nr * 8;
    for (size_t j = 0; j < nr; ++j) {
      const size_t c = b * nr + j;
      if (c >= in.n) {
        bias_out[j] = 0;
        mult_out[j] = 0.0f;
        continue;
      }
      int64_t sum_w = 0;
      for (size_t i = 0; i < in.ks * in.kc; ++i) sum_w += in.w[c * in.ks * in.kc + i];
      const int64_t folded = static_cast<int64_t>(in.bias != nullptr ? in.bias[c] : 0) - zp * sum_w;
      bias_out[j] = static_cast<int32_t>(static_cast<uint32_t>(folded));  // modulo 2^32
      mult_out[j] = in.multiplier.size() == 1 ? in.multiplier[0] : in.multiplier[c];
    }
    for (size_t t = 0; t < in.ks; ++t) {
      for (size_t k0 = 0; k0 < kc_padded; k0 += kr) {
        for (size_t j = 0; j < nr; ++j) {
          for (size_t r = 0; r < kr; ++r) {
            const size_t c = b * nr + j;
            const size_t k = k0 + r;
            const int8_t v = c < in.n && k < in.kc ? weight(c, t, k) : int8_t{0};
            if (kernel.w_bytes == 1) {
              *w_out++ = static_cast<uint8_t>(v);
            } else {
              const int16_t v16 = v;
              std::memcpy(w_out, &v16, 2);
              w_out += 2;
            }
          }
        }
      }
    }
  }
}

}  // namespace

Q8PackedWeights pack_q8_kr_blocks(const Q8GemmKernel& kernel, const Q8WeightsToPack& in) {
  Q8PackedWeights packed;
  pack_q8_blocks(kernel, in, q8_read_shift(kernel.reads, in.x_type), packed);
  return packed;
}

void repack_q8_kr_blocks(const Q8GemmKernel& kernel, const Q8WeightsToPack& in, Q8PackedWeights& packed) {
  pack_q8_blocks(kernel, in, q8_read_shift(kernel.reads, in.x_type), packed);
}

const Q8GemmKernel* choose_q8_gemm_kernel(Isa isa, Q8 x_type, size_t m, size_t n, size_t k, const CacheSizes& sizes,
                                         size_t tap_k) {
  const size_t chunk_bytes = cache_budgets(sizes).q8_weight_chunk;
  // A level with a dot-product instruction (VNNI, SDOT, SMMLA, AMX: int8 weights) leaves out
  // the rows that widen to int16 (vpmaddwd + vpaddd, SMLAL): four multiply-adds a lane per
  // instruction against two (one on Arm) plus the widening of each row, which the estimate
  // below undercounts at small k. On a Zen 4 with AVX-512 VNNI they ran a median 3.2x slower
  // than the VNNI tile of the same rows (12x8c2 against 12x16c4, 302 zoo layers,
  // bench/dispatch_results_zen4.md) and never faster beyond noise, yet the estimate took them
  // for 24- and 8-column layers.
  const bool has_dot = (isa_features(isa) & kInt8DotProduct) != 0;
  // The vector rows first; the portable (scalar) rows only where none runs.
  for (const bool portable : {false, true}) {
    const Q8GemmKernel* best = nullptr;
    double best_cycles = 0.0;
    for (const Q8GemmKernel& e : kQ8GemmKernels) {
      if (e.x_type != x_type || (e.isa == Isa::scalar) != portable || !isa_runs(e.isa, isa)) continue;
      if (has_dot && e.w_bytes == 2) continue;
      // The estimate of the tile's instructions, with the re-reads of weights and activations
      // it makes (choose_tile.h). A dot-product row's weight re-reads overlap its instructions
      // (measured on a Zen 4 with VNNI); the widening rows keep them added, which on an
      // AVX2-only Zen 4 sent the layers whose int16 weights overflow half the L1D to 12x8c2,
      // measured faster there (bench/dispatch_results_avx2.md), though that stream needs a
      // third of what the L2 delivers: the count stands in for a cost of those rows the compute
      // estimate misses.
      const TileTraffic traffic{.m = m, .n = n, .mr = size_t(e.mr), .nr = size_t(e.nr),
                                .block_bytes = size_t(e.nr) * 8 + (k + e.kr - 1) / e.kr * e.kr * size_t(e.nr * e.w_bytes),
                                .row_bytes = k, .chunk_bytes = chunk_bytes};
      const double compute = isa_features(e.isa) & kAmxInt8
                                 ? amx_estimated_cycles(e, m, n, k, tap_k)
                                 : estimated_cycles(e, m, n, k);
      const double cycles = e.w_bytes == 2 ? compute + tile_traffic_cycles(traffic, sizes).total()
                                           : overlapped_tile_cycles(compute, traffic, sizes);
      if (best == nullptr || cycles < best_cycles ||
          (cycles == best_cycles && isa_rank(e.isa) > isa_rank(best->isa))) {
        best = &e;
        best_cycles = cycles;
      }
    }
    if (best != nullptr) return best;
  }
  return nullptr;
}

const Q8GemmKernel& require_q8_gemm_kernel(const char* driver, Isa isa, Q8 x_type, size_t m, size_t n, size_t k,
                                           size_t tap_k) {
  const Q8GemmKernel* kernel = choose_q8_gemm_kernel(isa, x_type, m, n, k, cache_sizes(), tap_k);
  if (kernel == nullptr) throw Unsupported(std::string(driver) + ": no microkernel for " + q8_name(x_type) + " activations");
  return *kernel;
}

}  // namespace octet::kernels
