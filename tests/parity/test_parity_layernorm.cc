// LayerNormalization against ONNX Runtime bit for bit (Y, Mean and InvStdDev) at every runnable
// level and 1 or 2 threads, on rows that tell ORT 1.30's arithmetic (kernels/ref/layernorm.h)
// from its neighbours: lengths below 8 (Welford), at and past 8 with every tail of MLAS's 8 float
// lanes and 4 double lanes, ConvNeXt's 96 channels, with and without bias; the rows offset and
// spread like the probes that pinned the formula (the one-pass float sum of squares octet ran
// before agreed on fewer than half of such rows' InvStdDev, double statistics on two thirds).
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "engine/session.h"
#include "io/tensor_io.h"
#include "kernels/isa.h"
#include "tests/parity/parity_fixture.h"

namespace octet::parity {
namespace layernorm_parity {

using testing::OnnxBuilder;

ir::TensorData rows_like_activations(int64_t rows, int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> z;
  std::uniform_real_distribution<float> spread(0.1f, 30.0f), offset(-5.0f, 5.0f);
  std::vector<float> v(size_t(rows * n));
  for (int64_t r = 0; r < rows; ++r) {
    const float s = spread(rng), o = offset(rng);
    for (int64_t h = 0; h < n; ++h) v[size_t(r * n + h)] = z(rng) * s + o;
  }
  return ir::TensorData::f32({rows, n}, v);
}

TEST(LayerNormParity, YMeanAndInvStdDevAreOrtsBits) {
  OCTET_SKIP_WITHOUT_ORT();
  const int64_t rows = 64;
  const int64_t lengths[] = {1, 3, 7, 8, 9, 12, 13, 15, 16, 19, 20, 23, 31, 96, 101, 103};
  OnnxBuilder b(17);
  std::map<std::string, ir::TensorData> in;
  for (int64_t n : lengths) {
    const std::string tag = "n" + std::to_string(n);
    const auto x = b.input(tag, {rows, n});
    in.emplace(tag, rows_like_activations(rows, n, uint32_t(n)));
    const auto scale = b.random_normal_init(tag + ".scale", {n}, 0.0f, 1.0f);
    const auto bias = b.random_normal_init(tag + ".bias", {n}, 0.0f, 1.0f);
    const bool with_bias = n % 2 == 1 || n == 96;
    std::vector<std::string> inputs = {x, scale};
    if (with_bias) inputs.push_back(bias);
    const auto outs = b.node_multi("LayerNormalization", inputs, 3, {{"axis", int64_t(-1)}, {"epsilon", 1e-6f}});
    for (const auto& o : outs) b.output(o);
  }
  expect_ort_bytes_at_every_level(b, "layernorm", in);
}

}  // namespace layernorm_parity
}  // namespace octet::parity
