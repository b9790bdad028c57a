// This machine's arithmetic limits, one thread: FP32 FMA on ymm and zmm, the AVX2 INT8 sequence
// without VNNI (vpmaddubsw + vpmaddwd + vpaddd), the same on zmm (AVX-512BW), and vpdpbusd on
// ymm (AVX-VNNI) and zmm (AVX-512 VNNI). Kernel percentages of peak are taken against these.
//
// Each loop keeps 12 independent accumulators (FMA and vpdpbusd have a 4-cycle latency and two
// pipes, so 8 in flight are needed and 12 leave margin) and no loads. Best of 7 runs of ~40 ms.
//
//   build/bench/peak
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace {

constexpr int64_t kIterations = 1 << 20;
volatile float g_float_sink;
volatile int32_t g_int_sink;

#define OCTET_REPEAT12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

__attribute__((target("avx2,fma"))) void fma_ymm() {
#define DECL(i) __m256 a##i = _mm256_set1_ps(1.0f + (i) * 1e-3f);
  OCTET_REPEAT12(DECL)
#undef DECL
  const __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-7f);
  for (int64_t i = 0; i < kIterations; ++i) {
#define STEP(i) a##i = _mm256_fmadd_ps(a##i, x, y);
    OCTET_REPEAT12(STEP)
#undef STEP
  }
  __m256 s = a0;
#define SUM(i) s = _mm256_add_ps(s, a##i);
  OCTET_REPEAT12(SUM)
#undef SUM
  g_float_sink = _mm256_cvtss_f32(s);
}

__attribute__((target("avx512f"))) void fma_zmm() {
#define DECL(i) __m512 a##i = _mm512_set1_ps(1.0f + (i) * 1e-3f);
  OCTET_REPEAT12(DECL)
#undef DECL
  const __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < kIterations; ++i) {
#define STEP(i) a##i = _mm512_fmadd_ps(a##i, x, y);
    OCTET_REPEAT12(STEP)
#undef STEP
  }
  __m512 s = a0;
#define SUM(i) s = _mm512_add_ps(s, a##i);
  OCTET_REPEAT12(SUM)
#undef SUM
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, s);
  g_float_sink = lanes[0];
}

// u8 x s8 -> saturating s16 pairs -> s32 pairs -> accumulate: 32 MACs per ymm sequence.
__attribute__((target("avx2"))) void maddubs_ymm() {
#define DECL(i) __m256i a##i = _mm256_set1_epi32(i);
  OCTET_REPEAT12(DECL)
#undef DECL
  // The accumulator itself is the unsigned operand, so no multiply can be hoisted or shared.
  const __m256i s = _mm256_set1_epi8(-2), ones = _mm256_set1_epi16(1);
  for (int64_t i = 0; i < kIterations; ++i) {
#define STEP(i) a##i = _mm256_add_epi32(a##i, _mm256_madd_epi16(_mm256_maddubs_epi16(a##i, s), ones));
    OCTET_REPEAT12(STEP)
#undef STEP
  }
  __m256i t = a0;
#define SUM(i) t = _mm256_add_epi32(t, a##i);
  OCTET_REPEAT12(SUM)
#undef SUM
  g_int_sink = _mm256_extract_epi32(t, 0);
}

__attribute__((target("avx512bw"))) void maddubs_zmm() {
#define DECL(i) __m512i a##i = _mm512_set1_epi32(i);
  OCTET_REPEAT12(DECL)
#undef DECL
  const __m512i s = _mm512_set1_epi8(-2), ones = _mm512_set1_epi16(1);
  for (int64_t i = 0; i < kIterations; ++i) {
#define STEP(i) a##i = _mm512_add_epi32(a##i, _mm512_madd_epi16(_mm512_maddubs_epi16(a##i, s), ones));
    OCTET_REPEAT12(STEP)
#undef STEP
  }
  __m512i t = a0;
#define SUM(i) t = _mm512_add_epi32(t, a##i);
  OCTET_REPEAT12(SUM)
#undef SUM
  alignas(64) int32_t lanes[16];
  _mm512_store_si512(lanes, t);
  g_int_sink = lanes[0];
}

__attribute__((target("avx2,avxvnni"))) void vnni_ymm() {
#define DECL(i) __m256i a##i = _mm256_set1_epi32(i);
  OCTET_REPEAT12(DECL)
#undef DECL
  const __m256i u = _mm256_set1_epi8(3), s = _mm256_set1_epi8(-2);
  for (int64_t i = 0; i < kIterations; ++i) {
#define STEP(i) a##i = _mm256_dpbusd_avx_epi32(a##i, u, s);
    OCTET_REPEAT12(STEP)
#undef STEP
  }
  __m256i t = a0;
#define SUM(i) t = _mm256_add_epi32(t, a##i);
  OCTET_REPEAT12(SUM)
#undef SUM
  g_int_sink = _mm256_extract_epi32(t, 0);
}

__attribute__((target("avx512f,avx512vnni"))) void vnni_zmm() {
#define DECL(i) __m512i a##i = _mm512_set1_epi32(i);
  OCTET_REPEAT12(DECL)
#undef DECL
  const __m512i u = _mm512_set1_epi8(3), s = _mm512_set1_epi8(-2);
  for (int64_t i = 0; i < kIterations; ++i) {
#define STEP(i) a##i = _mm512_dpbusd_epi32(a##i, u, s);
    OCTET_REPEAT12(STEP)
#undef STEP
  }
  __m512i t = a0;
#define SUM(i) t = _mm512_add_epi32(t, a##i);
  OCTET_REPEAT12(SUM)
#undef SUM
  alignas(64) int32_t lanes[16];
  _mm512_store_si512(lanes, t);
  g_int_sink = lanes[0];
}

struct Path {
  std::string name, unit;
  bool supported;
  double ops_per_iteration;  // FLOPs (2 per FMA lane) or MACs per loop iteration
  std::function<void()> run;
};

double best_seconds(const std::function<void()>& f) {
  double best = 1e30;
  f();  // warm-up: clocks up, code paged in
  for (int r = 0; r < 7; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main() {
  __builtin_cpu_init();
  const std::vector<Path> paths = {
      {"f32 FMA ymm (AVX2+FMA)", "GFLOP/s", __builtin_cpu_supports("fma") > 0, 12 * 8 * 2, fma_ymm},
      {"f32 FMA zmm (AVX-512F)", "GFLOP/s", __builtin_cpu_supports("avx512f") > 0, 12 * 16 * 2, fma_zmm},
      {"u8s8 maddubs+maddwd ymm (AVX2)", "GMAC/s", __builtin_cpu_supports("avx2") > 0, 12 * 32, maddubs_ymm},
      {"u8s8 maddubs+maddwd zmm (AVX-512BW)", "GMAC/s", __builtin_cpu_supports("avx512bw") > 0, 12 * 64, maddubs_zmm},
      {"u8s8 vpdpbusd ymm (AVX-VNNI)", "GMAC/s", __builtin_cpu_supports("avxvnni") > 0, 12 * 32, vnni_ymm},
      {"u8s8 vpdpbusd zmm (AVX-512 VNNI)", "GMAC/s", __builtin_cpu_supports("avx512vnni") > 0, 12 * 64, vnni_zmm},
  };
  std::printf("%-38s %12s\n", "path (1 thread, 12 accumulators)", "best of 7");
  for (const auto& p : paths) {
    if (!p.supported) {
      std::printf("%-38s %12s\n", p.name.c_str(), "not on this CPU");
      continue;
    }
    const double s = best_seconds(p.run);
    std::printf("%-38s %8.1f %s\n", p.name.c_str(), p.ops_per_iteration * double(kIterations) / s * 1e-9,
                p.unit.c_str());
  }
  return 0;
}
