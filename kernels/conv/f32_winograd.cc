#include "kernels/conv/f32_winograd.h"

#include <algorithm>
#include <new>
#include <stdexcept>
#include <thread>

#include "kernels/cache_budgets.h"
#include "kernels/fallback.h"
#include "kernels/packed_cache.h"

namespace octet::kernels {

namespace {

constexpr size_t kPositions = 16;  // 4x4 transformed positions xi = 4 i + j

// Scratch per block of tiles (V and M, cache_budgets): the L1D's, so that what the input
// transform writes is still close when the GEMMs read it (the ResNet8 layers on Zen 5: 48 KiB
// as fast as or faster than 128 and 256 KiB; the noise is ~10%), or the L2's where the
// transformed weights, which every block reads again, stream from beyond the L2 (an Intel
// Xeon, Sapphire Rapids class, 2 MiB L2, batch 1, the Winograd layers in the model:
// ResNet-50's 12.9-13.2 -> 10.1-10.6 ms, AlexNet's 5.2-5.4 -> 4.1-4.4, VGG-11's 69.3-69.6 ->
// 56.3-59.7; 1 MiB blocks between, 4 MiB within noise of 2).
size_t block_budget_floats(size_t transformed_bytes) {
  const CacheBudgets& b = cache_budgets();
  return (transformed_bytes > cache_sizes().l2 ? b.winograd_block_bytes_streamed : b.winograd_block_bytes) /
         sizeof(float);
}

std::string describe(const Conv2dShape& s) {
  return "kernel " + std::to_string(s.kernel_h) + "x" + std::to_string(s.kernel_w) + ", stride " +
         std::to_string(s.stride_h) + "x" + std::to_string(s.stride_w) + ", dilation " +
         std::to_string(s.dilation_h) + "x" + std::to_string(s.dilation_w) + ", groups " +
         std::to_string(s.groups) + ", " + std::to_string(s.in_h) + "x" + std::to_string(s.in_w) + "x" +
         std::to_string(s.in_c) + " -> " + std::to_string(s.out_h) + "x" + std::to_string(s.out_w) + "x" +
         std::to_string(s.out_c);
}

const Conv2dShape& checked_for_winograd(const Conv2dShape& s, const Activation& act) {
  if (!F32WinogradConv::supports(s, act))
    throw Unsupported("F32WinogradConv: unsupported conv (" + describe(s) +
                                "): needs a 3x3 kernel, stride 1, dilation 1, groups 1 and non-negative pads");
  return s;
}

const F32WinogradKernel& choose_transforms(Isa isa) {
  const F32WinogradKernel* best = nullptr;
  for (const F32WinogradKernel& k : f32_winograd_kernels())
    if (row_runs(k, isa) && (best == nullptr || isa_rank(k.isa) > isa_rank(best->isa))) best = &k;
  if (best == nullptr)
    throw Unsupported(std::string("no Winograd transform microkernel for ISA level ") + isa_name(isa) +
                                " on this CPU: use F32Conv or the ref kernel");
  return *best;
}

template <class Kernel>
const Kernel& runnable(const Kernel& kernel, const char* name) {
  if (!isa_supported(kernel.isa))
    throw std::invalid_argument(std::string(name) + " needs " + isa_name(kernel.isa) +
                                ", which this CPU does not support");
  return kernel;
}

size_t round_up(size_t n, size_t q) { return (n + q - 1) / q * q; }

// U = G g G^T for one 3x3 filter g (row-major), in double, G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1].
void transform_filter(const float* g, float* u /*[16]*/) {
  double gg[4][3];  // G g
  for (int c = 0; c < 3; ++c) {
    const double g0 = g[c], g1 = g[3 + c], g2 = g[6 + c];
    gg[0][c] = g0;
    gg[1][c] = 0.5 * (g0 + g1 + g2);
    gg[2][c] = 0.5 * (g0 - g1 + g2);
    gg[3][c] = g2;
  }
  for (int i = 0; i < 4; ++i) {
    const double a = gg[i][0], b = gg[i][1], c = gg[i][2];
    u[4 * i + 0] = static_cast<float>(a);
    u[4 * i + 1] = static_cast<float>(0.5 * (a + b + c));
    u[4 * i + 2] = static_cast<float>(0.5 * (a - b + c));
    u[4 * i + 3] = static_cast<float>(c);
  }
}

}  // namespace

struct F32WinogradConv::Block {
  size_t image, first_tile, tiles;
  size_t first_channel, channels;  // the output channels this block computes (all, or one thread's share)
};

bool F32WinogradConv::supports(const Conv2dShape& s, const Activation&) {
  const bool sizes = s.batch > 0 && s.in_h > 0 && s.in_w > 0 && s.in_c > 0 && s.out_h > 0 && s.out_w > 0 &&
                     s.out_c > 0;
  const bool geometry = s.kernel_h == 3 && s.kernel_w == 3 && s.stride_h == 1 && s.stride_w == 1 &&
                        s.dilation_h == 1 && s.dilation_w == 1 && s.groups == 1;
  // Bottom / right pads implied by the output size.
  const bool pads = s.pad_top >= 0 && s.pad_left >= 0 && s.out_h + 2 - s.in_h - s.pad_top >= 0 &&
                    s.out_w + 2 - s.in_w - s.pad_left >= 0;
  return sizes && geometry && pads && !s.has_depth();
}

bool F32WinogradConv::faster_than_direct(const Conv2dShape& s, double vector_rate, size_t model_weight_bytes,
                                         const CacheSizes& sizes) {
  if (!supports(s, Activation{}) || s.in_c < 8 || s.out_c < 8) return false;
  // Weight-bound layers. Past the cache budget the 16 transformed matrices (16/9 the direct
  // conv's weights) stream in once a run, and each of the 16 GEMMs uses a weight once per
  // tile: 2 FLOP per tile per 4 bytes. The GEMMs keep up with the stream only when
  //   tiles >= 2 * FLOP per cycle / bytes streamed per cycle.
  // A 256-bit level retires 32 FLOP a cycle (two FMA pipes of 8 lanes), `vector_rate` times
  // that on a full-rate zmm level. The stream comes from the L3 when the model's weights stay
  // in this core's share of it between runs, else from memory (kernels/cache_budgets.h, the
  // rates the GEMM tile choice shares): from memory 16 tiles on AVX2 and on Zen 4's half-rate
  // AVX-512, 32 on Zen 5; from the L3 a quarter of that (half on Intel's). Measured on ResNet-18's 3x3 layers
  // (bench/dispatch_results_avx2.md), weights from memory: Zen 5, 512 ch at 7x7, 16 tiles:
  // 1.3x slower than the direct conv, 32 tiles 1.2x faster; Zen 4 on AVX2, 256 ch at 8x8, 16
  // tiles: 1.6x faster; Zen 1, 512 ch at 4x4, 4 tiles: 1.6x slower. From the L3 (an Intel Xeon,
  // bench/RESULTS.md, "Winograd from the L3"): alexnet_mini's 192->384 and 384->256 at 7x7, 16
  // tiles, 1.36x faster in the model (its 13 MB of weights stay in the L3).
  constexpr double kFlopPerCycleYmm = 32.0;
  const CacheBudgets budgets = cache_budgets(sizes);
  const bool from_l3 = model_weight_bytes > 0 && model_weight_bytes <= budgets.model_weights_in_l3;
  const double min_tiles = 2.0 * kFlopPerCycleYmm * vector_rate / (from_l3 ? sizes.l3_bytes_per_cycle : kMemoryBytesPerCycle);
  const double transformed_bytes = 16.0 * s.in_c * s.out_c * sizeof(float);
  const int64_t tiles = int64_t(s.batch) * ((s.out_h + 1) / 2) * ((s.out_w + 1) / 2);
  return !(transformed_bytes > double(budgets.winograd_weight_limit) && double(tiles) < min_tiles);
}

F32WinogradConv::F32WinogradConv(const Conv2dShape& s, const float* weights, const float* bias,
                                 const Activation& act, Isa isa, PackedCache* cache)
    : F32WinogradConv(s, weights, bias, act, choose_transforms(isa),
                      choose_f32_gemm_kernel(isa,
                                             int64_t((checked_for_winograd(s, act).out_h + 1) / 2) * ((s.out_w + 1) / 2),
                                             s.out_c, s.in_c),
                      cache) {}

F32WinogradConv::F32WinogradConv(const Conv2dShape& s, const float* weights, const float* bias,
                                 const Activation& act, const F32WinogradKernel& transforms,
                                 const F32GemmKernel& gemm, PackedCache* cache)
    : s_(checked_for_winograd(s, act)),
      act_(act),
      clamp_(f32_clamp_for(act)),
      epilogue_(act, transforms.isa),
      transforms_(&runnable(transforms, transforms.name)),
      gemm_(&runnable(gemm, gemm.gemm_name)),
      name_(row_kernel(transforms) + (epilogue_.active() ? "+" + epilogue_.kernel_id() : KernelId{})),
      bias_(static_cast<size_t>(s.out_c), 0.0f),
      zero_(static_cast<size_t>(s.in_c), 0.0f) {
  const size_t in_c = s.in_c, out_c = s.out_c;
  weights_ = shared_packing<TransformedWeights>(
      cache,
      PackKey("f32_winograd_f2x2_3x3").add(gemm.nr).add(s.out_c).add(s.in_c).add_array(weights, out_c * in_c * 9),
      [&] {
        std::vector<float> u(kPositions * out_c * in_c);  // [xi][o][k]
        float filter[kPositions];
        for (size_t o = 0; o < out_c; ++o)
          for (size_t k = 0; k < in_c; ++k) {
            transform_filter(weights + (o * in_c + k) * 9, filter);
            for (size_t xi = 0; xi < kPositions; ++xi) u[(xi * out_c + o) * in_c + k] = filter[xi];
          }
        TransformedWeights t;
        t.positions.reserve(kPositions);
        for (size_t xi = 0; xi < kPositions; ++xi)
          t.positions.emplace_back(s.out_c, 1, s.in_c, gemm.nr, nullptr,
                                   [&](int64_t o, int64_t, int64_t k) { return u[(xi * out_c + o) * in_c + k]; });
        return t;
      });
  if (bias != nullptr) std::copy(bias, bias + out_c, bias_.begin());
  // Every block of tiles reads all 16 positions' weights.
  weights_stream_ = f32_weights_stream(packed_size(*weights_));
  gemm_form_ = f32_gemm_form(gemm, weights_stream_);

  tiles_h_ = (s.out_h + 1) / 2;
  tiles_w_ = (s.out_w + 1) / 2;
  const size_t tiles = tiles_h_ * tiles_w_;
  const size_t mr = gemm.mr;
  const size_t per_tile = kPositions * (in_c + out_c);
  block_tiles_ = std::max(mr, block_budget_floats(packed_size(*weights_)) / per_tile / mr * mr);
  if (block_tiles_ >= tiles) block_tiles_ = tiles;
  blocks_per_image_ = (tiles + block_tiles_ - 1) / block_tiles_;
  // A block's GEMMs walk one chunk of columns over all its row tiles before the next, so that
  // each position's weights come from beyond the L2 once per block, not once per row tile
  // (ResNet-18's 512->512 at 7x7: 16 tiles, two rows of 8x32 tiles, 1 MiB per position).
  column_chunk_ = f32_gemm_column_chunk(gemm, in_c, 1, out_c, block_tiles_);
  // Rows rounded to 16 floats so every slot and matrix starts on a cache line.
  slot_floats_ = round_up(kPositions * block_tiles_ * (in_c + out_c), 16);
}

void F32WinogradConv::bind(const float*) {
  if (scratch_) return;
  const size_t hardware = std::max(1u, std::thread::hardware_concurrency());
  // Blocks, or shares of the output channels (run()): at most one a block of nr columns.
  const size_t channel_shares = (size_t(s_.out_c) + gemm_->nr - 1) / gemm_->nr;
  slots_ = std::min(hardware, std::max(static_cast<size_t>(s_.batch) * blocks_per_image_, channel_shares));
  const size_t bytes = round_up(slots_ * slot_floats_ * sizeof(float), 64);
  scratch_.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
  if (!scratch_) throw std::bad_alloc();
}

void F32WinogradConv::run_block(const Block& b, size_t slot, const float* x, float* y, const float* residual,
                                size_t y_pixel_stride) const {
  const size_t in_c = s_.in_c, out_c = s_.out_c;
  float* v = scratch_.get() + slot * slot_floats_;
  float* m = v + kPositions * block_tiles_ * in_c;
  const size_t v_stride = block_tiles_ * in_c, m_stride = block_tiles_ * out_c;
  const float* image_x = x + b.image * size_t(s_.in_h) * s_.in_w * in_c;
  const size_t image_pixels = size_t(s_.out_h) * s_.out_w;
  float* image_y = y + b.image * image_pixels * y_pixel_stride;
  const size_t x_row_stride = size_t(s_.in_w) * in_c;

  for (size_t t = 0; t < b.tiles; ++t) {
    const size_t tile = b.first_tile + t;
    const int iy0 = int(tile / tiles_w_) * 2 - s_.pad_top, ix0 = int(tile % tiles_w_) * 2 - s_.pad_left;
    const float* pixels[kPositions];
    if (iy0 >= 0 && iy0 + 4 <= s_.in_h && ix0 >= 0 && ix0 + 4 <= s_.in_w) {
      const float* top_left = image_x + (size_t(iy0) * s_.in_w + ix0) * in_c;
      for (size_t r = 0; r < 4; ++r)
        for (size_t q = 0; q < 4; ++q) pixels[4 * r + q] = top_left + r * x_row_stride + q * in_c;
    } else {  // the tile touches padding
      for (int r = 0; r < 4; ++r)
        for (int q = 0; q < 4; ++q) {
          const int iy = iy0 + r, ix = ix0 + q;
          const bool inside = iy >= 0 && iy < s_.in_h && ix >= 0 && ix < s_.in_w;
          pixels[4 * r + q] = inside ? image_x + (size_t(iy) * s_.in_w + ix) * in_c : zero_.data();
        }
    }
    transforms_->input(in_c, pixels, v + t * in_c, v_stride);
  }

  const size_t mr = gemm_->mr, nr = gemm_->nr, row_tiles = (b.tiles + mr - 1) / mr;
  const size_t c_end = b.first_channel + b.channels;
  for (size_t xi = 0; xi < kPositions; ++xi) {
    const F32PackedWeights& w = weights_->positions[xi];
    for (size_t c = b.first_channel; c < c_end; c += column_chunk_) {
      const size_t nc = std::min(column_chunk_, c_end - c);
      // While the tiles compute from the chunk in the L2, they prefetch this position's next
      // one. Not the next position's first: VGG-11's 56x56 and 28x28 layers ran 6-11% slower
      // so on an Intel Xeon (docs/kernels.md).
      const float* next = nullptr;
      size_t next_bytes = 0;
      if (weights_stream_ && c + nc < c_end) {
        next = w.data() + (c + nc) / nr * w.block_stride();
        next_bytes = (std::min(column_chunk_, c_end - c - nc) + nr - 1) / nr * w.block_stride() * sizeof(float);
      }
      for (size_t r = 0; r < b.tiles; r += mr) {
        const ScopedStreamAhead ahead(next, next_bytes, r / mr, row_tiles);
        gemm_form_(std::min(mr, b.tiles - r), nc, in_c, v + xi * v_stride + r * in_c, in_c,
                   w.data() + c / nr * w.block_stride(), m + xi * m_stride + r * out_c + c, out_c, kNoClamp);
      }
    }
  }

  const size_t y_row_stride = size_t(s_.out_w) * y_pixel_stride;
  // The epilogue walks a tile row's pixels as one run when they are adjacent, else one by one.
  const size_t c0 = b.first_channel, nc = b.channels;
  const bool dense = y_pixel_stride == out_c && nc == out_c;
  for (size_t t = 0; t < b.tiles; ++t) {
    const size_t tile = b.first_tile + t;
    const size_t oy = tile / tiles_w_ * 2, ox = tile % tiles_w_ * 2;
    const size_t rows = std::min<size_t>(2, s_.out_h - oy), cols = std::min<size_t>(2, s_.out_w - ox);
    float* out = image_y + oy * y_row_stride + ox * y_pixel_stride + c0;
    const size_t runs = dense ? 1 : cols, run = dense ? cols * nc : nc;
    if (residual) {
      transforms_->output(nc, m + t * out_c + c0, m_stride, bias_.data() + c0, out, y_row_stride, y_pixel_stride, rows,
                          cols, kNoClamp);
      const float* r = residual + ((b.image * image_pixels + oy * s_.out_w + ox) * out_c) + c0;
      for (size_t q = 0; q < runs; ++q)
        epilogue_.run_residual(rows, run, out + q * y_pixel_stride, y_row_stride, r + q * out_c, size_t(s_.out_w) * out_c);
    } else {
      transforms_->output(nc, m + t * out_c + c0, m_stride, bias_.data() + c0, out, y_row_stride, y_pixel_stride, rows,
                          cols, clamp_);
      for (size_t q = 0; q < runs; ++q) epilogue_.run(rows, run, out + q * y_pixel_stride, y_row_stride);
    }
  }
}

namespace {

struct RunTask {
  const F32WinogradConv* conv;
  const float* x;
  float* y;
  const float* residual;
  size_t y_pixel_stride;
  size_t block_tiles, blocks_per_image, tiles_per_image, total_blocks, slots;
  size_t channel_blocks, nr;  // > 0: each slot runs every block over its share of channel_blocks blocks of nr
  size_t out_c;
};

}  // namespace

void F32WinogradConv::run_slot(void* context, size_t slot) {
  const auto& t = *static_cast<const RunTask*>(context);
  // Static split of the blocks (or of the output channels) over the slots (each slot owns one
  // scratch area).
  size_t first = slot * t.total_blocks / t.slots, last = (slot + 1) * t.total_blocks / t.slots;
  size_t first_channel = 0, channels = t.out_c;
  if (t.channel_blocks > 0) {
    first = 0;
    last = t.total_blocks;
    first_channel = slot * t.channel_blocks / t.slots * t.nr;
    channels = std::min(t.out_c, (slot + 1) * t.channel_blocks / t.slots * t.nr) - first_channel;
  }
  for (size_t i = first; i < last; ++i) {
    const size_t image = i / t.blocks_per_image, block = i % t.blocks_per_image;
    const size_t first_tile = block * t.block_tiles;
    const Block b{image, first_tile, std::min(t.block_tiles, t.tiles_per_image - first_tile), first_channel, channels};
    t.conv->run_block(b, slot, t.x, t.y, t.residual, t.y_pixel_stride);
  }
}

bool F32WinogradConv::shares_channels(size_t threads) const {
  // Too few images to give each thread its own: splitting an image's tiles makes every thread
  // stream all the transformed weights, which past half the L2 come from the L3 or memory
  // (ResNet-18's 512->512 at 7x7, 16.8 MB, one block of 16 tiles: 2 threads were no faster
  // than one). Sharing out the output channels instead, each thread streams its share of them
  // and transforms the block's inputs itself (a few percent of the GEMMs' work).
  const size_t channel_blocks = (size_t(s_.out_c) + gemm_->nr - 1) / gemm_->nr;
  return threads > 1 && size_t(s_.batch) < threads && weights_stream_ && channel_blocks >= threads;
}

void F32WinogradConv::run(const float* x, float* y, pthreadpool_t pool, const float* residual,
                          size_t y_pixel_stride) const {
  if (!scratch_) throw std::logic_error("F32WinogradConv::run: call bind() first (it allocates the scratch)");
  const size_t threads = pool == nullptr ? 1 : pthreadpool_get_threads_count(pool);
  const size_t tiles = tiles_h_ * tiles_w_, batch = s_.batch;
  const size_t channel_blocks = (size_t(s_.out_c) + gemm_->nr - 1) / gemm_->nr;
  const bool by_channels = shares_channels(threads);
  size_t block_tiles = block_tiles_;
  if (threads > 1 && batch < threads && !by_channels) {
    // Too few images to share out: smaller blocks (still whole GEMM tiles) so every thread gets work.
    const size_t per_image = (threads + batch - 1) / batch;
    block_tiles = std::min(block_tiles, std::max<size_t>(gemm_->mr, round_up((tiles + per_image - 1) / per_image, gemm_->mr)));
  }
  const size_t blocks_per_image = (tiles + block_tiles - 1) / block_tiles;
  const size_t total_blocks = batch * blocks_per_image;
  const size_t slots = std::min({slots_, threads, by_channels ? channel_blocks : total_blocks});
  RunTask task{this,
               x,
               y,
               residual,
               y_pixel_stride != 0 ? y_pixel_stride : size_t(s_.out_c),
               block_tiles,
               blocks_per_image,
               tiles,
               total_blocks,
               slots,
               by_channels && slots > 1 ? channel_blocks : 0,
               size_t(gemm_->nr),
               size_t(s_.out_c)};
  if (slots == 1) {
    run_slot(&task, 0);
    return;
  }
  pthreadpool_parallelize_1d(pool, run_slot, &task, slots, 0);
}

}  // namespace octet::kernels
