#include "kernels/ref/fp_contract_off.h"  // first: each step rounds as written

#include "kernels/ref/softmax.h"

#include <cmath>

#include "kernels/ref/mlas_softmax.h"

namespace octet::kernels {
namespace {

// Along one axis (`n` values `stride` apart): the max, and the sum of exp(x - max) in double.
struct AxisSums {
  float max;
  double sum;
};
AxisSums axis_sums(const float* x, int64_t n, int64_t stride) {
  float max = x[0];
  for (int64_t k = 1; k < n; ++k) max = std::fmax(max, x[k * stride]);
  double sum = 0.0;
  for (int64_t k = 0; k < n; ++k) sum += std::exp(static_cast<double>(x[k * stride]) - max);
  return {max, sum};
}

}  // namespace

void f32_softmax__ref(int64_t outer, int64_t axis_len, int64_t inner, const float* x, float* y) {
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * axis_len * inner + i;
      const auto [max, sum] = axis_sums(x + base, axis_len, inner);
      for (int64_t k = 0; k < axis_len; ++k) {
        const int64_t j = base + k * inner;
        y[j] = static_cast<float>(std::exp(static_cast<double>(x[j]) - max) / sum);
      }
    }
  }
}

void f32_logsoftmax__ref(int64_t outer, int64_t axis_len, int64_t inner, const float* x, float* y) {
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * axis_len * inner + i;
      const auto [max, sum] = axis_sums(x + base, axis_len, inner);
      const double log_sum = std::log(sum);
      for (int64_t k = 0; k < axis_len; ++k) {
        const int64_t j = base + k * inner;
        y[j] = static_cast<float>(static_cast<double>(x[j]) - max - log_sum);
      }
    }
  }
}

void f32_softmax_mlas__ref(size_t len, size_t stride, const float* x, float* y, bool log, int width) {
  if (len == 0) return;
  float max = x[0];
  for (size_t k = 1; k < len; ++k) max = x[k * stride] > max ? x[k * stride] : max;
  float lanes[16] = {};
  for (size_t k = 0; k < len; ++k) {
    const float e = mlas_exp::exp_for_sum(x[k * stride] - max, width);
    lanes[k % size_t(width)] += e;
    if (!log) y[k * stride] = e;  // x[k] is not read again
  }
  const float sum = mlas_exp::fold_lanes(lanes, width);
  if (log) {
    const float log_sum = std::log(sum);
    for (size_t k = 0; k < len; ++k) y[k * stride] = (x[k * stride] - max) - log_sum;
    return;
  }
  const float scale = 1.0f / sum;
  for (size_t k = 0; k < len; ++k) y[k * stride] *= scale;
}

void f32_arg_extremum__ref(bool min, bool last_index, int64_t outer, int64_t axis_len, int64_t inner,
                           const float* x, int64_t* y) {
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const float* p = x + o * axis_len * inner + i;
      float best = p[0];
      int64_t at = 0;
      for (int64_t k = 1; k < axis_len; ++k) {
        const float v = p[k * inner];
        const bool take = last_index ? (min ? v <= best : v >= best) : (min ? v < best : v > best);
        if (take) {
          best = v;
          at = k;
        }
      }
      y[o * inner + i] = at;
    }
  }
}

}  // namespace octet::kernels
