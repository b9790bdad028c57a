#pragma once
// Every max- and average-pooling microkernel (FP32, uint8, int8): the one list the driver
// (kernels/pool/pool2d.h), the tests (tests/simd/test_pool.cc) and the benchmark
// (bench/pool_bench.cc) iterate. Adding a kernel is one line in the table of its op.
//
// What a microkernel sees (NHWC, vectorized over channels): `pixels` output pixels of one
// output row; window position t of pixel p reads the channel vector at
// taps[p * kernel_size + t]. The driver builds these pointers once, for image 0: a tap equal to
// `zero` (the driver's fill row) is read as is, every other one is moved by input_offset bytes
// to the image being pooled. Output pixel p is at y + p * channels.
//
//   max  y[c] = best over the taps, best starting at lowest() and replaced when (v > best): the
//        ref's comparison, which _mm*_max_ps(v, best) performs exactly, so a NaN never wins and
//        -inf inputs give -FLT_MAX as in f32_maxpool2d_nhwc__ref. Fill row: lowest().
//   avg  y[c] = sum / float(divisors[p]), the float sum in ONNX Runtime's order (MLAS's pooling
//        kernels): the taps form sum_rows rows of kernel_size / sum_rows; each column is summed
//        down its rows from its first tap, then the column sums in order from the first
//        (sum_rows 1: every tap in order). f32_avgpool2d_nhwc__ref's arithmetic step for step,
//        hence bit-identical. Fill row: +0.0, which adds nothing (MLAS skips padded rows and
//        adds +0.0 for padded columns: the same float sums).
// The scalar reference kernels (kernels/ref/pool2d.h) are the last resort and are not listed.
#include <cstddef>
#include <cstdint>

#include "kernels/elementwise/eltwise_list.h"
#include "kernels/arch.h"
#include "kernels/isa.h"
#include "kernels/kernel_list.h"

namespace octet::kernels {

// T is float, or uint8_t for 8-bit data of either signedness (the kernel's name says which).
template <class T>
struct PoolArgs {
  const T* const* taps;  // [pixels][kernel_size]
  const T* zero;
  size_t input_offset;  // bytes
  size_t pixels, kernel_size, channels;
  T* y;
  const double* divisors = nullptr;  // average pooling: [pixels]
  size_t sum_rows = 1;               // FP32 average pooling: the rows of its summation order
  const void* params = nullptr;      // INT8 average pooling: the Q8AvgPoolParams
};

// QLinearAveragePool as q8_avgpool2d_nhwc__ref computes it, per channel:
//   sum = +0.0f, then sum += float(x - x_zp) * x_scale over the taps in order (a fill tap holds
//   x_zp and adds +0.0, which leaves the sum unchanged), y = round_add_zero_point_clamp(
//   sum / float(divisor) / y_scale + float(y_zp), 0, qmin, qmax).
struct Q8AvgPoolParams {
  float x_scale;
  int32_t x_zero_point;
  float y_scale;
  int32_t y_zero_point, qmin, qmax;
};

template <class T>
inline const T* pool_tap(const PoolArgs<T>& a, const T* p) {
  return p == a.zero ? p : reinterpret_cast<const T*>(reinterpret_cast<const char*>(p) + a.input_offset);
}

using F32PoolUkernel = void (*)(const PoolArgs<float>&);
using Q8PoolUkernel = void (*)(const PoolArgs<uint8_t>&);

// A list entry: name, isa, fn (the element-wise lists' entry type).
template <class Fn>
using PoolUkernel = EltwiseUkernel<Fn>;

// ---- Every templated level (kernels/template_levels.h) defines every pooling microkernel
// below, in namespace <level>, from kernels/pool/pool_level.inc.

#define OCTET_POOL_DECLARE(isa, unused)       \
  namespace isa {                             \
  void f32_maxpool(const PoolArgs<float>&);   \
  void qu8_maxpool(const PoolArgs<uint8_t>&); \
  void qs8_maxpool(const PoolArgs<uint8_t>&); \
  void f32_avgpool(const PoolArgs<float>&);   \
  void qu8_avgpool(const PoolArgs<uint8_t>&); \
  void qs8_avgpool(const PoolArgs<uint8_t>&); \
  }
OCTET_TEMPLATE_LEVELS(OCTET_POOL_DECLARE, )
#undef OCTET_POOL_DECLARE

#define OCTET_POOL_ENTRY(isa, OP) {#OP "__" #isa, Isa::isa, &isa::OP},
#define OCTET_POOL_TABLE(NAME, FN_TYPE, OP)                                                                   \
  inline constexpr PoolUkernel<FN_TYPE> NAME##Rows[] = {OCTET_TEMPLATE_LEVELS(OCTET_POOL_ENTRY, OP) PoolUkernel<FN_TYPE>{}}; \
  inline constexpr std::span<const PoolUkernel<FN_TYPE>> NAME = rows_before_terminator(NAME##Rows);

OCTET_POOL_TABLE(kF32MaxPoolUkernels, F32PoolUkernel, f32_maxpool)
OCTET_POOL_TABLE(kQu8MaxPoolUkernels, Q8PoolUkernel, qu8_maxpool)
OCTET_POOL_TABLE(kQs8MaxPoolUkernels, Q8PoolUkernel, qs8_maxpool)
OCTET_POOL_TABLE(kF32AvgPoolUkernels, F32PoolUkernel, f32_avgpool)
OCTET_POOL_TABLE(kQu8AvgPoolUkernels, Q8PoolUkernel, qu8_avgpool)
OCTET_POOL_TABLE(kQs8AvgPoolUkernels, Q8PoolUkernel, qs8_avgpool)

#undef OCTET_POOL_TABLE
#undef OCTET_POOL_ENTRY

}  // namespace octet::kernels
