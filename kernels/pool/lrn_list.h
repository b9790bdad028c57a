#pragma once
// Every LRN microkernel: the one list the driver (kernels/pool/lrn.h), the tests
// (tests/simd/test_lrn.cc) and the benchmark (bench/lrn_bench.cc) iterate; one row per templated
// level (kernels/template_levels.h), from kernels/pool/lrn_level.inc.
//
// What a microkernel does: f32_lrn_nhwc__ref's arithmetic (kernels/ref/lrn.h) on `pixels`
// channels-last pixels, the running sums bit for bit, the power within a few ulps. The sum over
// channels is a chain from one channel to the next, so the lanes run over pixels: blocks of
// kLrnBlockVectors vectors of pixels are copied channel-major into the scratch (one vector per
// channel and part of the block) with their terms aos * x^2 beside them, the sums run down the
// channels on each vector (kLrnBlockVectors independent chains), each channel's
// pow(s, -beta) = 2^(-beta k) m^(-beta) for s = m 2^k as soon as its sum is known, and the block
// goes back channels-last. Lanes over channels would need the sums' chain across lanes, or a
// window sum per channel in another order than ORT's.
// A block with a sum the vector power does not take (not a positive normal float, or a power
// outside the normal range: bias <= 0, an x^2 that overflowed, NaN) runs the reference.
#include <cstddef>
#include <span>

#include "kernels/isa.h"
#include "kernels/kernel_list.h"
#include "kernels/ref/lrn.h"

namespace octet::kernels {

// Vectors of pixels per block: that many independent chains down the channels.
inline constexpr size_t kLrnBlockVectors = 4;

struct LrnArgs {
  const LrnParams* params;
  size_t pixels, channels;
  const float* x;
  float* y;
  float* scratch;  // lrn_scratch_floats(channels, params->size, lanes)
};

// Floats of scratch one call needs: the block's x and its terms aos * x^2 with `size` rows of
// padding, channel-major.
inline size_t lrn_scratch_floats(size_t channels, size_t size, size_t lanes) {
  return (2 * channels + size + (size - 1) / 2) * kLrnBlockVectors * lanes;
}

using F32LrnUkernel = void (*)(const LrnArgs&);

struct LrnUkernel {
  const char* name = nullptr;
  Isa isa = Isa::scalar;
  F32LrnUkernel fn = nullptr;
  size_t lanes = 0;  // float lanes of one vector
};

#define OCTET_LRN_DECLARE(isa, unused) \
  namespace isa {                      \
  void f32_lrn(const LrnArgs&);        \
  }
OCTET_TEMPLATE_LEVELS(OCTET_LRN_DECLARE, )
#undef OCTET_LRN_DECLARE

#define OCTET_LRN_ENTRY(isa, lanes) {"f32_lrn__" #isa, Isa::isa, &isa::f32_lrn, lanes},
inline constexpr LrnUkernel kF32LrnUkernelRows[] = {OCTET_TEMPLATE_LEVEL_LANES(OCTET_LRN_ENTRY) LrnUkernel{}};
inline constexpr std::span<const LrnUkernel> kF32LrnUkernels = rows_before_terminator(kF32LrnUkernelRows);
#undef OCTET_LRN_ENTRY

}  // namespace octet::kernels
