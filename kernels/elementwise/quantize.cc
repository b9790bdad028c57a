#include "kernels/elementwise/quantize.h"

namespace octet::kernels {

const Q8QuantizeKernel* choose_q8_quantize(Isa isa) {
  return first_runnable(kQ8QuantizeKernels, isa);
}

void q8_quantize(const Q8QuantizeKernel& k, Q8 type, size_t n, const float* x, float scale, int32_t zero_point,
                 void* y) {
  k.fn(n, x, scale, zero_point, q8_min(type), q8_max(type), y);
}

}  // namespace octet::kernels
