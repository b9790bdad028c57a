#include "kernels/gemm/q8_pack.h"

#include <algorithm>
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
// pipes (MR * NV vpdpbusd / vpmaddwd, 2 per cycle) and the load ports (MR broadcasts + NV
// weight vectors, 2 per cycle)) + a per-tile epilogue. Rows / columns beyond m / n are
// computed anyway, so the padding of the last tile counts.
//
// The int16 entries (w_bytes 2) build each row's activation pair with a scalar load, a
// broadcast and a vpshufb, not one broadcast load: counted as 1.2 broadcasts, the weight that
// matches bench/check_dispatch.py on an AVX2-only Zen 1 (at equal padding 12x8 runs 1.16-1.36x
// slower than 6x16; 12x8 still wins at 24 output channels, where 6x16 pads a third).
double estimated_cycles(const Q8GemmKernel& e, size_t m, size_t n, size_t k) {
  const double tiles_m = static_cast<double>((m + e.mr - 1) / e.mr);
  const double tiles_n = static_cast<double>((n + e.nr - 1) / e.nr);
  const double nv = static_cast<double>(e.nr) / e.lanes;
  const double k_steps = static_cast<double>((k + e.kr - 1) / e.kr);
  const double row_load = e.w_bytes == 2 ? 1.2 : 1.0;
  const double step = std::max(e.mr * nv / 2.0, (e.mr * row_load + nv) / 2.0);
  const double epilogue = 4.0 * e.mr * nv + 20.0;
  return tiles_m * tiles_n * (k_steps * step + epilogue);
}

}  // namespace

const Q8GemmKernel* choose_q8_gemm_kernel(Isa isa, Q8 x_type, size_t m, size_t n, size_t k) {
  const Q8GemmKernel* best = nullptr;
  double best_cycles = 0.0;
  for (const Q8GemmKernel& e : kQ8GemmKernels) {
    if (e.x_type != x_type || e.isa > isa || !isa_supported(e.isa)) continue;
    if (best != nullptr && e.isa < best->isa) continue;
    const double cycles = estimated_cycles(e, m, n, k);
    if (best == nullptr || e.isa > best->isa || cycles < best_cycles) {
      best = &e;
      best_cycles = cycles;
    }
  }
  return best;
}

}  // namespace octet::kernels
