// F32PointwiseDwConv (kernels/conv/f32_pwdw_conv.h): a 1x1 conv and a depthwise conv fused
// through a ring of rows. Checked against the two reference convs within a tolerance, and
// bit for bit against the same two SIMD convs run one after the other (F32Conv, then
// F32DwConv on the whole intermediate), at every ISA level this run tests, with ring budgets
// from one band of one output row up to whole images.
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "kernels/conv/f32_conv.h"
#include "kernels/conv/f32_dwconv.h"
#include "kernels/conv/f32_pwdw_conv.h"
#include "kernels/gemm/f32_gemm_list.h"
#include "kernels/ref/conv2d.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace {

struct PwDwCase {
  Conv2dShape dw;  // batch = images
  int in_c = 1;
  Activation pw_act, dw_act;
  bool bias = true;
  PwDwRingLimits limits;
};

Conv2dShape pointwise_shape(const PwDwCase& c) {
  Conv2dShape s = c.dw;
  s.in_c = c.in_c;
  s.groups = 1;
  s.out_h = s.in_h;
  s.out_w = s.in_w;
  s.kernel_h = s.kernel_w = s.stride_h = s.stride_w = s.dilation_h = s.dilation_w = 1;
  s.pad_top = s.pad_left = 0;
  return s;
}

// out_h / out_w from symmetric-or-not pads; false when the window does not fit.
bool finish(Conv2dShape& s, int pad_bottom, int pad_right) {
  const int h = s.in_h + s.pad_top + pad_bottom - (s.dilation_h * (s.kernel_h - 1) + 1);
  const int w = s.in_w + s.pad_left + pad_right - (s.dilation_w * (s.kernel_w - 1) + 1);
  if (h < 0 || w < 0) return false;
  s.out_h = h / s.stride_h + 1;
  s.out_w = w / s.stride_w + 1;
  s.out_c = s.groups = s.in_c;
  return true;
}

// hw x hw x channels, a k x k kernel at `stride`, `pad` on every side.
Conv2dShape square_depthwise(int batch, int hw, int channels, int k, int stride, int pad) {
  Conv2dShape s{};
  s.batch = batch;
  s.in_h = s.in_w = hw;
  s.in_c = channels;
  s.kernel_h = s.kernel_w = k;
  s.stride_h = s.stride_w = stride;
  s.dilation_h = s.dilation_w = 1;
  s.pad_top = s.pad_left = pad;
  if (!finish(s, pad, pad)) throw std::logic_error("the window does not fit the map");
  return s;
}

PwDwCase random_case(std::mt19937& rng) {
  auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (;;) {
    PwDwCase c;
    Conv2dShape& s = c.dw;
    s.batch = uni(1, 3);
    c.in_c = uni(1, 24);
    s.in_c = uni(1, 40);
    s.in_h = uni(1, 20);
    s.in_w = uni(1, 20);
    s.kernel_h = s.kernel_w = std::array{1, 3, 3, 5, 7}[size_t(uni(0, 4))];
    if (uni(0, 5) == 0) s.kernel_w = uni(1, 3);
    s.stride_h = s.stride_w = uni(1, 2);
    if (uni(0, 5) == 0) s.stride_h = 3;
    s.dilation_h = s.dilation_w = uni(0, 5) == 0 ? 2 : 1;
    s.pad_top = uni(0, s.kernel_h / 2 * s.dilation_h);
    s.pad_left = uni(0, s.kernel_w / 2 * s.dilation_w);
    if (!finish(s, uni(0, s.kernel_h / 2 * s.dilation_h), uni(0, s.kernel_w / 2 * s.dilation_w))) continue;
    c.pw_act = testing::random_activation(rng);
    c.dw_act = testing::random_activation(rng);
    c.bias = uni(0, 3) != 0;
    // Rings from less than one row (a band of one output row) to more than the image; images
    // that small run through a ring only when the whole-image threshold is off.
    const size_t row_bytes = size_t(s.in_w) * s.in_c * sizeof(float);
    c.limits.ring_bytes = std::array{size_t{1}, row_bytes * 3, row_bytes * 6, size_t{1} << 30}[size_t(uni(0, 3))];
    if (uni(0, 3) != 0) c.limits.whole_image_bytes = 0;
    return c;
  }
}

struct Outcome {
  bool ring = false;  // false: whole images
};

// Runs the case `runs` times on new data; returns false (after a gtest failure) on a mismatch.
bool check(const PwDwCase& c, Isa isa, std::mt19937& rng, pthreadpool_t pool, Outcome* outcome = nullptr) {
  const Conv2dShape pw = pointwise_shape(c);
  const Conv2dShape& dw = c.dw;
  const int mid = dw.in_c;
  const size_t channels = static_cast<size_t>(mid);
  std::vector<float> w1(channels * c.in_c), b1(channels), w2(channels * dw.kernel_h * dw.kernel_w), b2(channels);
  for (auto* v : {&w1, &b1, &w2, &b2}) testing::fill_uniform(rng, *v);
  const float* bias1 = c.bias ? b1.data() : nullptr;
  const float* bias2 = c.bias ? b2.data() : nullptr;
  const size_t threads = pool == nullptr ? 1 : pthreadpool_get_threads_count(pool);
  F32PointwiseDwConv fused(dw, c.in_c, w1.data(), bias1, c.pw_act, w2.data(), bias2, c.dw_act, isa, threads, c.limits);
  if (outcome) outcome->ring = fused.ring_rows() < dw.in_h;
  EXPECT_LE(fused.ring_rows(), dw.in_h);

  const size_t mid_count = size_t(pw.batch) * pw.out_h * pw.out_w * mid;
  const size_t out_count = size_t(dw.batch) * dw.out_h * dw.out_w * mid;
  std::vector<float> x(size_t(pw.batch) * pw.in_h * pw.in_w * c.in_c), t(mid_count), y_pair(out_count), y(out_count);
  F32Conv conv1(pw, w1.data(), bias1, c.pw_act, isa);
  F32DwConv conv2(dw, w2.data(), bias2, c.dw_act, isa);
  conv1.bind(x.data());
  conv2.bind(t.data());
  // The reference pair, and its bound: sum |x * w| through both layers (activations here are
  // at most 1.5-Lipschitz), so a row read from the wrong ring slot is far outside it.
  std::vector<float> t_ref(mid_count), y_ref(out_count), t_abs(mid_count), y_abs(out_count);
  const std::vector<float> w1_abs = testing::absolute(w1), b1_abs = testing::absolute(b1);
  const std::vector<float> w2_abs = testing::absolute(w2), b2_abs = testing::absolute(b2);
  for (int run = 0; run < 2; ++run) {
    testing::fill_uniform(rng, x);
    fused.run(x.data(), y.data(), pool);
    conv1.run(x.data(), t.data(), pool);
    conv2.run(t.data(), y_pair.data(), pool);
    f32_conv2d_nhwc__ref(pw, x.data(), w1.data(), bias1, c.pw_act, t_ref.data());
    f32_conv2d_nhwc__ref(dw, t_ref.data(), w2.data(), bias2, c.dw_act, y_ref.data());
    const std::vector<float> x_abs = testing::absolute(x);
    f32_conv2d_nhwc__ref(pw, x_abs.data(), w1_abs.data(), c.bias ? b1_abs.data() : nullptr, Activation{}, t_abs.data());
    for (float& v : t_abs) v = 1.5f * v + 1.0f;
    f32_conv2d_nhwc__ref(dw, t_abs.data(), w2_abs.data(), c.bias ? b2_abs.data() : nullptr, Activation{}, y_abs.data());
    for (size_t i = 0; i < out_count; ++i) {
      const float tol = 1e-5f * 1.5f * y_abs[i] + 1e-6f;
      if (!(std::fabs(y[i] - y_ref[i]) <= tol)) {
        ADD_FAILURE() << isa_name(isa) << " " << testing::describe(dw) << " in_c " << c.in_c << " ring budget " << c.limits.ring_bytes
                      << " ring " << fused.ring_rows() << " band " << fused.band_rows() << ": output " << i << " is "
                      << y[i] << ", the ref pair gives " << y_ref[i] << " (tolerance " << tol << ")";
        return false;
      }
    }
    // Ring-mode depthwise rows skip the padded copy small maps take, whose border pixels may
    // sum in another order: bit for bit only when the unfused pair reads in place too.
    if (!conv2.copies_padded_input() && std::memcmp(y.data(), y_pair.data(), out_count * sizeof(float)) != 0) {
      ADD_FAILURE() << isa_name(isa) << " " << testing::describe(dw) << " ring budget " << c.limits.ring_bytes
                    << ": differs from F32Conv + F32DwConv run one after the other";
      return false;
    }
  }
  return true;
}

// The levels whose pair of microkernels (GEMM, depthwise) no lower level runs: a level that
// only adds integer instructions (AVX-512 VNNI, Arm's dot product) runs the same FP32 pair.
std::vector<Isa> levels_with_their_own_kernels() {
  auto kernels_at = [](Isa isa) {
    const Conv2dShape s = square_depthwise(1, 8, 16, 3, 1, 1);
    std::vector<float> w1(16 * 4, 0.1f), w2(16 * 9, 0.1f);
    return F32PointwiseDwConv(s, 4, w1.data(), nullptr, Activation{}, w2.data(), nullptr, Activation{}, isa)
        .kernel_name();
  };
  std::vector<Isa> out;
  for (Isa isa : testing::isas_under_test()) {
    if (isa == Isa::scalar) continue;
    bool seen = false;
    for (Isa lower : runnable_isas())
      if (lower != Isa::scalar && lower != isa && isa_allows(isa, lower) && kernels_at(lower) == kernels_at(isa)) seen = true;
    if (seen) {
      std::printf("skipped %s: runs the kernels of a lower level (%s)\n", isa_name(isa), kernels_at(isa).c_str());
    } else {
      out.push_back(isa);
    }
  }
  // None left: either no SIMD level here, or the lesser CPU's run tested every pair this one has.
  testing::skip_when_none_run(out.size(), "FP32 pointwise + depthwise",
                              testing::isas_under_test().size() < runnable_isas().size());
  return out;
}

TEST(F32PointwiseDwConv, MatchesTheRefPairAndTheUnfusedConvsAtEveryLevel) {
  testing::Pool threads(pthreadpool_create(2));
  for (Isa isa : levels_with_their_own_kernels()) {
    std::mt19937 rng(2024);
    int ring = 0, whole = 0;
    for (int i = 0; i < 400; ++i) {
      const PwDwCase c = random_case(rng);
      Outcome o;
      // Every other case on two threads: a ring per thread, over images or bands of one image.
      if (!check(c, isa, rng, i % 2 == 0 ? threads.get() : nullptr, &o)) return;
      (o.ring ? ring : whole)++;
    }
    std::printf("%s: %d cases through a ring, %d as whole images\n", isa_name(isa), ring, whole);
    EXPECT_GT(ring, 100) << isa_name(isa);
    EXPECT_GT(whole, 50) << isa_name(isa);
  }
}

// Inverted-residual layers of the zoo (MobileNetV2 / V3, EfficientNet), with the default limits:
// the 112x112 and 56x56 ones run through rings, the others whole.
TEST(F32PointwiseDwConv, ModelLayers) {
  struct Layer {
    int hw, in_c, mid, k, stride;
  };
  testing::Pool threads(pthreadpool_create(2));
  for (Isa isa : levels_with_their_own_kernels()) {
    std::mt19937 rng(5);
    for (Layer l : {Layer{112, 16, 96, 3, 2}, Layer{56, 24, 144, 3, 1}, Layer{56, 24, 72, 5, 2}, Layer{28, 40, 240, 5, 1},
                    Layer{14, 80, 480, 3, 1}, Layer{7, 160, 960, 5, 1}}) {
      PwDwCase c;
      c.dw = square_depthwise(1, l.hw, l.mid, l.k, l.stride, l.k / 2);
      c.in_c = l.in_c;
      c.pw_act = Activation::clip(0, 6);
      c.dw_act = Activation::hard_swish();
      ASSERT_TRUE(check(c, isa, rng, threads.get()));
      if (l.hw > 28) continue;  // batches of the big maps take long under qemu and add no path
      c.dw.batch = 2;
      ASSERT_TRUE(check(c, isa, rng, nullptr));
    }
  }
}

TEST(F32PointwiseDwConv, RingHoldsTheRowsOfOneBand) {
  Conv2dShape s = square_depthwise(1, 56, 144, 3, 1, 1);
  std::vector<float> w1(144 * 24, 0.1f), w2(144 * 9, 0.1f);
  const size_t row = 56 * 144 * sizeof(float);
  const Isa isa = runnable_isas().back();
  testing::skip_when_none_run(isa == Isa::scalar ? 0 : 1, "FP32 pointwise + depthwise");
  if (isa == Isa::scalar) return;
  // Six rows: bands of four output rows read 4 + 2 input rows.
  F32PointwiseDwConv six(s, 24, w1.data(), nullptr, Activation{}, w2.data(), nullptr, Activation{}, isa, 1, {6 * row, 0});
  EXPECT_EQ(six.band_rows(), 4);
  EXPECT_EQ(six.ring_rows(), 6);
  s = square_depthwise(1, 56, 144, 3, 2, 1);
  F32PointwiseDwConv strided(s, 24, w1.data(), nullptr, Activation{}, w2.data(), nullptr, Activation{}, isa, 1, {6 * row, 0});
  EXPECT_EQ(strided.band_rows(), 2);  // (2 - 1) * 2 + 3 = 5 rows
  EXPECT_EQ(strided.ring_rows(), 5);
  F32PointwiseDwConv whole(s, 24, w1.data(), nullptr, Activation{}, w2.data(), nullptr, Activation{}, isa, 1, {100 * row, 0});
  EXPECT_EQ(whole.ring_rows(), 56);
  EXPECT_EQ(whole.band_rows(), s.out_h);
  // The default limits: an image past this CPU's L2 through a ring, 14x14x144 whole.
  const int side = int(std::sqrt(double(cache_budgets().pwdw_whole_image) / (144 * sizeof(float)))) + 8;
  s = square_depthwise(1, side, 144, 3, 2, 1);
  F32PointwiseDwConv big(s, 24, w1.data(), nullptr, Activation{}, w2.data(), nullptr, Activation{}, isa);
  EXPECT_LT(big.ring_rows(), side);
  s = square_depthwise(1, 14, 144, 3, 2, 1);
  F32PointwiseDwConv small(s, 24, w1.data(), nullptr, Activation{}, w2.data(), nullptr, Activation{}, isa);
  EXPECT_EQ(small.ring_rows(), 14);
}

// bench/dispatch_check forces each candidate on one part of a pair: the pair then runs exactly
// that microkernel, and gives what the two unfused convs on the same microkernels give.
TEST(F32PointwiseDwConv, ForcedKernelsRunAsTheUnfusedConvsOnThem) {
  const Conv2dShape dw = square_depthwise(1, 20, 40, 3, 1, 1);
  PwDwCase c;
  c.dw = dw;
  c.in_c = 12;
  const Conv2dShape pw = pointwise_shape(c);
  std::mt19937 rng(8);
  std::vector<float> w1(40 * 12), b1(40), w2(40 * 9), b2(40), x(20 * 20 * 12), t(20 * 20 * 40), y_pair(t.size()),
      y(t.size());
  for (auto* v : {&w1, &b1, &w2, &b2, &x}) testing::fill_uniform(rng, *v);
  const Activation relu = Activation::relu();
  const PwDwRingLimits ring{size_t(20 * 40 * 4) * 4, 0};  // bands of two output rows
  int pairs = 0;
  for (const F32GemmKernel& gk : f32_gemm_kernels()) {
    if (gk.isa == Isa::scalar || !isa_supported(gk.isa)) continue;
    for (const F32DwConvKernel& dk : kF32DwConvKernels) {
      if (dk.isa == Isa::scalar || !isa_supported(dk.isa)) continue;
      F32PointwiseDwConv fused(dw, 12, w1.data(), b1.data(), relu, w2.data(), b2.data(), relu, runnable_isas().back(), 1,
                               ring, nullptr, nullptr, PwDwKernels{&gk, &dk});
      ASSERT_LT(fused.ring_rows(), 20);
      EXPECT_NE(fused.kernel_name().find(gk.gemm_name), std::string::npos) << fused.kernel_name();
      EXPECT_NE(fused.kernel_name().find(dk.name), std::string::npos) << fused.kernel_name();
      F32Conv conv1(pw, w1.data(), b1.data(), relu, gk);
      F32DwConv conv2(dw, w2.data(), b2.data(), relu, dk);
      conv1.bind(x.data());
      conv2.bind(t.data());
      fused.run(x.data(), y.data(), nullptr);
      conv1.run(x.data(), t.data(), nullptr);
      conv2.run(t.data(), y_pair.data(), nullptr);
      if (conv2.copies_padded_input()) continue;  // bit for bit only when both read in place (see check)
      EXPECT_EQ(std::memcmp(y.data(), y_pair.data(), y.size() * sizeof(float)), 0) << gk.gemm_name << " + " << dk.name;
      ++pairs;
    }
  }
  std::printf("%d pairs of forced microkernels\n", pairs);
  testing::skip_when_none_run(size_t(pairs), "FP32 pointwise + depthwise");
}

TEST(F32PointwiseDwConv, RejectsWhatItCannotRun) {
  const Conv2dShape s = square_depthwise(1, 8, 16, 3, 1, 0);
  std::vector<float> w1(16 * 4, 0.1f), w2(16 * 9, 0.1f);
  EXPECT_THROW(F32PointwiseDwConv(s, 4, w1.data(), nullptr, Activation{}, w2.data(), nullptr, Activation{}, Isa::scalar),
               std::invalid_argument);
  Conv2dShape grouped = s;
  grouped.groups = 4;
  EXPECT_THROW(F32PointwiseDwConv(grouped, 4, w1.data(), nullptr, Activation{}, w2.data(), nullptr, Activation{},
                                  runnable_isas().back()),
               std::invalid_argument);
}

}  // namespace
}  // namespace octet::kernels
