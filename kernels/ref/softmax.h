#pragma once
#include <cstdint>

namespace octet::kernels {

// Softmax over the middle dimension of x viewed as [outer][axis_len][inner] (dense).
// Subtracts the max first so large logits do not overflow.
void f32_softmax__ref(int64_t outer, int64_t axis_len, int64_t inner, const float* x, float* y);

// LogSoftmax likewise: (x - max) - log(sum exp(x - max)), the sum in double.
void f32_logsoftmax__ref(int64_t outer, int64_t axis_len, int64_t inner, const float* x, float* y);

// ArgMax / ArgMin over the middle dimension of [outer][axis_len][inner] into y [outer][inner]:
// a strictly greater (smaller) value moves the index, with select_last_index a greater (smaller)
// or equal one, so a NaN is chosen only where it comes first.
void f32_arg_extremum__ref(bool min, bool last_index, int64_t outer, int64_t axis_len, int64_t inner,
                           const float* x, int64_t* y);

}  // namespace octet::kernels
