// F32WinogradConv (3x3 stride-1 conv by Winograd F(2x2, 3x3)) against f32_conv2d_nhwc__ref and
// the direct F32Conv, for every entry of kernels/conv/f32_winograd_list.h this CPU supports, each
// paired with every FP32 GEMM microkernel of the same or lower ISA; with and without a fused
// residual Add.
//
// Tolerance: |y - ref| <= 1e-5 * sum|x||w| + 1e-6, the bound computed by a second ref run on
// absolute values (independently of the fast kernel). F(2x2, 3x3) adds and subtracts up to 4
// values per dimension in each transform and the transformed weights carry factors 1/2, so
// its rounding error is a small multiple of the direct conv's; measured worst case on these
// shapes is ~4e-7 * sum|x||w| (the test prints it), a margin of ~25x.
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cache_budgets.h"
#include "kernels/conv/f32_conv.h"
#include "kernels/conv/f32_winograd.h"
#include "kernels/gemm/f32_gemm_list.h"
#include "kernels/conv/f32_winograd_list.h"
#include "kernels/ref/conv2d.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace {

using testing::absolute;
using testing::fill_uniform;
using testing::Pool;

constexpr float kRelTol = 1e-5f, kAbsTol = 1e-6f;
float g_worst_ratio = 0.0f;  // largest |y - ref| / sum|x||w| seen, printed at the end

// A supported (transforms, GEMM microkernel) pair.
struct Combo {
  const F32WinogradKernel* transforms;
  const F32GemmKernel* gemm;
  std::string name() const { return std::string(transforms->name) + "+" + gemm->gemm_name; }
};

std::vector<Combo> supported_combos() {
  std::vector<Combo> out;
  bool tested_before = false;  // a level an earlier run on a lesser CPU tested (untested_reason)
  std::string ran;
  for (const F32WinogradKernel& t : f32_winograd_kernels()) {
    if (const char* why = testing::untested_reason(t.isa)) {
      testing::print_untested(t.name, t.isa, why);
      tested_before = tested_before || isa_supported(t.isa);
      continue;
    }
    for (const F32GemmKernel& g : f32_gemm_kernels())
      if (isa_runs(g.isa, t.isa)) out.push_back({&t, &g});
  }
  for (const Combo& c : out) ran += c.name() + " ";
  ::testing::Test::RecordProperty("kernels_run", ran);
  testing::skip_when_none_run(out.size(), "Winograd transform", tested_before);
  return out;
}

// Builds one 3x3 stride-1 conv with random data, runs the ref kernel once, then checks any
// number of (transforms, GEMM) pairs against it.
class WinogradTester {
 public:
  WinogradTester& batch(int v) { s_.batch = v; return *this; }
  WinogradTester& input(int h, int w, int c) { s_.in_h = h; s_.in_w = w; s_.in_c = c; return *this; }
  WinogradTester& out_c(int v) { s_.out_c = v; return *this; }
  WinogradTester& pads(int top, int left, int bottom, int right) {
    s_.pad_top = top; s_.pad_left = left; pad_bottom_ = bottom; pad_right_ = right; return *this;
  }
  WinogradTester& activation(const Activation& a) { act_ = a; return *this; }
  WinogradTester& bias(bool v) { bias_ = v; return *this; }
  WinogradTester& seed(uint32_t v) { seed_ = v; return *this; }
  WinogradTester& pool(pthreadpool_t p) { pool_ = p; return *this; }

  Conv2dShape conv_shape() const {
    Conv2dShape s = s_;
    s.kernel_h = s.kernel_w = 3;
    s.out_h = s.in_h + s.pad_top + pad_bottom_ - 2;
    s.out_w = s.in_w + s.pad_left + pad_right_ - 2;
    return s;
  }

  // Makes the data and the expectations; call after setting the shape.
  WinogradTester& prepare() {
    s_ = conv_shape();
    std::mt19937 rng(seed_);
    x_.resize(size_t(s_.batch) * s_.in_h * s_.in_w * s_.in_c);
    w_.resize(size_t(s_.out_c) * s_.in_c * 9);
    b_.resize(s_.out_c);
    fill_uniform(rng, x_);
    fill_uniform(rng, w_);
    fill_uniform(rng, b_);
    const size_t out_size = size_t(s_.batch) * s_.out_h * s_.out_w * s_.out_c;
    expected_.resize(out_size);
    bound_.resize(out_size);
    sum_.resize(out_size);
    residual_.resize(out_size);
    // The ref applies act to its float sum: expected = act(sum) before the residual is added.
    f32_conv2d_nhwc__ref(s_, x_.data(), w_.data(), bias(), Activation{}, sum_.data());
    const std::vector<float> ax = absolute(x_), aw = absolute(w_), ab = absolute(b_);
    f32_conv2d_nhwc__ref(s_, ax.data(), aw.data(), bias_ ? ab.data() : nullptr, Activation{}, bound_.data());
    // Every third residual -2x the conv output plus noise (where the conv is negative the sum
    // is positive, so a Relu applied before the add would differ), the rest noise as large as
    // the output.
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (size_t i = 0; i < out_size; ++i) {
      expected_[i] = apply(act_, sum_[i]);
      residual_[i] = i % 3 == 0 ? -2.0f * sum_[i] + u(rng) : u(rng) * (1.0f + std::fabs(sum_[i]));
      sum_[i] += residual_[i];
    }
    return *this;
  }

  // Runs one pair; returns its output (for the thread-equality checks).
  std::vector<float> test(const Combo& c) const {
    F32WinogradConv conv(s_, w_.data(), bias(), act_, *c.transforms, *c.gemm);
    std::vector<float> y(expected_.size(), std::nanf(""));
    conv.bind(x_.data());
    conv.run(x_.data(), y.data(), pool_);
    check(y, c.name());
    return y;
  }

  // The pair with the residual: y = act(conv(x) + b + r) against apply(act, ref conv without
  // act + r) within the bound plus kRelTol * |r|, times 1.5 (HardSwish's steepest slope); bit
  // for bit against the unfused sequence, the same pair's conv without activation, + r, then
  // act (for the activations whose microkernels equal the ref bit for bit: all but Sigmoid and
  // SiLU); runs without r before and after it give the plain conv, equal to each other (r
  // leaves nothing behind). Returns y (for the thread-equality checks).
  std::vector<float> test_residual(const Combo& c) const {
    F32WinogradConv conv(s_, w_.data(), bias(), act_, *c.transforms, *c.gemm);
    F32WinogradConv no_act(s_, w_.data(), bias(), Activation{}, *c.transforms, *c.gemm);
    conv.bind(x_.data());
    no_act.bind(x_.data());
    const size_t out_size = expected_.size();
    std::vector<float> before(out_size, std::nanf("")), y(out_size, std::nanf("")), after(out_size, std::nanf(""));
    std::vector<float> unfused(out_size, std::nanf(""));
    conv.run(x_.data(), before.data(), pool_);
    conv.run(x_.data(), y.data(), pool_, residual_.data());
    conv.run(x_.data(), after.data(), pool_);
    no_act.run(x_.data(), unfused.data(), pool_);
    const std::string name = c.name() + " with a residual";
    const bool exact_act = act_.kind != ActKind::sigmoid && act_.kind != ActKind::silu;
    for (size_t i = 0; i < out_size; ++i) {
      const float expected = apply(act_, sum_[i]);
      const float tol = 1.5f * (kRelTol * (bound_[i] + std::fabs(residual_[i])) + kAbsTol);
      if (!(std::fabs(y[i] - expected) <= tol)) {
        ADD_FAILURE() << name << " " << testing::describe(s_) << ": output " << i << " (pixel " << i / s_.out_c
                      << ", channel " << i % s_.out_c << ") is " << y[i] << ", expected " << expected << " +- "
                      << tol << " (conv " << sum_[i] - residual_[i] << ", residual " << residual_[i] << ")";
        break;
      }
      const float fused = apply(act_, unfused[i] + residual_[i]);
      if (exact_act && !(y[i] == fused)) {
        ADD_FAILURE() << name << " " << testing::describe(s_) << ": output " << i << " is " << y[i]
                      << ", the unfused conv + residual + act " << fused;
        break;
      }
    }
    check(after, c.name() + " run after one with a residual");
    EXPECT_EQ(before, after) << name;
    return y;
  }

  // The direct conv on the same data (must pass the same bound).
  std::vector<float> test_direct(Isa isa) const {
    F32Conv conv(s_, w_.data(), bias(), act_, isa);
    std::vector<float> y(expected_.size(), std::nanf(""));
    conv.bind(x_.data());
    conv.run(x_.data(), y.data(), pool_);
    check(y, conv.kernel_name());
    return y;
  }

  size_t out_c() const { return s_.out_c; }
  const std::vector<float>& bound() const { return bound_; }

 private:
  const float* bias() const { return bias_ ? b_.data() : nullptr; }

  void check(const std::vector<float>& y, const std::string& name) const {
    for (size_t i = 0; i < y.size(); ++i) {
      const float err = std::fabs(y[i] - expected_[i]);
      const float tol = kRelTol * bound_[i] + kAbsTol;
      if (!(err <= tol)) {
        ADD_FAILURE() << name << " " << testing::describe(s_) << ": output " << i << " (pixel " << i / s_.out_c
                      << ", channel " << i % s_.out_c << ") is " << y[i] << ", expected " << expected_[i]
                      << " +- " << tol;
        return;
      }
      if (bound_[i] > 0) g_worst_ratio = std::max(g_worst_ratio, err / bound_[i]);
    }
  }

  Conv2dShape s_;
  int pad_bottom_ = 0, pad_right_ = 0;
  Activation act_;
  bool bias_ = true;
  uint32_t seed_ = 1;
  pthreadpool_t pool_ = nullptr;
  std::vector<float> x_, w_, b_, expected_, bound_;
  std::vector<float> sum_, residual_;  // the ref conv without act plus the residual; the residual
};

// Channels 1..40 (around 8 / 16 / 32 lanes and NR, mostly not multiples of 16), spatial 1..33
// incl. odd sizes (partial 2x2 tiles at the right / bottom edge), pads 0..2 each side incl.
// bottom/right only and top/left only, batch 1..3.
WinogradTester random_winograd_conv(std::mt19937& rng, uint32_t seed) {
  const int pt = rng() % 3 == 0 ? 0 : rng() % 3 == 0 ? 2 : 1;
  const int pb = rng() % 3 == 0 ? 0 : 1, pl = rng() % 3 == 0 ? 0 : 1, pr = rng() % 4 == 0 ? 0 : 1 + rng() % 2;
  const int big = rng() % 8 == 0;  // a few large images, most tiny
  const int h = std::max(1, 3 - pt - pb) + (big ? rng() % 31 : rng() % 9);
  const int w = std::max(1, 3 - pl - pr) + (big ? rng() % 31 : rng() % 9);
  WinogradTester t;
  t.batch(rng() % 5 == 0 ? 2 + rng() % 2 : 1)
      .input(h, w, 1 + rng() % 40)
      .out_c(1 + rng() % 40)
      .pads(pt, pl, pb, pr)
      .bias(rng() % 4 != 0)
      .activation(testing::random_activation(rng))
      .seed(seed)
      .prepare();
  return t;
}

TEST(F32Winograd, RandomShapesEveryKernel) {
  const auto combos = supported_combos();
  if (combos.empty()) return;  // skipped (testing::skip_when_none_run)
  std::mt19937 rng(20261123);
  constexpr int kShapes = 400;
  int runs = 0;
  for (int i = 0; i < kShapes; ++i) {
    const WinogradTester t = random_winograd_conv(rng, i);
    for (const Combo& c : combos) {
      t.test(c);
      ++runs;
    }
    if (HasFailure()) break;
  }
  std::printf("%d runs over %zu kernel pairs; worst |y - ref| / sum|x||w| = %.3g (tolerance %.0e)\n", runs,
              combos.size(), double(g_worst_ratio), double(kRelTol));
}

// The same random convs, each with a residual: partial tiles, pads and channel tails.
TEST(F32Winograd, ResidualRandomShapesEveryKernel) {
  const auto combos = supported_combos();
  if (combos.empty()) return;  // skipped (testing::skip_when_none_run)
  std::mt19937 rng(20260513);
  constexpr int kShapes = 150;
  for (int i = 0; i < kShapes; ++i) {
    const WinogradTester t = random_winograd_conv(rng, i);
    for (const Combo& c : combos) t.test_residual(c);
    if (HasFailure()) break;
  }
  ::testing::Test::RecordProperty("shapes", kShapes);
}

// A residual where the output tiles are cut or shifted: odd out_h and out_w (partial 2x2 tiles
// at the bottom and right), asymmetric pads (bottom/right only, top/left only), two images, a
// ResNet block's 28x28 layer (several blocks of tiles per image); none / Relu / Clip /
// HardSwish on one thread, Relu and HardSwish also on two (equal bit for bit).
TEST(F32Winograd, ResidualOnPartialTilesPadsBatchAndThreads) {
  Pool pool(pthreadpool_create(2));
  ASSERT_NE(pool, nullptr);
  std::vector<WinogradTester> shapes(5);
  shapes[0].input(7, 9, 19).out_c(21).pads(1, 1, 1, 1);           // 7x9
  shapes[1].input(8, 6, 13).out_c(24).pads(0, 1, 2, 0);           // 8x5
  shapes[2].input(9, 10, 8).out_c(17).pads(2, 1, 0, 0);           // 9x9
  shapes[3].batch(2).input(11, 10, 24).out_c(33).pads(2, 0, 1, 1);  // 12x9
  shapes[4].batch(2).input(28, 28, 16).out_c(16).pads(1, 1, 1, 1);
  int runs = 0;
  for (const Combo& c : supported_combos()) {
    for (const WinogradTester& shape : shapes) {
      for (const Activation& act :
           {Activation{}, Activation::relu(), Activation::clip(0.0f, 6.0f), Activation::hard_swish()}) {
        WinogradTester t = shape;
        t.activation(act).seed(uint32_t(runs)).prepare();
        const std::vector<float> serial = t.test_residual(c);
        ++runs;
        if (act.kind != ActKind::relu && act.kind != ActKind::hard_swish) continue;
        EXPECT_EQ(serial, t.pool(pool.get()).test_residual(c)) << c.name();
        ++runs;
      }
    }
  }
  ::testing::Test::RecordProperty("runs", runs);
}

// Relu and Clip clamp conv + residual, not the conv: on small integers every conv output c is
// negative; r = -2c + 0.5 (sum -c + 0.5 > 0: Relu keeps it), r = -c / 2 (sum c / 2 < 0: Relu
// gives 0) and r = -c + 3 (sum 3, inside Clip(0, 6)), where a clamp before the add would give
// r, r and min(r, 6): at least 0.5 away.
TEST(F32Winograd, ResidualReluAndClipClampTheSum) {
  std::vector<WinogradTester> shapes(2);
  shapes[0].input(7, 9, 5).out_c(6).pads(1, 1, 1, 1);
  shapes[1].batch(2).input(6, 5, 12).out_c(10).pads(0, 1, 2, 0);
  int outputs = 0;
  for (const WinogradTester& t : shapes) {
    const Conv2dShape s = t.conv_shape();
    const testing::ClampOrderData d = testing::clamp_order_data(s);
    const auto &x = d.x, &w = d.w, &b = d.b, &c = d.c, &r = d.r;
    const size_t out_size = c.size();
    for (const Combo& combo : supported_combos()) {
      for (const Activation& act : {Activation::relu(), Activation::clip(0.0f, 6.0f)}) {
        F32WinogradConv conv(s, w.data(), b.data(), act, *combo.transforms, *combo.gemm);
        conv.bind(x.data());
        std::vector<float> y(out_size, std::nanf(""));
        conv.run(x.data(), y.data(), nullptr, r.data());
        for (size_t i = 0; i < out_size; ++i, ++outputs) {
          const float expected = apply(act, c[i] + r[i]);
          ASSERT_NEAR(y[i], expected, 1e-5f * std::fabs(c[i] + r[i]) + 1e-4f)
              << combo.name() << " " << testing::describe(s) << " act " << int(act.kind) << ": output " << i
              << ", conv " << c[i] << " + residual " << r[i];
        }
      }
    }
  }
  ::testing::Test::RecordProperty("outputs", outputs);
}

TEST(F32Winograd, ChannelSweepAroundTheVectorAndTile) {
  for (const Combo& c : supported_combos()) {
    const int limit = 2 * std::max(c.transforms->channel_tile, c.gemm->nr) + 1;
    for (int ch = 1; ch <= limit; ++ch) {
      WinogradTester().input(5, 6, ch).out_c(ch).pads(1, 1, 1, 1).seed(ch).prepare().test(c);
      WinogradTester().input(4, 3, 7).out_c(ch).pads(0, 1, 1, 0).seed(ch).prepare().test(c);
      WinogradTester().input(3, 4, ch).out_c(5).pads(0, 0, 0, 0).seed(ch).prepare().test(c);
    }
  }
}

// The 3x3 stride-1 layers of the ResNet8s (MLPerf @32/16/8, octet's @28/14/7 with odd sizes):
// Winograd and the direct conv both within the bound of the ref, and within it of each other.
// `wino` (combo c's output of t) within twice the test tolerance of `direct` (F32Conv's).
void expect_near_direct(const WinogradTester& t, const Combo& c, const std::vector<float>& wino,
                        const std::vector<float>& direct, const std::string& layer) {
  for (size_t i = 0; i < wino.size(); ++i) {
    const float tol = 2 * (kRelTol * t.bound()[i] + kAbsTol);
    if (!(std::fabs(wino[i] - direct[i]) <= tol)) {
      ADD_FAILURE() << c.name() << " vs F32Conv at layer " << layer << ": output " << i << " is " << wino[i]
                    << ", direct " << direct[i] << " +- " << tol;
      return;
    }
  }
}

TEST(F32Winograd, LayerShapesAgreeWithTheDirectConv) {
  const auto combos = supported_combos();
  if (combos.empty()) return;  // skipped (testing::skip_when_none_run)
  const int layers[][3] = {{32, 16, 16}, {16, 32, 32}, {8, 64, 64}, {28, 16, 16}, {14, 32, 32}, {7, 64, 64},
                           {32, 3, 16},  {28, 1, 16}};
  for (const auto& l : layers) {
    WinogradTester t;
    t.input(l[0], l[0], l[1]).out_c(l[2]).pads(1, 1, 1, 1).activation(Activation::relu()).seed(l[0] * l[1]).prepare();
    const std::vector<float> direct = t.test_direct(active_isa());
    const std::string layer =
        std::to_string(l[0]) + "x" + std::to_string(l[0]) + " " + std::to_string(l[1]) + "->" + std::to_string(l[2]);
    for (const Combo& c : combos) expect_near_direct(t, c, t.test(c), direct, layer);
  }
}

// Transformed weights past the L2: blocks of the L2's worth of tiles (cache_budgets'
// winograd_block_bytes_streamed) instead of the L1D's, the same sums per tile.
TEST(F32Winograd, WeightsPastTheL2RunInBlocksOfTheL2) {
  const auto combos = supported_combos();
  if (combos.empty()) return;  // skipped (testing::skip_when_none_run)
  int channels = 16;
  while (16.0 * channels * channels * sizeof(float) <= double(octet::kernels::cache_sizes().l2)) channels += 16;
  Pool pool(pthreadpool_create(2));
  ASSERT_NE(pool, nullptr);
  WinogradTester t;
  t.batch(2).input(14, 13, channels).out_c(channels + 8).pads(1, 1, 1, 1).activation(Activation::relu()).seed(5).prepare();
  const std::vector<float> direct = t.test_direct(active_isa());
  for (const Combo& c : combos) {
    const std::vector<float> wino = t.test(c);
    expect_near_direct(t, c, wino, direct, "14x13 " + std::to_string(channels) + " channels");
    EXPECT_EQ(wino, t.pool(pool.get()).test(c)) << c.name() << ": two threads";
    t.pool(nullptr);
  }
}

// One image whose transformed weights stream from beyond the L2, each position's past half the
// L2: the GEMMs walk chunks of columns over the block's tiles, and 2 or 3 threads share out the
// output channels (out_c not a multiple of any tile's columns) instead of the tiles: every
// output is the same sum as on one thread, with and without a residual.
TEST(F32Winograd, StreamedWeightsOfOneImageShareTheChannelsOverThreads) {
  const auto combos = supported_combos();
  if (combos.empty()) return;  // skipped (testing::skip_when_none_run)
  int channels = 16;
  while (double(channels) * channels * sizeof(float) <= 0.75 * double(octet::kernels::cache_sizes().l2)) channels += 16;
  Pool two(pthreadpool_create(2)), three(pthreadpool_create(3));
  ASSERT_NE(two, nullptr);
  ASSERT_NE(three, nullptr);
  WinogradTester t;
  t.batch(1).input(5, 6, channels).out_c(channels + 11).pads(1, 1, 1, 0).activation(Activation::relu()).seed(7).prepare();
  const std::vector<float> direct = t.test_direct(active_isa());
  // One pair per GEMM tile width is enough here (the channel split depends on nr alone).
  std::vector<int> widths;
  for (const Combo& c : combos) {
    if (std::find(widths.begin(), widths.end(), c.gemm->nr * 100 + int(c.gemm->isa)) != widths.end()) continue;
    widths.push_back(c.gemm->nr * 100 + int(c.gemm->isa));
    const Conv2dShape s = t.conv_shape();
    std::vector<float> w(size_t(s.out_c) * s.in_c * 9, 0.5f);
    const F32WinogradConv probe(s, w.data(), nullptr, Activation::relu(), *c.transforms, *c.gemm);
    EXPECT_FALSE(probe.shares_channels(1)) << c.name();
    EXPECT_TRUE(probe.shares_channels(2)) << c.name();
    EXPECT_TRUE(probe.shares_channels(3)) << c.name();
    const std::vector<float> serial = t.pool(nullptr).test(c);
    expect_near_direct(t, c, serial, direct, "5x6 " + std::to_string(channels) + " channels");
    EXPECT_EQ(serial, t.pool(two.get()).test(c)) << c.name() << ": two threads";
    EXPECT_EQ(serial, t.pool(three.get()).test(c)) << c.name() << ": three threads";
    const std::vector<float> residual = t.pool(nullptr).test_residual(c);
    EXPECT_EQ(residual, t.pool(three.get()).test_residual(c)) << c.name() << ": three threads, residual";
    t.pool(nullptr);
  }
}

TEST(F32Winograd, TwoThreadsGiveTheSameOutput) {
  Pool pool(pthreadpool_create(2));
  ASSERT_NE(pool, nullptr);
  for (const Combo& c : supported_combos()) {
    for (int batch : {1, 3}) {
      WinogradTester t;
      t.batch(batch).input(15, 13, 19).out_c(21).pads(1, 0, 1, 2).activation(Activation::relu()).prepare();
      const std::vector<float> serial = t.test(c);
      const std::vector<float> threaded = t.pool(pool.get()).test(c);
      // Every output depends only on its own tile's row of each GEMM: exact equality.
      EXPECT_EQ(serial, threaded) << c.name() << " batch " << batch;
    }
  }
}

TEST(F32Winograd, SupportsOnly3x3Stride1Dense) {
  Conv2dShape s;
  s.in_h = s.in_w = s.out_h = s.out_w = 8;
  s.kernel_h = s.kernel_w = 3;
  s.pad_top = s.pad_left = 1;
  EXPECT_TRUE(F32WinogradConv::supports(s, Activation{}));
  Conv2dShape t = s;
  t.stride_h = t.stride_w = 2;
  t.out_h = t.out_w = 4;
  EXPECT_FALSE(F32WinogradConv::supports(t, Activation{}));
  t = s;
  t.dilation_h = t.dilation_w = 2;
  t.pad_top = t.pad_left = 2;
  EXPECT_FALSE(F32WinogradConv::supports(t, Activation{}));
  t = s;
  t.kernel_w = 1;
  EXPECT_FALSE(F32WinogradConv::supports(t, Activation{}));
  t = s;
  t.groups = 2;
  t.in_c = t.out_c = 2;
  EXPECT_FALSE(F32WinogradConv::supports(t, Activation{}));
  t = s;
  t.out_h = 12;  // would need a bottom pad of 5 with top 1: fine; 20 rows is impossible only if pads < 0
  EXPECT_TRUE(F32WinogradConv::supports(t, Activation{}));
  t.out_h = 4;  // negative bottom pad
  EXPECT_FALSE(F32WinogradConv::supports(t, Activation{}));
  EXPECT_FALSE(F32WinogradConv::faster_than_direct(s));  // 1 -> 1 channel: the direct conv wins
  t = s;
  t.in_c = t.out_c = 16;
  EXPECT_TRUE(F32WinogradConv::faster_than_direct(t));
  std::vector<float> w(9, 1.0f);
  EXPECT_THROW(F32WinogradConv(s, w.data(), nullptr, Activation{}, Isa::scalar), std::invalid_argument);
  Conv2dShape stride2 = s;
  stride2.stride_h = stride2.stride_w = 2;
  EXPECT_THROW(F32WinogradConv(stride2, w.data(), nullptr, Activation{}, Isa::avx512), std::invalid_argument);
}

TEST(F32Winograd, ChoosesTheHighestSupportedIsa) {
  Conv2dShape s;
  s.in_h = s.in_w = s.out_h = s.out_w = 8;
  s.kernel_h = s.kernel_w = 3;
  s.pad_top = s.pad_left = 1;
  s.in_c = 4;
  s.out_c = 16;
  std::vector<float> w(16 * 4 * 9, 0.25f), x(8 * 8 * 4, 1.0f), y(8 * 8 * 16);
  for (Isa isa : runnable_isas()) {
    // scalar, or an architecture without Winograd transforms at this level yet
    if (first_runnable(f32_winograd_kernels(), isa) == nullptr) continue;
    F32WinogradConv conv(s, w.data(), nullptr, Activation{}, isa);
    Isa best = Isa::scalar;
    for (const F32WinogradKernel& k : f32_winograd_kernels())
      if (isa_runs(k.isa, isa) && isa_rank(k.isa) > isa_rank(best)) best = k.isa;
    EXPECT_EQ(conv.kernel_name(), std::string("f32_winograd_2x2_3x3__") + isa_name(best));
    EXPECT_LE(conv.gemm_kernel().isa, isa);
    conv.bind(x.data());
    conv.run(x.data(), y.data(), nullptr);
    EXPECT_EQ(y[0], 4 * 4 * 0.25f) << conv.kernel_name();           // corner: 2x2 taps x 4 channels
    EXPECT_EQ(y[(8 * 3 + 3) * 16 + 5], 9 * 4 * 0.25f) << conv.kernel_name();  // interior
  }
}

TEST(F32Winograd, RunBeforeBindThrows) {
  const auto combos = supported_combos();
  if (combos.empty()) return;  // skipped (testing::skip_when_none_run)
  Conv2dShape s;
  s.in_h = s.in_w = s.out_h = s.out_w = 4;
  s.kernel_h = s.kernel_w = 3;
  s.pad_top = s.pad_left = 1;
  std::vector<float> w(9, 1.0f), x(16, 1.0f), y(16);
  F32WinogradConv conv(s, w.data(), nullptr, Activation{}, *combos.front().transforms, *combos.front().gemm);
  EXPECT_THROW(conv.run(x.data(), y.data(), nullptr), std::logic_error);
}

TEST(F32Winograd, ReluAndClipPropagateNaN) {
  for (const Combo& c : supported_combos()) {
    for (const Activation& act : {Activation::relu(), Activation::clip(0.0f, 6.0f)}) {
      Conv2dShape s;
      s.in_h = s.in_w = s.out_h = s.out_w = 4;
      s.kernel_h = s.kernel_w = 3;
      s.pad_top = s.pad_left = 1;
      s.out_c = 3;
      std::vector<float> w(27, 1.0f), x(16, 1.0f), y(48);
      x[0] = std::nanf("");
      F32WinogradConv conv(s, w.data(), nullptr, act, *c.transforms, *c.gemm);
      conv.bind(x.data());
      conv.run(x.data(), y.data(), nullptr);
      for (int ch = 0; ch < 3; ++ch) EXPECT_TRUE(std::isnan(y[ch])) << c.name();
      // Pixel (3, 3) (another 2x2 tile, whose 4x4 input tile does not hold x[0]): 2x2 taps inside.
      EXPECT_EQ(y[15 * 3], 4.0f) << c.name();
    }
  }
}

}  // namespace
}  // namespace octet::kernels

namespace octet::kernels {
namespace {

TEST(F32Winograd, HintSkipsWeightBoundLayers) {
  auto shape = [](int c, int hw, int batch = 1) {
    Conv2dShape s;
    s.batch = batch;
    s.in_c = s.out_c = c;
    s.in_h = s.in_w = s.out_h = s.out_w = hw;
    s.kernel_h = s.kernel_w = 3;
    s.pad_top = s.pad_left = 1;
    return s;
  };
  // A 256-bit level (AVX2, Zen 4's AVX-512): 16 tiles reuse streamed weights enough.
  EXPECT_TRUE(F32WinogradConv::faster_than_direct(shape(64, 8)));
  EXPECT_TRUE(F32WinogradConv::faster_than_direct(shape(512, 7)));    // 16 tiles
  EXPECT_TRUE(F32WinogradConv::faster_than_direct(shape(256, 8)));    // 16 tiles over 4 MB
  EXPECT_FALSE(F32WinogradConv::faster_than_direct(shape(512, 4)));   // 4 tiles: weight-bound
  EXPECT_FALSE(F32WinogradConv::faster_than_direct(shape(512, 6)));   // 9 tiles
  EXPECT_TRUE(F32WinogradConv::faster_than_direct(shape(512, 4, 4)));  // 16 tiles over the batch
  EXPECT_TRUE(F32WinogradConv::faster_than_direct(shape(128, 4)));    // 1 MB of transformed weights
  // A full-rate zmm level (Zen 5) computes twice as fast, so needs twice the tiles.
  EXPECT_FALSE(F32WinogradConv::faster_than_direct(shape(512, 7), 2.0));   // 16 tiles: the 16 MB dominate
  EXPECT_TRUE(F32WinogradConv::faster_than_direct(shape(512, 7, 2), 2.0));  // 32 tiles over the batch
  EXPECT_TRUE(F32WinogradConv::faster_than_direct(shape(256, 14), 2.0));   // 49 tiles reuse 4 MB
  EXPECT_FALSE(F32WinogradConv::faster_than_direct(shape(512, 4, 4), 2.0));
  EXPECT_TRUE(F32WinogradConv::faster_than_direct(shape(128, 4), 2.0));
  EXPECT_FALSE(F32WinogradConv::faster_than_direct(shape(3, 32)));
}

// Weights that stay in the L3 between runs stream 4x faster than from memory: a quarter of the
// tiles reuse them enough. A model's weights count as staying there up to its budget.
TEST(F32Winograd, HintTakesFewerTilesWhenTheModelStaysInTheL3) {
  constexpr size_t MiB = size_t{1} << 20;
  const CacheSizes zen5{48 << 10, 1 * MiB, 4 * MiB, true};
  auto shape = [](int in_c, int out_c, int hw) {
    Conv2dShape s;
    s.in_c = in_c;
    s.out_c = out_c;
    s.in_h = s.in_w = s.out_h = s.out_w = hw;
    s.kernel_h = s.kernel_w = 3;
    s.pad_top = s.pad_left = 1;
    return s;
  };
  const Conv2dShape alexnet = shape(384, 256, 7);  // 16 tiles over 6 MB of transformed weights
  EXPECT_FALSE(F32WinogradConv::faster_than_direct(alexnet, 2.0, 0, zen5));        // unknown: memory
  EXPECT_FALSE(F32WinogradConv::faster_than_direct(alexnet, 2.0, 46 * MiB, zen5));  // past the L3 share
  EXPECT_TRUE(F32WinogradConv::faster_than_direct(alexnet, 2.0, 3 * MiB, zen5));
  EXPECT_FALSE(F32WinogradConv::faster_than_direct(shape(512, 512, 4), 2.0, 3 * MiB, zen5));  // 4 tiles
  // A VM that sees a socket's L3 over two vCPUs: eight L2s count, not the 240 MiB it reports.
  const CacheSizes vm{48 << 10, 2 * MiB, 240 * MiB, true};
  EXPECT_TRUE(F32WinogradConv::faster_than_direct(alexnet, 2.0, 13 * MiB, vm));
  EXPECT_FALSE(F32WinogradConv::faster_than_direct(alexnet, 2.0, 46 * MiB, vm));
}

}  // namespace
}  // namespace octet::kernels
