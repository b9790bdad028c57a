#pragma once
// InstanceNormalization over rows of n values (each (image, channel) plane), bit for bit as ONNX
// Runtime's CPU kernel (onnxruntime/core/providers/cpu/nn/instance_norm.cc) computes it, so that a
// float InstanceNormalization between QDQ units, or before a DynamicQuantizeLinear, gives ORT's
// codes. Its statistics are Eigen's mean() and squaredNorm() on 4-float SSE packets:
//
//   sum(v): Eigen's packet sum, GapOrder::eigen_packets4 (kernels/ref/eigen_sum.h), from the
//     first 16-byte aligned element `start`.
//   mean = sum(x) / n with `start` from the row's address (rows of an aligned buffer: (row · n)
//     mod 4 elements past a 16-byte boundary), var_sum = sum((x - mean)²) with start 0 (the
//     expression has no address), inv_std = 1 / sqrt(var_sum / n + epsilon).
//
// then y = x · a + b per row with a = inv_std · scale[c], b = B[c] - mean · a (a multiply, then
// an add).
#include <pthreadpool.h>

#include <cstddef>

#include "kernels/elementwise/eltwise.h"
#include "kernels/isa.h"
#include "kernels/kernel_id.h"
#include "kernels/q8_type.h"
#include "kernels/quantize/quantize.h"
#include "kernels/ref/qmath.h"

namespace octet::kernels {

// The reference statistics of one row x[0 .. n) whose first element sits `start` elements before
// a 16-byte boundary's next aligned element (0 when aligned).
void f32_instance_norm_stats(const float* x, size_t n, size_t start, float epsilon, float* mean, float* inv_std);

// The whole op on its SIMD kernels: the statistics of kEigenSumsRows rows at a time
// (F32EigenSums, each row's packets read in order, the rows' chains side by side), then each
// row's affine on f32_scale_shift while the row is still in the cache. Bit-identical with
// f32_instance_norm_stats and y = x * a + b at every level.
class F32InstanceNorm {
 public:
  F32InstanceNorm(size_t n, Isa isa);
  KernelId kernel_id() const;
  // x, y [rows][n] (y may be x), row r ORT's plane r of its aligned buffer, of channel
  // r % channels; scale and bias [channels].
  void run(size_t rows, size_t channels, const float* x, const float* scale, const float* bias, float epsilon,
           float* y, pthreadpool_t pool) const;

 private:
  size_t n_;
  F32EigenSums sums_;
  const EltwiseUkernel<F32ActUkernel>* affine_ = nullptr;
};

// GroupNorm as a QDQ model runs it (torch's export between DequantizeLinear and QuantizeLinear,
// ORT in float): rows [rows][n] of 8-bit x (row r = image r / groups, group r % groups)
// dequantized, each row's InstanceNormalization (scale[g], bias[g]) as F32InstanceNorm computes
// it, then, per channel, `channels_per_row` runs of n / channels_per_row values each, t * gamma[c]
// + beta[c] (the Mul and the Add after the Reshape back; c = g * channels_per_row + run), and
// quantized to y. The statistics straight from the codes (Q8EigenSumsUkernel, four rows side by
// side), then each run in chunks of the L1D through a float scratch: bit for bit the five steps
// apart, and the float map never goes to memory.
class Q8GroupNorm {
 public:
  // n a multiple of channels_per_row.
  Q8GroupNorm(Q8 x_type, Q8 y_type, size_t n, size_t channels_per_row, Isa isa);
  KernelId kernel_id() const;
  // Floats of the scratch each thread needs.
  static constexpr size_t kChunk = 4096;
  static constexpr size_t scratch_floats() { return kChunk; }
  // scratch: scratch_floats() per thread of `pool` (one without a pool).
  void run(size_t rows, size_t groups, const void* x, QuantParams x_q, const float* scale, const float* bias,
           const float* gamma, const float* beta, float epsilon, QuantParams y_q, void* y, float* scratch,
           pthreadpool_t pool) const;

 private:
  Q8 x_type_, y_type_;
  size_t n_, channels_per_row_;
  const Q8QuantizeKernel* quantize_;  // nullptr: the reference quantize and dequantize
  const EltwiseUkernel<Q8EigenSumsUkernel>* sums_ = nullptr;  // nullptr: the reference
  const EltwiseUkernel<F32ActUkernel>* affine_ = nullptr;
};

}  // namespace octet::kernels
