#include "bench/peak_values.h"

#include <array>
#include <mutex>

#include "bench/peak_loops.h"

namespace octet::bench {
namespace {

using kernels::Isa;

PeakLoopId float_loop(Isa isa) {
  switch (isa) {
    case Isa::scalar: return PeakLoopId::f32_fma_scalar;
    case Isa::avx2:
    case Isa::avxvnni:
    case Isa::avx256vnni: return PeakLoopId::f32_fma_ymm;
    case Isa::avx512:
    case Isa::avx512vnni: return PeakLoopId::f32_fma_zmm;
    default: return PeakLoopId::f32_fma_scalar;  // no Arm loops yet
  }
}

PeakLoopId int8_loop(Isa isa) {
  switch (isa) {
    case Isa::scalar: return PeakLoopId::i32_imul_scalar;
    case Isa::avx2: return PeakLoopId::s16_maddwd_ymm;
    case Isa::avxvnni: return PeakLoopId::u8s8_dpbusd_ymm_vex;
    case Isa::avx256vnni: return PeakLoopId::u8s8_dpbusd_ymm_evex;
    case Isa::avx512: return PeakLoopId::s16_maddwd_zmm;
    case Isa::avx512vnni: return PeakLoopId::u8s8_dpbusd_zmm;
    default: return PeakLoopId::i32_imul_scalar;
  }
}

constexpr int kLevels = int(Isa::neoni8mm) + 1;

// Measured lazily, once per (level, kind); benchmarks may ask from any thread.
double cached_peak(Isa isa, bool int8) {
  static std::mutex mutex;
  static std::array<double, 2 * kLevels> values{};  // 0 = not measured yet
  const std::lock_guard<std::mutex> lock(mutex);
  double& value = values[size_t(int8) * kLevels + size_t(isa)];
  if (value == 0 && kernels::isa_supported(isa)) {
    const PeakLoop& loop = peak_loop(int8 ? int8_loop(isa) : float_loop(isa));
    if (loop.supported()) value = measure_peak(loop);
  }
  return value;
}

}  // namespace

double peak_gflops(Isa isa) { return cached_peak(isa, false); }

// The loops count multiply-accumulates; an operation count has two per MAC.
double peak_gops(Isa isa) { return 2 * cached_peak(isa, true); }

}  // namespace octet::bench
