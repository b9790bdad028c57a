// INT8 narrow-group convolution microkernels, AVX-512 VNNI: zmm vpdpbusd over the slot layout of
// kernels/conv/q8_gconv_list.h (16 slots a vector: one block at G = 4, two vectors at G = 8). The
// loops are kernels/conv/q8_gconv_loops.inc, the store the IGEMM's.
#include "kernels/ref/fp_contract_off.h"  // first: no multiply-add contracted into an FMA
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // _mm512_undefined_ps() in GCC 12's headers

#include <immintrin.h>

#include <cstring>

#include "kernels/conv/q8_gconv_list.h"

namespace octet::kernels::x86::avx512vnni {
namespace {

#include "kernels/x86/q8_ymm_epilogue.inc"
#include "kernels/x86/q8_evex_epilogue.inc"

struct Ops : ZmmEpilogue {
  static constexpr int kKr = 4;
  static constexpr int kRegisters = 32;
  static Vec zero() { return _mm512_setzero_si512(); }
  static Vec madd(Vec acc, Vec x, Vec w) { return _mm512_dpbusd_epi32(acc, x, w); }
  static Vec flip(Vec x) { return _mm512_xor_si512(x, _mm512_set1_epi8(static_cast<char>(0x80))); }
  template <bool kFlip>
  static Vec chunk(const uint8_t* p) {
    const Vec x = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return kFlip ? flip(x) : x;
  }
  template <bool kFlip>
  static Vec bcast_quad(const uint8_t* p) {
    int32_t quad;
    std::memcpy(&quad, p, 4);
    const Vec x = _mm512_set1_epi32(quad);
    return kFlip ? flip(x) : x;
  }
  template <bool kFlip>
  static Vec chunk_tail(const uint8_t* p, size_t n) {
    const Vec x = _mm512_broadcast_i32x4(_mm_maskz_loadu_epi8(static_cast<__mmask16>((1u << n) - 1u), p));
    return kFlip ? flip(x) : x;
  }
  // Channel n = g * G + m is slot 4m + g (G = 4), or the sum of slots 4m + 2g and its neighbour (G = 8).
  template <int G>
  static void natural(const Vec* s, Vec* out) {
    if constexpr (G == 4) {
      out[0] = _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), s[0]);
    } else {
      static_assert(G == 8);
      const Vec t0 = _mm512_add_epi32(s[0], _mm512_shuffle_epi32(s[0], _MM_PERM_CDAB));
      const Vec t1 = _mm512_add_epi32(s[1], _mm512_shuffle_epi32(s[1], _MM_PERM_CDAB));
      out[0] = _mm512_permutex2var_epi32(
          t0, _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 2, 6, 10, 14, 18, 22, 26, 30), t1);
    }
  }
};

#include "kernels/gemm/q8_igemm_store.inc"
#include "kernels/conv/q8_gconv_loops.inc"

}  // namespace

#undef OCTET_ROW_IF_avx512vnni
#define OCTET_ROW_IF_avx512vnni(...) __VA_ARGS__
#include "kernels/conv/q8_gconv_define.inc"

}  // namespace octet::kernels::x86::avx512vnni
