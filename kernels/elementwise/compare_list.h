#pragma once
// The FP32 comparison, classification and n-ary sum / max / min microkernels of every templated level: the
// one list the ops (engine/ops/compare_ops.cc), the tests (tests/simd/test_compare.cc) and the
// benchmark (bench/eltwise_bench.cc) iterate. Written once over `Ops` in compare_loops.inc,
// which eltwise_level.inc compiles at each level; the scalar references are kernels/ref/compare.h.
//
// Shapes the microkernels see (the ops walk any broadcast as runs along the output's last axes):
//   compare   n elements of a and b, each advancing by its inc (1: a run, 0: one element
//             repeated), y n bools (0 or 1). Less and LessOrEqual are Greater and
//             GreaterOrEqual with the operands swapped.
//   classify  n contiguous floats -> n bools: IsNaN, IsInf (detect_negative, detect_positive).
//   sign      n contiguous floats (F32UnaryUkernel); shrink n floats with lambd, bias (F32ActUkernel).
//   sum       n elements of `count` operands, each advancing by its inc, added left to right
//             and multiplied by scale unless it is 1 (Sum: 1, Mean: 1 / count).
//   max, min  the same operands folded left to right with ONNX Runtime's NaN-propagating pick
//             (kernels/ref/compare.h: f32_pick__ref).
#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/elementwise/eltwise_list.h"
#include "kernels/ref/compare.h"

namespace octet::kernels {

using F32CompareUkernel = void (*)(size_t n, const float* a, size_t a_inc, const float* b, size_t b_inc, uint8_t* y);
using F32ClassifyUkernel = void (*)(size_t n, const float* x, uint8_t* y, bool negative, bool positive);
using F32SumUkernel = void (*)(size_t n, size_t count, const float* const* x, const size_t* inc, float* y,
                               float scale);
using F32ExtremumUkernel = void (*)(size_t n, size_t count, const float* const* x, const size_t* inc, float* y);

#define OCTET_COMPARE_DECLARE(isa, unused)                                                          \
  namespace isa {                                                                                   \
  void f32_equal(size_t, const float*, size_t, const float*, size_t, uint8_t*);                     \
  void f32_greater(size_t, const float*, size_t, const float*, size_t, uint8_t*);                   \
  void f32_greater_equal(size_t, const float*, size_t, const float*, size_t, uint8_t*);             \
  void f32_isnan(size_t, const float*, uint8_t*, bool, bool);                                       \
  void f32_isinf(size_t, const float*, uint8_t*, bool, bool);                                       \
  void f32_sign(size_t, const float*, float*);                                                      \
  void f32_shrink(size_t, const float*, float*, float, float);                                      \
  void f32_sum(size_t, size_t, const float* const*, const size_t*, float*, float);                  \
  void f32_max(size_t, size_t, const float* const*, const size_t*, float*);                         \
  void f32_min(size_t, size_t, const float* const*, const size_t*, float*);                         \
  }
OCTET_TEMPLATE_LEVELS(OCTET_COMPARE_DECLARE, )
#undef OCTET_COMPARE_DECLARE

#define OCTET_COMPARE_ENTRY(isa, OP) {#OP "__" #isa, Isa::isa, &isa::OP},
#define OCTET_COMPARE_TABLE(NAME, FN_TYPE, OP)                                                             \
  inline constexpr EltwiseUkernel<FN_TYPE> NAME##Rows[] = {OCTET_TEMPLATE_LEVELS(OCTET_COMPARE_ENTRY, OP)  \
                                                               EltwiseUkernel<FN_TYPE>{}};                 \
  inline constexpr std::span<const EltwiseUkernel<FN_TYPE>> NAME = rows_before_terminator(NAME##Rows);

OCTET_COMPARE_TABLE(kF32EqualUkernels, F32CompareUkernel, f32_equal)
OCTET_COMPARE_TABLE(kF32GreaterUkernels, F32CompareUkernel, f32_greater)
OCTET_COMPARE_TABLE(kF32GreaterEqualUkernels, F32CompareUkernel, f32_greater_equal)
OCTET_COMPARE_TABLE(kF32IsNaNUkernels, F32ClassifyUkernel, f32_isnan)
OCTET_COMPARE_TABLE(kF32IsInfUkernels, F32ClassifyUkernel, f32_isinf)
OCTET_COMPARE_TABLE(kF32SignUkernels, F32UnaryUkernel, f32_sign)
OCTET_COMPARE_TABLE(kF32ShrinkUkernels, F32ActUkernel, f32_shrink)
OCTET_COMPARE_TABLE(kF32SumUkernels, F32SumUkernel, f32_sum)
OCTET_COMPARE_TABLE(kF32MaxUkernels, F32ExtremumUkernel, f32_max)
OCTET_COMPARE_TABLE(kF32MinUkernels, F32ExtremumUkernel, f32_min)

#undef OCTET_COMPARE_TABLE
#undef OCTET_COMPARE_ENTRY

}  // namespace octet::kernels
