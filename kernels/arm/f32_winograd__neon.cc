// Winograd F(2x2, 3x3) transforms on NEON: 4 channels per float32x4; the channel tail goes
// through a 4-float buffer, so no load or store leaves the tensors. The math is in
// kernels/f32_winograd_transforms.inc (adds and subtracts only: the x86 levels' bits);
// contracts in kernels/f32_winograd_list.h.
#include <arm_neon.h>

#include <cstring>

#include "kernels/f32_winograd_list.h"

namespace octet::kernels::neon {
namespace {

#include "kernels/arm/x86_minmax.inc"

using Vec = float32x4_t;
using Mask = size_t;  // the valid lanes of a partial vector
constexpr size_t kLanes = 4;

inline Mask tail_mask(size_t n) { return n; }
inline Vec load_full(const float* p) { return vld1q_f32(p); }
inline Vec load_part(const float* p, Mask n) {
  float lanes[kLanes] = {};
  std::memcpy(lanes, p, n * sizeof(float));
  return vld1q_f32(lanes);
}
inline void store_full(float* p, Vec v) { vst1q_f32(p, v); }
inline void store_part(float* p, Vec v, Mask n) {
  float lanes[kLanes];
  vst1q_f32(lanes, v);
  std::memcpy(p, lanes, n * sizeof(float));
}
inline Vec set1(float x) { return vdupq_n_f32(x); }
// Value second, as on x86: a NaN passes through.
inline Vec clamp(Vec v, Vec lo, Vec hi) { return min_ps(hi, max_ps(lo, v)); }

}  // namespace

#include "kernels/f32_winograd_transforms.inc"

}  // namespace octet::kernels::neon
