// Quantized patterns written by hand with OnnxBuilder, the way ONNX Runtime's quantizer writes
// them (QDQ: QuantizeLinear -> DequantizeLinear around a float op; dynamic: DynamicQuantizeLinear
// -> ConvInteger / MatMulInteger -> Cast -> Mul -> Add). Used by the op catalogue's probes
// (tools/catalogue) and the sweep (tests/sweep). Scales come from the float values drawn here,
// so the integer products stay in range; every tensor is deterministic for the builder's seed.
#pragma once

#include <string>
#include <vector>

#include "tests/util/onnx_builder.h"

namespace octet::testing {

struct QParams {
  float scale = 1.0f / 64;
  int64_t zero_point = 128;
  ElemType type = ElemType::u8;
};

// x -> QuantizeLinear -> DequantizeLinear with per-tensor parameters.
std::string qdq(OnnxBuilder& b, const std::string& x, const QParams& q);

// Constant float weights drawn from N(0, stddev), stored as int8 symmetric per output channel
// (axis 0) or per tensor, and dequantized: the DequantizeLinear output and the weight scales.
struct QWeights {
  std::string dq;
  std::vector<float> scales;  // one per output channel, or one
};
QWeights qdq_weights(OnnxBuilder& b, const std::vector<int64_t>& dims, bool per_channel, float stddev = 0.3f,
                     int64_t axis = 0);

// A bias of `n` values stored as int32 with scale x_scale * w_scale[c] (zero point 0), dequantized.
std::string qdq_bias(OnnxBuilder& b, int64_t n, float x_scale, const std::vector<float>& w_scales);

// The dynamic-quantization chain around an integer product: DynamicQuantizeLinear(x), then
// ConvInteger (conv) or MatMulInteger with int8 weights (per tensor, symmetric), Cast to float,
// Mul by x_scale * w_scale, Add bias when bias_n > 0. `attrs` go to ConvInteger.
std::string dynamic_conv(OnnxBuilder& b, const std::string& x, const std::vector<int64_t>& w_dims, const Attrs& attrs,
                         bool bias);
std::string dynamic_matmul(OnnxBuilder& b, const std::string& x, int64_t k, int64_t n, bool bias);

}  // namespace octet::testing
