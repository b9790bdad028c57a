// INT8 narrow-group convolution microkernels, VEX AVX-VNNI (Intel client cores without AVX-512:
// Alder Lake and later): ymm vpdpbusd over the slot layout of kernels/conv/q8_gconv_list.h, as
// q8_gconv__avx256vnni.cc does, but with AVX2's 16 registers, no mask registers and AVX2's
// shuffles for the slot permutes. The loops are kernels/conv/q8_gconv_loops.inc, the store
// the IGEMM's. tests/simd/q8_gconv__avxvnni_emulated.cc compiles this file again with vpdpbusd
// emulated, so CPUs without AVX-VNNI test it too.
#include "kernels/ref/fp_contract_off.h"  // first: no multiply-add contracted into an FMA

#include <immintrin.h>

#include <cstring>

#include "kernels/conv/q8_gconv_list.h"

namespace octet::kernels::x86::avxvnni {
namespace {

#include "kernels/x86/q8_ymm_epilogue.inc"
#include "kernels/x86/q8_gconv_ymm_quads.inc"

struct Ops : YmmQuads<YmmEpilogue> {
  static constexpr int kRegisters = 16;
  static Vec madd(Vec acc, Vec x, Vec w) { return _mm256_dpbusd_avx_epi32(acc, x, w); }
  // n < 16 bytes, never reading past them (no masked load without AVX-512).
  template <bool kFlip>
  static Vec chunk_tail(const uint8_t* p, size_t n) {
    alignas(16) uint8_t bytes[16] = {};
    std::memcpy(bytes, p, n);
    const Vec x = _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(bytes)));
    return kFlip ? flip(x) : x;
  }
  // Channel n = g * G + m is slot 4m + g (G = 4), or the sum of slots 4m + 2g and its neighbour
  // (G = 8), of the block's slot vectors s (8 slots each). G = 4: interleaving the two vectors'
  // dwords within each 128-bit half puts slots 4m + g and 4m + g + 8 side by side, one vpermd a
  // half's channels in order. G = 8: vphaddd sums the neighbours, one vpermd orders each pair of
  // vectors, and the 128-bit halves of the two pairs are exchanged.
  template <int G>
  static void natural(const Vec* s, Vec* out) {
    if constexpr (G == 4) {
      const Vec order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
      out[0] = _mm256_permutevar8x32_epi32(_mm256_unpacklo_epi32(s[0], s[1]), order);
      out[1] = _mm256_permutevar8x32_epi32(_mm256_unpackhi_epi32(s[0], s[1]), order);
    } else {
      static_assert(G == 8);
      const Vec order = _mm256_setr_epi32(0, 4, 2, 6, 1, 5, 3, 7);
      // [group 0: m 0-3, group 1: m 0-3], then m 4-7.
      const Vec low = _mm256_permutevar8x32_epi32(_mm256_hadd_epi32(s[0], s[1]), order);
      const Vec high = _mm256_permutevar8x32_epi32(_mm256_hadd_epi32(s[2], s[3]), order);
      out[0] = _mm256_permute2x128_si256(low, high, 0x20);
      out[1] = _mm256_permute2x128_si256(low, high, 0x31);
    }
  }
};

#include "kernels/gemm/q8_igemm_store.inc"
#include "kernels/conv/q8_gconv_loops.inc"

}  // namespace

#undef OCTET_ROW_IF_avxvnni
#define OCTET_ROW_IF_avxvnni(...) __VA_ARGS__
#include "kernels/conv/q8_gconv_define.inc"

}  // namespace octet::kernels::x86::avxvnni
