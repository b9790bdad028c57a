// INT8 IGEMM microkernels, AVX-512 VNNI: zmm vpdpbusd (u8 x s8, 4 products summed into each
// int32 lane, no saturation), weights packed c4 ([K/4][NR][4] per tap). The layout and the
// zero-point fold are described in kernels/q8_gemm_list.h.
#include <immintrin.h>

#include <cstring>

#include "kernels/q8_gemm_list.h"

namespace octet::kernels::x86::avx512vnni {
namespace {

inline int32_t load_u32(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// The last 1..3 bytes of a row, without reading past it (the bytes above are multiplied by
// zero weights, so their value does not matter).
inline int32_t load_tail(const uint8_t* p, size_t n) {
  uint32_t v = p[0];
  if (n > 1) v |= static_cast<uint32_t>(p[1]) << 8;
  if (n > 2) v |= static_cast<uint32_t>(p[2]) << 16;
  return static_cast<int32_t>(v);
}

// NV zmm registers of 16 output channels per row; MR * NV accumulators (>= 12 hides the
// 4-cycle vpdpbusd latency at 2 per cycle).
template <int MR, int NV, bool kFlipSign>
void igemm(const Q8IgemmArgs& g) {
  constexpr int NR = 16 * NV;
  const int32_t* bias = static_cast<const int32_t*>(g.w);
  const float* mult = reinterpret_cast<const float*>(bias + NR);
  const int8_t* w = reinterpret_cast<const int8_t*>(mult + NR);

  __m512i acc[MR][NV];
#pragma GCC unroll 4
  for (int j = 0; j < NV; ++j) {
    const __m512i b = _mm512_loadu_si512(bias + 16 * j);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) acc[i][j] = b;
  }

  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  const size_t kc4 = g.kc & ~size_t{3};
  const size_t tail = g.kc & 3;
  const uint8_t* const* a = g.a;
  for (size_t t = 0; t < g.ks; ++t) {
    const uint8_t* row[MR];
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) row[i] = a[i] != g.zero ? a[i] + g.a_offset : a[i];
    a += MR;
    size_t k = 0;
    for (; k < kc4; k += 4) {
      __m512i wv[NV];
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) wv[j] = _mm512_loadu_si512(w + 64 * j);
      w += 64 * NV;
#pragma GCC unroll 16
      for (int i = 0; i < MR; ++i) {
        __m512i av = _mm512_set1_epi32(load_u32(row[i] + k));
        if constexpr (kFlipSign) av = _mm512_xor_si512(av, flip);
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_dpbusd_epi32(acc[i][j], av, wv[j]);
      }
    }
    if (tail != 0) {
      __m512i wv[NV];
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) wv[j] = _mm512_loadu_si512(w + 64 * j);
      w += 64 * NV;
#pragma GCC unroll 16
      for (int i = 0; i < MR; ++i) {
        __m512i av = _mm512_set1_epi32(load_tail(row[i] + k, tail));
        if constexpr (kFlipSign) av = _mm512_xor_si512(av, flip);
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_dpbusd_epi32(acc[i][j], av, wv[j]);
      }
    }
  }

  // Requantize exactly like requantize_value(): float(acc) * multiplier (a plain multiply,
  // never fused), clamp in float to [qmin - zp, qmax - zp] (max first, then min), round half
  // to even (cvtps2dq under the default MXCSR), + zp. The result is inside the output type,
  // so truncating to 8 bits (vpmovdb) stores it exactly for u8 and s8 alike.
  const __m512 lo = _mm512_set1_ps(g.lo);
  const __m512 hi = _mm512_set1_ps(g.hi);
  const __m512i zp = _mm512_set1_epi32(g.y_zero_point);
  __m512 m[NV];
  __mmask16 mask[NV];
#pragma GCC unroll 4
  for (int j = 0; j < NV; ++j) {
    m[j] = _mm512_loadu_ps(mult + 16 * j);
    const size_t first = 16 * static_cast<size_t>(j);
    const size_t valid = g.nc > first ? (g.nc - first < 16 ? g.nc - first : 16) : 0;
    mask[j] = static_cast<__mmask16>((1u << valid) - 1u);
  }
  uint8_t* y = static_cast<uint8_t*>(g.y);
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    if (static_cast<size_t>(i) < g.mr) {
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) {
        __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(acc[i][j]), m[j]);
        f = _mm512_min_ps(_mm512_max_ps(f, lo), hi);
        const __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(f), zp);
        _mm512_mask_cvtepi32_storeu_epi8(y + 16 * j, mask[j], q);
      }
    }
    y += g.y_row_stride;
  }
}

}  // namespace

void qu8s8_igemm_12x16c4(const Q8IgemmArgs& g) { igemm<12, 1, false>(g); }
void qu8s8_igemm_6x32c4(const Q8IgemmArgs& g) { igemm<6, 2, false>(g); }
void qu8s8_igemm_4x64c4(const Q8IgemmArgs& g) { igemm<4, 4, false>(g); }
void qs8s8_igemm_12x16c4(const Q8IgemmArgs& g) { igemm<12, 1, true>(g); }
void qs8s8_igemm_6x32c4(const Q8IgemmArgs& g) { igemm<6, 2, true>(g); }
void qs8s8_igemm_4x64c4(const Q8IgemmArgs& g) { igemm<4, 4, true>(g); }

}  // namespace octet::kernels::x86::avx512vnni
