#pragma once
#include <cstdint>

namespace octet::kernels {

// Softmax over the middle dimension of x viewed as [outer][axis_len][inner] (dense).
// Subtracts the max first so large logits do not overflow.
void f32_softmax__ref(int64_t outer, int64_t axis_len, int64_t inner, const float* x, float* y);

}  // namespace octet::kernels
