// FP32 depthwise convolution, 8 channels per ymm (kernels/dwconv_list.h has the contract).
// The loops are kernels/x86/f32_dwconv_loops.inc; the channel tail uses vmaskmovps.
#include <immintrin.h>

#include <type_traits>

#include "kernels/dwconv_list.h"

namespace octet::kernels::avx2 {
namespace {

struct Ops {
  using Vec = __m256;
  using Mask = __m256i;
  static constexpr int kLanes = 8;

  static Mask tail_mask(size_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static Vec load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
  static Vec load_tail(const float* p, Mask m) { return _mm256_maskload_ps(p, m); }
  static void store_tail(float* p, Vec v, Mask m) { _mm256_maskstore_ps(p, m, v); }
  static Vec set1(float v) { return _mm256_set1_ps(v); }
  static Vec zero() { return _mm256_setzero_ps(); }
  static Vec add(Vec a, Vec b) { return _mm256_add_ps(a, b); }
  static Vec fmadd(Vec a, Vec b, Vec acc) { return _mm256_fmadd_ps(a, b, acc); }
  static Vec min(Vec a, Vec b) { return _mm256_min_ps(a, b); }
  static Vec max(Vec a, Vec b) { return _mm256_max_ps(a, b); }
};

}  // namespace

#define OCTET_F32_DWCONV_ROW f32_dwconv_c8_row
#define OCTET_F32_DWCONV_INDIRECT f32_dwconv_c8_indirect
#include "kernels/x86/f32_dwconv_loops.inc"
#undef OCTET_F32_DWCONV_ROW
#undef OCTET_F32_DWCONV_INDIRECT

}  // namespace octet::kernels::avx2
