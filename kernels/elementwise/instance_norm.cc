#include "kernels/ref/fp_contract_off.h"  // first: a multiply then an add stay two roundings

#include "kernels/elementwise/instance_norm.h"

#include <algorithm>
#include <cmath>

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

}  // namespace octet::kernels
