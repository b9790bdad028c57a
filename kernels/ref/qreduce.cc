#include "kernels/ref/fp_contract_off.h"  // every float step rounds as written

#include "kernels/ref/qreduce.h"

#include <vector>

#include "kernels/ref/index_walk.h"

namespace octet::kernels {

template <typename T>
void q8_reduce_mean_strided__ref(int rank, const int64_t* dims, const bool* reduced, const T* x,
                                 const int64_t* x_strides, QuantParams x_q, QuantParams y_q, T* y) {
  const ReducedOutput out = reduced_output(rank, dims, reduced);
  const int64_t y_count = out.count, n = out.per_output;
  const std::vector<int64_t> sums = strided_sums(rank, dims, x, x_strides, out, -int64_t(x_q.zero_point) * n);
  const float multiplier = x_q.scale / (y_q.scale * static_cast<float>(n));
  for (int64_t i = 0; i < y_count; ++i) {
    // The float conversion is of the exact sum, as in the global pool (which sums in int32).
    const float v = static_cast<float>(sums[size_t(i)]) * multiplier;
    y[i] = static_cast<T>(round_add_zero_point_clamp(v, y_q.zero_point, qmin_of<T>(), qmax_of<T>()));
  }
}

template void q8_reduce_mean_strided__ref<uint8_t>(int, const int64_t*, const bool*, const uint8_t*,
                                                   const int64_t*, QuantParams, QuantParams, uint8_t*);
template void q8_reduce_mean_strided__ref<int8_t>(int, const int64_t*, const bool*, const int8_t*,
                                                  const int64_t*, QuantParams, QuantParams, int8_t*);

}  // namespace octet::kernels
