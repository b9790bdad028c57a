// F32Conv (dense NHWC conv on the FP32 GEMM / IGEMM microkernels) against f32_conv2d_nhwc__ref,
// for every entry of kernels/gemm/f32_gemm_list.h this CPU supports, with and without a fused
// residual Add.
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kernels/conv/f32_conv.h"
#include "kernels/gemm/f32_gemm_list.h"
#include "kernels/ref/conv2d.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace {

using testing::absolute;
using testing::fill_uniform;
using testing::Pool;

// Builds one conv, runs the ref kernel and the fast one on the same random data, and checks
// |y - ref| <= 1e-5 * sum|x*w| + 1e-6 per output (the bound comes from a second ref run on
// absolute values, so it is computed independently of the fast kernel).
class F32ConvTester {
 public:
  F32ConvTester& batch(int v) { s_.batch = v; return *this; }
  F32ConvTester& input(int h, int w, int c) { s_.in_h = h; s_.in_w = w; s_.in_c = c; return *this; }
  F32ConvTester& out_c(int v) { s_.out_c = v; return *this; }
  F32ConvTester& kernel(int h, int w) { s_.kernel_h = h; s_.kernel_w = w; return *this; }
  F32ConvTester& stride(int h, int w) { s_.stride_h = h; s_.stride_w = w; return *this; }
  F32ConvTester& dilation(int h, int w) { s_.dilation_h = h; s_.dilation_w = w; return *this; }
  F32ConvTester& pads(int top, int left, int bottom, int right) {
    s_.pad_top = top; s_.pad_left = left; pad_bottom_ = bottom; pad_right_ = right; return *this;
  }
  F32ConvTester& activation(const Activation& a) { act_ = a; return *this; }
  F32ConvTester& bias(bool v) { bias_ = v; return *this; }
  F32ConvTester& seed(uint32_t v) { seed_ = v; return *this; }
  F32ConvTester& pool(pthreadpool_t p) { pool_ = p; return *this; }
  F32ConvTester& shape(const Conv2dShape& s) { s_ = s; shape_given_ = true; return *this; }

  Conv2dShape conv_shape() const {
    if (shape_given_) return s_;
    Conv2dShape s = s_;
    s.out_h = (s.in_h + s.pad_top + pad_bottom_ - s.dilation_h * (s.kernel_h - 1) - 1) / s.stride_h + 1;
    s.out_w = (s.in_w + s.pad_left + pad_right_ - s.dilation_w * (s.kernel_w - 1) - 1) / s.stride_w + 1;
    return s;
  }

  struct Operands {
    std::vector<float> x, w, b;
  };
  // x, w and b of shape s, uniform in [-1, 1], drawn in that order.
  static Operands random_operands(const Conv2dShape& s, std::mt19937& rng) {
    Operands o{std::vector<float>(size_t(s.batch) * s.in_h * s.in_w * s.in_c),
               std::vector<float>(size_t(s.out_c) * s.in_c * s.kernel_h * s.kernel_w), std::vector<float>(s.out_c)};
    fill_uniform(rng, o.x);
    fill_uniform(rng, o.w);
    fill_uniform(rng, o.b);
    return o;
  }

  // Returns the fast kernel's output (for the thread-equality checks).
  std::vector<float> test(const F32GemmKernel& k) const {
    const Conv2dShape s = conv_shape();
    std::mt19937 rng(seed_);
    const auto [x, w, b] = random_operands(s, rng);
    const size_t out_size = size_t(s.batch) * s.out_h * s.out_w * s.out_c;
    std::vector<float> expected(out_size), bound(out_size), y(out_size, std::nanf(""));
    const float* bias = bias_ ? b.data() : nullptr;
    f32_conv2d_nhwc__ref(s, x.data(), w.data(), bias, act_, expected.data());
    const std::vector<float> ax = absolute(x), aw = absolute(w), ab = absolute(b);
    f32_conv2d_nhwc__ref(s, ax.data(), aw.data(), bias ? ab.data() : nullptr, Activation{}, bound.data());

    F32Conv conv(s, w.data(), bias, act_, k);
    conv.bind(x.data());
    conv.run(x.data(), y.data(), pool_);
    for (size_t i = 0; i < out_size; ++i) {
      const float tol = 1e-5f * bound[i] + 1e-6f;
      if (!(std::fabs(y[i] - expected[i]) <= tol)) {
        ADD_FAILURE() << conv.kernel_name() << " " << testing::describe(s) << ": output " << i << " (channel "
                      << i % s.out_c << ") is " << y[i] << ", expected " << expected[i] << " +- " << tol;
        break;
      }
    }
    return y;
  }

  // The same conv with a residual r of y's shape (a ResNet block's Add fused):
  // y = act(conv(x) + b + r). Checks y against apply(act, ref conv without act + r) within the
  // bound above plus 1e-5 * |r|, times 1.5 (HardSwish's steepest slope); bit for bit against the
  // unfused sequence, the same kernel's conv without activation, + r, then act (for the
  // activations whose microkernels equal the ref bit for bit: all but Sigmoid and SiLU); and
  // that runs without r before and after it give the plain conv (r leaves nothing behind).
  // Every third r is -2x the conv output plus noise, the rest noise as large as the output:
  // where the conv is negative the sum is then positive, so a Relu applied before the add would
  // differ (F32Conv.ResidualReluAndClipClampTheSum checks that on exact data). Returns y (for
  // the thread-equality checks).
  std::vector<float> test_residual(const F32GemmKernel& k) const {
    const Conv2dShape s = conv_shape();
    std::mt19937 rng(seed_);
    const auto [x, w, b] = random_operands(s, rng);
    const size_t out_size = size_t(s.batch) * s.out_h * s.out_w * s.out_c;
    const float* bias = bias_ ? b.data() : nullptr;
    // The ref applies act to its float sum: plain = act(sum) before r is added.
    std::vector<float> sum(out_size), plain(out_size), bound(out_size), r(out_size);
    f32_conv2d_nhwc__ref(s, x.data(), w.data(), bias, Activation{}, sum.data());
    const std::vector<float> ax = absolute(x), aw = absolute(w), ab = absolute(b);
    f32_conv2d_nhwc__ref(s, ax.data(), aw.data(), bias ? ab.data() : nullptr, Activation{}, bound.data());
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (size_t i = 0; i < out_size; ++i) {
      plain[i] = apply(act_, sum[i]);
      r[i] = i % 3 == 0 ? -2.0f * sum[i] + u(rng) : u(rng) * (1.0f + std::fabs(sum[i]));
      sum[i] += r[i];
    }

    F32Conv conv(s, w.data(), bias, act_, k), no_act(s, w.data(), bias, Activation{}, k);
    conv.bind(x.data());
    no_act.bind(x.data());
    std::vector<float> before(out_size, std::nanf("")), y(out_size, std::nanf("")), after(out_size, std::nanf(""));
    std::vector<float> unfused(out_size, std::nanf(""));
    conv.run(x.data(), before.data(), pool_);
    conv.run(x.data(), y.data(), pool_, r.data());
    conv.run(x.data(), after.data(), pool_);
    no_act.run(x.data(), unfused.data(), pool_);
    const std::string where = conv.kernel_name() + " " + testing::describe(s) + " with a residual";
    const bool exact_act = act_.kind != ActKind::sigmoid && act_.kind != ActKind::silu;
    for (size_t i = 0; i < out_size; ++i) {
      const float expected = apply(act_, sum[i]);
      const float tol = 1.5f * (1e-5f * (bound[i] + std::fabs(r[i])) + 1e-6f);
      if (!(std::fabs(y[i] - expected) <= tol)) {
        ADD_FAILURE() << where << ": output " << i << " (channel " << i % s.out_c << ") is " << y[i] << ", expected "
                      << expected << " +- " << tol << " (conv " << sum[i] - r[i] << ", residual " << r[i] << ")";
        break;
      }
      const float fused = apply(act_, unfused[i] + r[i]);
      if (exact_act && !(y[i] == fused)) {
        ADD_FAILURE() << where << ": output " << i << " is " << y[i] << ", the unfused conv + residual + act "
                      << fused;
        break;
      }
      const float plain_tol = 1e-5f * bound[i] + 1e-6f;
      if (!(std::fabs(after[i] - plain[i]) <= plain_tol)) {
        ADD_FAILURE() << where << ": the next run without it gives " << after[i] << " at " << i << ", expected "
                      << plain[i] << " +- " << plain_tol;
        break;
      }
    }
    EXPECT_EQ(before, after) << where;
    return y;
  }

 private:
  Conv2dShape s_;
  int pad_bottom_ = 0, pad_right_ = 0;
  Activation act_;
  bool bias_ = true;
  uint32_t seed_ = 1;
  pthreadpool_t pool_ = nullptr;
  bool shape_given_ = false;
};

// The list entries this CPU can run; records which ran.
std::vector<const F32GemmKernel*> conv_gemm_kernels() {
  return testing::runnable_entries(f32_gemm_kernels(), [](const F32GemmKernel& k) { return k.igemm_name; }, "FP32 IGEMM");
}

// Random small convs: channels 1..65 (around NR = 16 / 24 / 32 and not multiples of 8), kernels
// 1x1 / 3x3 / 5x5 / 1x3 / 3x1 / 2x2, stride 1-2, dilation 1-2, asymmetric pads including
// bottom/right only, spatial down to 1x1, batch 1-3.
F32ConvTester random_conv(std::mt19937& rng, uint32_t seed) {
  const int kernel_sizes[][2] = {{1, 1}, {3, 3}, {5, 5}, {1, 3}, {3, 1}, {2, 2}};
  const auto& ks = kernel_sizes[rng() % 6];
  const int stride = 1 + rng() % 2, dilation = rng() % 4 == 0 ? 2 : 1;
  const int pt = rng() % ks[0], pb = rng() % ks[0], pl = rng() % ks[1], pr = rng() % ks[1];
  const int min_h = std::max(1, dilation * (ks[0] - 1) + 1 - pt - pb);
  const int min_w = std::max(1, dilation * (ks[1] - 1) + 1 - pl - pr);
  F32ConvTester t;
  t.batch(1 + (rng() % 5 == 0 ? rng() % 3 : 0))
      .input(min_h + rng() % 9, min_w + rng() % 9, 1 + rng() % 40)
      .out_c(1 + rng() % 65)
      .kernel(ks[0], ks[1])
      .stride(stride, rng() % 3 == 0 ? 3 - stride : stride)
      .dilation(dilation, dilation)
      .pads(pt, pl, pb, pr)
      .bias(rng() % 4 != 0)
      .activation(testing::random_activation(rng))
      .seed(seed);
  return t;
}

TEST(F32Conv, RandomShapesEveryKernel) {
  const auto kernels = conv_gemm_kernels();
  if (kernels.empty()) return;  // skipped (testing::skip_when_none_run)
  std::mt19937 rng(20261122);
  constexpr int kShapes = 700;
  for (int i = 0; i < kShapes; ++i) {
    const F32ConvTester t = random_conv(rng, i);
    for (const F32GemmKernel* k : kernels) t.test(*k);
    if (HasFailure()) break;
  }
}

// The same random convs, each with a residual: every tile shape and tail the conv can produce.
TEST(F32Conv, ResidualRandomShapesEveryKernel) {
  const auto kernels = conv_gemm_kernels();
  if (kernels.empty()) return;  // skipped (testing::skip_when_none_run)
  std::mt19937 rng(20260512);
  constexpr int kShapes = 200;
  for (int i = 0; i < kShapes; ++i) {
    const F32ConvTester t = random_conv(rng, i);
    for (const F32GemmKernel* k : kernels) t.test_residual(*k);
    if (HasFailure()) break;
  }
  ::testing::Test::RecordProperty("shapes", kShapes);
}

// A fused residual on each path of F32Conv: the plain GEMM (1x1; and with few row tiles, where
// two threads split the channels), the IGEMM (3x3 stride 2 with asymmetric pads; a ResNet
// block's 3x3 stride 1), the merged taps of a first layer (ResNet's 7x7 stride-2 stem over 3
// channels); over two images, with none / Relu / Clip / HardSwish on one thread, Relu and
// HardSwish also on two (equal bit for bit).
TEST(F32Conv, ResidualOnEveryPathEveryKernel) {
  Pool pool(pthreadpool_create(2));
  ASSERT_NE(pool, nullptr);
  enum Path { plain_gemm, igemm, merged_taps };
  struct Case {
    F32ConvTester t;
    Path path;
  };
  std::vector<Case> cases(5);
  cases[0].t.batch(2).input(5, 7, 19).out_c(45).kernel(1, 1);
  cases[0].path = plain_gemm;
  cases[1].t.input(2, 3, 24).out_c(70).kernel(1, 1);
  cases[1].path = plain_gemm;
  cases[2].t.batch(2).input(9, 8, 13).out_c(37).kernel(3, 3).stride(2, 2).pads(1, 1, 0, 1);
  cases[2].path = igemm;
  cases[3].t.batch(2).input(8, 8, 16).out_c(16).kernel(3, 3).pads(1, 1, 1, 1);
  cases[3].path = igemm;
  cases[4].t.batch(2).input(23, 21, 3).out_c(64).kernel(7, 7).stride(2, 2).pads(3, 3, 3, 3);
  cases[4].path = merged_taps;
  int runs = 0;
  for (const F32GemmKernel* k : conv_gemm_kernels()) {
    for (Case& c : cases) {
      const Conv2dShape s = c.t.conv_shape();
      const std::vector<float> w(size_t(s.out_c) * s.in_c * s.kernel_h * s.kernel_w);
      const F32Conv probe(s, w.data(), nullptr, Activation{}, *k);
      ASSERT_EQ(probe.is_plain_gemm(), c.path == plain_gemm) << testing::describe(s);
      ASSERT_EQ(probe.merges_taps(), c.path == merged_taps) << testing::describe(s);
      for (const Activation& act :
           {Activation{}, Activation::relu(), Activation::clip(0.0f, 6.0f), Activation::hard_swish()}) {
        F32ConvTester t = c.t;
        t.activation(act).seed(uint32_t(runs));
        const std::vector<float> serial = t.test_residual(*k);
        ++runs;
        if (act.kind != ActKind::relu && act.kind != ActKind::hard_swish) continue;
        EXPECT_EQ(serial, t.pool(pool.get()).test_residual(*k)) << k->igemm_name << " " << testing::describe(s);
        ++runs;
      }
    }
  }
  ::testing::Test::RecordProperty("runs", runs);
}

// Relu and Clip clamp conv + residual, not the conv. Integer data (exact in FP32 on every path)
// makes every conv output c negative; then r = -2c + 0.5 (sum -c + 0.5 > 0: Relu keeps it),
// r = -c / 2 (sum c / 2 < 0: Relu gives 0) and r = -c + 3 (sum 3, inside Clip(0, 6)), where a
// clamp before the add would give r, r and min(r, 6). Plain GEMM, IGEMM, merged taps and both
// column-chunk forms, one and two threads; bit for bit.
TEST(F32Conv, ResidualReluAndClipClampTheSum) {
  Pool pool(pthreadpool_create(2));
  ASSERT_NE(pool, nullptr);
  std::vector<F32ConvTester> shapes(5);
  shapes[0].batch(2).input(4, 5, 8).out_c(20).kernel(1, 1);
  shapes[1].batch(2).input(9, 8, 13).out_c(37).kernel(3, 3).stride(2, 2).pads(1, 1, 0, 1);
  shapes[2].input(15, 13, 3).out_c(24).kernel(7, 7).stride(2, 2).pads(3, 3, 3, 3);
  shapes[3].batch(2).input(3, 5, 512).out_c(320).kernel(1, 1);                                 // column chunks
  shapes[4].batch(2).input(7, 6, 128).out_c(160).kernel(3, 3).stride(2, 2).pads(1, 1, 1, 1);  // column chunks
  int outputs = 0;
  for (const F32ConvTester& t : shapes) {
    const Conv2dShape s = t.conv_shape();
    const testing::ClampOrderData d = testing::clamp_order_data(s);
    const auto &x = d.x, &w = d.w, &b = d.b, &c = d.c, &r = d.r;
    const size_t out_size = c.size();
    for (const F32GemmKernel* k : conv_gemm_kernels()) {
      for (const Activation& act : {Activation::relu(), Activation::clip(0.0f, 6.0f)}) {
        F32Conv conv(s, w.data(), b.data(), act, *k);
        conv.bind(x.data());
        for (pthreadpool_t threads : {static_cast<pthreadpool_t>(nullptr), pool.get()}) {
          std::vector<float> y(out_size, std::nanf(""));
          conv.run(x.data(), y.data(), threads, r.data());
          for (size_t i = 0; i < out_size; ++i, ++outputs) {
            const float expected = apply(act, c[i] + r[i]);
            ASSERT_EQ(y[i], expected) << conv.kernel_name() << " " << testing::describe(s) << " act "
                                      << int(act.kind) << (threads ? " 2 threads" : "") << ": output " << i
                                      << ", conv " << c[i] << " + residual " << r[i];
          }
        }
      }
    }
  }
  ::testing::Test::RecordProperty("outputs", outputs);
}

TEST(F32Conv, ChannelSweepAroundTheTile) {
  for (const F32GemmKernel* k : conv_gemm_kernels()) {
    for (int c = 1; c <= 2 * k->nr + 1; ++c) {
      F32ConvTester().input(5, 4, c).out_c(c).kernel(3, 3).pads(1, 1, 1, 1).seed(c).test(*k);
      F32ConvTester().input(3, 5, 7).out_c(c).kernel(1, 1).seed(c).test(*k);  // plain GEMM path
    }
  }
}

// MLPerf ResNet8's stride-2 convs pad bottom/right only; plus the first layer and a deep one.
TEST(F32Conv, LayerSizedShapes) {
  auto conv = [](int hw, int ci, int co, int k, int s, int ptl, int pbr) {
    F32ConvTester t;
    t.input(hw, hw, ci).out_c(co).kernel(k, k).stride(s, s).pads(ptl, ptl, pbr, pbr);
    return t;
  };
  for (const F32GemmKernel* k : conv_gemm_kernels()) {
    conv(32, 3, 16, 3, 1, 1, 1).activation(Activation::relu()).test(*k);
    conv(32, 16, 32, 3, 2, 0, 1).test(*k);
    conv(16, 32, 64, 1, 2, 0, 0).test(*k);
    conv(8, 64, 64, 3, 1, 1, 1).activation(Activation::relu()).test(*k);
    conv(7, 48, 128, 1, 1, 0, 0).batch(3).test(*k);
  }
}

// First layers with kernels 5 or more wide over under 8 input channels run each row of taps as
// one tap over a padded copy of x: ResNet's 7x7 stride-2 stem, dilated rows, a stride wider
// than the kernel, asymmetric pads; two images, two threads; narrower kernels next to them keep
// one tap per pixel. The copy is refreshed on every run: a second run on new data at the same
// address must match its own ref.
TEST(F32Conv, FirstLayersMergeEachRowOfTaps) {
  Pool pool(pthreadpool_create(2));
  ASSERT_NE(pool, nullptr);
  auto stem = [] {
    F32ConvTester t;
    return t.batch(2).input(23, 21, 3).out_c(64).kernel(7, 7).stride(2, 2).pads(3, 3, 3, 3);
  };
  for (const F32GemmKernel* k : conv_gemm_kernels()) {
    EXPECT_EQ(stem().test(*k), stem().pool(pool.get()).test(*k)) << k->igemm_name;
    F32ConvTester().input(17, 17, 3).out_c(32).kernel(3, 3).stride(2, 2).pads(0, 0, 1, 1).activation(Activation::clip(0, 6)).test(*k);
    F32ConvTester().input(12, 9, 4).out_c(24).kernel(5, 5).dilation(2, 1).pads(4, 2, 4, 2).test(*k);
    F32ConvTester().batch(3).input(6, 13, 7).out_c(9).kernel(2, 5).stride(1, 6).pads(1, 0, 0, 2).test(*k);
    F32ConvTester().input(9, 9, 1).out_c(17).kernel(5, 5).pads(2, 2, 2, 2).test(*k);

    const Conv2dShape s = stem().conv_shape();
    EXPECT_TRUE(F32Conv::merges_taps(s));
    Conv2dShape eight = s, three_wide = s;
    eight.in_c = 8;
    three_wide.kernel_w = 3;
    EXPECT_FALSE(F32Conv::merges_taps(eight));
    EXPECT_FALSE(F32Conv::merges_taps(three_wide));
    std::mt19937 rng(42);
    std::vector<float> x(size_t(s.batch) * s.in_h * s.in_w * s.in_c), w(size_t(s.out_c) * s.in_c * 49), b(s.out_c);
    fill_uniform(rng, x);
    fill_uniform(rng, w);
    fill_uniform(rng, b);
    F32Conv conv(s, w.data(), b.data(), Activation::relu(), *k);
    ASSERT_TRUE(conv.merges_taps());
    conv.bind(x.data());
    const size_t out_size = size_t(s.batch) * s.out_h * s.out_w * s.out_c;
    std::vector<float> y(out_size), expected(out_size);
    for (int run = 0; run < 2; ++run) {
      if (run > 0) fill_uniform(rng, x);
      conv.run(x.data(), y.data(), pool.get());
      f32_conv2d_nhwc__ref(s, x.data(), w.data(), b.data(), Activation::relu(), expected.data());
      for (size_t i = 0; i < out_size; ++i)
        ASSERT_NEAR(y[i], expected[i], 1e-4f * (1.0f + std::fabs(expected[i]))) << k->igemm_name << " run " << run << " output " << i;
    }
  }
}

TEST(F32Conv, TwoThreadsGiveTheSameOutput) {
  Pool pool(pthreadpool_create(2));
  ASSERT_NE(pool, nullptr);
  for (const F32GemmKernel* k : conv_gemm_kernels()) {
    F32ConvTester t;
    t.batch(2).input(9, 7, 19).out_c(45).kernel(3, 3).pads(1, 0, 1, 2).activation(Activation::relu());
    const std::vector<float> serial = t.test(*k);
    const std::vector<float> threaded = t.pool(pool.get()).test(*k);
    EXPECT_EQ(serial, threaded) << k->igemm_name;
    F32ConvTester g;  // few row tiles: the threads split the channels
    g.input(2, 3, 24).out_c(70).kernel(1, 1);
    EXPECT_EQ(g.test(*k), g.pool(pool.get()).test(*k)) << k->gemm_name;
  }
}

// Packed weights over f32_gemm_column_chunk's budget (depths from this CPU's L2): chunks of
// output channels run over every row in turn, for the plain GEMM (1x1) and the IGEMM (3x3,
// stride 2), over two images and on two threads.
// DeepLabV3's ASPP: 3x3 convs dilated 12-36 on a 33x33 map, padded by their dilation. Most
// taps of most tiles read only the padding and are skipped by the IGEMM tiles; the outputs stay
// the reference's, at batch 1 and 2 (image 2's padding pointers are the same zero row).
TEST(F32Conv, DilatedTapsInThePaddingOfWholeTilesAreSkipped) {
  Pool pool(pthreadpool_create(2));
  ASSERT_NE(pool, nullptr);
  for (const F32GemmKernel* k : conv_gemm_kernels()) {
    for (int dilation : {6, 12, 24}) {
      F32ConvTester t;
      t.batch(dilation == 12 ? 2 : 1).input(17, 15, 24).out_c(40).kernel(3, 3).dilation(dilation, dilation)
          .pads(dilation, dilation, dilation, dilation).activation(Activation::relu()).seed(uint32_t(dilation));
      EXPECT_EQ(t.test(*k), t.pool(pool.get()).test(*k)) << k->igemm_name << " dilation " << dilation;
    }
  }
}

TEST(F32Conv, WeightsOverTheBudgetRunInColumnChunks) {
  Pool pool(pthreadpool_create(2));
  ASSERT_NE(pool, nullptr);
  const size_t pointwise_c = testing::f32_depth_over_chunk_budget(600, 1), strided_c = testing::f32_depth_over_chunk_budget(300, 9);
  for (const F32GemmKernel* k : conv_gemm_kernels()) {
    ASSERT_LT(f32_gemm_column_chunk(*k, pointwise_c, 1, 600), 600u);
    ASSERT_LT(f32_gemm_column_chunk(*k, strided_c, 9, 300), 300u);
    F32ConvTester pointwise;
    pointwise.batch(2).input(3, 5, int(pointwise_c)).out_c(600).kernel(1, 1).activation(Activation::relu());
    EXPECT_EQ(pointwise.test(*k), pointwise.pool(pool.get()).test(*k)) << k->gemm_name;
    F32ConvTester strided;
    strided.batch(2).input(7, 6, int(strided_c)).out_c(300).kernel(3, 3).stride(2, 2).pads(1, 1, 1, 1);
    EXPECT_EQ(strided.test(*k), strided.pool(pool.get()).test(*k)) << k->igemm_name;
    // Each tile over a chunk prefetched a share of the next one (ScopedStreamAhead); none is
    // left set on this thread once the runs are done.
    EXPECT_EQ(octet::kernels::f32_stream_ahead().bytes, 0u);
  }
}

// Column chunks with a residual: each chunk's tiles add their own part of it. Smaller weights
// than the test above still chunk, as there are fewer rows than columns here (half the L2).
TEST(F32Conv, ResidualOverTheBudgetRunsInColumnChunks) {
  Pool pool(pthreadpool_create(2));
  ASSERT_NE(pool, nullptr);
  const size_t pointwise_c = testing::f32_depth_over_chunk_budget(320, 1, 2 * 3 * 5);
  const size_t strided_c = testing::f32_depth_over_chunk_budget(160, 9, 2 * 4 * 3);
  for (const F32GemmKernel* k : conv_gemm_kernels()) {
    ASSERT_LT(f32_gemm_column_chunk(*k, pointwise_c, 1, 320, 2 * 3 * 5), 320u);
    ASSERT_LT(f32_gemm_column_chunk(*k, strided_c, 9, 160, 2 * 4 * 3), 160u);
    for (const Activation& act : {Activation::relu(), Activation::hard_swish()}) {
      F32ConvTester pointwise;
      pointwise.batch(2).input(3, 5, int(pointwise_c)).out_c(320).kernel(1, 1).activation(act);
      EXPECT_EQ(pointwise.test_residual(*k), pointwise.pool(pool.get()).test_residual(*k)) << k->gemm_name;
      F32ConvTester strided;
      strided.batch(2).input(7, 6, int(strided_c)).out_c(160).kernel(3, 3).stride(2, 2).pads(1, 1, 1, 1).activation(act);
      EXPECT_EQ(strided.test_residual(*k), strided.pool(pool.get()).test_residual(*k)) << k->igemm_name;
    }
  }
}

TEST(F32Conv, ChoosesTheHighestSupportedIsaAndRejectsScalar) {
  Conv2dShape s;
  s.in_h = s.out_h = 4;
  s.in_w = s.out_w = 6;  // 24 pixels: no row tile is padded, so the highest level wins
  s.in_c = 8;
  s.out_c = 16;
  std::vector<float> w(16 * 8, 0.5f);
  EXPECT_THROW(F32Conv(s, w.data(), nullptr, Activation{}, Isa::scalar), std::invalid_argument);
  for (Isa isa : runnable_isas()) {
    if (isa == Isa::scalar) continue;
    F32Conv conv(s, w.data(), nullptr, Activation{}, isa);
    Isa best = Isa::scalar;
    for (const F32GemmKernel& k : f32_gemm_kernels())
      if (isa_runs(k.isa, isa) && isa_rank(k.isa) > isa_rank(best)) best = k.isa;
    EXPECT_EQ(conv.kernel().isa, best) << conv.kernel_name();
    EXPECT_TRUE(conv.is_plain_gemm());
    EXPECT_EQ(conv.kernel_name().rfind("f32_gemm_", 0), 0u) << conv.kernel_name();
  }
  Conv2dShape grouped = s;
  grouped.groups = 3;  // divides neither 8 nor 16 channels (grouped convs: test_f32_grouped_conv.cc)
  EXPECT_FALSE(F32Conv::supports(grouped, Activation{}));
}

TEST(F32Conv, RunWithoutBindingTheInputThrows) {
  const auto kernels = conv_gemm_kernels();
  if (kernels.empty()) return;  // skipped (testing::skip_when_none_run)
  Conv2dShape s;
  s.in_h = s.in_w = s.out_h = s.out_w = 4;
  s.kernel_h = s.kernel_w = 3;
  s.pad_top = s.pad_left = 1;
  std::vector<float> w(9, 1.0f), x(16, 1.0f), x2(16, 1.0f), y(16);
  F32Conv conv(s, w.data(), nullptr, Activation{}, *kernels.front());
  EXPECT_THROW(conv.run(x.data(), y.data(), nullptr), std::logic_error);
  conv.bind(x.data());
  EXPECT_THROW(conv.run(x2.data(), y.data(), nullptr), std::logic_error);
  conv.run(x.data(), y.data(), nullptr);
  EXPECT_EQ(y[0], 4.0f);   // corner: 2x2 taps inside
  EXPECT_EQ(y[5], 9.0f);   // interior
}

TEST(F32Conv, ReluAndClipPropagateNaN) {
  for (const F32GemmKernel* k : conv_gemm_kernels()) {
    Conv2dShape s;
    s.in_h = s.in_w = s.out_h = s.out_w = 2;
    s.out_c = 3;
    std::vector<float> w = {1.0f, -1.0f, 2.0f}, x = {std::nanf(""), -1.0f, 3.0f, 10.0f}, y(12);
    for (const Activation& act : {Activation::relu(), Activation::clip(0.0f, 6.0f)}) {
      F32Conv conv(s, w.data(), nullptr, act, *k);
      conv.run(x.data(), y.data(), nullptr);
      for (int c = 0; c < 3; ++c) EXPECT_TRUE(std::isnan(y[c])) << k->gemm_name;
      const std::vector<float> rest(y.begin() + 3, y.end());
      if (act.kind == ActKind::relu)
        EXPECT_EQ(rest, (std::vector<float>{0, 1, 0, 3, 0, 6, 10, 0, 20})) << k->gemm_name;
      else
        EXPECT_EQ(rest, (std::vector<float>{0, 1, 0, 3, 0, 6, 6, 0, 6})) << k->gemm_name;
    }
  }
}

}  // namespace
}  // namespace octet::kernels
