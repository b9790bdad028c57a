// FP32 GEMM / IGEMM microkernels on zmm (AVX-512F). Layouts and contracts: kernels/f32_gemm_list.h.
//
// Each tile keeps MR x NR/16 zmm accumulators (12 for 12x16, 16 for 8x32): the FMA latency is
// 4 cycles at 2 FMA/cycle, so at least 8 independent chains are needed and 12+ hide the
// loads as well. Per k step: NR/16 weight loads, MR broadcasts of A, MR*NR/16 FMAs.
// GCC 12 reports _mm512_undefined_ps() inside its own max/min intrinsics as "may be used
// uninitialized" (a false positive of the header); it is silenced for this file only.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "kernels/f32_gemm_list.h"

namespace octet::kernels::avx512 {
namespace {

template <int MR, int NV>
struct Acc {
  __m512 v[MR][NV];
};

template <int MR, int NV>
__attribute__((always_inline)) inline void init_from_bias(Acc<MR, NV>& acc, const float* bias) {
#pragma GCC unroll 16
  for (int j = 0; j < NV; ++j) {
    const __m512 b = _mm512_loadu_ps(bias + 16 * j);
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
    __m512 wv[NV];
#pragma GCC unroll 16
    for (int j = 0; j < NV; ++j) wv[j] = _mm512_loadu_ps(wp + 16 * j);
    wp += 16 * NV;
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const __m512 av = _mm512_set1_ps(a[r][k]);
#pragma GCC unroll 16
      for (int j = 0; j < NV; ++j) acc.v[r][j] = _mm512_fmadd_ps(av, wv[j], acc.v[r][j]);
    }
  }
  w = wp;
}

// Clamp and store rows < mr, columns < nc (nc may exceed NR: only NR are stored).
template <int MR, int NV>
__attribute__((always_inline)) inline void clamp_and_store(const Acc<MR, NV>& acc, size_t mr, size_t nc,
                                                           float* c, size_t c_stride, const F32MinMax& clamp) {
  const __m512 vmin = _mm512_set1_ps(clamp.min);
  const __m512 vmax = _mm512_set1_ps(clamp.max);
  __mmask16 masks[NV];
#pragma GCC unroll 16
  for (int j = 0; j < NV; ++j) {
    const size_t left = nc > size_t{16} * j ? nc - size_t{16} * j : 0;
    masks[j] = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1u);
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    if (size_t(r) >= mr) break;
    float* cr = c + r * c_stride;
#pragma GCC unroll 16
    for (int j = 0; j < NV; ++j) {
      // Accumulator second: vmaxps/vminps return the second operand when either is NaN.
      const __m512 y = _mm512_min_ps(vmax, _mm512_max_ps(vmin, acc.v[r][j]));
      _mm512_mask_storeu_ps(cr + 16 * j, masks[j], y);
    }
  }
}

template <int MR, int NV>
void gemm(size_t mr, size_t nc, size_t kc, const float* a, size_t a_stride, const float* w, float* c,
          size_t c_stride, const F32MinMax& clamp) {
  constexpr size_t NR = 16 * NV;
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
  constexpr size_t NR = 16 * NV;
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

#define OCTET_F32_GEMM_TILE_avx512(mr, nr)                                                          \
  void f32_gemm_##mr##x##nr(size_t mr_, size_t nc, size_t kc, const float* a, size_t a_stride,      \
                            const float* w, float* c, size_t c_stride, const F32MinMax& clamp) {    \
    gemm<mr, nr / 16>(mr_, nc, kc, a, a_stride, w, c, c_stride, clamp);                             \
  }                                                                                                 \
  void f32_igemm_##mr##x##nr(size_t mr_, size_t nc, size_t kc, size_t ks, const float* const* a,    \
                             size_t a_offset, const float* zero, const float* w, float* c,          \
                             size_t c_stride, const F32MinMax& clamp) {                             \
    igemm<mr, nr / 16>(mr_, nc, kc, ks, a, a_offset, zero, w, c, c_stride, clamp);                  \
  }
#define OCTET_F32_GEMM_TILE(isa, mr, nr) OCTET_F32_GEMM_TILE_##isa(mr, nr)
#define OCTET_F32_GEMM_TILE_avx2(mr, nr)
#include "kernels/f32_gemm_list.inc"
#undef OCTET_F32_GEMM_TILE
#undef OCTET_F32_GEMM_TILE_avx2
#undef OCTET_F32_GEMM_TILE_avx512

}  // namespace octet::kernels::avx512
