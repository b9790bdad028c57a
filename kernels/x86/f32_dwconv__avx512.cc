// FP32 depthwise convolution, 16 channels per zmm (kernels/dwconv_list.h has the contract).
// The loops are kernels/x86/f32_dwconv_loops.inc; the channel tail uses k-masked loads/stores.
// GCC 12 flags _mm512_undefined_ps() inside its own min/max intrinsics as "may be used
// uninitialized", a false positive of the header.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <type_traits>

#include "kernels/dwconv_list.h"

namespace octet::kernels::avx512 {
namespace {

struct Ops {
  using Vec = __m512;
  using Mask = __mmask16;
  static constexpr int kLanes = 16;

  static Mask tail_mask(size_t n) { return static_cast<__mmask16>((1u << n) - 1u); }
  static Vec load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
  static Vec load_tail(const float* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
  static void store_tail(float* p, Vec v, Mask m) { _mm512_mask_storeu_ps(p, m, v); }
  static Vec set1(float v) { return _mm512_set1_ps(v); }
  static Vec zero() { return _mm512_setzero_ps(); }
  static Vec add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
  static Vec fmadd(Vec a, Vec b, Vec acc) { return _mm512_fmadd_ps(a, b, acc); }
  static Vec min(Vec a, Vec b) { return _mm512_min_ps(a, b); }
  static Vec max(Vec a, Vec b) { return _mm512_max_ps(a, b); }
};

}  // namespace

#define OCTET_F32_DWCONV_ROW f32_dwconv_c16_row
#define OCTET_F32_DWCONV_INDIRECT f32_dwconv_c16_indirect
#include "kernels/x86/f32_dwconv_loops.inc"
#undef OCTET_F32_DWCONV_ROW
#undef OCTET_F32_DWCONV_INDIRECT

}  // namespace octet::kernels::avx512
