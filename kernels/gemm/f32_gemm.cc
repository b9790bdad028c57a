#include "kernels/gemm/f32_gemm.h"

#include <algorithm>
#include <stdexcept>

#include "kernels/cache_budgets.h"
#include "kernels/fallback.h"
#include "kernels/gemm/choose_tile.h"
#include "kernels/gemm/even_chunks.h"
#include "kernels/packed_cache.h"

namespace octet::kernels {

const F32GemmKernel& choose_f32_gemm_kernel(Isa isa, int64_t m, int64_t n, int64_t reduction, const CacheSizes& sizes) {
  // Cost = cycles of the padded work at the level's FMA rate (two pipes of one vector each; a
  // zmm counts double only where the CPU runs zmm at full rate, zmm_at_full_rate) + cycles of
  // the re-reads of packed weights and activations (choose_tile.h). Within 5% the higher
  // level, then the less padded work, then the larger tile wins.
  const F32GemmKernel* best = nullptr;
  int64_t best_work = 0;
  double best_cost = 0;
  const size_t depth = size_t(std::max<int64_t>(reduction, 1));
  for (const F32GemmKernel& k : f32_gemm_kernels()) {
    if (!row_runs(k, isa)) continue;
    const int64_t padded_m = m > 0 ? (m + k.mr - 1) / k.mr * k.mr : 1;
    const int64_t work = padded_m * ((n + k.nr - 1) / k.nr * k.nr);
    TileTraffic traffic{.m = size_t(std::max<int64_t>(m, 0)), .n = size_t(n), .mr = size_t(k.mr), .nr = size_t(k.nr),
                        .block_bytes = (depth + 1) * sizeof(float) * size_t(k.nr), .row_bytes = depth * sizeof(float)};
    const size_t chunk_columns = f32_gemm_column_chunk(k, depth, 1, size_t(n), m > 0 ? size_t(m) : SIZE_MAX, sizes);
    traffic.chunk_bytes = (chunk_columns + traffic.nr - 1) / traffic.nr * traffic.block_bytes;
    const double cost = f32_gemm_compute_cycles(k, m, n, reduction) + tile_traffic_cycles(traffic, sizes).total();
    bool better;
    if (best == nullptr || cost < 0.95 * best_cost) {
      better = true;
    } else if (cost * 0.95 > best_cost) {
      better = false;
    } else {
      better = isa_rank(k.isa) > isa_rank(best->isa) ||
               (k.isa == best->isa && (work < best_work || (work == best_work && k.mr * k.nr > best->mr * best->nr)));
    }
    if (better) {
      best = &k;
      best_work = work;
      best_cost = cost;
    }
  }
  if (best == nullptr)
    throw Unsupported(std::string("no FP32 GEMM microkernel for ISA level ") + isa_name(isa) +
                                " on this CPU: use the ref kernel");
  return *best;
}

namespace {

// Multiply-adds (lanes) a cycle at the tile's level: two FMA pipes of 8 lanes on x86 (of 4 on
// Arm), twice that on a full-rate zmm level (vector_rate).
double fma_lanes_per_cycle(const F32GemmKernel& k) { return (OCTET_ARCH_X86 ? 16.0 : 8.0) * vector_rate(k.isa); }

}  // namespace

double f32_gemm_compute_cycles(const F32GemmKernel& k, int64_t m, int64_t n, int64_t reduction) {
  const int64_t padded_m = m > 0 ? (m + k.mr - 1) / k.mr * k.mr : 1;
  const int64_t work = padded_m * ((n + k.nr - 1) / k.nr * k.nr);
  const double fma_per_cycle = fma_lanes_per_cycle(k);
  // The x86 tile one ymm wide (8x8) loads more than it multiplies (per k step 8 broadcasts and
  // one weight vector against 8 FMAs) and re-reads the rows of A twice as often as 6x16: it
  // ran 1.2x (3x3 grouped, 72-deep) to 2.8x (1x1, 1024-deep) slower per FMA than 6x16 (AMD
  // EPYC Zen 4, AVX2). Counted 1.5x, it wins only where 6x16 pads half its columns or more.
  const double load_bound = OCTET_ARCH_X86 && k.nr == 8 ? 1.5 : 1.0;
  return double(work) * double(std::max<int64_t>(reduction, 1)) / fma_per_cycle * load_bound *
         zmm_broadcast_share(k.isa, double(k.mr), double(k.nr) / 16.0);
}

double f32_tile_weight_bytes_per_cycle(const F32GemmKernel& k) {
  // Per k step the tile reads nr weights and does mr x nr multiply-adds at the level's rate.
  return sizeof(float) * fma_lanes_per_cycle(k) / double(k.mr);
}

size_t f32_gemm_column_chunk(const F32GemmKernel& k, size_t kc, size_t ks, size_t n, size_t rows,
                             const CacheSizes& sizes) {
  // Twice the L2 (cache_budgets). Each chunk makes every row of A come back from L3 once more, and the
  // mr rows a tile broadcasts from are not prefetched as well as the one contiguous stream of
  // packed weights: on Zen 5, 2048x512x512 (1 MiB of weights) ran at 83% of peak in 96-column
  // chunks (a quarter of L2) and at 92% in one piece; with 8 MiB of weights, never chunking
  // falls to 74%, chunks of 2 MiB keep 90%.
  // With fewer rows than columns (ResNet-50's 14x14 and 7x7 layers: 49-196 rows, 256-2048
  // columns, 1-9 MB of weights) A is the small stream, and a chunk that stays in L2 wins:
  // 512 KiB chunks (half its L2) ran its layer3 + layer4 convs in 26.4-27.1 ms against
  // 27.9-29.0 with 2 MiB ones (Zen 5, three alternations).
  // A chunk past the L2 feeds every group of rows from the L3: where the tile reads its
  // weights faster than the L3 delivers them (8x32 at full zmm rate wants 16 bytes a cycle;
  // Intel's L3 gives 8, AMD's 16), the chunk stays in half the L2 however many rows there are.
  // On an Intel Xeon guest (2 MiB L2) that took ResNet-50's layer4 3x3 at batch 16 from 33.8 to
  // 20.2 ms, its whole run 0.97x, Inception-v3's 0.95x (bench/RESULTS.md, "FP32 chunks in the L2").
  const CacheBudgets budgets = cache_budgets(sizes);
  const bool chunk_in_l2 = rows < n || f32_tile_weight_bytes_per_cycle(k) > sizes.l3_bytes_per_cycle;
  const size_t kWeightBudget = chunk_in_l2 ? budgets.f32_weight_chunk_few_rows : budgets.f32_weight_chunk;
  const size_t nr = size_t(k.nr);
  const size_t bytes_per_block = (kc * ks + 1) * sizeof(float) * nr;
  const size_t blocks = (n + nr - 1) / nr;
  const size_t chunk = even_chunk(blocks, std::max<size_t>(1, kWeightBudget / bytes_per_block));
  return chunk == blocks ? n : chunk * nr;
}

F32StreamAhead& f32_stream_ahead() {
  thread_local F32StreamAhead span;
  return span;
}

ScopedStreamAhead::ScopedStreamAhead(const float* next, size_t bytes, size_t tile, size_t tiles) {
  if (next == nullptr || bytes == 0 || tile >= tiles) return;
  // Whole lines, so no line is prefetched twice by neighbouring tiles.
  const size_t from = bytes * tile / tiles / 64 * 64, to = bytes * (tile + 1) / tiles / 64 * 64;
  f32_stream_ahead() = {reinterpret_cast<const char*>(next) + from, to - from};
}

ScopedStreamAhead::~ScopedStreamAhead() { f32_stream_ahead() = {}; }

bool f32_weights_stream(size_t packed_bytes, const CacheBudgets& budgets) {
  // Measured on an Intel Xeon (Sapphire Rapids class, 2 MiB L2), f32_conv_bench with every
  // tile prefetching against none: the layers whose weights exceed half the L2 ran 5-13%
  // faster (3x3 512->512 at 7x7 on 8x32: 0.88x; 1x1 2048->512: 0.87x), those within a quarter
  // of it up to 13% slower (the resnet8 and tinynet layers, 9-147 KiB, hot in the L2: a load
  // slot per line for nothing). With this rule, whole models at batch 1 (medians of three
  // alternations): resnet18_cifar 0.85x the time (its 4x4 layers read 9.4 MB of weights
  // each), resnext_mini 0.78x, alexnet_mini 0.91x, the models without such layers unchanged.
  return packed_bytes > budgets.f32_weight_chunk_few_rows;
}

namespace {

const F32GemmKernel& runnable(const F32GemmKernel& kernel) {
  if (!isa_supported(kernel.isa))
    throw std::invalid_argument(std::string(kernel.gemm_name) + " needs " + isa_name(kernel.isa) +
                                ", which this CPU does not support");
  return kernel;
}

int64_t positive(int64_t value, const char* what) {
  if (value <= 0)
    throw Unsupported(std::string("F32Gemm: ") + what + " must be positive, got " + std::to_string(value));
  return value;
}

struct GemmTask {
  const F32GemmKernel* kernel;
  F32GemmUkernel gemm;  // the kernel's plain or streaming form
  const float* a;
  const float* w;
  size_t block_stride;
  float* y;
  size_t k, n;
  F32MinMax clamp;
  const F32Epilogue* epilogue;
  const float* residual;  // nullptr, or added to y's tiles before the clamp (which then moves to the epilogue)
  size_t chunk = 0, row_tiles = 0;  // when the weights run chunk by chunk: columns per chunk, tiles over each
};

void run_gemm_tile(void* context, size_t row, size_t col, size_t rows, size_t cols) {
  const auto& t = *static_cast<const GemmTask*>(context);
  float* c = t.y + row * t.n + col;
  t.gemm(rows, cols, t.k, t.a + row * t.k, t.k, t.w + col / t.kernel->nr * t.block_stride, c, t.n, t.clamp);
  if (t.residual) t.epilogue->run_residual(rows, cols, c, t.n, t.residual + row * t.n + col);
  else t.epilogue->run(rows, cols, c, t.n);
}

// Chunk by chunk: tile `row / mr` of the chunk prefetches its share of the next chunk.
void run_gemm_tile_columns_first(void* context, size_t col, size_t row, size_t cols, size_t rows) {
  const auto& t = *static_cast<const GemmTask*>(context);
  const auto [next, bytes] = f32_next_chunk(t.w, t.block_stride, t.kernel->nr, t.n, t.chunk, col / t.chunk);
  const ScopedStreamAhead ahead(next, bytes, row / t.kernel->mr, t.row_tiles);
  run_gemm_tile(context, row, col, rows, cols);
}

}  // namespace

F32Gemm::F32Gemm(int64_t k, int64_t n, const float* b, bool trans_b, const float* bias, const Activation& act,
                 Isa isa, PackedCache* cache)
    : F32Gemm(k, n, b, trans_b, bias, act, choose_f32_gemm_kernel(isa, 0, n, k), cache) {}

F32Gemm::F32Gemm(int64_t k, int64_t n, const float* b, bool trans_b, const float* bias, const Activation& act,
                 const F32GemmKernel& kernel, PackedCache* cache)
    : k_(positive(k, "k")),
      n_(positive(n, "n")),
      act_(act),
      clamp_(f32_clamp_for(act)),
      epilogue_(act, kernel.isa),
      kernel_(&runnable(kernel)),
      name_(KernelId{kernel.gemm_name, kernel.isa == Isa::scalar} + (epilogue_.active() ? "+" + epilogue_.kernel_id() : KernelId{})),
      // F32PackedWeights' layout depends on nr alone, not on which kernel reads it.
      weights_(shared_packing<F32PackedWeights>(
          cache,
          PackKey("f32_gemm").add(kernel.nr).add(k).add(n).add(trans_b).add_array(b, size_t(k * n)).add_array(bias, size_t(n)),
          [&] {
            return F32PackedWeights(n, 1, k, kernel.nr, bias, [&](int64_t o, int64_t, int64_t kk) {
              return trans_b ? b[o * k + kk] : b[kk * n + o];
            });
          })),
      gemm_form_(f32_gemm_form(kernel, f32_weights_stream(weights_->bytes()))) {}

void F32Gemm::run(int64_t m, const float* a, float* y, pthreadpool_t pool, const float* residual) const {
  if (m <= 0) return;
  GemmTask task{kernel_, gemm_form_, a, weights_->data(), weights_->block_stride(), y, static_cast<size_t>(k_),
                static_cast<size_t>(n_), residual ? kNoClamp : clamp_, &epilogue_, residual};
  const size_t mr = kernel_->mr;
  const size_t threads = pool == nullptr ? 1 : pthreadpool_get_threads_count(pool);
  const size_t chunk =
      f32_gemm_column_chunk(*kernel_, static_cast<size_t>(k_), 1, static_cast<size_t>(n_), static_cast<size_t>(m));
  if (chunk < static_cast<size_t>(n_)) {
    // B does not fit in L2: walk one chunk of columns over all rows before the next.
    task.chunk = chunk;
    task.row_tiles = (static_cast<size_t>(m) + mr - 1) / mr;
    pthreadpool_parallelize_2d_tile_2d(pool, run_gemm_tile_columns_first, &task, static_cast<size_t>(n_),
                                       static_cast<size_t>(m), chunk, mr, 0);
    return;
  }
  // One task covers all n columns unless there are too few row tiles to keep the threads busy.
  // A single row keeps kF32GemvBlocks blocks per task: the tile walks them side by side, a few at a time.
  const size_t row_tiles = (static_cast<size_t>(m) + mr - 1) / mr;
  const size_t split = m == 1 ? kF32GemvBlocks * kernel_->nr : kernel_->nr;
  const size_t col_tile = threads > 1 && row_tiles < 4 * threads ? split : static_cast<size_t>(n_);
  pthreadpool_parallelize_2d_tile_2d(pool, run_gemm_tile, &task, static_cast<size_t>(m), static_cast<size_t>(n_),
                                     mr, col_tile, 0);
}

}  // namespace octet::kernels
