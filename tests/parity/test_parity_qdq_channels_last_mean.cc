// A QDQ ReduceMean over H and W that reads a quantized conv's output (the SE means of VoVNet's eSE,
// ReXNet, SE-ResNeXt in a QDQ model): ONNX Runtime runs that conv as an NHWC QLinearConv and
// pushes the transpose through the DequantizeLinear and the ReduceMean, whose axes become {1, 2}
// of the NHWC tensor: each channel sums its pixels in their order, then divides
// (ir::kOrtChannelsLastAttr, loader/ort_nhwc.h). octet's bytes must be ORT's there; a mean of a
// tensor no conv wrote (the graph's input, below) keeps the NCHW rows' order and ORT's bytes too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "engine/session.h"
#include "tests/parity/parity_fixture.h"
#include "tests/parity/qdq_chain_util.h"

namespace octet::parity {
namespace qdq_channels_last_mean_parity {

using testing::ElemType;
using testing::OnnxBuilder;
using testing::TensorValue;
using qdq_chain::dq;
using qdq_chain::q;
using qdq_chain::Quant;
using qdq_chain::quant;

// A 1x1 QDQ conv of `in_c` -> `out_c` channels: per-tensor int8 weights in [-60, 60], no bias.
std::string qdq_conv(OnnxBuilder& b, const std::string& x, int64_t in_c, int64_t out_c, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> w(-60, 60);
  std::vector<int64_t> values(size_t(in_c * out_c));
  for (auto& v : values) v = w(rng);
  const std::string weight = b.node("DequantizeLinear", {b.initializer("", TensorValue::s8({out_c, in_c, 1, 1}, values)),
                                                         b.initializer("", {}, {0.004f}),
                                                         b.initializer("", TensorValue::s8({}, {0}))});
  return b.node("Conv", {x, weight});
}

// The input is constant over each image's pixels, so each channel's features are one code,
// and the mean's scale is twice the features': in exact arithmetic every odd code's mean lands
// on a rounding tie, and the last bits of the float sum, which its order sets, decide the byte.
// One image (ORT sums the pixels in order), then batches of 3 and 5 (MLAS's M = 1 SGEMM order),
// over pixel counts of each remainder mod 4 (323, 900, 49).
TEST(QdqChannelsLastMeanParity, SeMeanOfAConvSumsEachChannelAsOrtDoes) {
  OCTET_SKIP_WITHOUT_ORT();
  struct Case {
    int64_t batch, h, w;
  };
  for (const Case& k : {Case{1, 17, 19}, Case{3, 30, 30}, Case{5, 7, 7}}) {
    OnnxBuilder b(13);
    auto x = b.input("x", {-1, 8, k.h, k.w});
    const Quant in = quant(b, false, 0.03f, 128), feature = quant(b, false, 0.011f, 0),
                mean = quant(b, false, 0.022f, 0), fc = quant(b, false, 0.02f, 120);
    const auto xq = q(b, x, in);
    // conv -> Relu -> Q: the SE block's input, an NHWC QLinearConv's output in ORT.
    const auto features = q(b, b.node("Relu", {qdq_conv(b, dq(b, xq, in), 8, 64, 1)}), feature);
    const auto pooled =
        q(b, b.node("ReduceMean", {dq(b, features, feature)}, {{"axes", {2, 3}}, {"keepdims", 1}}), mean);
    // The SE's first 1x1 conv reads the mean, as in the models (ORT's transposes then cancel).
    b.output(q(b, qdq_conv(b, dq(b, pooled, mean), 64, 32, 2), fc), ElemType::u8);
    // A mean of the graph's own input: no conv before it, NCHW rows in ORT.
    b.output(q(b, b.node("ReduceMean", {dq(b, xq, in)}, {{"axes", {2, 3}}, {"keepdims", 1}}), mean), ElemType::u8);

    ir::TensorData input = ir::TensorData::make(ir::DType::f32, {k.batch, 8, k.h, k.w});
    std::mt19937 rng(uint32_t(k.batch * 100 + k.h));
    std::normal_distribution<float> level(0.0f, 2.0f);
    auto* v = const_cast<float*>(input.as<float>());
    const int64_t plane = k.h * k.w;
    for (int64_t i = 0; i < k.batch * 8; ++i) std::fill(v + i * plane, v + (i + 1) * plane, level(rng));
    expect_ort_bytes_at_every_level(b, "qdq_channels_last_mean_b" + std::to_string(k.batch), {{"x", input}});
  }
}

}  // namespace qdq_channels_last_mean_parity
}  // namespace octet::parity
