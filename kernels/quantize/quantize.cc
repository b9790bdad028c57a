#include "kernels/quantize/quantize.h"

#include <cmath>

namespace octet::kernels {

const Q8QuantizeKernel* choose_q8_quantize(Isa isa) {
  return first_runnable(kQ8QuantizeKernels, isa);
}

void q8_quantize(const Q8QuantizeKernel& k, Q8 type, size_t n, const float* x, float scale, int32_t zero_point,
                 void* y) {
  k.fn(n, x, scale, zero_point, q8_min(type), q8_max(type), y);
}

F32Range f32_range(const Q8QuantizeKernel* k, size_t n, const float* x) {
  if (k == nullptr) return f32_range__ref(static_cast<int64_t>(n), x);
  F32Range r;
  k->range(n, x, &r.min, &r.max);
  return r;
}

DynamicQuantizeResult qu8_dynamic_quantize(const Q8QuantizeKernel* k, size_t n, const float* x, uint8_t* y) {
  DynamicQuantizeResult r;
  r.range = f32_range(k, n, x);
  if (n == 0) return r;
  r.finite = std::isfinite(r.range.min) && std::isfinite(r.range.max);
  if (!r.finite) return r;
  r.q = qu8_dynamic_params(r.range.min, r.range.max);
  if (k != nullptr) {
    k->fn(n, x, r.q.scale, r.q.zero_point, 0, 255, y);
  } else {
    q8_quantize_linear__ref<uint8_t>(static_cast<int64_t>(n), x, r.q.scale, r.q.zero_point, y);
  }
  return r;
}

}  // namespace octet::kernels
