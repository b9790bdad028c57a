#pragma once
// The microkernels of the reductions with a map (ReduceL1, ReduceL2, ReduceSumSquare,
// ReduceLogSum, ReduceLogSumExp, ReduceProd), of LpNormalization and of CumSum: one list the drivers
// (kernels/elementwise/reduce_more.h), the tests (tests/simd/test_reduce_more.cc) and the
// benchmark (bench/reduce_more_bench.cc) iterate. Every templated level defines them from
// kernels/elementwise/reduce_more_loops.inc; the scalar references are kernels/ref/reduce_more.h.
//
// Each kind is one ONNX reduction as ONNX Runtime's aggregator computes it (reduction_ops.h):
//   l1           sum of |v|                 (also LpNormalization p = 1)
//   l2           sqrt(sum of v * v)         (also LpNormalization p = 2)
//   sum_square   sum of v * v
//   log_sum      log(sum of v)
//   log_sum_exp  log(sum of exp(v - m)) + m, m: the first value (0 if it is infinite), then every
//                finite value not below it (ORT's update0); the sum then in a second pass
//   prod         product of v, from 1
//   sum          sum of v (MeanVarianceNormalization's mean)
// sqrt and log of each result are std::sqrt / std::log, as ORT's are; exp is the levels' own
// (within 2 ulp of std::exp).
#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/isa.h"
#include "kernels/kernel_list.h"
#include "kernels/ref/reduce_more.h"  // MapReduce

namespace octet::kernels {

// y[j] = the reduction of x[j * lane_stride + offsets[t]] over t in [0, terms), terms >= 1, one
// step at a time in the offsets' order from 0 (1 for prod), for j < count: ONNX Runtime's
// generic loop (NoTransposeReduce1Loop / 2Loops: the reduced elements in the row-major order of
// the reduced axes). lane_stride * kLanes < 2^31 (the gathers' 32-bit offsets).
using F32MapReduceUkernel = void (*)(MapReduce kind, size_t count, size_t lane_stride, const float* x, size_t terms,
                                     const int64_t* offsets, float* y);
// The reduction of all n >= 1 contiguous values as ORT's aggall computes it when every axis is
// reduced: the sums and the product in Eigen's 4-float packet order from an aligned start
// (kernels/ref/eigen_sum.h with lead 0); log_sum_exp's max in any order (Eigen's maxCoeff: a
// NaN's effect unpinned), its sum of exp(v - max) in index order.
using F32EigenFoldUkernel = float (*)(MapReduce kind, size_t n, const float* x);
// y[i] = (x[i] - a[i * inc]) / b[i * inc] for i < n (inc 0: one a and b for all, 1: one each;
// a nullptr: no subtraction);
// zero_where_b_zero: 0 instead wherever b is 0 (LpNormalization of a zero vector).
using F32SubDivUkernel = void (*)(size_t n, const float* x, const float* a, const float* b, size_t inc, float* y,
                                  bool zero_where_b_zero);

// CumSum of len >= 1 rows of `count` columns (row k at x + k * stride, y alike), each column one
// chain of adds in ONNX Runtime's order: f32_cumsum__ref (kernels/ref/reduce_more.h) says which.
using F32CumSumUkernel = void (*)(size_t len, size_t count, size_t stride, const float* x, float* y, bool exclusive,
                                  bool reverse);

template <class Fn>
struct ReduceMoreUkernel {
  const char* name;
  Isa isa;
  Fn fn;
};

#define OCTET_REDUCE_MORE_DECLARE(isa, unused)                                                         \
  namespace isa {                                                                                       \
  void f32_map_reduce(MapReduce, size_t, size_t, const float*, size_t, const int64_t*, float*);       \
  float f32_eigen_fold(MapReduce, size_t, const float*);                                                \
  void f32_sub_div(size_t, const float*, const float*, const float*, size_t, float*, bool);             \
  void f32_cumsum(size_t, size_t, size_t, const float*, float*, bool, bool);                            \
  }
OCTET_TEMPLATE_LEVELS(OCTET_REDUCE_MORE_DECLARE, )
#undef OCTET_REDUCE_MORE_DECLARE

#define OCTET_REDUCE_MORE_ENTRY(isa, OP) {#OP "__" #isa, Isa::isa, &isa::OP},
#define OCTET_REDUCE_MORE_TABLE(NAME, FN_TYPE, OP)                                                          \
  inline constexpr ReduceMoreUkernel<FN_TYPE> NAME##Rows[] = {                                              \
      OCTET_TEMPLATE_LEVELS(OCTET_REDUCE_MORE_ENTRY, OP) ReduceMoreUkernel<FN_TYPE>{}};                     \
  inline constexpr std::span<const ReduceMoreUkernel<FN_TYPE>> NAME = rows_before_terminator(NAME##Rows);

OCTET_REDUCE_MORE_TABLE(kF32MapReduceUkernels, F32MapReduceUkernel, f32_map_reduce)
OCTET_REDUCE_MORE_TABLE(kF32EigenFoldUkernels, F32EigenFoldUkernel, f32_eigen_fold)
OCTET_REDUCE_MORE_TABLE(kF32SubDivUkernels, F32SubDivUkernel, f32_sub_div)
OCTET_REDUCE_MORE_TABLE(kF32CumSumUkernels, F32CumSumUkernel, f32_cumsum)

#undef OCTET_REDUCE_MORE_TABLE
#undef OCTET_REDUCE_MORE_ENTRY

}  // namespace octet::kernels
