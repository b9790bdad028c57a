#pragma once
// Every element-wise and global-pooling microkernel, FP32 and INT8: the one list the drivers
// (kernels/elementwise/eltwise.h), the tests (tests/simd/test_eltwise.cc) and the benchmarks
// (bench/eltwise_bench.cc) iterate. Adding a kernel is one line in the table of its op.
//
// Shapes the microkernels see (the drivers reduce any broadcast they accept to these):
//   binary   a [rows][cols] and b [rows][cols], each read with its own row stride in elements
//            (0 repeats one row: the SE gate [N,1,1,C] against a [N,H,W,C] map), y dense
//            [rows][cols]. rows = 1 is the same-shape case.
//   unary    n contiguous elements.
//   gap      one image: x [hw][channels] -> y [channels] (NHWC global average pool).
//   row mean x [rows][n] -> y [rows], INT8: the global pool's formula over contiguous rows.
//   row sums x [rows][n] -> y [rows] (a reduction over the trailing axes of a row-major tensor).
//   strided sums: count outputs lane_stride apart in x, each summed over `terms` offsets.
//   channel moments: x [pixels][channels] -> per channel the sum and sum of squares about a center.
// The scalar reference kernels (kernels/ref/) are the last resort and are not in these tables.
#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/arch.h"
#include "kernels/isa.h"
#include "kernels/kernel_list.h"
#include "kernels/ref/activation.h"
#include "kernels/ref/pool2d.h"  // GapOrder
#include "kernels/ref/reduce.h"  // kChannelMomentsBlock

namespace octet::kernels {

// ---- FP32 ----
using F32BinaryUkernel = void (*)(size_t rows, size_t cols, const float* a, size_t a_row_stride, const float* b,
                                  size_t b_row_stride, float* y);
// y = min(max(x, lo), hi) with NaN passing through, exactly like the ref's Relu / Clip.
using F32ClampUkernel = void (*)(size_t n, const float* x, float* y, float lo, float hi);
// y = min(max(x + r, lo), hi), NaN passing through like f32_clamp: a residual Add with its clamp.
using F32AddClampUkernel = void (*)(size_t n, const float* x, const float* r, float* y, float lo, float hi);
using F32UnaryUkernel = void (*)(size_t n, const float* x, float* y);
// Where over n elements: y = c ? a : b, each operand's pointer advancing by its inc, 1 (a run)
// or 0 (one element repeated); c holds bools (0 false, any other byte true).
using F32WhereUkernel = void (*)(size_t n, const uint8_t* c, size_t c_inc, const float* a, size_t a_inc, const float* b,
                                 size_t b_inc, float* y);
// An activation with up to two parameters (HardSigmoid's alpha, beta; unused by the others).
using F32ActUkernel = void (*)(size_t n, const float* x, float* y, float p0, float p1);
// The sum of each channel in `order` (kernels/ref/pool2d.h: ONNX Runtime's orders), then / hw.
// first_row: channel 0's row in ORT's [N * C][hw] layout (n * channels), which eigen_packets4's
// order depends on.
using F32GapUkernel = void (*)(size_t hw, size_t channels, const float* x, float* y, GapOrder order,
                               size_t first_row);
// The sum of each of `rows` contiguous rows of n floats, x [rows][n] -> y [rows], in
// GapOrder::eigen_packets4 with row r as ORT's row first_row + r, then / divisor (1: the sum
// itself): ORT's ReduceSum and ReduceMean over the trailing axes of a row-major tensor.
// n * kLanes < 2^31 (the gathers' 32-bit offsets).
using F32RowSumsUkernel = void (*)(size_t rows, size_t n, const float* x, float* y, size_t first_row,
                                   float divisor);
// Long rows side by side: for r < rows (at most kEigenSumsRows), the float sum over i < n of
// x[r][i] (center nullptr) or of (x[r][i] - center[r])² (a subtract, then a multiply) in
// GapOrder::eigen_packets4 with lead[r] values before the first packet. One row reads
// contiguous memory: Eigen's even and odd packets are one 8-float register (two 4-float ones on
// NEON), a chain per row, so rows side by side keep several chains in flight. ORT's ReduceSum /
// ReduceMean over long trailing rows and its InstanceNormalization statistics.
inline constexpr size_t kEigenSumsRows = 4;
using F32EigenSumsUkernel = void (*)(size_t rows, size_t n, const float* const* x, const size_t* lead,
                                     const float* center, float* sums);
// The same sums over rows of 8-bit codes (int8 when is_signed, else uint8), each value
// float(q - zero_point) * scale as DequantizeLinear gives it: a QDQ GroupNorm's statistics.
using Q8EigenSumsUkernel = void (*)(size_t rows, size_t n, const void* const* x, bool is_signed, float scale,
                                    int32_t zero_point, const size_t* lead, const float* center, float* sums);
// y[j] = (0 + x[j * lane_stride + offsets[0]] + ... + x[j * lane_stride + offsets[terms - 1]]) /
// divisor for j < count, each sum a float add chain in the offsets' order: ONNX Runtime's
// ReduceSum / ReduceMean over axes that are not one run of memory (offsets: the reduced
// elements in the row-major order of the reduced axes). lane_stride * kLanes < 2^31.
using F32StridedSumsUkernel = void (*)(size_t count, size_t lane_stride, const float* x, size_t terms,
                                       const int64_t* offsets, float* y, float divisor);
// Per channel c of x [pixels][channels], the sum and the sum of squares of d = x - center[c],
// written (not added) to sum[c] and sum_sq[c]: float sums over blocks of kChannelMomentsBlock
// pixels (s += d, q = fma(d, d, q), pixel after pixel; kernels/ref/reduce.h), each block's added
// in double. GroupNorm's statistics in channels-last (engine/ops/norm_ops.cc): center 0 for the
// means, then each group's mean.
using F32ChannelMomentsUkernel = void (*)(size_t pixels, size_t channels, const float* x, const float* center,
                                          double* sum, double* sum_sq);
// LayerNormalization over `rows` contiguous rows of n values, as ONNX Runtime's CPU kernel
// computes it, bit for bit (kernels/ref/layernorm.h): scale and bias [n] (bias may be nullptr),
// mean and inv_std [rows] written when not nullptr. n < 2^27 (the gathers' 32-bit offsets).
using F32LayerNormUkernel = void (*)(size_t rows, size_t n, const float* x, const float* scale, const float* bias,
                                     float epsilon, float* y, float* mean, float* inv_std);

// ---- INT8 (the element type is in the kernel's name; pointers are uint8_t* or int8_t*) ----

// QLinearAdd as q8_add_ratio_fma_strided__ref computes it (MLAS's AVX2 recipe):
//   y = clamp(round_half_even(fma(qa, ra, fma(qb, rb, k))), lo, hi)
struct Q8AddParams {
  float ra, rb, k;
  float lo, hi;  // the output clamp [y_min, y_max] as floats
};
// QLinearMul as q8_mul_ratio_strided__ref computes it:
//   y = clamp(round_half_even(float((qa - a_zp) * (qb - b_zp)) * r + y_zp), lo, hi)
struct Q8MulParams {
  int32_t a_zero_point, b_zero_point;
  float r, y_zero_point;
  float lo, hi;
};
// QLinearGlobalAveragePool as q8_global_avgpool_nhwc__ref computes it:
//   acc = bias + sum_p x[p][c]  (bias = -hw * x_zp),  y = clamp(round_half_even(acc * m), lo, hi) + y_zp
// with lo = qmin - y_zp, hi = qmax - y_zp (requantize_value's float clamp).
struct Q8GapParams {
  int32_t bias;
  float multiplier;
  int32_t y_zero_point;
  float lo, hi;
};

using Q8AddUkernel = void (*)(size_t rows, size_t cols, const void* a, size_t a_row_stride, const void* b,
                              size_t b_row_stride, void* y, const Q8AddParams& p);
using Q8MulUkernel = void (*)(size_t rows, size_t cols, const void* a, size_t a_row_stride, const void* b,
                              size_t b_row_stride, void* y, const Q8MulParams& p);
using Q8GapUkernel = void (*)(size_t hw, size_t channels, const void* x, void* y, const Q8GapParams& p);

template <class Fn>
struct EltwiseUkernel {
  const char* name;
  Isa isa;
  Fn fn;
};

// ---- Every templated level (kernels/template_levels.h) defines every function below, in
// namespace <level>, from kernels/elementwise/eltwise_level.inc.

#define OCTET_ELTWISE_DECLARE(isa, unused)                                                                 \
  namespace isa {                                                                                          \
  void f32_add(size_t, size_t, const float*, size_t, const float*, size_t, float*);                        \
  void f32_mul(size_t, size_t, const float*, size_t, const float*, size_t, float*);                        \
  void f32_sub(size_t, size_t, const float*, size_t, const float*, size_t, float*);                        \
  void f32_div(size_t, size_t, const float*, size_t, const float*, size_t, float*);                        \
  void f32_clamp(size_t, const float*, float*, float, float);                                               \
  void f32_add_clamp(size_t, const float*, const float*, float*, float, float);                            \
  void f32_where(size_t, const uint8_t*, size_t, const float*, size_t, const float*, size_t, float*);     \
  void f32_sigmoid(size_t, const float*, float*);                                                          \
  void f32_silu(size_t, const float*, float*, float, float);                                               \
  void f32_scale_shift(size_t, const float*, float*, float, float);                                        \
  void f32_gelu(size_t, const float*, float*, float, float);                                               \
  void f32_gelu_tanh(size_t, const float*, float*, float, float);                                          \
  void f32_layernorm(size_t, size_t, const float*, const float*, const float*, float, float*, float*, float*); \
  void f32_gap(size_t, size_t, const float*, float*, GapOrder, size_t);                                    \
  void f32_row_sums(size_t, size_t, const float*, float*, size_t, float);                                  \
  void f32_eigen_sums(size_t, size_t, const float* const*, const size_t*, const float*, float*);          \
  void q8_eigen_sums(size_t, size_t, const void* const*, bool, float, int32_t, const size_t*, const float*, float*); \
  void f32_channel_moments(size_t, size_t, const float*, const float*, double*, double*);                  \
  void f32_strided_sums(size_t, size_t, const float*, size_t, const int64_t*, float*, float);              \
  void f32_strided_max(size_t, size_t, const float*, size_t, const int64_t*, float*, float);               \
  void f32_strided_min(size_t, size_t, const float*, size_t, const int64_t*, float*, float);               \
  void qu8_add(size_t, size_t, const void*, size_t, const void*, size_t, void*, const Q8AddParams&);       \
  void qs8_add(size_t, size_t, const void*, size_t, const void*, size_t, void*, const Q8AddParams&);       \
  void qu8_mul(size_t, size_t, const void*, size_t, const void*, size_t, void*, const Q8MulParams&);       \
  void qs8_mul(size_t, size_t, const void*, size_t, const void*, size_t, void*, const Q8MulParams&);       \
  void qu8_gap(size_t, size_t, const void*, void*, const Q8GapParams&);                                    \
  void qs8_gap(size_t, size_t, const void*, void*, const Q8GapParams&);                                    \
  }
OCTET_TEMPLATE_LEVELS(OCTET_ELTWISE_DECLARE, )
#undef OCTET_ELTWISE_DECLARE

#define OCTET_ELTWISE_ENTRY(isa, OP) {#OP "__" #isa, Isa::isa, &isa::OP},
#define OCTET_ELTWISE_TABLE(NAME, FN_TYPE, OP)                                                             \
  inline constexpr EltwiseUkernel<FN_TYPE> NAME##Rows[] = {OCTET_TEMPLATE_LEVELS(OCTET_ELTWISE_ENTRY, OP)  \
                                                               EltwiseUkernel<FN_TYPE>{}};                 \
  inline constexpr std::span<const EltwiseUkernel<FN_TYPE>> NAME = rows_before_terminator(NAME##Rows);

OCTET_ELTWISE_TABLE(kF32AddUkernels, F32BinaryUkernel, f32_add)
OCTET_ELTWISE_TABLE(kF32MulUkernels, F32BinaryUkernel, f32_mul)
OCTET_ELTWISE_TABLE(kF32SubUkernels, F32BinaryUkernel, f32_sub)
OCTET_ELTWISE_TABLE(kF32DivUkernels, F32BinaryUkernel, f32_div)
OCTET_ELTWISE_TABLE(kF32ClampUkernels, F32ClampUkernel, f32_clamp)
OCTET_ELTWISE_TABLE(kF32AddClampUkernels, F32AddClampUkernel, f32_add_clamp)
OCTET_ELTWISE_TABLE(kF32WhereUkernels, F32WhereUkernel, f32_where)
OCTET_ELTWISE_TABLE(kF32SigmoidUkernels, F32UnaryUkernel, f32_sigmoid)
OCTET_ELTWISE_TABLE(kF32SiluUkernels, F32ActUkernel, f32_silu)
OCTET_ELTWISE_TABLE(kF32ScaleShiftUkernels, F32ActUkernel, f32_scale_shift)
OCTET_ELTWISE_TABLE(kF32GeluUkernels, F32ActUkernel, f32_gelu)
OCTET_ELTWISE_TABLE(kF32GeluTanhUkernels, F32ActUkernel, f32_gelu_tanh)
OCTET_ELTWISE_TABLE(kF32LayerNormUkernels, F32LayerNormUkernel, f32_layernorm)
OCTET_ELTWISE_TABLE(kF32GapUkernels, F32GapUkernel, f32_gap)
OCTET_ELTWISE_TABLE(kF32RowSumsUkernels, F32RowSumsUkernel, f32_row_sums)
OCTET_ELTWISE_TABLE(kF32EigenSumsUkernels, F32EigenSumsUkernel, f32_eigen_sums)
OCTET_ELTWISE_TABLE(kQ8EigenSumsUkernels, Q8EigenSumsUkernel, q8_eigen_sums)
OCTET_ELTWISE_TABLE(kF32ChannelMomentsUkernels, F32ChannelMomentsUkernel, f32_channel_moments)
OCTET_ELTWISE_TABLE(kF32StridedSumsUkernels, F32StridedSumsUkernel, f32_strided_sums)
// The same walk picking the max / min (f32_strided_extremum__ref); the last argument is unused.
OCTET_ELTWISE_TABLE(kF32StridedMaxUkernels, F32StridedSumsUkernel, f32_strided_max)
OCTET_ELTWISE_TABLE(kF32StridedMinUkernels, F32StridedSumsUkernel, f32_strided_min)
OCTET_ELTWISE_TABLE(kQu8AddUkernels, Q8AddUkernel, qu8_add)
OCTET_ELTWISE_TABLE(kQs8AddUkernels, Q8AddUkernel, qs8_add)
OCTET_ELTWISE_TABLE(kQu8MulUkernels, Q8MulUkernel, qu8_mul)
OCTET_ELTWISE_TABLE(kQs8MulUkernels, Q8MulUkernel, qs8_mul)
OCTET_ELTWISE_TABLE(kQu8GapUkernels, Q8GapUkernel, qu8_gap)
OCTET_ELTWISE_TABLE(kQs8GapUkernels, Q8GapUkernel, qs8_gap)

#undef OCTET_ELTWISE_TABLE
#undef OCTET_ELTWISE_ENTRY

// ---- Activations with parameters, Softmax / LogSoftmax, ArgMax / ArgMin (FP32), every level
// of OCTET_TEMPLATE_LEVELS, from kernels/elementwise/f32_act_softmax_loops.inc. ----
// Along an axis: `len` values `stride` floats apart, for `columns` adjacent columns (x + j, y + j
// for j < columns). stride == 1 is one contiguous row (columns == 1).
// Softmax / LogSoftmax also take the lane count of ONNX Runtime's kernel whose arithmetic they
// follow (8 or 16: kernels/ref/mlas_softmax.h).
using F32SoftmaxUkernel = void (*)(size_t len, size_t columns, size_t stride, const float* x, float* y, int width);
using F32AxisReduceUkernel = void (*)(size_t len, size_t columns, size_t stride, const float* x, float* y);
using F32ArgUkernel = void (*)(size_t len, size_t columns, size_t stride, const float* x, int64_t* y,
                               bool last_index);

#define OCTET_ELTWISE_DECLARE_ACT(isa, unused)                                                             \
  namespace isa {                                                                                          \
  void f32_prelu(size_t, size_t, const float*, size_t, const float*, size_t, float*);                      \
  void f32_softmax(size_t, size_t, size_t, const float*, float*, int);                                     \
  void f32_logsoftmax(size_t, size_t, size_t, const float*, float*, int);                                  \
  void f32_argmax(size_t, size_t, size_t, const float*, int64_t*, bool);                                   \
  void f32_argmin(size_t, size_t, size_t, const float*, int64_t*, bool);                                   \
  void f32_reduce_max(size_t, size_t, size_t, const float*, float*);                                       \
  void f32_reduce_min(size_t, size_t, size_t, const float*, float*);                                       \
  }
OCTET_TEMPLATE_LEVELS(OCTET_ELTWISE_DECLARE_ACT, )
#undef OCTET_ELTWISE_DECLARE_ACT

#define OCTET_ELTWISE_ENTRY(isa, OP) {#OP "__" #isa, Isa::isa, &isa::OP},
#define OCTET_ELTWISE_TABLE(NAME, FN_TYPE, OP)                                                             \
  inline constexpr EltwiseUkernel<FN_TYPE> NAME##Rows[] = {OCTET_TEMPLATE_LEVELS(OCTET_ELTWISE_ENTRY, OP)  \
                                                               EltwiseUkernel<FN_TYPE>{}};                 \
  inline constexpr std::span<const EltwiseUkernel<FN_TYPE>> NAME = rows_before_terminator(NAME##Rows);

OCTET_ELTWISE_TABLE(kF32PReluUkernels, F32BinaryUkernel, f32_prelu)
OCTET_ELTWISE_TABLE(kF32SoftmaxUkernels, F32SoftmaxUkernel, f32_softmax)
OCTET_ELTWISE_TABLE(kF32LogSoftmaxUkernels, F32SoftmaxUkernel, f32_logsoftmax)
OCTET_ELTWISE_TABLE(kF32ArgMaxUkernels, F32ArgUkernel, f32_argmax)
OCTET_ELTWISE_TABLE(kF32ArgMinUkernels, F32ArgUkernel, f32_argmin)
// ReduceMax / ReduceMin along an axis: y [columns] (stride == 1: one value for the row).
OCTET_ELTWISE_TABLE(kF32ReduceMaxUkernels, F32AxisReduceUkernel, f32_reduce_max)
OCTET_ELTWISE_TABLE(kF32ReduceMinUkernels, F32AxisReduceUkernel, f32_reduce_min)

// ---- The activations of kernels/elementwise/activation_list.h: KERNEL__<level> for every level, in the
// table kF32<OP>Ukernels, F32ActUkernel each. ----
#define OCTET_ACT_DECLARE_ONE(KIND, OP, SINCE, KERNEL, ...) void KERNEL(size_t, const float*, float*, float, float);
#define OCTET_ACT_DECLARE(isa, unused) \
  namespace isa {                      \
  OCTET_F32_ACTIVATIONS(OCTET_ACT_DECLARE_ONE) \
  }
OCTET_TEMPLATE_LEVELS(OCTET_ACT_DECLARE, )
#undef OCTET_ACT_DECLARE
#undef OCTET_ACT_DECLARE_ONE

#define OCTET_ACT_TABLE(KIND, OP, SINCE, KERNEL, ...) OCTET_ELTWISE_TABLE(kF32##OP##Ukernels, F32ActUkernel, KERNEL)
OCTET_F32_ACTIVATIONS(OCTET_ACT_TABLE)
#undef OCTET_ACT_TABLE

#undef OCTET_ELTWISE_TABLE
#undef OCTET_ELTWISE_ENTRY

// The table of an activation of kernels/elementwise/activation_list.h; empty for any other kind.
inline std::span<const EltwiseUkernel<F32ActUkernel>> f32_act_ukernels(ActKind kind) {
  switch (kind) {
#define OCTET_ACT_CASE(KIND, OP, ...) \
  case ActKind::KIND: return kF32##OP##Ukernels;
    OCTET_F32_ACTIVATIONS(OCTET_ACT_CASE)
#undef OCTET_ACT_CASE
    default: return {};
  }
}

}  // namespace octet::kernels
