#pragma once
// The FP32 max-pool microkernel that also says which window position won (MaxPool's Indices,
// kernels/pool/maxpool_indices.h): one row per templated level, from
// kernels/pool/argmax_pool_level.inc; tests/simd/test_maxpool_indices.cc and the driver iterate it.
//
// It sees the pooling microkernels' PoolArgs (kernels/pool/pool_list.h: the window pointers of
// one output row, the fill row holding lowest()) and, through PoolArgs::params, an
// ArgmaxPoolOutput: besides y it writes, per output pixel and channel, the window position t
// that won as a float (exact: windows have far fewer than 2^24 positions), -1 where none did.
// Per channel, best starts at lowest() and position t replaces it when its value is greater
// (NaN, -inf and the fill row never win): f32_maxpool_indices_nhwc__ref's rule, so values and
// positions are its own.
#include <cstddef>

#include "kernels/kernel_list.h"
#include "kernels/pool/pool_list.h"

namespace octet::kernels {

struct ArgmaxPoolOutput {
  const float* y;  // the y the run started from: a row's pixel q is at y + q * channels
  float* taps;     // pixel q's positions: taps + q * taps_stride, one per channel
  size_t taps_stride;
};

#define OCTET_ARGMAX_POOL_DECLARE(isa, unused)     \
  namespace isa {                                  \
  void f32_maxpool_argmax(const PoolArgs<float>&); \
  }
OCTET_TEMPLATE_LEVELS(OCTET_ARGMAX_POOL_DECLARE, )
#undef OCTET_ARGMAX_POOL_DECLARE

#define OCTET_ARGMAX_POOL_ENTRY(isa, unused) {"f32_maxpool_argmax__" #isa, Isa::isa, &isa::f32_maxpool_argmax},
inline constexpr PoolUkernel<F32PoolUkernel> kF32MaxPoolArgmaxUkernelRows[] = {
    OCTET_TEMPLATE_LEVELS(OCTET_ARGMAX_POOL_ENTRY, ) PoolUkernel<F32PoolUkernel>{}};
inline constexpr std::span<const PoolUkernel<F32PoolUkernel>> kF32MaxPoolArgmaxUkernels =
    rows_before_terminator(kF32MaxPoolArgmaxUkernelRows);
#undef OCTET_ARGMAX_POOL_ENTRY

}  // namespace octet::kernels
