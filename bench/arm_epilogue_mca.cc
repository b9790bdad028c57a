// The INT8 IGEMM epilogue of one 4x16 NEON tile (kernels/arm/q8_neon_epilogue.inc), both ways:
// a narrowing store per vector, and requantize4's four vectors to one store. Compiled to
// assembly only, by bench/arm_mca.py --epilogue with the AArch64 build's flags (never built by
// CMake): llvm-mca then counts the cycles of each function's straight-line body.
#include <arm_neon.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/gemm/q8_gemm_list.h"

namespace octet::kernels {
namespace {
#include "kernels/arm/x86_minmax.inc"
#include "kernels/arm/q8_neon_epilogue.inc"
}  // namespace
}  // namespace octet::kernels

using octet::kernels::NeonEpilogue;

extern "C" void epilogue_per_vector(const int32x4_t* acc, const float* multiplier, uint8_t* y, size_t stride,
                                    const octet::kernels::Q8IgemmArgs& g) {
  const int32x4_t zp = NeonEpilogue::set1i(g.y_zero_point);
  const float32x4_t lo = NeonEpilogue::set1f(g.lo), hi = NeonEpilogue::set1f(g.hi);
#pragma GCC unroll 16
  for (int i = 0; i < 4; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const int32x4_t q = NeonEpilogue::requantize(acc[4 * i + j], NeonEpilogue::loadf(multiplier + 4 * j), lo, hi);
      NeonEpilogue::store(y + i * stride + 4 * j, NeonEpilogue::add(q, zp), 4);
    }
}

extern "C" void epilogue_quads(const int32x4_t* acc, const float* multiplier, uint8_t* y, size_t stride,
                               const octet::kernels::Q8IgemmArgs& g) {
  const auto bounds = NeonEpilogue::quad_bounds(g);
#pragma GCC unroll 16
  for (int i = 0; i < 4; ++i) {
    int32x4_t v[4];
    float32x4_t m[4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      v[j] = acc[4 * i + j];
      m[j] = NeonEpilogue::loadf(multiplier + 4 * j);
    }
    NeonEpilogue::store_rows<16>(y + i * stride, stride, NeonEpilogue::requantize4(v, m, bounds));
  }
}
