#include "kernels/ref/fp_contract_off.h"  // first: a multiply then an add stay two roundings

#include "kernels/elementwise/instance_norm.h"

#include <algorithm>
#include <cmath>

#include "kernels/cache_budgets.h"
#include "kernels/elementwise/parallel_pieces.h"
#include "kernels/ref/eigen_sum.h"
#include "kernels/ref/pool2d.h"

namespace octet::kernels {

void f32_instance_norm_stats(const float* x, size_t n, size_t start, float epsilon, float* mean, float* inv_std) {
  const float m = sum_eigen_packets4(n, start, [x](size_t i) { return x[i]; }) / static_cast<float>(n);
  const float var_sum = sum_eigen_packets4(n, 0, [x, m](size_t i) {
    const float d = x[i] - m;
    return d * d;
  });
  *mean = m;
  *inv_std = 1.0f / std::sqrt(var_sum / static_cast<float>(n) + epsilon);
}

F32InstanceNorm::F32InstanceNorm(size_t n, Isa isa)
    : n_(n), sums_(isa), affine_(first_runnable(kF32ScaleShiftUkernels, isa)) {}

KernelId F32InstanceNorm::kernel_id() const {
  return sums_.kernel_id() + " + " + (affine_ ? row_kernel(*affine_) : reference_kernel("f32_scale_shift__ref"));
}

void F32InstanceNorm::run(size_t rows, size_t channels, const float* x, const float* scale, const float* bias,
                          float epsilon, float* y, pthreadpool_t pool) const {
  const size_t n = n_;
  if (rows == 0 || n == 0) return;
  // Pieces of whole calls of about kEltwiseMinPiece values.
  const size_t per_piece = std::max<size_t>(kEigenSumsRows, kEltwiseMinPiece / n / kEigenSumsRows * kEigenSumsRows);
  parallel_pieces(pool, rows, per_piece, [&](size_t first, size_t count) {
    for (size_t r = first; r < first + count; r += kEigenSumsRows) {
      const size_t m = std::min(kEigenSumsRows, first + count - r);
      const float* row[kEigenSumsRows];
      size_t start[kEigenSumsRows], zero[kEigenSumsRows] = {};
      float mean[kEigenSumsRows], inv_std[kEigenSumsRows];
      for (size_t i = 0; i < m; ++i) {
        row[i] = x + (r + i) * n;
        start[i] = eigen_row_lead(r + i, n);  // ORT's planes start (r · n) mod 4 floats past a boundary
      }
      sums_.run(m, n, row, start, nullptr, mean);
      for (size_t i = 0; i < m; ++i) mean[i] /= static_cast<float>(n);
      sums_.run(m, n, row, zero, mean, inv_std);
      for (size_t i = 0; i < m; ++i) {
        const float inv = 1.0f / std::sqrt(inv_std[i] / static_cast<float>(n) + epsilon);
        const size_t c = (r + i) % channels;
        const float a = inv * scale[c], b = bias[c] - mean[i] * a;
        float* out = y + (r + i) * n;
        if (affine_) {
          affine_->fn(n, row[i], out, a, b);
        } else {
          for (size_t j = 0; j < n; ++j) out[j] = row[i][j] * a + b;
        }
      }
    }
  });
}

namespace {

// y[0 .. n) = x * a + b on the ukernel, or in scalar (a multiply, then an add).
void scale_shift(const EltwiseUkernel<F32ActUkernel>* k, size_t n, const float* x, float* y, float a, float b) {
  if (k) {
    k->fn(n, x, y, a, b);
  } else {
    for (size_t j = 0; j < n; ++j) y[j] = x[j] * a + b;
  }
}

// Row r's InstanceNormalization statistics for rows [r, r + m) of the float rows f (n apart), as
// F32InstanceNorm takes them: mean[i] and the inverse deviation.
void row_stats(const F32EigenSums& sums, size_t r, size_t m, size_t n, const float* f, float epsilon, float* mean,
               float* inv_std) {
  const float* row[kEigenSumsRows];
  size_t start[kEigenSumsRows], zero[kEigenSumsRows] = {};
  for (size_t i = 0; i < m; ++i) {
    row[i] = f + i * n;
    start[i] = eigen_row_lead(r + i, n);
  }
  sums.run(m, n, row, start, nullptr, mean);
  for (size_t i = 0; i < m; ++i) mean[i] /= static_cast<float>(n);
  sums.run(m, n, row, zero, mean, inv_std);
  for (size_t i = 0; i < m; ++i) inv_std[i] = 1.0f / std::sqrt(inv_std[i] / static_cast<float>(n) + epsilon);
}

}  // namespace

Q8GroupNorm::Q8GroupNorm(Q8 x_type, Q8 y_type, size_t n, size_t channels_per_row, Isa isa)
    : x_type_(x_type),
      y_type_(y_type),
      n_(n),
      channels_per_row_(std::max<size_t>(1, channels_per_row)),
      // Rows side by side while their floats fit half the L2 (one at least).
      rows_per_call_(std::clamp<size_t>(cache_sizes().l2 / 2 / std::max<size_t>(1, n * sizeof(float)), 1, kEigenSumsRows)),
      quantize_(choose_q8_quantize(isa)),
      sums_(isa),
      affine_(first_runnable(kF32ScaleShiftUkernels, isa)) {}

KernelId Q8GroupNorm::kernel_id() const {
  const KernelId affine = affine_ ? row_kernel(*affine_) : reference_kernel("f32_scale_shift__ref");
  const KernelId dq = quantize_ ? KernelId{quantize_->dequantize_name, quantize_->isa == Isa::scalar}
                                : reference_kernel("q8_dequantize_linear__ref");
  const KernelId q = quantize_ ? row_kernel(*quantize_) : reference_kernel("q8_quantize_linear__ref");
  return dq + " + " + sums_.kernel_id() + " + " + affine + " + " + q;
}

void Q8GroupNorm::run(size_t rows, size_t groups, const void* x, QuantParams x_q, const float* scale,
                      const float* bias, const float* gamma, const float* beta, float epsilon, QuantParams y_q,
                      void* y, float* scratch, pthreadpool_t pool) const {
  const size_t n = n_, per_call = rows_per_call_, runs = channels_per_row_, run = n_ / channels_per_row_;
  if (rows == 0 || n == 0) return;
  const size_t calls = (rows + per_call - 1) / per_call;
  const size_t threads = pool ? std::max<size_t>(1, pthreadpool_get_threads_count(pool)) : 1;
  const size_t tasks = std::min(threads, calls), calls_per_task = (calls + tasks - 1) / tasks;
  auto task = [&](size_t t) {
    float* f = scratch + t * scratch_floats();
    for (size_t call = t * calls_per_task; call < std::min(calls, (t + 1) * calls_per_task); ++call) {
      const size_t r = call * per_call, m = std::min(per_call, rows - r);
      q8_dequantize(quantize_, m * n, static_cast<const uint8_t*>(x) + r * n, x_type_ == Q8::s8, x_q.scale,
                    x_q.zero_point, f, nullptr);
      float mean[kEigenSumsRows], inv_std[kEigenSumsRows];
      row_stats(sums_, r, m, n, f, epsilon, mean, inv_std);
      for (size_t i = 0; i < m; ++i) {
        const size_t g = (r + i) % groups;
        const float a = inv_std[i] * scale[g], b = bias[g] - mean[i] * a;
        float* row = f + i * n;
        scale_shift(affine_, n, row, row, a, b);
        for (size_t k = 0; k < runs; ++k) {
          const size_t c = g * runs + k;
          scale_shift(affine_, run, row + k * run, row + k * run, gamma[c], beta[c]);
        }
      }
      q8_quantize(quantize_, y_type_, m * n, f, y_q.scale, y_q.zero_point, static_cast<uint8_t*>(y) + r * n, nullptr);
    }
  };
  if (tasks == 1) {
    task(0);
    return;
  }
  struct Ctx {
    decltype(task)* fn;
  } ctx{&task};
  pthreadpool_parallelize_1d(
      pool, [](void* c, size_t t) { (*static_cast<Ctx*>(c)->fn)(t); }, &ctx, tasks, 0);
}

}  // namespace octet::kernels
