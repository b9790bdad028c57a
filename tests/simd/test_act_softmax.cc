// The parametric activations (LeakyRelu, Elu, Selu, Celu, Softplus, ThresholdedRelu), PRelu,
// Softmax / LogSoftmax along an axis and ArgMax / ArgMin (kernels/elementwise/f32_act_softmax_loops.inc)
// against the scalar references, for every entry this CPU supports: random sizes around the
// vector widths and adversarial values (inf, NaN, -0, huge, tiny, ties, rows of length 1,
// -inf-like and all-equal rows). LeakyRelu, ThresholdedRelu, PRelu and the indices are exact;
// the exp-based ones are held to a relative bound with a small absolute floor.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/elementwise/eltwise.h"
#include "kernels/elementwise/softmax.h"
#include "kernels/elementwise/eltwise_list.h"
#include "kernels/ref/activation.h"
#include "kernels/ref/elementwise.h"
#include "kernels/ref/minmax.h"
#include "kernels/ref/mlas_softmax.h"
#include "kernels/ref/softmax.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels::act_softmax_tests {

using testing::Pool;

template <class Fn>
std::vector<const EltwiseUkernel<Fn>*> runnable(std::span<const EltwiseUkernel<Fn>> list) {
  return testing::runnable_entries(list);
}

constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

std::vector<float> adversarial_values() {
  return {0.0f,   -0.0f,  kInf,   -kInf,  kNaN,    1e-30f, -1e-30f, 1e30f, -1e30f, 88.0f, -88.0f, 100.0f,
          -100.0f, -104.5f, 1e-7f, -1e-7f, 0.5f,   -0.5f,  1.0f,    -1.0f, 2.0f,   -2.0f, 20.0f, -20.0f,
          3.4e38f, -3.4e38f, 1.17e-38f, -1.17e-38f};
}

bool same_or_close(float got, float want, float rel, float abs_floor) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= rel * std::fabs(want) + abs_floor;
}

struct ActCase {
  std::span<const EltwiseUkernel<F32ActUkernel>> list;
  Activation act;
  float rel, abs_floor;  // 0, 0: bit for bit
};

TEST(F32ActUkernel, ParametricActivationsMatchTheRef) {
  std::vector<ActCase> cases = {
      {kF32LeakyReluUkernels, Activation::leaky_relu(0.01f), 0, 0},
      {kF32LeakyReluUkernels, Activation::leaky_relu(-1.7f), 0, 0},
      {kF32ThresholdedReluUkernels, Activation::thresholded_relu(1.0f), 0, 0},
      {kF32ThresholdedReluUkernels, Activation::thresholded_relu(-0.25f), 0, 0},
      {kF32EluUkernels, Activation::elu(1.0f), 4e-7f, 3e-7f},
      {kF32EluUkernels, Activation::elu(2.5f), 4e-7f, 8e-7f},
      {kF32SeluUkernels, Activation::selu(1.67326319f, 1.05070102f), 4e-7f, 5e-7f},
      {kF32CeluUkernels, Activation::celu(1.0f), 4e-7f, 3e-7f},
      {kF32CeluUkernels, Activation::celu(0.3f), 4e-7f, 2e-7f},
      {kF32SoftplusUkernels, Activation::softplus(), 1e-6f, 1e-38f},
  };
  std::mt19937 rng(7);
  for (const ActCase& ac : cases) {
    for (auto* k : runnable(ac.list)) {
      for (int trial = 0; trial < 200; ++trial) {
        const size_t n = trial < 70 ? size_t(trial) : 1 + rng() % 300;
        std::vector<float> x(n);
        std::uniform_real_distribution<float> dist(-12.0f, 12.0f);
        const auto adv = adversarial_values();
        for (float& v : x) v = rng() % 5 == 0 ? adv[rng() % adv.size()] : dist(rng);
        std::vector<float> want(n), got(n, 123.0f);
        f32_unary__ref(ac.act, int64_t(n), x.data(), want.data());
        k->fn(n, x.data(), got.data(), ac.act.alpha, ac.act.beta);
        for (size_t i = 0; i < n; ++i) {
          const bool ok = ac.rel == 0 ? (std::isnan(want[i]) ? std::isnan(got[i])
                                                             : std::memcmp(&got[i], &want[i], sizeof(float)) == 0)
                                      : same_or_close(got[i], want[i], ac.rel, ac.abs_floor);
          ASSERT_TRUE(ok) << k->name << " n=" << n << " x=" << x[i] << " got " << got[i] << " want " << want[i];
        }
      }
    }
  }
}

TEST(F32ActUkernel, InPlaceAndThroughTheUnaryDriver) {
  std::mt19937 rng(8);
  for (Isa isa : testing::isas_under_test()) {
    for (ActKind kind : {ActKind::leaky_relu, ActKind::elu, ActKind::selu, ActKind::celu, ActKind::softplus,
                         ActKind::thresholded_relu}) {
      Activation act{kind};
      act.alpha = 0.7f;
      act.beta = 1.3f;
      const F32Unary unary(kind, isa);
      if (isa != Isa::scalar) {
        EXPECT_EQ(unary.kernel_name().find("__ref"), std::string::npos) << unary.kernel_name();
      }
      const size_t n = 1000 + rng() % 100;
      std::vector<float> x(n), want(n);
      testing::fill_uniform(rng, x);
      for (float& v : x) v *= 9.0f;
      f32_unary__ref(act, int64_t(n), x.data(), want.data());
      unary.run(act, int64_t(n), x.data(), x.data(), nullptr);  // in place
      for (size_t i = 0; i < n; ++i)
        ASSERT_TRUE(same_or_close(x[i], want[i], 1e-6f, 1e-6f)) << unary.kernel_name() << " at " << i;
    }
  }
}

TEST(F32BinaryUkernel, PReluEqualsTheRefBitForBit) {
  std::mt19937 rng(9);
  for (auto* k : runnable(kF32PReluUkernels)) {
    for (int trial = 0; trial < 200; ++trial) {
      const size_t rows = 1 + rng() % 5, cols = 1 + rng() % 70;
      const bool row_slope = rng() % 2;  // one slope row for every row (per channel, NHWC)
      std::vector<float> a(rows * cols), b(row_slope ? cols : rows * cols);
      testing::fill_uniform(rng, a);
      testing::fill_uniform(rng, b);
      const auto adv = adversarial_values();
      for (float& v : a)
        if (rng() % 6 == 0) v = adv[rng() % adv.size()];
      std::vector<float> got(rows * cols), want(rows * cols);
      const int64_t dims[] = {int64_t(rows), int64_t(cols)}, as[] = {int64_t(cols), 1},
                    bs[] = {row_slope ? 0 : int64_t(cols), 1};
      f32_binary_strided__ref(BinaryOp::prelu, 2, dims, a.data(), as, b.data(), bs, Activation{}, want.data());
      k->fn(rows, cols, a.data(), cols, b.data(), row_slope ? 0 : cols, got.data());
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_TRUE(std::isnan(want[i]) ? std::isnan(got[i]) : std::memcmp(&got[i], &want[i], 4) == 0)
            << k->name << " at " << i << " x=" << a[i] << " got " << got[i] << " want " << want[i];
    }
  }
}

// The driver's forms: slope per element and per channel of channels-last x (the microkernel),
// scalar slope and per channel of NCHW x (the LeakyRelu microkernel per run), exact.
TEST(EltwiseDriver, PReluEveryFormEveryIsaEqualsTheRef) {
  Pool pool(pthreadpool_create(2));
  std::mt19937 rng(14);
  const int64_t n = 2, c = 19, h = 30, w = 37;  // 2 x 19 x 1110: several pieces of threads
  std::vector<float> x(size_t(n * c * h * w));
  testing::fill_uniform(rng, x);
  std::vector<float> slope(size_t(c * h * w));
  testing::fill_uniform(rng, slope);
  struct Form {
    const char* what;
    int64_t a[4], b[4];  // strides over dims [n][c][h][w] (row-major x) or [n][h][w][c]
    bool fast_expected;
  };
  const int64_t dims_nchw[] = {n, c, h, w}, dims_nhwc[] = {n, h, w, c};
  const Form forms[] = {
      {"nchw, slope per element", {c * h * w, h * w, w, 1}, {0, h * w, w, 1}, true},
      {"nchw, slope per channel", {c * h * w, h * w, w, 1}, {0, 1, 0, 0}, true},
      {"nchw, scalar slope", {c * h * w, h * w, w, 1}, {0, 0, 0, 0}, true},
      {"nhwc, slope per channel", {h * w * c, w * c, c, 1}, {0, 0, 0, 1}, true},
      {"nhwc, slope along w", {h * w * c, w * c, c, 1}, {0, 0, 1, 0}, true},
  };
  for (Isa isa : runnable_isas()) {
    for (const Form& f : forms) {
      const int64_t* dims = f.a[3] == 1 && f.a[2] == w ? dims_nchw : dims_nhwc;
      const F32Binary prelu(BinaryOp::prelu, 4, dims, f.a, f.b, isa);
      if (isa != Isa::scalar && f.fast_expected) {
        EXPECT_EQ(prelu.kernel_name().find("__ref"), std::string::npos) << f.what << ": " << prelu.kernel_name();
      }
      std::vector<float> want(x.size()), got(x.size());
      f32_binary_strided__ref(BinaryOp::prelu, 4, dims, x.data(), f.a, slope.data(), f.b, Activation{}, want.data());
      prelu.run(x.data(), slope.data(), got.data(), pool.get());
      ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0) << f.what << " " << prelu.kernel_name();
    }
  }
}

// ---- Softmax / LogSoftmax ----

// Rows of a few kinds: random logits at a random scale, huge, -inf-like, all equal, one
// dominant, a -inf entry.
void fill_logits(std::mt19937& rng, std::vector<float>& x, int kind) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const float scale = std::pow(10.0f, float(int(rng() % 5)) - 1.0f);  // 0.1 ... 1000
  for (float& v : x) {
    switch (kind) {
      case 0: v = dist(rng) * scale; break;
      case 1: v = dist(rng) * 1e30f; break;
      case 2: v = rng() % 3 == 0 ? -3.4e38f : dist(rng) * 50.0f; break;
      case 3: v = 42.5f; break;
      case 4: v = rng() % 17 == 0 ? 80.0f : dist(rng); break;
      default: v = rng() % 4 == 0 ? -kInf : dist(rng) * 10.0f; break;
    }
  }
}

void check_softmax(bool log, const F32SoftmaxUkernel fn, const char* name, std::mt19937& rng) {
  for (int trial = 0; trial < 400; ++trial) {
    const int64_t len = trial < 40 ? 1 + trial : 1 + int64_t(rng() % 200);
    const bool strided = trial % 2 == 1;
    const int64_t inner = strided ? 1 + int64_t(rng() % 70) : 1;
    std::vector<float> x(size_t(len * inner));
    fill_logits(rng, x, int(rng() % 6));
    if (trial % 5 == 0 && len > 1) x[size_t(rng() % x.size())] = -kInf;
    std::vector<float> want(x.size()), got(x.size(), 7.0f);
    (log ? f32_logsoftmax__ref : f32_softmax__ref)(1, len, inner, x.data(), want.data());
    const int width = trial % 3 == 0 ? 16 : 8;
    if (strided) fn(size_t(len), size_t(inner), size_t(inner), x.data(), got.data(), width);
    else fn(size_t(len), 1, 1, x.data(), got.data(), width);
    for (size_t i = 0; i < x.size(); ++i) {
      const bool ok = log ? same_or_close(got[i], want[i], 2e-6f, 2e-6f) : same_or_close(got[i], want[i], 1e-5f, 1e-38f);
      ASSERT_TRUE(ok) << name << " len " << len << " inner " << inner << " at " << i << " x=" << x[i] << " got "
                      << got[i] << " want " << want[i];
    }
  }
}

TEST(F32SoftmaxUkernel, ContiguousAndStridedMatchTheDoubleRef) {
  std::mt19937 rng(10);
  for (auto* k : runnable(kF32SoftmaxUkernels)) check_softmax(false, k->fn, k->name, rng);
}

TEST(F32SoftmaxUkernel, LogSoftmaxContiguousAndStridedMatchTheDoubleRef) {
  std::mt19937 rng(11);
  for (auto* k : runnable(kF32LogSoftmaxUkernels)) check_softmax(true, k->fn, k->name, rng);
}

TEST(F32SoftmaxUkernel, NaNAndAllMinusInfRowsGiveNaNLikeTheRef) {
  for (auto* k : runnable(kF32SoftmaxUkernels)) {
    for (size_t len : {1u, 5u, 8u, 33u}) {
      std::vector<float> minus_inf(len, -kInf), with_nan(len, 1.0f), y(len);
      with_nan[len / 2] = kNaN;
      k->fn(len, 1, 1, minus_inf.data(), y.data(), 8);
      for (float v : y) EXPECT_TRUE(std::isnan(v)) << k->name;
      k->fn(len, 1, 1, with_nan.data(), y.data(), 16);
      for (float v : y) EXPECT_TRUE(std::isnan(v)) << k->name;
    }
  }
}

// ONNX Runtime's arithmetic (kernels/ref/mlas_softmax.h) bit for bit, for both of its kernels'
// lane counts, rows and columns, lengths around the lane counts, tails and -inf entries. A
// zmm level follows the 16-lane kernel only (its CPU has AVX-512F, so ORT runs that one there).
TEST(F32SoftmaxUkernel, BitIdenticalToOnnxRuntimesArithmetic) {
  std::mt19937 rng(14);
  for (bool log : {false, true}) {
    for (auto* k : runnable(log ? kF32LogSoftmaxUkernels : kF32SoftmaxUkernels)) {
      for (int width : {8, 16}) {
        if (width == 8 && (isa_features(k->isa) & kZmm)) continue;
        for (int trial = 0; trial < 300; ++trial) {
          const size_t len = trial < 40 ? size_t(1 + trial) : size_t(1 + rng() % 120);
          const size_t inner = trial % 2 == 1 ? size_t(1 + rng() % 45) : 1;
          std::vector<float> x(len * inner);
          fill_logits(rng, x, int(rng() % 6));
          std::vector<float> want(x.size()), got(x.size(), 7.0f);
          for (size_t c = 0; c < inner; ++c) f32_softmax_mlas__ref(len, inner, x.data() + c, want.data() + c, log, width);
          k->fn(len, inner, inner, x.data(), got.data(), width);
          for (size_t i = 0; i < x.size(); ++i) {
            const bool same = std::memcmp(&got[i], &want[i], sizeof(float)) == 0 || (std::isnan(got[i]) && std::isnan(want[i]));
            ASSERT_TRUE(same) << k->name << " width " << width << " len " << len << " inner " << inner << " at " << i
                              << " x=" << x[i] << " got " << got[i] << " want " << want[i];
          }
        }
      }
    }
  }
}

// MLAS's exp for the sum at its edges: the FMA3 kernel's argument clamp and its zero below 2^-126,
// the AVX-512F kernel's subnormals, exact 1 at 0.
TEST(F32SoftmaxUkernel, OnnxRuntimesExpAtTheEdges) {
  EXPECT_EQ(mlas_exp::exp_for_sum(0.0f, 8), 1.0f);
  EXPECT_EQ(mlas_exp::exp_for_sum(0.0f, 16), 1.0f);
  EXPECT_EQ(mlas_exp::exp_for_sum(-87.0f, 8), mlas_exp::exp_for_sum(-87.0f, 16));  // 2^-126 scale: alike
  EXPECT_EQ(mlas_exp::exp_for_sum(-88.0f, 8), 0.0f);                                // 2^-127: FMA3 gives 0
  EXPECT_EQ(mlas_exp::exp_for_sum(-100.0f, 8), 0.0f);                               // clamped, 2^-127: 0
  EXPECT_GT(mlas_exp::exp_for_sum(-100.0f, 16), 0.0f);                              // a subnormal
  EXPECT_LT(mlas_exp::exp_for_sum(-100.0f, 16), std::numeric_limits<float>::min());
  EXPECT_NEAR(mlas_exp::exp_for_sum(-1.0f, 8), std::exp(-1.0f), 2e-7f);
}

TEST(EltwiseDriver, SoftmaxDriverEveryIsaAndThreads) {
  Pool pool(pthreadpool_create(2));
  std::mt19937 rng(12);
  struct Shape {
    int64_t outer, len, inner;
  };
  // The DFL head's [1, 16, 4 * 8400] (cut to 4 * 1000), a classifier, a channels-last seg head.
  const Shape shapes[] = {{1, 16, 4000}, {3, 1000, 1}, {2 * 24 * 24, 21, 1}, {2, 7, 515}, {5, 3, 1}};
  for (Isa isa : runnable_isas()) {
    for (bool log : {false, true}) {
      for (const Shape& s : shapes) {
        const F32Softmax sm(log, s.outer, s.len, s.inner, isa);
        if (isa != Isa::scalar) {
          EXPECT_EQ(sm.kernel_name().find("__ref"), std::string::npos) << sm.kernel_name();
        }
        std::vector<float> x(size_t(s.outer * s.len * s.inner)), want(x.size()), got(x.size());
        fill_logits(rng, x, 0);
        (log ? f32_logsoftmax__ref : f32_softmax__ref)(s.outer, s.len, s.inner, x.data(), want.data());
        sm.run(x.data(), got.data(), pool.get());
        for (size_t i = 0; i < x.size(); ++i)
          ASSERT_TRUE(log ? same_or_close(got[i], want[i], 2e-6f, 2e-6f) : same_or_close(got[i], want[i], 1e-5f, 1e-38f))
              << sm.kernel_name() << " at " << i;
      }
    }
  }
}

// ---- ArgMax / ArgMin ----

TEST(F32ArgUkernel, ArgMaxArgMinEqualTheRefWithTiesNaNAndLastIndex) {
  std::mt19937 rng(13);
  for (bool min : {false, true}) {
    for (auto* k : runnable(min ? kF32ArgMinUkernels : kF32ArgMaxUkernels)) {
      for (int trial = 0; trial < 400; ++trial) {
        const size_t len = trial < 40 ? size_t(1 + trial) : 1 + rng() % 150;
        const bool strided = trial % 2 == 1;
        const size_t inner = strided ? 1 + rng() % 40 : 1;
        std::vector<float> x(len * inner);
        const int kind = int(rng() % 3);
        for (float& v : x) {
          if (kind == 0) v = float(int(rng() % 4)) - 1.5f;  // many ties
          else if (kind == 1) v = float(int(rng() % 1000)) * 0.37f - 100.0f;
          else v = rng() % 8 == 0 ? (rng() % 2 ? kNaN : (rng() % 2 ? -0.0f : 0.0f)) : float(int(rng() % 5));
        }
        for (bool last : {false, true}) {
          std::vector<int64_t> want(inner), got(inner, -1);
          f32_arg_extremum__ref(min, last, 1, int64_t(len), int64_t(inner), x.data(), want.data());
          k->fn(len, strided ? inner : 1, strided ? inner : 1, x.data(), got.data(), last);
          ASSERT_EQ(got, want) << k->name << " len " << len << " inner " << inner << " last " << last;
        }
      }
    }
  }
}

// ReduceMax / ReduceMin along an axis: bit for bit the strided reference, NaN propagating,
// the first of +0 / -0 kept.
TEST(F32ReduceUkernel, ReduceMaxMinEqualTheRef) {
  std::mt19937 rng(15);
  for (bool min : {false, true}) {
    for (auto* k : runnable(min ? kF32ReduceMinUkernels : kF32ReduceMaxUkernels)) {
      for (int trial = 0; trial < 400; ++trial) {
        const size_t len = trial < 70 ? size_t(trial) : 1 + rng() % 150;
        const bool strided = trial % 2 == 1;
        const size_t inner = strided ? 1 + rng() % 40 : 1;
        std::vector<float> x(len * inner);
        const int kind = int(rng() % 3);
        for (float& v : x) {
          if (kind == 0) v = rng() % 2 ? 0.0f : -0.0f;
          else if (kind == 1) v = float(int(rng() % 1000)) * 0.37f - 100.0f;
          else v = rng() % 9 == 0 ? (rng() % 3 == 0 ? kNaN : (rng() % 2 ? -kInf : kInf)) : float(int(rng() % 5)) - 2.0f;
        }
        const int64_t dims[] = {int64_t(len), int64_t(inner)}, strides[] = {int64_t(inner), 1};
        const bool reduced[] = {true, false};
        std::vector<float> want(inner), got(inner, 99.0f);
        f32_reduce_extremum_strided__ref(min ? Extremum::min : Extremum::max, 2, dims, reduced, x.data(), strides,
                                         want.data());
        k->fn(len, strided ? inner : 1, strided ? inner : 1, x.data(), got.data());
        for (size_t i = 0; i < inner; ++i)
          ASSERT_TRUE(std::isnan(want[i]) ? std::isnan(got[i]) : std::memcmp(&got[i], &want[i], 4) == 0)
              << k->name << " len " << len << " inner " << inner << " got " << got[i] << " want " << want[i];
      }
    }
  }
}

}  // namespace octet::kernels::act_softmax_tests
