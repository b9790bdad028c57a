// INT8 IGEMM microkernels, AVX-512 VNNI: zmm vpdpbusd (u8 x s8, 4 products summed into each
// int32 lane, no saturation), weights packed c4 ([K/4][NR][4] per tap). The tile loop is
// kernels/q8_igemm_tile.inc; layout and zero-point fold in kernels/q8_gemm_list.h.
#include "kernels/ref/fp_contract_off.h"  // first: no multiply-add contracted into an FMA
// GCC 12 flags _mm512_undefined_ps() inside its own conversion intrinsics as "may be used
// uninitialized" in the shorter tiles (q8_igemm_tile.inc), a false positive of the header.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <immintrin.h>

#include <cstring>

#include "kernels/q8_gemm_list.h"

namespace octet::kernels::x86::avx512vnni {
namespace {

#include "kernels/q8_activation_quad.inc"

struct Ops {
  using Vec = __m512i;
  using VecF = __m512;
  static constexpr int kLanes = 16;
  static constexpr int kKr = 4;

  static Vec load(const void* p) { return _mm512_loadu_si512(p); }
  static VecF loadf(const float* p) { return _mm512_loadu_ps(p); }
  static VecF set1f(float v) { return _mm512_set1_ps(v); }
  static Vec set1i(int32_t v) { return _mm512_set1_epi32(v); }
  static Vec add(Vec a, Vec b) { return _mm512_add_epi32(a, b); }

  template <bool kFlip>
  static Vec broadcast_a(const uint8_t* p) {
    return _mm512_set1_epi32(static_cast<int32_t>(activation_quad<kFlip>(p)));
  }
  template <bool kFlip>
  static Vec broadcast_a_tail(const uint8_t* p, size_t n) {
    return _mm512_set1_epi32(static_cast<int32_t>(activation_quad_tail<kFlip>(p, n)));
  }
  static Vec madd(Vec acc, Vec a, Vec w) { return _mm512_dpbusd_epi32(acc, a, w); }

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
  // vpmovdb into a register, then a plain 16-byte store (masked only for a partial block),
  // rather than vpmovdb's masked memory form, which is slower on Zen 5 where the epilogue is
  // most of a tile (small K, e.g. a 16-channel expand conv).
  static void store(uint8_t* y, Vec q, size_t valid) {
    const __m128i bytes = _mm512_cvtepi32_epi8(q);
    if (valid == kLanes) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(y), bytes);
    } else {
      _mm_mask_storeu_epi8(y, static_cast<__mmask16>((1u << valid) - 1u), bytes);
    }
  }
};

#include "kernels/q8_igemm_tile.inc"

}  // namespace

#undef OCTET_ROW_IF_avx512vnni
#define OCTET_ROW_IF_avx512vnni(...) __VA_ARGS__
#include "kernels/q8_gemm_define.inc"

}  // namespace octet::kernels::x86::avx512vnni
