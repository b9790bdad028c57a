#include "tests/util/qdq_patterns.h"

#include <algorithm>
#include <cmath>

namespace octet::testing {
namespace qdq_detail {

std::string scalar_f(OnnxBuilder& b, float v) { return b.initializer("", TensorValue::scalar_f32(v)); }

std::vector<int64_t> quantize_symmetric(const std::vector<float>& w, const std::vector<float>& scales, size_t per) {
  std::vector<int64_t> q(w.size());
  for (size_t i = 0; i < w.size(); ++i)
    q[i] = std::clamp<int64_t>(std::llround(w[i] / scales[scales.size() == 1 ? 0 : i / per]), -127, 127);
  return q;
}

std::vector<float> symmetric_scales(const std::vector<float>& w, size_t groups) {
  const size_t per = w.size() / groups;
  std::vector<float> s(groups);
  for (size_t g = 0; g < groups; ++g) {
    float m = 0;
    for (size_t i = 0; i < per; ++i) m = std::max(m, std::fabs(w[g * per + i]));
    s[g] = m > 0 ? m / 127 : 1.0f;
  }
  return s;
}

}  // namespace qdq_detail

using namespace qdq_detail;

std::string qdq(OnnxBuilder& b, const std::string& x, const QParams& q) {
  const std::string s = scalar_f(b, q.scale);
  const std::string zp = b.initializer("", TensorValue::ints(q.type, {}, {q.zero_point}));
  return b.node("DequantizeLinear", {b.node("QuantizeLinear", {x, s, zp}), s, zp});
}

QWeights qdq_weights(OnnxBuilder& b, const std::vector<int64_t>& dims, bool per_channel, float stddev, int64_t axis) {
  const std::vector<float> w = b.normal(count_of(dims), 0.0f, stddev);
  QWeights r;
  // Per channel along axis 0 (conv weights) or the last axis of a 2-D matrix (axis 1).
  if (!per_channel) {
    r.scales = symmetric_scales(w, 1);
    const std::string q = b.initializer("", TensorValue::s8(dims, quantize_symmetric(w, r.scales, w.size())));
    r.dq = b.node("DequantizeLinear", {q, scalar_f(b, r.scales[0]),
                                       b.initializer("", TensorValue::s8({}, {0}))});
    return r;
  }
  std::vector<float> wt = w;  // channel-major copy when the channel axis is the last of two
  const int64_t channels = dims[axis];
  if (axis == 1) {
    const int64_t rows = dims[0];
    for (int64_t r0 = 0; r0 < rows; ++r0)
      for (int64_t c = 0; c < channels; ++c) wt[c * rows + r0] = w[r0 * channels + c];
  }
  r.scales = symmetric_scales(wt, channels);
  std::vector<int64_t> qt = quantize_symmetric(wt, r.scales, wt.size() / channels), q = qt;
  if (axis == 1) {
    const int64_t rows = dims[0];
    for (int64_t r0 = 0; r0 < rows; ++r0)
      for (int64_t c = 0; c < channels; ++c) q[r0 * channels + c] = qt[c * rows + r0];
  }
  const std::string qw = b.initializer("", TensorValue::s8(dims, q));
  const std::string s = b.initializer("", TensorValue::f32({channels}, r.scales));
  const std::string zp = b.initializer("", TensorValue::s8({channels}, std::vector<int64_t>(channels, 0)));
  r.dq = b.node("DequantizeLinear", {qw, s, zp}, {{"axis", axis}});
  return r;
}

std::string qdq_bias(OnnxBuilder& b, int64_t n, float x_scale, const std::vector<float>& w_scales) {
  const std::vector<float> f = b.normal(n, 0.0f, 0.5f);
  std::vector<float> scales(n);
  std::vector<int64_t> q(n);
  for (int64_t c = 0; c < n; ++c) {
    scales[c] = x_scale * w_scales[w_scales.size() == 1 ? 0 : c];
    q[c] = std::llround(f[c] / scales[c]);
  }
  const std::string qb = b.initializer("", TensorValue::s32({n}, q));
  const std::string s = b.initializer("", TensorValue::f32({n}, scales));
  const std::string zp = b.initializer("", TensorValue::s32({n}, std::vector<int64_t>(n, 0)));
  return b.node("DequantizeLinear", {qb, s, zp}, {{"axis", 0}});
}

namespace qdq_detail {

std::string dynamic_tail(OnnxBuilder& b, const std::string& product, const std::string& x_scale, float w_scale,
                         int64_t bias_n) {
  std::string y = b.node("Cast", {product}, {{"to", 1}});
  y = b.node("Mul", {y, b.node("Mul", {x_scale, scalar_f(b, w_scale)})});
  if (bias_n > 0) y = b.node("Add", {y, b.initializer("", TensorValue::f32({bias_n}, b.normal(bias_n, 0.0f, 0.5f)))});
  return y;
}

std::pair<std::string, float> int8_weights(OnnxBuilder& b, const std::vector<int64_t>& dims) {
  const std::vector<float> w = b.normal(count_of(dims), 0.0f, 0.3f);
  const std::vector<float> s = symmetric_scales(w, 1);
  return {b.initializer("", TensorValue::s8(dims, quantize_symmetric(w, s, w.size()))), s[0]};
}

}  // namespace qdq_detail

std::string dynamic_conv(OnnxBuilder& b, const std::string& x, const std::vector<int64_t>& w_dims, const Attrs& attrs,
                         bool bias) {
  auto q = b.node_multi("DynamicQuantizeLinear", {x}, 3);
  auto [w, w_scale] = int8_weights(b, w_dims);
  std::string y = b.node("ConvInteger", {q[0], w, q[2], b.initializer("", TensorValue::s8({}, {0}))}, attrs);
  y = dynamic_tail(b, y, q[1], w_scale, 0);
  if (bias) {
    const int64_t n = w_dims[0];
    std::vector<int64_t> dims(w_dims.size() - 1, 1);
    dims[0] = n;
    y = b.node("Add", {y, b.initializer("", TensorValue::f32(dims, b.normal(n, 0.0f, 0.5f)))});
  }
  return y;
}

std::string dynamic_matmul(OnnxBuilder& b, const std::string& x, int64_t k, int64_t n, bool bias) {
  auto q = b.node_multi("DynamicQuantizeLinear", {x}, 3);
  auto [w, w_scale] = int8_weights(b, {k, n});
  std::string y = b.node("MatMulInteger", {q[0], w, q[2], b.initializer("", TensorValue::s8({}, {0}))});
  return dynamic_tail(b, y, q[1], w_scale, bias ? n : 0);
}

}  // namespace octet::testing
