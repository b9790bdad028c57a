// INT8 narrow-group convolution microkernels, AVX-512 without VNNI, exact: each chunk of 8
// input channels widened to int16 in every 128-bit lane and multiplied by int16 weights with
// vpmaddwd (two products summed into int32: no saturation), over the slot layout of
// kernels/conv/q8_gconv_list.h at KR 2 (two chunks a block; 2 slot vectors a block at G = 4, 4 at
// G = 8). The loops are kernels/conv/q8_gconv_loops.inc, the store the IGEMM's.
#include "kernels/ref/fp_contract_off.h"  // first: no multiply-add contracted into an FMA
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // _mm512_undefined_ps() in GCC 12's headers

#include <immintrin.h>

#include <cstring>

#include "kernels/conv/q8_gconv_list.h"

namespace octet::kernels::x86::avx512 {
namespace {

#include "kernels/x86/q8_ymm_epilogue.inc"
#include "kernels/x86/q8_evex_epilogue.inc"

struct Ops : ZmmEpilogue {
  static constexpr int kKr = 2;
  static constexpr int kRegisters = 32;
  static Vec zero() { return _mm512_setzero_si512(); }
  static Vec madd(Vec acc, Vec x, Vec w) { return _mm512_add_epi32(acc, _mm512_madd_epi16(x, w)); }
  template <bool kFlip>
  static Vec widen(__m128i bytes) {
    if (kFlip) bytes = _mm_xor_si128(bytes, _mm_set1_epi8(static_cast<char>(0x80)));
    return _mm512_broadcast_i32x4(_mm_cvtepu8_epi16(bytes));
  }
  template <bool kFlip>
  static Vec chunk(const uint8_t* p) {
    return widen<kFlip>(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
  template <bool kFlip>
  static Vec chunk_tail(const uint8_t* p, size_t n) {
    return widen<kFlip>(_mm_maskz_loadu_epi8(static_cast<__mmask16>((1u << n) - 1u), p));
  }
  // G = 4: chunk c's slot vector c; output 4g + m of the chunk is slot 4m + 2g plus its
  // neighbour. G = 8: chunk c's vectors 2c, 2c + 1 (outputs 0-3, 4-7); output m is the sum of
  // slots 4m .. 4m + 3.
  template <int G>
  static void natural(const Vec* s, Vec* out) {
    if constexpr (G == 4) {
      const Vec t0 = _mm512_add_epi32(s[0], _mm512_shuffle_epi32(s[0], _MM_PERM_CDAB));
      const Vec t1 = _mm512_add_epi32(s[1], _mm512_shuffle_epi32(s[1], _MM_PERM_CDAB));
      out[0] = _mm512_permutex2var_epi32(
          t0, _mm512_setr_epi32(0, 4, 8, 12, 2, 6, 10, 14, 16, 20, 24, 28, 18, 22, 26, 30), t1);
    } else {
      static_assert(G == 8);
      const Vec pick = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 4, 8, 12, 16, 20, 24, 28);
      __m256i half[2];
      for (int c = 0; c < 2; ++c) {
        Vec a = _mm512_add_epi32(s[2 * c], _mm512_shuffle_epi32(s[2 * c], _MM_PERM_CDAB));
        Vec b = _mm512_add_epi32(s[2 * c + 1], _mm512_shuffle_epi32(s[2 * c + 1], _MM_PERM_CDAB));
        a = _mm512_add_epi32(a, _mm512_shuffle_epi32(a, _MM_PERM_BADC));
        b = _mm512_add_epi32(b, _mm512_shuffle_epi32(b, _MM_PERM_BADC));
        half[c] = _mm512_castsi512_si256(_mm512_permutex2var_epi32(a, pick, b));
      }
      out[0] = _mm512_inserti64x4(_mm512_castsi256_si512(half[0]), half[1], 1);
    }
  }
};

#include "kernels/gemm/q8_igemm_store.inc"
#include "kernels/conv/q8_gconv_loops.inc"

}  // namespace

#undef OCTET_ROW_IF_avx512
#define OCTET_ROW_IF_avx512(...) __VA_ARGS__
#include "kernels/conv/q8_gconv_define.inc"

}  // namespace octet::kernels::x86::avx512
