// INT8 narrow-group convolution microkernels, EVEX VNNI at 256 bits: ymm vpdpbusd over the slot
// layout of kernels/conv/q8_gconv_list.h (8 slots a vector: two vectors a block at G = 4, four at
// G = 8), the permutes AVX512-VL's. The loops are kernels/conv/q8_gconv_loops.inc, the store
// the IGEMM's.
#include "kernels/ref/fp_contract_off.h"  // first: no multiply-add contracted into an FMA

#include <immintrin.h>

#include <cstring>

#include "kernels/conv/q8_gconv_list.h"

namespace octet::kernels::x86::avx256vnni {
namespace {

#include "kernels/x86/q8_ymm_epilogue.inc"
#include "kernels/x86/q8_evex_epilogue.inc"
#include "kernels/x86/q8_gconv_ymm_quads.inc"

struct Ops : YmmQuads<EvexYmmEpilogue> {
  static constexpr int kRegisters = 32;
  static Vec madd(Vec acc, Vec x, Vec w) { return _mm256_dpbusd_epi32(acc, x, w); }
  template <bool kFlip>
  static Vec chunk_tail(const uint8_t* p, size_t n) {
    const Vec x = _mm256_broadcastsi128_si256(_mm_maskz_loadu_epi8(static_cast<__mmask16>((1u << n) - 1u), p));
    return kFlip ? flip(x) : x;
  }
  static Vec pair_sum(Vec s) { return _mm256_add_epi32(s, _mm256_shuffle_epi32(s, 0xB1)); }
  // Channel n = g * G + m is slot 4m + g (G = 4), or the sum of slots 4m + 2g and its neighbour (G = 8).
  template <int G>
  static void natural(const Vec* s, Vec* out) {
    if constexpr (G == 4) {
      out[0] = _mm256_permutex2var_epi32(s[0], _mm256_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13), s[1]);
      out[1] = _mm256_permutex2var_epi32(s[0], _mm256_setr_epi32(2, 6, 10, 14, 3, 7, 11, 15), s[1]);
    } else {
      static_assert(G == 8);
      const Vec pick = _mm256_setr_epi32(0, 4, 8, 12, 2, 6, 10, 14);
      // [group 0: m 0-3, group 1: m 0-3], then m 4-7.
      const Vec low = _mm256_permutex2var_epi32(pair_sum(s[0]), pick, pair_sum(s[1]));
      const Vec high = _mm256_permutex2var_epi32(pair_sum(s[2]), pick, pair_sum(s[3]));
      out[0] = _mm256_permute2x128_si256(low, high, 0x20);
      out[1] = _mm256_permute2x128_si256(low, high, 0x31);
    }
  }
};

#include "kernels/gemm/q8_igemm_store.inc"
#include "kernels/conv/q8_gconv_loops.inc"

}  // namespace

#undef OCTET_ROW_IF_avx256vnni
#define OCTET_ROW_IF_avx256vnni(...) __VA_ARGS__
#include "kernels/conv/q8_gconv_define.inc"

}  // namespace octet::kernels::x86::avx256vnni
