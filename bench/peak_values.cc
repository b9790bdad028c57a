#include "bench/peak_values.h"

#include <array>
#include <mutex>

#include "bench/peak_loops.h"

namespace octet::bench {
namespace {

using kernels::Isa;

// The loops are chosen by the level's features: its widest registers and its INT8 instruction.
// No Arm loops yet: an Arm level falls back to the scalar ones.
PeakLoopId float_loop(Isa isa) {
  const kernels::Features f = kernels::isa_features(isa);
  if (f & kernels::kZmm) return PeakLoopId::f32_fma_zmm;
  if (f & kernels::kAvx2) return PeakLoopId::f32_fma_ymm;
  return PeakLoopId::f32_fma_scalar;
}

PeakLoopId int8_loop(Isa isa) {
  const kernels::Features f = kernels::isa_features(isa);
  if (f & kernels::kAmxInt8) return PeakLoopId::u8s8_tdpbusd_amx;
  if (f & kernels::kAvx512Vnni) return f & kernels::kZmm ? PeakLoopId::u8s8_dpbusd_zmm : PeakLoopId::u8s8_dpbusd_ymm_evex;
  if (f & kernels::kAvxVnni) return PeakLoopId::u8s8_dpbusd_ymm_vex;
  if (f & kernels::kZmm) return PeakLoopId::s16_maddwd_zmm;
  if (f & kernels::kAvx2) return PeakLoopId::s16_maddwd_ymm;
  return PeakLoopId::i32_imul_scalar;
}

constexpr int kLevels = int(std::size(kernels::kIsaLevels));

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
