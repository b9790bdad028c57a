#pragma once
// Every QLinearSoftmax microkernel (uint8, int8): the one list the driver
// (kernels/elementwise/softmax.h, Q8Softmax), the tests (tests/simd/test_qsoftmax.cc) and the
// benchmark (bench/qsoftmax_bench.cc) iterate. Adding a level is one X(level, op) below.
//
// What a microkernel computes: q8_softmax__ref (kernels/ref/qsoftmax.h), bit for bit, along
// `len` values `stride` elements apart for `columns` adjacent columns (x + j, y + j for
// j < columns); stride == 1 is one contiguous row (columns == 1). Per column:
//   top = 255 (uint8) or 127 (int8),  e(v) = table[byte(v + top - max)]
//   sum = ((0 + e(x_0)) + e(x_1)) + ...           in float, in index order
//   y   = byte(min(round_half_even((e(v) * y_steps) / sum) + y_zero_point, 255))
// A column of lanes keeps that order exactly; a contiguous row gathers its entries a vector at a
// time and adds them one by one (a vector sum would reassociate it), and the max, the lookups
// and the final multiply / divide / round / clamp run on vectors.
#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/arch.h"
#include "kernels/elementwise/eltwise_list.h"
#include "kernels/isa.h"
#include "kernels/kernel_list.h"

namespace octet::kernels {

struct Q8SoftmaxParams {
  const float* table;  // QSoftmaxTable: 256 entries indexed by the byte (kernels/ref/qsoftmax.h)
  float y_steps;       // floor(1 / y_scale), as the reference computes it
  int32_t y_zero_point;
};

using Q8SoftmaxUkernel = void (*)(size_t len, size_t columns, size_t stride, const void* x, void* y,
                                  const Q8SoftmaxParams& p);

// A list entry: name, isa, fn (the element-wise lists' entry type).
using Q8SoftmaxEntry = EltwiseUkernel<Q8SoftmaxUkernel>;

// ---- Every templated level (kernels/template_levels.h) defines both microkernels, in
// namespace <level>, from kernels/elementwise/qsoftmax_level.inc.

#define OCTET_QSOFTMAX_DECLARE(isa, unused)                                                  \
  namespace isa {                                                                            \
  void qu8_softmax(size_t, size_t, size_t, const void*, void*, const Q8SoftmaxParams&);       \
  void qs8_softmax(size_t, size_t, size_t, const void*, void*, const Q8SoftmaxParams&);       \
  }
OCTET_TEMPLATE_LEVELS(OCTET_QSOFTMAX_DECLARE, )
#undef OCTET_QSOFTMAX_DECLARE

#define OCTET_QSOFTMAX_ENTRY(isa, OP) {#OP "__" #isa, Isa::isa, &isa::OP},
#define OCTET_QSOFTMAX_TABLE(NAME, OP)                                                                        \
  inline constexpr Q8SoftmaxEntry NAME##Rows[] = {OCTET_TEMPLATE_LEVELS(OCTET_QSOFTMAX_ENTRY, OP) Q8SoftmaxEntry{}}; \
  inline constexpr std::span<const Q8SoftmaxEntry> NAME = rows_before_terminator(NAME##Rows);

OCTET_QSOFTMAX_TABLE(kQu8SoftmaxUkernels, qu8_softmax)
OCTET_QSOFTMAX_TABLE(kQs8SoftmaxUkernels, qs8_softmax)

#undef OCTET_QSOFTMAX_TABLE
#undef OCTET_QSOFTMAX_ENTRY

}  // namespace octet::kernels
