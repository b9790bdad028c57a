// INT8 IGEMM microkernels, AVX-512BW without VNNI, exact: activations widened to int16 and
// multiplied by int16 weights with vpmaddwd (weights packed c2: [K/2][NR][2] int16 per tap).
// Why not vpmaddubsw: it adds its two u8 x s8 products into a SATURATING int16, and
// 255 * 127 * 2 = 64770 > 32767, so full-range weights would clip. vpmaddwd sums its two
// int16 products into int32 (at most 2 * 255 * 127 here: exact). On Zen 5 vpmaddwd has the
// multiply throughput of the vpmaddubsw + vpmaddwd pair (measured-anchors.md), so exactness
// costs only the zero-extension shuffle of each activation pair.
// The tile loop is kernels/q8_igemm_tile.inc; layout and zero-point fold in
// kernels/q8_gemm_list.h.
#include "kernels/ref/fp_contract_off.h"  // first: no multiply-add contracted into an FMA
// GCC 12 flags _mm512_undefined_ps() inside its own conversion intrinsics as "may be used
// uninitialized" in the shorter tiles (q8_igemm_tile.inc), a false positive of the header.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <immintrin.h>

#include <cstring>

#include "kernels/q8_gemm_list.h"

namespace octet::kernels::x86::avx512 {
namespace {

struct Ops {
  using Vec = __m512i;
  using VecF = __m512;
  static constexpr int kLanes = 16;
  static constexpr int kKr = 2;

  static Vec load(const void* p) { return _mm512_loadu_si512(p); }
  static VecF loadf(const float* p) { return _mm512_loadu_ps(p); }
  static VecF set1f(float v) { return _mm512_set1_ps(v); }
  static Vec set1i(int32_t v) { return _mm512_set1_epi32(v); }
  static Vec add(Vec a, Vec b) { return _mm512_add_epi32(a, b); }

  // Two activation bytes a0 a1 -> every int32 lane holds the int16 pair (a0, a1), zero-extended.
  static Vec widen_pair(uint16_t v) {
    const Vec zero_extend = _mm512_set1_epi32(static_cast<int32_t>(0x80018000u));
    return _mm512_shuffle_epi8(_mm512_set1_epi16(static_cast<int16_t>(v)), zero_extend);
  }
  template <bool kFlip>
  static Vec broadcast_a(const uint8_t* p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    if constexpr (kFlip) v ^= 0x8080u;
    return widen_pair(v);
  }
  template <bool kFlip>
  static Vec broadcast_a_tail(const uint8_t* p,
                              size_t) {  // one byte; the other meets a zero weight
    uint16_t v = p[0];
    if constexpr (kFlip) v ^= 0x80u;
    return widen_pair(v);
  }
  static Vec madd(Vec acc, Vec a, Vec w) { return _mm512_add_epi32(acc, _mm512_madd_epi16(a, w)); }

  static VecF to_float(Vec acc) { return _mm512_cvtepi32_ps(acc); }
  static VecF mulf(VecF a, VecF b) { return _mm512_mul_ps(a, b); }
  static VecF addf(VecF a, VecF b) { return _mm512_add_ps(a, b); }
  static VecF clampf(VecF f, VecF lo, VecF hi) { return _mm512_min_ps(_mm512_max_ps(f, lo), hi); }
  static void storef(float* y, VecF f, size_t valid) {
    _mm512_mask_storeu_ps(y, static_cast<__mmask16>((1u << valid) - 1u), f);
  }
  static Vec requantize(Vec acc, VecF m, VecF lo, VecF hi) {
    const VecF f = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), m);
    return _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(f, lo), hi));
  }
  static void store(uint8_t* y, Vec q, size_t valid) {
    _mm512_mask_cvtepi32_storeu_epi8(y, static_cast<__mmask16>((1u << valid) - 1u), q);
  }
};

#include "kernels/q8_igemm_tile.inc"

}  // namespace

#undef OCTET_ROW_IF_avx512
#define OCTET_ROW_IF_avx512(...) __VA_ARGS__
#include "kernels/q8_gemm_define.inc"

}  // namespace octet::kernels::x86::avx512
