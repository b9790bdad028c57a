#pragma once
// The AVX2 + FMA vector of 8 float32 lanes that the shared loop templates are written over
// (kernels/elementwise/eltwise_loops.inc, f32_act_softmax_loops.inc, f32_dwconv_loops.inc, pool_loops.inc:
// each template's header lists what it uses), and the byte vectors of the max pool. Included
// only by the avx2 level's files: everything has internal linkage, so each file compiles
// its own copy with its own flags. Float tails use vmaskmovps (its stores are slow on AMD,
// hence only for tails): no element outside [0, n) is touched.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace octet::kernels::avx2 {
namespace {

struct Ops {
  using Vec = __m256;
  using Mask = __m256i;
  static constexpr int kLanes = 8;
  static constexpr bool kBufferedTail = false;
  static constexpr int kRegisters = 16;  // ymm0-15
  // vmaskmovps is slow on AMD: the GEMM tiles keep masked stores to the tail.
  static constexpr bool kCheapMaskedStore = false;

  static Mask tail_mask(size_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static Mask first_lanes(size_t n) { return tail_mask(n >= 8 ? 8 : n); }
  static Vec load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
  static Vec load_tail(const float* p, Mask m) { return _mm256_maskload_ps(p, m); }
  static void store_tail(float* p, Vec v, Mask m) { _mm256_maskstore_ps(p, m, v); }
  static Vec set1(float v) { return _mm256_set1_ps(v); }
  static Vec broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static Vec zero() { return _mm256_setzero_ps(); }
  static Vec add(Vec a, Vec b) { return _mm256_add_ps(a, b); }
  static Vec sub(Vec a, Vec b) { return _mm256_sub_ps(a, b); }
  static Vec mul(Vec a, Vec b) { return _mm256_mul_ps(a, b); }
  static Vec div(Vec a, Vec b) { return _mm256_div_ps(a, b); }
  static Vec fmadd(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
  // Element I of each group of G (2 or 4) lanes in all the group's lanes: one vpermilps /
  // vmovsldup / vmovshdup (a shuffle within 128-bit lanes).
  template <int G, int I>
  static Vec dup_in_groups(Vec v) {
    static_assert((G == 2 || G == 4) && I >= 0 && I < G);
    if constexpr (G == 4) return _mm256_permute_ps(v, I * 0x55);
    else if constexpr (I == 0) return _mm256_moveldup_ps(v);
    else return _mm256_movehdup_ps(v);
  }
  static Vec min(Vec a, Vec b) { return _mm256_min_ps(a, b); }
  static Vec max(Vec a, Vec b) { return _mm256_max_ps(a, b); }
  static Vec round(Vec v) { return _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static Vec neg_abs(Vec v) { return _mm256_or_ps(v, _mm256_set1_ps(-0.0f)); }
  static Vec sqrt(Vec v) { return _mm256_sqrt_ps(v); }
  static Vec abs(Vec v) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }
  static Vec copy_sign(Vec magnitude, Vec sign) {
    const __m256 s = _mm256_set1_ps(-0.0f);
    return _mm256_or_ps(_mm256_andnot_ps(s, magnitude), _mm256_and_ps(s, sign));
  }
  static Vec select_less(Vec x, Vec t, Vec a, Vec b) { return _mm256_blendv_ps(b, a, _mm256_cmp_ps(x, t, _CMP_LT_OQ)); }
  using Idx = __m256i;
  static Idx lane_offsets(size_t stride) {
    return _mm256_mullo_epi32(_mm256_set1_epi32(static_cast<int>(stride)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static Vec gather(const float* p, Idx idx, Mask m) {
    return _mm256_mask_i32gather_ps(_mm256_setzero_ps(), p, idx, _mm256_castsi256_ps(m), 4);
  }
  static Vec select_negative(Vec x, Vec a, Vec b) {
    return _mm256_blendv_ps(b, a, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ));
  }
  static Vec select_gt(Vec a, Vec b, Vec x, Vec y) { return _mm256_blendv_ps(y, x, _mm256_cmp_ps(a, b, _CMP_GT_OQ)); }
  // A positive normal x as m * 2^k, m in [sqrt(1/2), sqrt(2)): returns m and sets k (a float).
  // Subtracting sqrt(1/2)'s bits moves the exponent boundary there, so the arithmetic shift of
  // the difference is k and the mantissa keeps x's bits less k in the exponent field.
  static Vec split_exponent(Vec x, Vec& k) {
    const __m256i bits = _mm256_castps_si256(x);
    const __m256i e = _mm256_srai_epi32(_mm256_sub_epi32(bits, _mm256_set1_epi32(0x3f3504f3)), 23);
    k = _mm256_cvtepi32_ps(e);
    return _mm256_castsi256_ps(_mm256_sub_epi32(bits, _mm256_slli_epi32(e, 23)));
  }
  static Vec select_ge(Vec a, Vec b, Vec x, Vec y) { return _mm256_blendv_ps(y, x, _mm256_cmp_ps(a, b, _CMP_GE_OQ)); }
  // Without scalef, 2^n is applied as two exact power-of-two factors 2^(n/2) and 2^(n - n/2),
  // each a normal float for n >= -150, so only the last multiply rounds (also into subnormals).
  // When every lane's n >= -125, p * 2^n is a normal float (p = e^r lies in [0.70, 1.42]) and
  // adding n to p's exponent field gives the same bits with two instructions instead of eight;
  // only vectors holding a result below FLT_MIN (x < -86.6 in a sigmoid) take the two factors.
  // NaN converts to INT_MIN; the blend then returns the NaN z instead.
  static Vec pow2_times(Vec p, Vec n, Vec z) {
    const __m256i ni = _mm256_cvtps_epi32(n);
    __m256 e;
    if (_mm256_movemask_ps(_mm256_cmp_ps(n, _mm256_set1_ps(-125.0f), _CMP_LT_OQ)) == 0) {
      e = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p), _mm256_slli_epi32(ni, 23)));
    } else {
      const __m256i n1 = _mm256_srai_epi32(ni, 1);
      const __m256i n2 = _mm256_sub_epi32(ni, n1);
      const __m256 f1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, _mm256_set1_epi32(127)), 23));
      const __m256 f2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, _mm256_set1_epi32(127)), 23));
      e = _mm256_mul_ps(_mm256_mul_ps(p, f1), f2);
    }
    return _mm256_blendv_ps(e, z, _mm256_cmp_ps(z, z, _CMP_UNORD_Q));
  }
};

// Vectors of 32 and 16 bytes of signedness E (int8_t or uint8_t), for the max pool. AVX2 has
// no byte masks: a Mask is a byte count and a partial vector goes through a stack buffer.
template <class E, class V, size_t N>
struct BytesOf {
  using Vec = V;
  using Mask = size_t;
  static constexpr size_t kLanes = N;
  static constexpr bool kBufferedTail = true;
  static Mask tail_mask(size_t n) { return n; }
  static Vec load(const uint8_t* p) {
    if constexpr (N == 32) return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    else return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  }
  static void store(uint8_t* p, Vec v) {
    if constexpr (N == 32) _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
    else _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v);
  }
  static Vec load_tail(const uint8_t* p, Mask n) {
    uint8_t lanes[N] = {};
    std::memcpy(lanes, p, n);
    return load(lanes);
  }
  static void store_tail(uint8_t* p, Vec v, Mask n) {
    uint8_t lanes[N];
    store(lanes, v);
    std::memcpy(p, lanes, n);
  }
  static Vec lowest() {
    const char low = static_cast<char>(std::numeric_limits<E>::lowest());
    if constexpr (N == 32) return _mm256_set1_epi8(low);
    else return _mm_set1_epi8(low);
  }
  static Vec max(Vec v, Vec best) {
    if constexpr (N == 32 && std::is_signed_v<E>) return _mm256_max_epi8(v, best);
    else if constexpr (N == 32) return _mm256_max_epu8(v, best);
    else if constexpr (std::is_signed_v<E>) return _mm_max_epi8(v, best);
    else return _mm_max_epu8(v, best);
  }
};
// GCC drops __m256i's alignment attribute from a template argument and says so; the members
// hold whole vectors, whose type keeps it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"
template <class E>
using Bytes = BytesOf<E, __m256i, 32>;
template <class E>
using BytesNarrow = BytesOf<E, __m128i, 16>;
#pragma GCC diagnostic pop

// kLanes bytes widened to int32 lanes (VI), beside kLanes floats (VF): the lanes of the INT8
// loops that compute in int32 or float (kernels/elementwise/qsoftmax_loop.inc, resize_linear_loop.inc).
struct I32Lanes {
  using VI = __m256i;
  using VF = __m256;
  static constexpr size_t kLanes = 8;
  static __m128i load8(const void* p) { return _mm_loadl_epi64(static_cast<const __m128i*>(p)); }
  static VI load(const uint8_t* p) { return _mm256_cvtepu8_epi32(load8(p)); }
  static VI load(const int8_t* p) { return _mm256_cvtepi8_epi32(load8(p)); }
  static VF loadf(const float* p) { return _mm256_loadu_ps(p); }
  static VF loadf(const uint8_t* p) { return _mm256_cvtepi32_ps(load(p)); }
  static VF loadf(const int8_t* p) { return _mm256_cvtepi32_ps(load(p)); }
  static VI set1(int32_t v) { return _mm256_set1_epi32(v); }
  static VI max(VI a, VI b) { return _mm256_max_epi32(a, b); }
  static VI min(VI a, VI b) { return _mm256_min_epi32(a, b); }
  static VI add(VI a, VI b) { return _mm256_add_epi32(a, b); }
  static VI sub(VI a, VI b) { return _mm256_sub_epi32(a, b); }
  static VI bitand_(VI a, VI b) { return _mm256_and_si256(a, b); }
  static VF set1f(float v) { return _mm256_set1_ps(v); }
  static VF add(VF a, VF b) { return _mm256_add_ps(a, b); }
  static VF mul(VF a, VF b) { return _mm256_mul_ps(a, b); }
  static VF div(VF a, VF b) { return _mm256_div_ps(a, b); }
  static VF gather(const float* table, VI i) { return _mm256_i32gather_ps(table, i, 4); }
  // vcvtps2dq under the default rounding mode: half to even, 0x80000000 out of range (cvttss2si's).
  static VI round(VF v) { return _mm256_cvtps_epi32(v); }
  // The low byte of each lane: masked, then packed without saturation reaching it.
  static void store_low_bytes(void* p, VI v) {
    const VI b = _mm256_and_si256(v, _mm256_set1_epi32(0xFF));
    const __m128i w = _mm_packus_epi32(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
    _mm_storel_epi64(static_cast<__m128i*>(p), _mm_packus_epi16(w, w));
  }
  static void store(float* p, VF v) { _mm256_storeu_ps(p, v); }
  static void store(int32_t* p, VI v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
  // Truncated toward zero to int32, then narrowed with saturation (16-bit, then 8-bit).
  static __m128i truncated_words(VF v) {
    const __m256i i = _mm256_cvttps_epi32(v);
    return _mm_packs_epi32(_mm256_castsi256_si128(i), _mm256_extracti128_si256(i, 1));
  }
  static void store_truncated(uint8_t* p, VF v) {
    const __m128i w = truncated_words(v);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_packus_epi16(w, w));
  }
  static void store_truncated(int8_t* p, VF v) {
    const __m128i w = truncated_words(v);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_packs_epi16(w, w));
  }
  // kLanes values of T of which the first n (< kLanes) are read, the rest zero.
  template <class T>
  static VI load_part(const T* p, size_t n) {
    T buf[kLanes] = {};
    std::memcpy(buf, p, n);
    return load(buf);
  }
  static VF to_float(VI v) { return _mm256_cvtepi32_ps(v); }
  // min(max(v, lo), hi): lo when v is NaN (vmaxps returns its second operand then).
  static VF clamp(VF v, VF lo, VF hi) { return _mm256_min_ps(_mm256_max_ps(v, lo), hi); }
  // 4 * kLanes int32 already inside T's range -> as many bytes, in order (the saturating packs
  // cannot saturate; vpackssdw works per 128-bit half, the permute puts the halves in order).
  template <class T>
  static void store_narrow4(T* p, VI v0, VI v1, VI v2, VI v3) {
    auto narrow16 = [](VI a, VI b) {
      const __m256i w = _mm256_permute4x64_epi64(_mm256_packs_epi32(a, b), 0xD8);
      const __m128i lo = _mm256_castsi256_si128(w), hi = _mm256_extracti128_si256(w, 1);
      if constexpr (std::is_unsigned_v<T>) return _mm_packus_epi16(lo, hi);
      else return _mm_packs_epi16(lo, hi);
    };
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), narrow16(v0, v1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p + 16), narrow16(v2, v3));
  }
  // A vector divide costs several times the rest of a quantize loop (vdivps ymm: 5 to 10 cycles).
  static constexpr bool kFastDivide = false;
  static VF sub(VF a, VF b) { return _mm256_sub_ps(a, b); }
  // The second operand when either is NaN (vminps / vmaxps).
  static VF min(VF a, VF b) { return _mm256_min_ps(a, b); }
  static VF max(VF a, VF b) { return _mm256_max_ps(a, b); }
  static VF abs(VF v) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }
  static VI bits(VF v) { return _mm256_castps_si256(v); }
  static bool any_greater(VF a, VF b) { return _mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_GT_OQ)) != 0; }
};

}  // namespace
}  // namespace octet::kernels::avx2
