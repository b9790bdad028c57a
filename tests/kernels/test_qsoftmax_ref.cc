// q8_softmax__ref (ONNX Runtime's QLinearSoftmax algorithm, kernels/ref/qsoftmax.h) on rows
// whose results ONNX Runtime 1.30 computed (recorded from node tools/ort/ort_run.mjs), and its
// own invariants: a row's outputs sum to about 256 steps, the shift to the row maximum makes
// the result independent of a common offset, int8 and uint8 agree after the sign flip.
#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <vector>

#include "kernels/ref/qsoftmax.h"

namespace octet::kernels {
namespace {

// The MLPerf ResNet8's CIFAR image 790: the int8 logits its QGemm wrote (scale 0.18032639)
// and ORT's QLinearSoftmax output (y_scale 1/256, zero point 0). With the table's logarithm
// taken in double instead of float, class 3 comes out 142 instead of 143.
TEST(QSoftmaxRef, MatchesOrtOnARecordedRow) {
  const std::vector<uint8_t> x = {120, 62, 105, 127, 111, 121, 114, 77, 43, 96};
  const std::vector<uint8_t> ort = {40, 0, 3, 143, 8, 48, 14, 0, 0, 1};
  const QSoftmaxTable table = qsoftmax_table(0.18032639f, x.size(), false);
  std::vector<uint8_t> y(x.size());
  q8_softmax__ref<uint8_t>(1, x.size(), 1, x.data(), table, 1.0f / 256.0f, 0, y.data());
  EXPECT_EQ(y, ort);
}

TEST(QSoftmaxRef, OffsetInvariantAndSignedMatchesUnsigned) {
  std::mt19937 rng(3);
  for (size_t d : {2u, 10u, 37u, 1000u}) {
    for (float scale : {0.01f, 0.1f, 0.5f}) {
      std::vector<uint8_t> x(d);
      for (auto& v : x) v = uint8_t(rng() % 200);
      std::vector<uint8_t> shifted(d), y(d), y_shifted(d);
      for (size_t i = 0; i < d; ++i) shifted[i] = uint8_t(x[i] + 55);
      const QSoftmaxTable tu = qsoftmax_table(scale, d, false);
      q8_softmax__ref<uint8_t>(1, d, 1, x.data(), tu, 1.0f / 256.0f, 0, y.data());
      q8_softmax__ref<uint8_t>(1, d, 1, shifted.data(), tu, 1.0f / 256.0f, 0, y_shifted.data());
      EXPECT_EQ(y, y_shifted) << "d " << d << " scale " << scale;
      const int sum = std::accumulate(y.begin(), y.end(), 0);
      EXPECT_NEAR(sum, 256, double(d) / 2 + 1) << "d " << d << " scale " << scale;
      // int8 input x - 128 with output zero point -128 gives the same steps.
      std::vector<int8_t> xs(d), ys(d);
      for (size_t i = 0; i < d; ++i) xs[i] = int8_t(int(x[i]) - 128);
      const QSoftmaxTable ts = qsoftmax_table(scale, d, true);
      q8_softmax__ref<int8_t>(1, d, 1, xs.data(), ts, 1.0f / 256.0f, -128, ys.data());
      // (Except a value of 256 steps, which uint8 clamps to 255 and int8 wraps: see below.)
      for (size_t i = 0; i < d; ++i) {
        if (y[i] < 255) {
          EXPECT_EQ(int(ys[i]) + 128, int(y[i])) << "d " << d << " i " << i;
        }
      }
    }
  }
}

// One class far above the rest rounds to 256 steps: uint8 clamps it to 255, int8 with zero
// point -128 wraps it to -128 (256 - 128 = 128 stored in a byte), as ONNX Runtime does.
TEST(QSoftmaxRef, DominantClassClampsForUint8AndWrapsForInt8) {
  const uint8_t xu[2] = {250, 0};
  const int8_t xs[2] = {122, -128};
  uint8_t yu[2];
  int8_t ys[2];
  q8_softmax__ref<uint8_t>(1, 2, 1, xu, qsoftmax_table(0.5f, 2, false), 1.0f / 256.0f, 0, yu);
  q8_softmax__ref<int8_t>(1, 2, 1, xs, qsoftmax_table(0.5f, 2, true), 1.0f / 256.0f, -128, ys);
  EXPECT_EQ(yu[0], 255);
  EXPECT_EQ(yu[1], 0);
  EXPECT_EQ(ys[0], -128);
  EXPECT_EQ(ys[1], -128);
}

}  // namespace
}  // namespace octet::kernels
