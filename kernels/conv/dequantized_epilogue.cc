#include "kernels/ref/fp_contract_off.h"  // the epilogue rounds as written

#include "kernels/conv/dequantized_epilogue.h"

#include <algorithm>

namespace octet::kernels {

void q8_center__ref(size_t n, const void* x, bool is_signed, int32_t zero_point, float* out) {
  if (is_signed) {
    const auto* v = static_cast<const int8_t*>(x);
    for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(static_cast<int32_t>(v[i]) - zero_point);
  } else {
    const auto* v = static_cast<const uint8_t*>(x);
    for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(static_cast<int32_t>(v[i]) - zero_point);
  }
}

void f32_scale_bias_clamp__ref(size_t pixels, size_t channels, float* y, const float* scale, const float* bias,
                               float lo, float hi) {
  for (size_t p = 0; p < pixels; ++p) {
    float* row = y + p * channels;
    for (size_t k = 0; k < channels; ++k) {
      const float v = bias != nullptr ? row[k] * scale[k] + bias[k] : row[k] * scale[k];
      row[k] = std::min(std::max(v, lo), hi);
    }
  }
}

const DequantizedEpilogueKernel& choose_dequantized_epilogue(Isa isa) {
  return *first_runnable(kDequantizedEpilogueKernels, isa);
}

}  // namespace octet::kernels
