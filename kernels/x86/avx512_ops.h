#pragma once
// The AVX-512 (F/BW/DQ/VL) vector of 16 float32 lanes that the shared loop templates are
// written over (kernels/elementwise/eltwise_loops.inc, f32_act_softmax_loops.inc, f32_dwconv_loops.inc,
// pool_loops.inc: each template's header lists what it uses), and the byte vectors of the max
// pool. Included only by the avx512 level's files: everything has internal linkage, so
// each file compiles its own copy with its own flags. Tails use k-masked loads and stores: no
// element outside [0, n) is touched.
// GCC 12 reports the deliberately undefined source vectors inside the unmasked intrinsics
// (_mm512_undefined_*) as "(may be) used uninitialized" once inlined: a false positive, silenced
// for the AVX-512 files that include this header.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace octet::kernels::avx512 {
namespace {

struct Ops {
  using Vec = __m512;
  using Mask = __mmask16;
  static constexpr int kLanes = 16;
  static constexpr bool kBufferedTail = false;
  static constexpr int kRegisters = 32;  // zmm0-31
  // A k-masked store costs what a plain one does: the GEMM tiles mask every store.
  static constexpr bool kCheapMaskedStore = true;

  static Mask tail_mask(size_t n) { return static_cast<__mmask16>((1u << n) - 1u); }
  static Mask first_lanes(size_t n) { return n >= 16 ? __mmask16(0xFFFF) : tail_mask(n); }
  static Vec load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
  static Vec load_tail(const float* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
  static void store_tail(float* p, Vec v, Mask m) { _mm512_mask_storeu_ps(p, m, v); }
  static Vec set1(float v) { return _mm512_set1_ps(v); }
  static Vec broadcast(const float* p) { return _mm512_set1_ps(*p); }
  static Vec zero() { return _mm512_setzero_ps(); }
  static Vec add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
  static Vec sub(Vec a, Vec b) { return _mm512_sub_ps(a, b); }
  static Vec mul(Vec a, Vec b) { return _mm512_mul_ps(a, b); }
  static Vec div(Vec a, Vec b) { return _mm512_div_ps(a, b); }
  static Vec fmadd(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
  // Element I of each group of G (2 or 4) lanes in all the group's lanes (avx2_ops.h's, on zmm).
  template <int G, int I>
  static Vec dup_in_groups(Vec v) {
    static_assert((G == 2 || G == 4) && I >= 0 && I < G);
    if constexpr (G == 4) return _mm512_permute_ps(v, I * 0x55);
    else if constexpr (I == 0) return _mm512_moveldup_ps(v);
    else return _mm512_movehdup_ps(v);
  }
  static Vec min(Vec a, Vec b) { return _mm512_min_ps(a, b); }
  static Vec max(Vec a, Vec b) { return _mm512_max_ps(a, b); }
  static Vec round(Vec v) { return _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static Vec neg_abs(Vec v) { return _mm512_or_ps(v, _mm512_set1_ps(-0.0f)); }
  static Vec sqrt(Vec v) { return _mm512_sqrt_ps(v); }
  static Vec abs(Vec v) { return _mm512_abs_ps(v); }
  static Vec copy_sign(Vec magnitude, Vec sign) {
    const __m512i s = _mm512_set1_epi32(static_cast<int>(0x80000000u));
    return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(s, _mm512_castps_si512(magnitude), _mm512_castps_si512(sign), 0xAC));
  }
  static Vec select_less(Vec x, Vec t, Vec a, Vec b) { return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, t, _CMP_LT_OQ), b, a); }
  using Idx = __m512i;
  static Idx lane_offsets(size_t stride) {
    return _mm512_mullo_epi32(_mm512_set1_epi32(static_cast<int>(stride)),
                              _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
  }
  static Vec gather(const float* p, Idx idx, Mask m) { return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, idx, p, 4); }
  static Vec select_negative(Vec x, Vec a, Vec b) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ), b, a);
  }
  static Vec select_gt(Vec a, Vec b, Vec x, Vec y) { return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_GT_OQ), y, x); }
  // A positive normal x as m * 2^k, m in [sqrt(1/2), sqrt(2)): returns m and sets k (a float).
  // Subtracting sqrt(1/2)'s bits moves the exponent boundary there, so the arithmetic shift of
  // the difference is k and the mantissa keeps x's bits less k in the exponent field.
  static Vec split_exponent(Vec x, Vec& k) {
    const __m512i bits = _mm512_castps_si512(x);
    const __m512i e = _mm512_srai_epi32(_mm512_sub_epi32(bits, _mm512_set1_epi32(0x3f3504f3)), 23);
    k = _mm512_cvtepi32_ps(e);
    return _mm512_castsi512_ps(_mm512_sub_epi32(bits, _mm512_slli_epi32(e, 23)));
  }
  static Vec select_ge(Vec a, Vec b, Vec x, Vec y) { return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_GE_OQ), y, x); }
  // scalef: p * 2^n with one rounding, subnormal results included; a NaN z made p NaN.
  static Vec pow2_times(Vec p, Vec n, Vec) { return _mm512_scalef_ps(p, n); }
};

// A vector of 64 bytes of signedness E (int8_t or uint8_t), for the max pool; tails masked.
template <class E>
struct Bytes {
  using Vec = __m512i;
  using Mask = __mmask64;
  static constexpr size_t kLanes = 64;
  static constexpr bool kBufferedTail = false;
  static Mask tail_mask(size_t n) { return _bzhi_u64(~uint64_t{0}, static_cast<unsigned>(n)); }
  static Vec load(const uint8_t* p) { return _mm512_loadu_si512(p); }
  static void store(uint8_t* p, Vec v) { _mm512_storeu_si512(p, v); }
  static Vec load_tail(const uint8_t* p, Mask m) { return _mm512_maskz_loadu_epi8(m, p); }
  static void store_tail(uint8_t* p, Vec v, Mask m) { _mm512_mask_storeu_epi8(p, m, v); }
  static Vec lowest() { return _mm512_set1_epi8(static_cast<char>(std::numeric_limits<E>::lowest())); }
  static Vec max(Vec v, Vec best) {
    if constexpr (std::is_signed_v<E>) return _mm512_max_epi8(v, best);
    else return _mm512_max_epu8(v, best);
  }
};
template <class E>
using BytesNarrow = Bytes<E>;

// kLanes bytes widened to int32 lanes (VI), beside kLanes floats (VF): the lanes of the INT8
// loops that compute in int32 or float (kernels/elementwise/qsoftmax_loop.inc, resize_linear_loop.inc).
struct I32Lanes {
  using VI = __m512i;
  using VF = __m512;
  static constexpr size_t kLanes = 16;
  static __m128i load16(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }
  static VI load(const uint8_t* p) { return _mm512_cvtepu8_epi32(load16(p)); }
  static VI load(const int8_t* p) { return _mm512_cvtepi8_epi32(load16(p)); }
  static VF loadf(const float* p) { return _mm512_loadu_ps(p); }
  static VF loadf(const uint8_t* p) { return _mm512_cvtepi32_ps(load(p)); }
  static VF loadf(const int8_t* p) { return _mm512_cvtepi32_ps(load(p)); }
  static VI set1(int32_t v) { return _mm512_set1_epi32(v); }
  static VI max(VI a, VI b) { return _mm512_max_epi32(a, b); }
  static VI min(VI a, VI b) { return _mm512_min_epi32(a, b); }
  static VI add(VI a, VI b) { return _mm512_add_epi32(a, b); }
  static VI sub(VI a, VI b) { return _mm512_sub_epi32(a, b); }
  static VI bitand_(VI a, VI b) { return _mm512_and_si512(a, b); }
  static VF set1f(float v) { return _mm512_set1_ps(v); }
  static VF add(VF a, VF b) { return _mm512_add_ps(a, b); }
  static VF mul(VF a, VF b) { return _mm512_mul_ps(a, b); }
  static VF div(VF a, VF b) { return _mm512_div_ps(a, b); }
  static VF gather(const float* table, VI i) { return _mm512_i32gather_ps(i, table, 4); }
  // vcvtps2dq under the default rounding mode: half to even, 0x80000000 out of range (cvttss2si's).
  static VI round(VF v) { return _mm512_cvtps_epi32(v); }
  // vpmovdb truncates: the low byte of each lane.
  static void store_low_bytes(void* p, VI v) { _mm_storeu_si128(static_cast<__m128i*>(p), _mm512_cvtepi32_epi8(v)); }
  static void store(float* p, VF v) { _mm512_storeu_ps(p, v); }
  static void store(int32_t* p, VI v) { _mm512_storeu_si512(p, v); }
  // Truncated toward zero to int32, then narrowed with saturation (the unsigned narrowing
  // saturates as unsigned: negative lanes are raised to 0 first).
  static void store_truncated(uint8_t* p, VF v) {
    const __m512i i = _mm512_max_epi32(_mm512_cvttps_epi32(v), _mm512_setzero_si512());
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm512_cvtusepi32_epi8(i));
  }
  static void store_truncated(int8_t* p, VF v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm512_cvtsepi32_epi8(_mm512_cvttps_epi32(v)));
  }
  // kLanes values of T of which the first n (< kLanes) are read (a masked load), the rest zero.
  template <class T>
  static VI load_part(const T* p, size_t n) {
    const __m128i bytes = _mm_maskz_loadu_epi8(static_cast<__mmask16>((1u << n) - 1u), p);
    if constexpr (std::is_unsigned_v<T>) return _mm512_cvtepu8_epi32(bytes);
    else return _mm512_cvtepi8_epi32(bytes);
  }
  static VF to_float(VI v) { return _mm512_cvtepi32_ps(v); }
  // min(max(v, lo), hi): lo when v is NaN (vmaxps returns its second operand then).
  static VF clamp(VF v, VF lo, VF hi) { return _mm512_min_ps(_mm512_max_ps(v, lo), hi); }
  // 64 int32 already inside T's range -> 64 bytes in order with one store. The packs work per
  // 128-bit lane: lane j of the packed vector holds dwords v0[4j..4j+3], v1[4j..], v2[4j..],
  // v3[4j..]; the permute puts dword 4j + k at position 4k + j.
  template <class T>
  static void store_narrow4(T* p, VI v0, VI v1, VI v2, VI v3) {
    const __m512i w01 = _mm512_packs_epi32(v0, v1), w23 = _mm512_packs_epi32(v2, v3);
    __m512i bytes;
    if constexpr (std::is_unsigned_v<T>) bytes = _mm512_packus_epi16(w01, w23);
    else bytes = _mm512_packs_epi16(w01, w23);
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    _mm512_storeu_si512(p, _mm512_permutexvar_epi32(order, bytes));
  }
  // A vector divide costs several times the rest of a quantize loop (vdivps zmm: 5 to 10 cycles).
  static constexpr bool kFastDivide = false;
  static VF sub(VF a, VF b) { return _mm512_sub_ps(a, b); }
  // The second operand when either is NaN (vminps / vmaxps).
  static VF min(VF a, VF b) { return _mm512_min_ps(a, b); }
  static VF max(VF a, VF b) { return _mm512_max_ps(a, b); }
  static VF abs(VF v) { return _mm512_abs_ps(v); }
  static VI bits(VF v) { return _mm512_castps_si512(v); }
  static bool any_greater(VF a, VF b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ) != 0; }
};

}  // namespace
}  // namespace octet::kernels::avx512
