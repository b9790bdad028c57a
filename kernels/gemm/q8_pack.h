#pragma once
// What Q8Conv and Q8Gemm share: choosing a microkernel from kQ8GemmKernels, packing the
// weights into its layout (kernels/gemm/q8_gemm_list.h) and calling it on one tile.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernels/cache_budgets.h"
#include "kernels/packed_cache.h"
#include "kernels/gemm/q8_gemm_list.h"

namespace octet::kernels {

// The entry for activations of x_type that runs here under the cap `isa` with the fewest
// estimated cycles for an m x n x (ks * kc) problem, the vector rate of its level weighed in
// (a ymm VNNI tile may beat a zmm one on Zen 4), plus the cycles of the re-reads of packed
// weights and activations its tile makes (kernels/gemm/choose_tile.h); nullptr when none runs
// (use the ref kernel). tap_k: the k bytes of one tap (a conv's input channels; 0: k, one tap),
// which the AMX rows step through 64 at a time per tap.
const Q8GemmKernel* choose_q8_gemm_kernel(Isa isa, Q8 x_type, size_t m, size_t n, size_t k,
                                         const CacheSizes& sizes = cache_sizes(), size_t tap_k = 0);
// The same for a driver that needs one: throws Unsupported (kernels/fallback.h) naming `driver`
// when no row runs (a build without rows for this architecture).
const Q8GemmKernel& require_q8_gemm_kernel(const char* driver, Isa isa, Q8 x_type, size_t m, size_t n, size_t k,
                                           size_t tap_k = 0);

// 64-byte aligned bytes (zmm loads of packed weights never split a cache line).
class AlignedBytes {
 public:
  AlignedBytes() = default;
  explicit AlignedBytes(size_t size);
  uint8_t* data() { return data_.get(); }
  const uint8_t* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> data_;
  size_t size_ = 0;
};

// Packed weights of n output channels, ks taps of kc input channels each.
struct Q8PackedWeights {
  AlignedBytes bytes;
  size_t block_bytes = 0;  // one block of NR output channels
};

inline size_t packed_size(const Q8PackedWeights& w) { return w.bytes.size(); }

// The indirection of one row-major GEMM tile holds this many row pointers: at least the MR of
// every row of kernels/gemm/q8_gemm_list.inc.
inline constexpr size_t kQ8GemmMaxMr = 16;
static_assert([] {
  for (const Q8GemmKernel& k : kQ8GemmKernels)
    if (static_cast<size_t>(k.mr) > kQ8GemmMaxMr) return false;
  return true;
}(), "a row of kernels/gemm/q8_gemm_list.inc has more rows than a GEMM tile's indirection holds");

// The arguments of the tile at row group `first` (its first row) and column block `blk` of a
// row-major GEMM, A [rows][k] against `packed` (one tap): `row` is the caller's indirection of
// kQ8GemmMaxMr pointers, the rows past the last repeating it. The output (y, y_row_stride, lo,
// hi) is the caller's to set.
inline Q8IgemmArgs q8_gemm_tile_args(const uint8_t* a, size_t rows, size_t k, size_t n, size_t mr, size_t nr,
                                     const Q8PackedWeights& packed, size_t first, size_t blk,
                                     const uint8_t** row, int32_t y_zero_point) {
  for (size_t i = 0; i < mr; ++i) row[i] = a + std::min(first + i, rows - 1) * k;
  Q8IgemmArgs args;
  args.mr = std::min(mr, rows - first);
  args.nc = std::min(nr, n - blk * nr);
  args.kc = k;
  args.ks = 1;
  args.a = row;
  args.zero = nullptr;
  args.a_offset = 0;
  args.a_end = a + rows * k;
  args.w = packed.bytes.data() + blk * packed.block_bytes;
  args.y_zero_point = y_zero_point;
  return args;
}

// pack_q8_kr_blocks into `packed`, reusing its bytes when their size fits (no allocation then):
// weights known only at run time, packed every run.
void repack_q8_kr_blocks(const Q8GemmKernel& kernel, const Q8WeightsToPack& in, Q8PackedWeights& packed);

// One layer's weights as every packing function reads them: n output channels, ks taps of
// kc input channels each, w[(c * ks + t) * kc + k]; bias has n values or is nullptr;
// multiplier has 1 or n values; x_zero_point is the activation zero point in x_type.
struct Q8WeightsToPack {
  size_t n, ks, kc;
  const int8_t* w;
  const int32_t* bias;
  std::span<const float> multiplier;
  Q8 x_type;
  int32_t x_zero_point;
};

// The kernel's packing of weight(c, t, k) (the int8 weight of output channel c, tap t, input
// channel k), taken from `cache` when it holds the same recipe (kernels/packed_cache.h;
// nullptr: packed here, privately). `layout` names how weight(c, t, k) reads the w_count int8
// values at w, with whatever shape that reading depends on; with every other argument it
// makes the key.
template <typename WeightAt>
std::shared_ptr<const Q8PackedWeights> shared_q8_weights(PackedCache* cache, const std::string& layout,
                                                         const int8_t* w, size_t w_count,
                                                         const Q8GemmKernel& kernel, size_t n, size_t ks, size_t kc,
                                                         WeightAt weight, const int32_t* bias,
                                                         std::span<const float> multiplier, Q8 x_type,
                                                         int32_t x_zero_point) {
  const PackKey key = PackKey("q8_gemm")
                          .add(kernel.name)
                          .add(layout)
                          .add(int64_t(n))
                          .add(int64_t(ks))
                          .add(int64_t(kc))
                          .add_array(w, w_count)
                          .add_array(bias, n)
                          .add_array(multiplier.data(), multiplier.size())
                          .add(int64_t(x_type == Q8::s8))
                          .add(x_zero_point);
  return shared_packing<Q8PackedWeights>(cache, key, [&] {
    std::vector<int8_t> dense(n * ks * kc);
    for (size_t c = 0; c < n; ++c)
      for (size_t t = 0; t < ks; ++t)
        for (size_t k = 0; k < kc; ++k) dense[(c * ks + t) * kc + k] = weight(c, t, k);
    return kernel.pack(kernel, {n, ks, kc, dense.data(), bias, multiplier, x_type, x_zero_point});
  });
}

}  // namespace octet::kernels
