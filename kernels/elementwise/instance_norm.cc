#include "kernels/ref/fp_contract_off.h"  // first: a multiply then an add stay two roundings

#include "kernels/elementwise/instance_norm.h"

#include <algorithm>
#include <cmath>

#include "kernels/elementwise/parallel_pieces.h"
#include "kernels/ref/eigen_sum.h"
#include "kernels/ref/pool2d.h"
#include "kernels/ref/reduce.h"

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

namespace {

// f32_instance_norm_stats' last steps on a call's rows: the sums of x into means, the sums of
// squares about them into inverse deviations.
void to_mean(size_t m, size_t n, float* sums) {
  for (size_t i = 0; i < m; ++i) sums[i] /= static_cast<float>(n);
}
void to_inv_std(size_t m, size_t n, float epsilon, float* var_sums) {
  for (size_t i = 0; i < m; ++i) var_sums[i] = 1.0f / std::sqrt(var_sums[i] / static_cast<float>(n) + epsilon);
}

}  // namespace

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
      to_mean(m, n, mean);
      sums_.run(m, n, row, zero, mean, inv_std);
      to_inv_std(m, n, epsilon, inv_std);
      for (size_t i = 0; i < m; ++i) {
        const size_t c = (r + i) % channels;
        const float a = inv_std[i] * scale[c], b = bias[c] - mean[i] * a;
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

}  // namespace

Q8GroupNorm::Q8GroupNorm(Q8 x_type, Q8 y_type, size_t n, size_t channels_per_row, Isa isa)
    : x_type_(x_type),
      y_type_(y_type),
      n_(n),
      channels_per_row_(std::max<size_t>(1, channels_per_row)),
      quantize_(choose_q8_quantize(isa)),
      sums_(first_runnable(kQ8EigenSumsUkernels, isa)),
      affine_(first_runnable(kF32ScaleShiftUkernels, isa)) {}

KernelId Q8GroupNorm::kernel_id() const {
  const KernelId sums = sums_ ? row_kernel(*sums_) : reference_kernel("q8_eigen_sums__ref");
  const KernelId affine = affine_ ? row_kernel(*affine_) : reference_kernel("f32_scale_shift__ref");
  const KernelId dq = quantize_ ? KernelId{quantize_->dequantize_name, quantize_->isa == Isa::scalar}
                                : reference_kernel("q8_dequantize_linear__ref");
  const KernelId q = quantize_ ? row_kernel(*quantize_) : reference_kernel("q8_quantize_linear__ref");
  return sums + " + " + dq + " + " + affine + " + " + q;
}

void Q8GroupNorm::run(size_t rows, size_t groups, const void* x, QuantParams x_q, const float* scale,
                      const float* bias, const float* gamma, const float* beta, float epsilon, QuantParams y_q,
                      void* y, float* scratch, pthreadpool_t pool) const {
  const size_t n = n_, runs = channels_per_row_, run = n_ / channels_per_row_;
  if (rows == 0 || n == 0) return;
  const bool is_signed = x_type_ == Q8::s8;
  const auto* xb = static_cast<const uint8_t*>(x);
  auto* yb = static_cast<uint8_t*>(y);
  const size_t calls = (rows + kEigenSumsRows - 1) / kEigenSumsRows;
  const size_t threads = pool ? std::max<size_t>(1, pthreadpool_get_threads_count(pool)) : 1;
  const size_t tasks = std::min(threads, calls), calls_per_task = (calls + tasks - 1) / tasks;
  auto sums = [&](size_t m, const void* const* rows_x, const size_t* lead, const float* center, float* out) {
    if (sums_) sums_->fn(m, n, rows_x, is_signed, x_q.scale, x_q.zero_point, lead, center, out);
    else q8_eigen_sums__ref(m, n, rows_x, is_signed, x_q.scale, x_q.zero_point, lead, center, out);
  };
  auto task = [&](size_t t) {
    float* f = scratch + t * scratch_floats();
    for (size_t call = t * calls_per_task; call < std::min(calls, (t + 1) * calls_per_task); ++call) {
      const size_t r = call * kEigenSumsRows, m = std::min(kEigenSumsRows, rows - r);
      // ORT's statistics (F32InstanceNorm's): the mean from each row's start in ORT's aligned
      // float buffer, the squares about it from lead 0.
      const void* row[kEigenSumsRows];
      size_t start[kEigenSumsRows], zero[kEigenSumsRows] = {};
      float mean[kEigenSumsRows], inv_std[kEigenSumsRows];
      for (size_t i = 0; i < m; ++i) {
        row[i] = xb + (r + i) * n;
        start[i] = eigen_row_lead(r + i, n);
      }
      sums(m, row, start, nullptr, mean);
      to_mean(m, n, mean);
      sums(m, row, zero, mean, inv_std);
      to_inv_std(m, n, epsilon, inv_std);
      for (size_t i = 0; i < m; ++i) {
        const size_t g = (r + i) % groups;
        const float a = inv_std[i] * scale[g], b = bias[g] - mean[i] * a;
        // Chunks of the row in the L1D, each channel's part of a chunk its own Mul and Add.
        for (size_t off = 0; off < n; off += kChunk) {
          const size_t len = std::min(kChunk, n - off), at = (r + i) * n + off;
          q8_dequantize(quantize_, len, xb + at, is_signed, x_q.scale, x_q.zero_point, f, nullptr);
          scale_shift(affine_, len, f, f, a, b);
          for (size_t j = off; j < off + len;) {
            const size_t k = j / run, end = std::min(off + len, (k + 1) * run), c = g * runs + k;
            scale_shift(affine_, end - j, f + (j - off), f + (j - off), gamma[c], beta[c]);
            j = end;
          }
          q8_quantize(quantize_, y_type_, len, f, y_q.scale, y_q.zero_point, yb + at, nullptr);
        }
      }
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
