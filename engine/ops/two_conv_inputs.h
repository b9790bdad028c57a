#pragma once
// The inputs of the fused ops that chain two convs behind one feature map (SqueezeExcite,
// PointwiseDepthwise): x, then each conv's weights and optional bias, in that order.
#include <span>

#include "engine/op_registry.h"

namespace octet::ops {

enum TwoConvInput : size_t { kX, kW1, kB1, kW2, kB2 };

struct TwoConvData {
  const float *x, *w1, *b1, *w2, *b2;  // b1 / b2: nullptr when absent
};

inline TwoConvData two_conv_data(const OpContext& c, std::span<const void* const> in) {
  auto at = [&](size_t i) { return c.has(i) ? static_cast<const float*>(in[i]) : nullptr; };
  return {at(kX), at(kW1), at(kB1), at(kW2), at(kB2)};
}

// infer(): both convs' weights must be constants (their kernels pack them at plan time).
inline void require_constant_weights(const OpContext& c) {
  for (size_t i : {kW1, kW2})
    if (!c.in_const[i]) c.fail("the weights must be constants");
}

}  // namespace octet::ops
