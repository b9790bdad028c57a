#pragma once
// FP32 GEMM with a constant B (ONNX Gemm / MatMul against weights), on the microkernels of
// kernels/gemm/f32_gemm_list.h, plus what the FP32 drivers share: weight packing and the choice
// of microkernel.
#include <pthreadpool.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "kernels/cache_budgets.h"
#include "kernels/kernel_id.h"
#include "kernels/elementwise/eltwise.h"
#include "kernels/gemm/f32_gemm_list.h"
#include "kernels/isa.h"
#include "kernels/ref/activation.h"

namespace octet::kernels {

class PackedCache;  // kernels/packed_cache.h

// Weights in a microkernel's layout (f32_gemm_list.h): per block of nr output channels,
// bias[nr] then [ks][kc][nr], channels past n zero. 64-byte aligned.
class F32PackedWeights {
 public:
  F32PackedWeights() = default;
  // weight_at(o, p, k): weight of output channel o, tap p, reduction index k.
  template <class WeightAt>
  F32PackedWeights(int64_t n, int64_t ks, int64_t kc, int nr, const float* bias, WeightAt weight_at);

  const float* data() const { return data_.get(); }
  // Floats from one nr block to the next.
  size_t block_stride() const { return block_stride_; }
  size_t bytes() const { return bytes_; }

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::unique_ptr<float[], Free> data_;
  size_t block_stride_ = 0, bytes_ = 0;
};

inline size_t packed_size(const F32PackedWeights& w) { return w.bytes(); }

// The microkernel a driver uses for an m x n output with k products per output (for a conv,
// taps x input channels; m <= 0: not known yet, only n and k count): among the entries that run
// under `isa`, the cheapest in cycles of the padded work (ceil(m/MR)·MR · ceil(n/NR)·NR · k at
// the level's FMA rate) plus the re-reads of packed weights and activations its tile makes
// (kernels/gemm/choose_tile.h); within 5% the higher level, then the less padded work, then the
// larger tile. Throws Unsupported when no entry qualifies (isa == scalar): the caller runs the
// ref kernel then.
const F32GemmKernel& choose_f32_gemm_kernel(Isa isa, int64_t m, int64_t n, int64_t k,
                                            const CacheSizes& sizes = cache_sizes());
// The compute term of that cost: cycles of the padded m x n x k work at the tile's FMA rate
// (a one-ymm x86 tile counted 1.5x, the .cc says why). F32NarrowGroupConv weighs its own against it.
double f32_gemm_compute_cycles(const F32GemmKernel& kernel, int64_t m, int64_t n, int64_t k);

// How many output columns (a multiple of the tile's nr, or n) to run over all rows before
// moving on: n unless their packed weights (ks·kc + 1 floats per column) exceed the budget
// (cache_budgets of `sizes`, this CPU's by default: two L2s, or half an L2 when there are fewer
// rows than columns or when the tile reads its weights faster than the L3 delivers them; the
// .cc says why), else chunks of nearly equal width under it.
size_t f32_gemm_column_chunk(const F32GemmKernel& kernel, size_t kc, size_t ks, size_t n, size_t rows = SIZE_MAX,
                             const CacheSizes& sizes = cache_sizes());
// Bytes of packed weights the tile reads a cycle at its level's FMA rate (4 x FMA lanes / mr).
double f32_tile_weight_bytes_per_cycle(const F32GemmKernel& kernel);

// Whether a layer's packed weights come from beyond the L2 on every run, so that its tiles run
// their streaming form (F32GemmKernel::gemm_stream / igemm_stream, which prefetch them): more
// than half the L2 (the few-rows chunk budget), which a whole model's other layers evict
// between runs. The .cc has the measurements.
bool f32_weights_stream(size_t packed_bytes, const CacheBudgets& budgets = cache_budgets());
// For one tile on this thread: tile `tile` of the `tiles` that run over the current weights
// prefetches its share of the `bytes` of packed weights at `next` (the driver's next chunk;
// nullptr: none) through the streaming forms (F32StreamAhead, f32_gemm_list.h).
class ScopedStreamAhead {
 public:
  ScopedStreamAhead(const float* next, size_t bytes, size_t tile, size_t tiles);
  ~ScopedStreamAhead();
  ScopedStreamAhead(const ScopedStreamAhead&) = delete;
  ScopedStreamAhead& operator=(const ScopedStreamAhead&) = delete;
};

// The packed weights of chunk `chunk_index + 1` of `chunk` columns (n in all) and their bytes:
// nullptr and 0 past the last chunk.
inline std::pair<const float*, size_t> f32_next_chunk(const float* w, size_t block_stride, size_t nr, size_t n,
                                                      size_t chunk, size_t chunk_index) {
  const size_t col = (chunk_index + 1) * chunk;
  if (col >= n) return {nullptr, 0};
  const size_t blocks = (std::min(chunk, n - col) + nr - 1) / nr;
  return {w + col / nr * block_stride, blocks * block_stride * sizeof(float)};
}

inline F32GemmUkernel f32_gemm_form(const F32GemmKernel& k, bool stream) { return stream ? k.gemm_stream : k.gemm; }
inline F32IgemmUkernel f32_igemm_form(const F32GemmKernel& k, bool stream) { return stream ? k.igemm_stream : k.igemm; }

class F32Gemm {
 public:
  // b is [k][n] row-major, or [n][k] when trans_b; bias is [n] or nullptr. Packs here, or
  // takes the packing `cache` holds for the same recipe (nullptr: a private copy).
  // Chooses the best microkernel that runs here under the cap `isa` (isa_runs); throws
  // std::invalid_argument if none (isa == scalar): callers use the ref kernel then.
  F32Gemm(int64_t k, int64_t n, const float* b, bool trans_b, const float* bias, const Activation& act,
          Isa isa, PackedCache* cache = nullptr);
  // Uses exactly this list entry (tests / benchmarks); throws std::invalid_argument when the
  // CPU cannot run it.
  F32Gemm(int64_t k, int64_t n, const float* b, bool trans_b, const float* bias, const Activation& act,
          const F32GemmKernel& kernel, PackedCache* cache = nullptr);

  const std::string& kernel_name() const { return name_.name; }
  const KernelId& kernel_id() const { return name_; }
  const F32GemmKernel& kernel() const { return *kernel_; }

  // y[m][n] = act(a[m][k] · B + bias), or with `residual` ([m][n], row-major)
  // act(a · B + bias + residual), the sum added to each tile while it is in L1 (ONNX Gemm's
  // beta · C when C is not a row). No allocation.
  void run(int64_t m, const float* a, float* y, pthreadpool_t pool, const float* residual = nullptr) const;

 private:
  int64_t k_, n_;
  Activation act_;
  F32MinMax clamp_;
  F32Epilogue epilogue_;
  const F32GemmKernel* kernel_;
  KernelId name_;
  std::shared_ptr<const F32PackedWeights> weights_;  // shared by the Session's plans
  F32GemmUkernel gemm_form_;  // the kernel's plain or streaming form (f32_weights_stream)
};

template <class WeightAt>
F32PackedWeights::F32PackedWeights(int64_t n, int64_t ks, int64_t kc, int nr, const float* bias,
                                   WeightAt weight_at) {
  const int64_t blocks = (n + nr - 1) / nr;
  block_stride_ = static_cast<size_t>(nr + ks * kc * nr);
  bytes_ = (blocks * block_stride_ * sizeof(float) + 63) / 64 * 64;
  data_.reset(static_cast<float*>(std::aligned_alloc(64, bytes_)));
  if (!data_) throw std::bad_alloc();
  float* out = data_.get();
  for (int64_t block = 0; block < blocks; ++block) {
    const int64_t first = block * nr;
    for (int64_t j = 0; j < nr; ++j) *out++ = (first + j < n && bias != nullptr) ? bias[first + j] : 0.0f;
    for (int64_t p = 0; p < ks; ++p)
      for (int64_t k = 0; k < kc; ++k)
        for (int64_t j = 0; j < nr; ++j) *out++ = first + j < n ? weight_at(first + j, p, k) : 0.0f;
  }
}

}  // namespace octet::kernels
