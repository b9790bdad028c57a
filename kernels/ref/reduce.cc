#include "kernels/ref/reduce.h"

#include <vector>

#include "kernels/ref/index_walk.h"
#include "kernels/ref/pool2d.h"

namespace octet::kernels {

void f32_reduce_mean_strided__ref(int rank, const int64_t* dims, const bool* reduced,
                                  const float* x, const int64_t* x_strides, float* y) {
  const ReducedOutput out = reduced_output(rank, dims, reduced);
  const std::vector<int64_t>& y_strides = out.strides;
  const int64_t y_count = out.count, reduced_count = out.per_output;

  std::vector<double> sums(y_count, 0.0);
  for_each_index(rank, dims, [&](const int64_t* idx) {
    int64_t x_off = 0, y_off = 0;
    for (int d = 0; d < rank; ++d) {
      x_off += idx[d] * x_strides[d];
      y_off += idx[d] * y_strides[d];
    }
    sums[y_off] += x[x_off];
  });
  for (int64_t i = 0; i < y_count; ++i) {
    y[i] = static_cast<float>(sums[i] / static_cast<double>(reduced_count));
  }
}

void f32_reduce_sum_strided__ref(int rank, const int64_t* dims, const bool* reduced,
                                 const float* x, const int64_t* x_strides, float* y) {
  const ReducedOutput out = reduced_output(rank, dims, reduced);
  const std::vector<int64_t>& y_strides = out.strides;
  std::vector<double> sums(size_t(out.count), 0.0);
  for_each_index(rank, dims, [&](const int64_t* idx) {
    int64_t x_off = 0, y_off = 0;
    for (int d = 0; d < rank; ++d) {
      x_off += idx[d] * x_strides[d];
      y_off += idx[d] * y_strides[d];
    }
    sums[size_t(y_off)] += x[x_off];
  });
  for (int64_t i = 0; i < out.count; ++i) y[i] = static_cast<float>(sums[size_t(i)]);
}

void f32_row_sums_eigen__ref(size_t rows, size_t n, const float* x, float* y, size_t first_row, float divisor) {
  for (size_t r = 0; r < rows; ++r)
    y[r] = f32_sum_eigen_packets4(n, eigen_row_lead(first_row + r, n), x + r * n, 1) / divisor;
}

}  // namespace octet::kernels
