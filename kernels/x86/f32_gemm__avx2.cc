// FP32 GEMM / IGEMM microkernels on ymm (AVX2 + FMA). Layouts and contracts:
// kernels/f32_gemm_list.h.
//
// 6x16 keeps 12 ymm accumulators and 4x24 keeps 12 too: FMA latency 4 cycles x 2 FMA/cycle
// needs >= 8 independent chains, and 12 leave room to hide the loads; with 2-3 weight
// vectors and one broadcast that is 15-16 of the 16 ymm registers.
#include <immintrin.h>

#include "kernels/f32_gemm_list.h"

namespace octet::kernels::avx2 {
namespace {

template <int MR, int NV>
struct Acc {
  __m256 v[MR][NV];
};

template <int MR, int NV>
__attribute__((always_inline)) inline void init_from_bias(Acc<MR, NV>& acc, const float* bias) {
#pragma GCC unroll 16
  for (int j = 0; j < NV; ++j) {
    const __m256 b = _mm256_loadu_ps(bias + 8 * j);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) acc.v[r][j] = b;
  }
}

// acc += A[MR][kc] * W[kc][NR]; w advances past the kc rows it used.
template <int MR, int NV>
__attribute__((always_inline)) inline void accumulate(Acc<MR, NV>& acc, const float* const (&a)[MR],
                                                      size_t kc, const float*& w) {
  const float* wp = w;
  for (size_t k = 0; k < kc; ++k) {
    __m256 wv[NV];
#pragma GCC unroll 16
    for (int j = 0; j < NV; ++j) wv[j] = _mm256_loadu_ps(wp + 8 * j);
    wp += 8 * NV;
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const __m256 av = _mm256_broadcast_ss(a[r] + k);
#pragma GCC unroll 16
      for (int j = 0; j < NV; ++j) acc.v[r][j] = _mm256_fmadd_ps(av, wv[j], acc.v[r][j]);
    }
  }
  w = wp;
}

// Clamp and store rows < mr, columns < nc (nc may exceed NR: only NR are stored).
template <int MR, int NV>
__attribute__((always_inline)) inline void clamp_and_store(const Acc<MR, NV>& acc, size_t mr, size_t nc,
                                                           float* c, size_t c_stride, const F32MinMax& clamp) {
  const __m256 vmin = _mm256_set1_ps(clamp.min);
  const __m256 vmax = _mm256_set1_ps(clamp.max);
  const bool full = nc >= size_t{8} * NV;
  __m256i masks[NV];
  if (!full) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
#pragma GCC unroll 16
    for (int j = 0; j < NV; ++j) {
      const int left = nc > size_t{8} * j ? static_cast<int>(nc - size_t{8} * j) : 0;
      masks[j] = _mm256_cmpgt_epi32(_mm256_set1_epi32(left), lane);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    if (size_t(r) >= mr) break;
    float* cr = c + r * c_stride;
#pragma GCC unroll 16
    for (int j = 0; j < NV; ++j) {
      // Accumulator second: vmaxps/vminps return the second operand when either is NaN.
      const __m256 y = _mm256_min_ps(vmax, _mm256_max_ps(vmin, acc.v[r][j]));
      if (full) {
        _mm256_storeu_ps(cr + 8 * j, y);
      } else {
        _mm256_maskstore_ps(cr + 8 * j, masks[j], y);
      }
    }
  }
}

template <int MR, int NV>
void gemm(size_t mr, size_t nc, size_t kc, const float* a, size_t a_stride, const float* w, float* c,
          size_t c_stride, const F32MinMax& clamp) {
  constexpr size_t NR = 8 * NV;
  const float* rows[MR];
  rows[0] = a;
#pragma GCC unroll 16
  for (int r = 1; r < MR; ++r) rows[r] = size_t(r) < mr ? rows[r - 1] + a_stride : rows[r - 1];
  for (;;) {
    Acc<MR, NV> acc;
    init_from_bias(acc, w);
    w += NR;
    accumulate(acc, rows, kc, w);
    clamp_and_store(acc, mr, nc, c, c_stride, clamp);
    if (nc <= NR) return;
    nc -= NR;
    c += NR;
  }
}

template <int MR, int NV>
void igemm(size_t mr, size_t nc, size_t kc, size_t ks, const float* const* a, size_t a_offset,
           const float* zero, const float* w, float* c, size_t c_stride, const F32MinMax& clamp) {
  constexpr size_t NR = 8 * NV;
  for (;;) {
    Acc<MR, NV> acc;
    init_from_bias(acc, w);
    w += NR;
    const float* const* ap = a;
    for (size_t p = 0; p < ks; ++p) {
      const float* rows[MR];
      if (a_offset == 0) {  // image 0: the pointers are used as they are (cheaper for tiny kc)
#pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) rows[r] = ap[r];
      } else {
#pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) rows[r] = ap[r] == zero ? zero : ap[r] + a_offset;
      }
      ap += MR;
      accumulate(acc, rows, kc, w);
    }
    clamp_and_store(acc, mr, nc, c, c_stride, clamp);
    if (nc <= NR) return;
    nc -= NR;
    c += NR;
  }
}

}  // namespace

#define OCTET_F32_GEMM_TILE_avx2(mr, nr)                                                            \
  void f32_gemm_##mr##x##nr(size_t mr_, size_t nc, size_t kc, const float* a, size_t a_stride,      \
                            const float* w, float* c, size_t c_stride, const F32MinMax& clamp) {    \
    gemm<mr, nr / 8>(mr_, nc, kc, a, a_stride, w, c, c_stride, clamp);                              \
  }                                                                                                 \
  void f32_igemm_##mr##x##nr(size_t mr_, size_t nc, size_t kc, size_t ks, const float* const* a,    \
                             size_t a_offset, const float* zero, const float* w, float* c,          \
                             size_t c_stride, const F32MinMax& clamp) {                             \
    igemm<mr, nr / 8>(mr_, nc, kc, ks, a, a_offset, zero, w, c, c_stride, clamp);                   \
  }
#define OCTET_F32_GEMM_TILE(isa, mr, nr) OCTET_F32_GEMM_TILE_##isa(mr, nr)
#define OCTET_F32_GEMM_TILE_avx512(mr, nr)
#include "kernels/f32_gemm_list.inc"
#undef OCTET_F32_GEMM_TILE
#undef OCTET_F32_GEMM_TILE_avx2
#undef OCTET_F32_GEMM_TILE_avx512

}  // namespace octet::kernels::avx2
