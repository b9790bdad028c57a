#include "bench/peak_loops.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

#include "kernels/isa.h"
#include "kernels/x86/amx_tile_config.h"

namespace octet::bench {
namespace {

volatile int32_t g_int_sink;

// The vector loops are inline assembly: the measurement is of one instruction sequence, and
// compilers do not reliably keep a dozen vector accumulators in registers. GCC 12 compiled an
// intrinsics version of the ymm vpmaddwd loop under target("avx2") (16 registers) with
// accumulators spilled to the stack and reloaded every iteration, which cost 2.5x (see
// bench/README.md). In assembly every loop has
//   12 accumulators in registers 0..11: FMA and vpdpbusd have a 4-cycle latency and two pipes,
//      so 8 chains in flight are the minimum and 12 leave margin;
//   its multiplicands in registers 14 and 15, never written, so as in a GEMM microkernel only
//      the accumulation is a dependency chain (the int16 sequences go through temporary 12,
//      which register renaming makes independent from one step to the next; 13 holds the
//      int16 ones of the maddubs sequence);
//   only registers 0..15, so the VEX (AVX2) forms can encode them.
// All registers start at zero: throughput does not depend on the values, and zero keeps the
// float loops free of denormals and overflow however long they run.
#define OCTET_ACC12(X) X("0") X("1") X("2") X("3") X("4") X("5") X("6") X("7") X("8") X("9") X("10") X("11")
#define OCTET_VECTOR_CLOBBERS                                                                              \
  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", \
      "xmm13", "xmm14", "xmm15", "cc"

// Zeroes the 16 registers (the 128-bit VEX xor clears the upper lanes of ymm and zmm too),
// then runs `body` `iterations` times (the loop tests at the bottom, so 0 must not enter it).
#define OCTET_ZERO(r) "vpxor %%xmm" r ", %%xmm" r ", %%xmm" r "\n\t"
#define OCTET_ASM_LOOP(body)                                                                              \
  if (iterations <= 0) return;                                                                            \
  __asm__ volatile(OCTET_ACC12(OCTET_ZERO) OCTET_ZERO("12") OCTET_ZERO("13") OCTET_ZERO("14") OCTET_ZERO("15") \
                   "1:\n\t" body "dec %0\n\tjnz 1b\n\tvzeroupper"                                        \
                   : "+r"(iterations)                                                                     \
                   :                                                                                      \
                   : OCTET_VECTOR_CLOBBERS)

// acc += a * b, one instruction per accumulator.
#define OCTET_FMA_SS(r) "vfmadd231ss %%xmm15, %%xmm14, %%xmm" r "\n\t"
#define OCTET_FMA_YMM(r) "vfmadd231ps %%ymm15, %%ymm14, %%ymm" r "\n\t"
#define OCTET_FMA_ZMM(r) "vfmadd231ps %%zmm15, %%zmm14, %%zmm" r "\n\t"
// u8 x s8 -> saturating s16 pairs (vpmaddubsw) -> s32 (vpmaddwd by ones in 13) -> acc: 32 MACs per ymm.
#define OCTET_MADDUBS_YMM(r) \
  "vpmaddubsw %%ymm15, %%ymm14, %%ymm12\n\tvpmaddwd %%ymm13, %%ymm12, %%ymm12\n\tvpaddd %%ymm12, %%ymm" r ", %%ymm" r "\n\t"
#define OCTET_MADDUBS_ZMM(r) \
  "vpmaddubsw %%zmm15, %%zmm14, %%zmm12\n\tvpmaddwd %%zmm13, %%zmm12, %%zmm12\n\tvpaddd %%zmm12, %%zmm" r ", %%zmm" r "\n\t"
// s16 x s16 pairs -> s32 -> acc: 16 MACs per ymm, exact for u8/s8 values widened to int16.
#define OCTET_MADDWD_YMM(r) "vpmaddwd %%ymm15, %%ymm14, %%ymm12\n\tvpaddd %%ymm12, %%ymm" r ", %%ymm" r "\n\t"
#define OCTET_MADDWD_ZMM(r) "vpmaddwd %%zmm15, %%zmm14, %%zmm12\n\tvpaddd %%zmm12, %%zmm" r ", %%zmm" r "\n\t"
// u8 x s8 quadruples -> s32, accumulated in place: 32 MACs per ymm. {vex}/{evex} pick the encoding.
#define OCTET_DPBUSD_YMM_VEX(r) "%{vex%} vpdpbusd %%ymm15, %%ymm14, %%ymm" r "\n\t"
#define OCTET_DPBUSD_YMM_EVEX(r) "%{evex%} vpdpbusd %%ymm15, %%ymm14, %%ymm" r "\n\t"
#define OCTET_DPBUSD_ZMM(r) "vpdpbusd %%zmm15, %%zmm14, %%zmm" r "\n\t"

void fma_scalar(int64_t iterations) { OCTET_ASM_LOOP(OCTET_ACC12(OCTET_FMA_SS)); }
void fma_ymm(int64_t iterations) { OCTET_ASM_LOOP(OCTET_ACC12(OCTET_FMA_YMM)); }
void fma_zmm(int64_t iterations) { OCTET_ASM_LOOP(OCTET_ACC12(OCTET_FMA_ZMM)); }
void maddubs_ymm(int64_t iterations) { OCTET_ASM_LOOP(OCTET_ACC12(OCTET_MADDUBS_YMM)); }
void maddubs_zmm(int64_t iterations) { OCTET_ASM_LOOP(OCTET_ACC12(OCTET_MADDUBS_ZMM)); }
void maddwd_ymm(int64_t iterations) { OCTET_ASM_LOOP(OCTET_ACC12(OCTET_MADDWD_YMM)); }
void maddwd_zmm(int64_t iterations) { OCTET_ASM_LOOP(OCTET_ACC12(OCTET_MADDWD_ZMM)); }
void dpbusd_ymm_vex(int64_t iterations) { OCTET_ASM_LOOP(OCTET_ACC12(OCTET_DPBUSD_YMM_VEX)); }
void dpbusd_ymm_evex(int64_t iterations) { OCTET_ASM_LOOP(OCTET_ACC12(OCTET_DPBUSD_YMM_EVEX)); }
void dpbusd_zmm(int64_t iterations) { OCTET_ASM_LOOP(OCTET_ACC12(OCTET_DPBUSD_ZMM)); }

// AMX: tmm0-3 accumulate (16 x 16 int32 each), each taking a tdpbusd of tmm4 (16 x 64 u8) by
// tmm5 or tmm6 (64 x 16 s8), 16384 multiply-accumulates per instruction; the loop configures and
// zeroes its tiles (the kernels' configuration), touches no memory in the loop, and releases the
// tiles at the end.
void tdpbusd_amx(int64_t iterations) {
  if (iterations <= 0) return;
  __asm__ volatile(
      "ldtilecfg %1\n\t"
      "tilezero %%tmm0\n\ttilezero %%tmm1\n\ttilezero %%tmm2\n\ttilezero %%tmm3\n\t"
      "tilezero %%tmm4\n\ttilezero %%tmm5\n\ttilezero %%tmm6\n\t"
      "1:\n\t"
      "tdpbusd %%tmm5, %%tmm4, %%tmm0\n\ttdpbusd %%tmm6, %%tmm4, %%tmm1\n\t"
      "tdpbusd %%tmm5, %%tmm4, %%tmm2\n\ttdpbusd %%tmm6, %%tmm4, %%tmm3\n\t"
      "dec %0\n\tjnz 1b\n\ttilerelease"
      : "+r"(iterations)
      : "m"(kernels::x86::kAmxTileConfig)
      : "cc");
}

#define OCTET_REPEAT12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

// Plain C++ (GCC keeps 12 int32 chains in the 15 free general registers; see bench/README.md).
void imul_scalar(int64_t iterations) {
#define DECL(i) int32_t a##i = (i) + 1;
  OCTET_REPEAT12(DECL)
#undef DECL
  // The multiplier is opaque to the compiler, so it cannot turn imul into shifts.
  volatile int32_t opaque_multiplier = 3;
  const int32_t w = opaque_multiplier;
  for (int64_t n = 0; n < iterations; ++n) {
    // Unsigned arithmetic: wrap-around is defined; the instruction is the same imul + add.
#define STEP(i) a##i = int32_t(uint32_t(a##i) + uint32_t(a##i) * uint32_t(w));
    OCTET_REPEAT12(STEP)
#undef STEP
    __asm__ volatile("" ::: "memory");  // keep the loop from being vectorised away
  }
  int32_t s = 0;
#define SUM(i) s ^= a##i;
  OCTET_REPEAT12(SUM)
#undef SUM
  g_int_sink = s;
}

#undef OCTET_REPEAT12


// 16 dependent 1-cycle adds per iteration: the chain takes 16 cycles whatever the width of
// the machine, so iterations * 16 / seconds is the clock. The addend is a register, not an
// immediate: Golden Cove and later Intel cores fold chains of add-immediate at rename (several
// per cycle), which read 21 GHz on a Sapphire Rapids guest.
void add_chain(int64_t iterations) {
  uint64_t x = 0;
  for (int64_t n = 0; n < iterations; ++n) {
    __asm__ volatile(
        "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
        "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
        "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
        "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0"
        : "+r"(x)
        : "r"(uint64_t{1}));
  }
  g_int_sink = int32_t(x);
}
constexpr double kAddChainCycles = 16;

// __builtin_cpu_supports takes only a string literal.
#define OCTET_CPU_HAS(feature) (__builtin_cpu_init(), __builtin_cpu_supports(feature) > 0)

double seconds_of(void (*run)(int64_t), int64_t iterations) {
  const auto t0 = std::chrono::steady_clock::now();
  run(iterations);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Iterations for about `seconds` per run (doubling from a small count), then the best of `repeats`.
double best_iterations_per_second(void (*run)(int64_t), int repeats, double seconds) {
  int64_t iterations = 1 << 12;
  double elapsed = seconds_of(run, iterations);
  while (elapsed < seconds / 4) {
    iterations *= 2;
    elapsed = seconds_of(run, iterations);
  }
  iterations = std::max<int64_t>(1, int64_t(double(iterations) * seconds / elapsed));
  double best = 1e30;
  for (int r = 0; r < std::max(1, repeats); ++r) best = std::min(best, seconds_of(run, iterations));
  return double(iterations) / best;
}

}  // namespace

const std::vector<PeakLoop>& peak_loops() {
  static const std::vector<PeakLoop> loops = {
      {PeakLoopId::f32_fma_scalar, "f32 FMA scalar (vfmadd231ss)", "GFLOP/s", 12, 12 * 2,
       [] { return OCTET_CPU_HAS("fma"); }, fma_scalar},
      {PeakLoopId::f32_fma_ymm, "f32 FMA ymm (AVX2+FMA)", "GFLOP/s", 12, 12 * 8 * 2,
       [] { return OCTET_CPU_HAS("avx2") && OCTET_CPU_HAS("fma"); }, fma_ymm},
      {PeakLoopId::f32_fma_zmm, "f32 FMA zmm (AVX-512F)", "GFLOP/s", 12, 12 * 16 * 2,
       [] { return OCTET_CPU_HAS("avx512f"); }, fma_zmm},
      {PeakLoopId::u8s8_maddubs_ymm, "u8s8 maddubs+maddwd ymm (AVX2)", "GMAC/s", 12, 12 * 32,
       [] { return OCTET_CPU_HAS("avx2"); }, maddubs_ymm},
      {PeakLoopId::u8s8_maddubs_zmm, "u8s8 maddubs+maddwd zmm (AVX-512BW)", "GMAC/s", 12, 12 * 64,
       [] { return OCTET_CPU_HAS("avx512bw"); }, maddubs_zmm},
      {PeakLoopId::s16_maddwd_ymm, "s16 maddwd+add ymm (AVX2)", "GMAC/s", 12, 12 * 16,
       [] { return OCTET_CPU_HAS("avx2"); }, maddwd_ymm},
      {PeakLoopId::s16_maddwd_zmm, "s16 maddwd+add zmm (AVX-512BW)", "GMAC/s", 12, 12 * 32,
       [] { return OCTET_CPU_HAS("avx512bw"); }, maddwd_zmm},
      {PeakLoopId::u8s8_dpbusd_ymm_vex, "u8s8 vpdpbusd ymm (AVX-VNNI, VEX)", "GMAC/s", 12, 12 * 32,
       [] { return OCTET_CPU_HAS("avxvnni"); }, dpbusd_ymm_vex},
      {PeakLoopId::u8s8_dpbusd_ymm_evex, "u8s8 vpdpbusd ymm (AVX512-VNNI+VL)", "GMAC/s", 12, 12 * 32,
       [] { return OCTET_CPU_HAS("avx512vnni") && OCTET_CPU_HAS("avx512vl"); }, dpbusd_ymm_evex},
      {PeakLoopId::u8s8_dpbusd_zmm, "u8s8 vpdpbusd zmm (AVX512-VNNI)", "GMAC/s", 12, 12 * 64,
       [] { return OCTET_CPU_HAS("avx512vnni"); }, dpbusd_zmm},
      {PeakLoopId::u8s8_tdpbusd_amx, "u8s8 tdpbusd tiles (AMX-INT8)", "GMAC/s", 4, 4 * 16 * 16 * 64,
       [] { return kernels::cpu_has(kernels::kAmxInt8); }, tdpbusd_amx},
      {PeakLoopId::i32_imul_scalar, "i32 imul+add scalar", "GMAC/s", 12, 12,
       [] { return true; }, imul_scalar},
  };
  return loops;
}

const PeakLoop& peak_loop(PeakLoopId id) {
  for (const PeakLoop& loop : peak_loops())
    if (loop.id == id) return loop;
  throw std::logic_error("peak_loop: unknown PeakLoopId " + std::to_string(int(id)));
}

double measure_peak(const PeakLoop& loop, int repeats, double seconds) {
  if (!loop.supported())
    throw std::invalid_argument(std::string("measure_peak: this CPU cannot run '") + loop.name + "'");
  return best_iterations_per_second(loop.run, repeats, seconds) * loop.ops_per_iteration * 1e-9;
}

double measure_clock_ghz(int repeats, double seconds) {
  return best_iterations_per_second(add_chain, repeats, seconds) * kAddChainCycles * 1e-9;
}

}  // namespace octet::bench
