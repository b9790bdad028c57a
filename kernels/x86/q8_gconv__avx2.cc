// INT8 narrow-group convolution microkernels, AVX2 without VNNI, exact: each chunk of 8 input
// channels widened to int16 in every 128-bit lane and multiplied by int16 weights with vpmaddwd
// (two products summed into int32, at most 2 * 255 * 128: no saturation, where vpmaddubsw's
// int16 sums would clip), over the slot layout of kernels/conv/q8_gconv_list.h at KR 2 (two
// chunks a block; 4 slot vectors a block at G = 4, 8 at G = 8). The loops are
// kernels/conv/q8_gconv_loops.inc, the store the IGEMM's.
#include "kernels/ref/fp_contract_off.h"  // first: no multiply-add contracted into an FMA

#include <immintrin.h>

#include <cstring>

#include "kernels/conv/q8_gconv_list.h"

namespace octet::kernels::x86::avx2 {
namespace {

#include "kernels/x86/q8_ymm_epilogue.inc"

struct Ops : YmmEpilogue {
  static constexpr int kKr = 2;
  static constexpr int kRegisters = 16;
  static Vec zero() { return _mm256_setzero_si256(); }
  static Vec madd(Vec acc, Vec x, Vec w) { return _mm256_add_epi32(acc, _mm256_madd_epi16(x, w)); }
  template <bool kFlip>
  static Vec widen(__m128i bytes) {
    if (kFlip) bytes = _mm_xor_si128(bytes, _mm_set1_epi8(static_cast<char>(0x80)));
    return _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(bytes));
  }
  template <bool kFlip>
  static Vec chunk(const uint8_t* p) {
    return widen<kFlip>(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
  template <bool kFlip>
  static Vec chunk_tail(const uint8_t* p, size_t n) {
    uint64_t bytes = 0;
    std::memcpy(&bytes, p, n);
    return widen<kFlip>(_mm_cvtsi64_si128(static_cast<long long>(bytes)));
  }
  // Per chunk c (slot vectors 2c, 2c + 1 at G = 4; 4c .. 4c + 3 at G = 8): vphaddd sums each
  // output's parts within each 128-bit lane, one vpermd puts the chunk's 8 channels in order.
  template <int G>
  static void natural(const Vec* s, Vec* out) {
    for (int c = 0; c < 2; ++c) {
      if constexpr (G == 4) {
        out[c] = _mm256_permutevar8x32_epi32(_mm256_hadd_epi32(s[2 * c], s[2 * c + 1]),
                                             _mm256_setr_epi32(0, 4, 2, 6, 1, 5, 3, 7));
      } else {
        static_assert(G == 8);
        const Vec sums = _mm256_hadd_epi32(_mm256_hadd_epi32(s[4 * c], s[4 * c + 1]),
                                           _mm256_hadd_epi32(s[4 * c + 2], s[4 * c + 3]));
        out[c] = _mm256_permutevar8x32_epi32(sums, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
      }
    }
  }
};

#include "kernels/gemm/q8_igemm_store.inc"
#include "kernels/conv/q8_gconv_loops.inc"

}  // namespace

#undef OCTET_ROW_IF_avx2
#define OCTET_ROW_IF_avx2(...) __VA_ARGS__
#include "kernels/conv/q8_gconv_define.inc"

}  // namespace octet::kernels::x86::avx2
