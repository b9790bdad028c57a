#include "kernels/ref/fp_contract_off.h"  // every float step rounds as written

#include "kernels/ref/qreduce.h"

#include <vector>

#include "kernels/ref/index_walk.h"
#include "kernels/ref/reduce.h"

namespace octet::kernels {

bool reduce_mean_rows_case(int rank, const int64_t* dims, const bool* reduced) {
  bool seen_reduced = false;
  for (int d = 0; d < rank; ++d) {
    if (dims[d] == 1) continue;
    if (reduced[d]) seen_reduced = true;
    else if (seen_reduced) return false;
  }
  return true;
}

template <typename T>
void q8_reduce_mean_strided__ref(int rank, const int64_t* dims, const bool* reduced, const T* x,
                                 const int64_t* x_strides, QuantParams x_q, QuantParams y_q, T* y) {
  const ReducedOutput out = reduced_output(rank, dims, reduced);
  const int64_t n = out.per_output;
  // DequantizeLinear's tensor: row-major in `dims` order.
  std::vector<float> fx;
  for_each_index(rank, dims, [&](const int64_t* idx) {
    int64_t off = 0;
    for (int d = 0; d < rank; ++d) off += idx[d] * x_strides[d];
    fx.push_back(dequantize_value(x[off], x_q.scale, x_q.zero_point));
  });
  std::vector<float> mean(size_t(out.count));
  if (n > 0 && reduce_mean_rows_case(rank, dims, reduced)) {
    f32_row_sums_eigen__ref(size_t(out.count), size_t(n), fx.data(), mean.data(), 0, static_cast<float>(n));
  } else {
    std::vector<int64_t> dense(size_t(rank), 1);
    for (int d = rank - 2; d >= 0; --d) dense[size_t(d)] = dense[size_t(d) + 1] * dims[d + 1];
    const std::vector<float> sums = strided_sums(rank, dims, fx.data(), dense.data(), out, 0.0f);
    for (size_t i = 0; i < mean.size(); ++i) mean[i] = sums[i] / static_cast<float>(n);
  }
  for (size_t i = 0; i < mean.size(); ++i) y[i] = quantize_one<T>(mean[i], y_q.scale, y_q.zero_point);
}

template <typename T>
void q8_reduce_mean_hw_nhwc__ref(const int64_t* dims, const T* x, const int64_t* x_strides, QuantParams x_q,
                                 QuantParams y_q, GapOrder order, T* y) {
  const int64_t batch = dims[0], hw = dims[1] * dims[2], channels = dims[3];
  std::vector<float> fx;
  std::vector<float> mean(size_t(batch * channels));
  for_each_index(4, dims, [&](const int64_t* idx) {
    int64_t off = 0;
    for (int d = 0; d < 4; ++d) off += idx[d] * x_strides[d];
    fx.push_back(dequantize_value(x[off], x_q.scale, x_q.zero_point));
  });
  f32_global_avgpool_nhwc__ref(int(batch), int(hw), int(channels), fx.data(), mean.data(), order);
  for (size_t i = 0; i < mean.size(); ++i) y[i] = quantize_one<T>(mean[i], y_q.scale, y_q.zero_point);
}

template void q8_reduce_mean_hw_nhwc__ref<uint8_t>(const int64_t*, const uint8_t*, const int64_t*, QuantParams,
                                                   QuantParams, GapOrder, uint8_t*);
template void q8_reduce_mean_hw_nhwc__ref<int8_t>(const int64_t*, const int8_t*, const int64_t*, QuantParams,
                                                  QuantParams, GapOrder, int8_t*);

template void q8_reduce_mean_strided__ref<uint8_t>(int, const int64_t*, const bool*, const uint8_t*,
                                                   const int64_t*, QuantParams, QuantParams, uint8_t*);
template void q8_reduce_mean_strided__ref<int8_t>(int, const int64_t*, const bool*, const int8_t*,
                                                  const int64_t*, QuantParams, QuantParams, int8_t*);

}  // namespace octet::kernels
