#include "kernels/ref/reduce.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/ref/eigen_sum.h"
#include "kernels/ref/index_walk.h"
#include "kernels/ref/pool2d.h"

namespace octet::kernels {

void f32_reduce_mean_strided__ref(int rank, const int64_t* dims, const bool* reduced,
                                  const float* x, const int64_t* x_strides, float* y) {
  const ReducedOutput out = reduced_output(rank, dims, reduced);
  const std::vector<double> sums = strided_sums(rank, dims, x, x_strides, out, 0.0);
  for (int64_t i = 0; i < out.count; ++i)
    y[i] = static_cast<float>(sums[size_t(i)] / static_cast<double>(out.per_output));
}

void f32_reduce_sum_strided__ref(int rank, const int64_t* dims, const bool* reduced,
                                 const float* x, const int64_t* x_strides, float* y) {
  const ReducedOutput out = reduced_output(rank, dims, reduced);
  const std::vector<double> sums = strided_sums(rank, dims, x, x_strides, out, 0.0);
  for (int64_t i = 0; i < out.count; ++i) y[i] = static_cast<float>(sums[size_t(i)]);
}

void f32_row_sums_eigen__ref(size_t rows, size_t n, const float* x, float* y, size_t first_row, float divisor) {
  for (size_t r = 0; r < rows; ++r)
    y[r] = f32_sum_eigen_packets4(n, eigen_row_lead(first_row + r, n), x + r * n, 1) / divisor;
}

void f32_eigen_sums__ref(size_t rows, size_t n, const float* const* x, const size_t* lead, const float* center,
                         float* sums) {
  for (size_t r = 0; r < rows; ++r) {
    const float* row = x[r];
    if (center == nullptr) {
      sums[r] = sum_eigen_packets4(n, lead[r], [row](size_t i) { return row[i]; });
    } else {
      const float c = center[r];
      sums[r] = sum_eigen_packets4(n, lead[r], [row, c](size_t i) {
        const float d = row[i] - c;
        return d * d;
      });
    }
  }
}

void q8_eigen_sums__ref(size_t rows, size_t n, const void* const* x, bool is_signed, float scale, int32_t zero_point,
                        const size_t* lead, const float* center, float* sums) {
  for (size_t r = 0; r < rows; ++r) {
    const void* row = x[r];
    auto value = [row, is_signed, scale, zero_point](size_t i) {
      const int32_t q = is_signed ? int32_t(static_cast<const int8_t*>(row)[i]) : int32_t(static_cast<const uint8_t*>(row)[i]);
      return static_cast<float>(q - zero_point) * scale;
    };
    if (center == nullptr) {
      sums[r] = sum_eigen_packets4(n, lead[r], value);
    } else {
      const float c = center[r];
      sums[r] = sum_eigen_packets4(n, lead[r], [&value, c](size_t i) {
        const float d = value(i) - c;
        return d * d;
      });
    }
  }
}

void f32_channel_moments__ref(size_t pixels, size_t channels, const float* x, const float* center, double* sum,
                              double* sum_sq) {
  for (size_t c = 0; c < channels; ++c) {
    sum[c] = sum_sq[c] = 0.0;
    for (size_t p0 = 0; p0 < pixels; p0 += kChannelMomentsBlock) {
      float s = 0.0f, q = 0.0f;
      for (size_t p = p0; p < std::min(pixels, p0 + kChannelMomentsBlock); ++p) {
        const float d = x[p * channels + c] - center[c];
        s += d;
        q = std::fma(d, d, q);
      }
      sum[c] += double(s);
      sum_sq[c] += double(q);
    }
  }
}

void f32_strided_sums__ref(size_t count, size_t lane_stride, const float* x, size_t terms, const int64_t* offsets,
                           float* y, float divisor) {
  for (size_t j = 0; j < count; ++j) {
    const float* p = x + j * lane_stride;
    float sum = 0.0f;
    for (size_t t = 0; t < terms; ++t) sum += p[offsets[t]];
    y[j] = sum / divisor;
  }
}

void f32_strided_extremum__ref(Extremum kind, size_t count, size_t lane_stride, const float* x, size_t terms,
                               const int64_t* offsets, float* y) {
  const float identity = kind == Extremum::min ? std::numeric_limits<float>::infinity()
                                               : -std::numeric_limits<float>::infinity();
  for (size_t j = 0; j < count; ++j) {
    const float* p = x + j * lane_stride;
    float best = identity;
    for (size_t t = 0; t < terms; ++t) best = minmax_detail::pick(kind, best, p[offsets[t]]);
    y[j] = best;
  }
}

}  // namespace octet::kernels
