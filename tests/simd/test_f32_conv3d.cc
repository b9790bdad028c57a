// F32Conv on 3-D convolutions (NDHWC, the depth fields of Conv2dShape) against
// f32_conv2d_nhwc__ref, for every entry of kernels/gemm/f32_gemm_list.h this CPU runs: the
// layers of torchvision's video ResNets (r3d_18's 3x3x3, r2plus1d_18's 1x3x3 and 3x1x1, their
// 3x7x7 and 1x7x7 stems that merge taps, 1x1x1 shortcuts on the plain GEMM), grouped and
// depthwise, random shapes, and the awkward ones: depth 1, pads past the kernel, strides past
// the kernel, a fused residual, two threads.
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <cmath>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kernels/conv/f32_conv.h"
#include "kernels/gemm/f32_gemm_list.h"
#include "kernels/ref/conv2d.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace f32_conv3d_test {

using testing::absolute;
using testing::fill_uniform;

std::vector<const F32GemmKernel*> runnable_kernels() {
  return testing::runnable_entries(f32_gemm_kernels(), [](const F32GemmKernel& k) { return k.igemm_name; }, "FP32 IGEMM");
}

struct Extent {
  int in, k, stride, dilation, pad_begin, pad_end;
  int out() const { return (in + pad_begin + pad_end - dilation * (k - 1) - 1) / stride + 1; }
};

Conv2dShape shape3d(int batch, int in_c, int out_c, int groups, Extent d, Extent h, Extent w) {
  Conv2dShape s;
  s.batch = batch, s.in_c = in_c, s.out_c = out_c, s.groups = groups;
  s.in_d = d.in, s.kernel_d = d.k, s.stride_d = d.stride, s.dilation_d = d.dilation, s.pad_front = d.pad_begin;
  s.in_h = h.in, s.kernel_h = h.k, s.stride_h = h.stride, s.dilation_h = h.dilation, s.pad_top = h.pad_begin;
  s.in_w = w.in, s.kernel_w = w.k, s.stride_w = w.stride, s.dilation_w = w.dilation, s.pad_left = w.pad_begin;
  s.out_d = d.out(), s.out_h = h.out(), s.out_w = w.out();
  return s;
}

std::string describe3d(const Conv2dShape& s) {
  return testing::describe(s) + " depth " + std::to_string(s.in_d) + "->" + std::to_string(s.out_d) + " kd" +
         std::to_string(s.kernel_d) + " sd" + std::to_string(s.stride_d) + " dd" + std::to_string(s.dilation_d) +
         " front" + std::to_string(s.pad_front) + " g" + std::to_string(s.groups);
}

struct Case {
  Conv2dShape s;
  Activation act;
  bool bias = true, residual = false;
};

// Runs the case on kernel k and on the ref, output by output within 1e-5 of sum|x*w| + |b|.
// Returns the F32Conv's path: "gemm", "merged" or "igemm".
std::string check(const Case& c, const F32GemmKernel& k, uint32_t seed, pthreadpool_t pool = nullptr) {
  const Conv2dShape& s = c.s;
  std::mt19937 rng(seed);
  std::vector<float> x(size_t(s.batch) * s.in_d * s.in_h * s.in_w * s.in_c),
      w(size_t(s.out_c) * (s.in_c / s.groups) * s.kernel_d * s.kernel_h * s.kernel_w), b(size_t(s.out_c));
  fill_uniform(rng, x);
  fill_uniform(rng, w);
  fill_uniform(rng, b);
  const size_t n = size_t(s.batch) * s.out_d * s.out_h * s.out_w * s.out_c;
  std::vector<float> r(n, 0.0f);
  if (c.residual) fill_uniform(rng, r);
  const float* bias = c.bias ? b.data() : nullptr;
  std::vector<float> expected(n), bound(n), y(n, std::nanf(""));
  f32_conv2d_nhwc__ref(s, x.data(), w.data(), bias, Activation{}, expected.data());
  const auto ax = absolute(x), aw = absolute(w), ab = absolute(b);
  f32_conv2d_nhwc__ref(s, ax.data(), aw.data(), c.bias ? ab.data() : nullptr, Activation{}, bound.data());
  for (size_t i = 0; i < n; ++i) expected[i] = apply(c.act, expected[i] + r[i]);

  EXPECT_TRUE(F32Conv::supports(s, c.act)) << describe3d(s);
  F32Conv conv(s, w.data(), bias, c.act, k);
  conv.bind(x.data());
  conv.run(x.data(), y.data(), pool, c.residual ? r.data() : nullptr);
  for (size_t i = 0; i < n; ++i) {
    const float tol = 1.5f * (1e-5f * (bound[i] + std::fabs(r[i])) + 1e-6f);
    if (!(std::fabs(y[i] - expected[i]) <= tol)) {
      ADD_FAILURE() << conv.kernel_name() << " " << describe3d(s) << (c.residual ? " + residual" : "") << ": output "
                    << i << " (pixel " << i / s.out_c << ", channel " << i % s.out_c << ") is " << y[i]
                    << ", expected " << expected[i] << " +- " << tol;
      break;
    }
  }
  return conv.is_plain_gemm() ? "gemm" : conv.merges_taps() ? "merged" : "igemm";
}

// The video ResNets' layers, shrunk in H and W (and their channel counts kept around the tiles).
TEST(F32Conv3d, VideoResNetLayers) {
  const auto kernels = runnable_kernels();
  if (kernels.empty()) return;  // skipped
  auto same = [](int in, int k, int st) { return Extent{in, k, st, 1, k / 2, k / 2}; };
  std::vector<std::pair<Case, std::string>> layers;
  auto add = [&](Conv2dShape s, const char* path, Activation act = Activation::relu()) {
    Case c;
    c.s = s;
    c.act = act;
    layers.push_back({c, path});
  };
  // r3d_18 / mc3_18 stem: 3 -> 64, 3x7x7, stride (1, 2, 2), pads (1, 3, 3); r2plus1d's is 1x7x7.
  add(shape3d(1, 3, 64, 1, same(4, 3, 1), same(14, 7, 2), same(14, 7, 2)), "merged");
  add(shape3d(1, 3, 45, 1, same(4, 1, 1), same(14, 7, 2), same(14, 7, 2)), "merged");
  // r3d_18's 3x3x3 64 -> 64 and its stride-2 128-channel entry; r2plus1d's 1x3x3 and 3x1x1.
  add(shape3d(1, 64, 64, 1, same(4, 3, 1), same(7, 3, 1), same(7, 3, 1)), "igemm");
  add(shape3d(1, 64, 128, 1, same(4, 3, 2), same(8, 3, 2), same(8, 3, 2)), "igemm");
  add(shape3d(1, 64, 144, 1, same(4, 1, 1), same(7, 3, 1), same(7, 3, 1)), "igemm");
  add(shape3d(1, 144, 64, 1, same(4, 3, 1), same(7, 1, 1), same(7, 1, 1)), "igemm", Activation{});
  // The downsampling shortcut (1x1x1 stride 2) and a 1x1x1 stride-1 conv: a plain GEMM.
  add(shape3d(1, 64, 128, 1, same(4, 1, 2), same(8, 1, 2), same(8, 1, 2)), "igemm", Activation{});
  add(shape3d(2, 24, 40, 1, same(3, 1, 1), same(5, 1, 1), same(6, 1, 1)), "gemm", Activation{});
  for (const auto& [c, path] : layers)
    for (const F32GemmKernel* k : kernels) EXPECT_EQ(check(c, *k, 3), path) << describe3d(c.s);
}

Case random_case(std::mt19937& rng) {
  Case c;
  auto pick = [&](int lo, int hi) { return lo + int(rng() % uint32_t(hi - lo + 1)); };
  auto extent = [&](int max_k) {
    Extent e;
    e.k = pick(1, max_k);
    e.stride = pick(1, 3);
    e.dilation = rng() % 4 == 0 ? 2 : 1;
    e.pad_begin = pick(0, e.k - 1);
    e.pad_end = pick(0, e.k - 1);
    e.in = std::max(1, e.dilation * (e.k - 1) + 1 - e.pad_begin - e.pad_end) + pick(0, 5);
    return e;
  };
  const int cmg[][3] = {{8, 8, 1}, {3, 16, 1}, {5, 7, 1}, {17, 33, 1}, {16, 16, 4}, {12, 24, 3}, {8, 8, 8}, {6, 12, 6}};
  const auto& p = cmg[rng() % 8];
  const Extent d = extent(3), h = extent(3), w = extent(rng() % 4 == 0 ? 7 : 3);
  c.s = shape3d(1 + (rng() % 4 == 0 ? 1 : 0), p[0], p[1], p[2], d, h, w);
  c.act = testing::random_activation(rng);
  c.bias = rng() % 4 != 0;
  c.residual = rng() % 3 == 0;
  return c;
}

TEST(F32Conv3d, RandomShapesEveryKernel) {
  const auto kernels = runnable_kernels();
  if (kernels.empty()) return;  // skipped
  std::mt19937 rng(20261129);
  std::set<std::string> paths;
  for (int i = 0; i < 150 && !HasFailure(); ++i) {
    const Case c = random_case(rng);
    for (const F32GemmKernel* k : kernels) paths.insert(check(c, *k, uint32_t(i)));
  }
  // The plain GEMM needs 1x1x1, stride 1, no pads: VideoResNetLayers runs it.
  EXPECT_TRUE(paths.count("igemm") && paths.count("merged")) << paths.size() << " paths ran";
}

// Depth 1 (a 2-D conv written as 3-D: only the middle depth tap reads), pads wider than the
// kernel (whole output planes of bias alone), strides longer than the kernel (skipped input
// planes), a kernel as deep as the padded input, dilation in depth only, depthwise 3x3x3.
TEST(F32Conv3d, AwkwardDepths) {
  const auto kernels = runnable_kernels();
  if (kernels.empty()) return;  // skipped
  const Extent hw{5, 3, 1, 1, 1, 1};
  const Case cases[] = {
      {shape3d(1, 8, 16, 1, Extent{1, 3, 1, 1, 1, 1}, hw, hw), Activation{}},
      {shape3d(2, 8, 16, 1, Extent{1, 1, 1, 1, 0, 0}, hw, hw), Activation::relu()},
      {shape3d(1, 8, 9, 1, Extent{3, 2, 1, 1, 4, 3}, hw, Extent{4, 2, 1, 1, 3, 3}), Activation{}},
      {shape3d(1, 4, 12, 1, Extent{9, 2, 4, 1, 0, 0}, Extent{7, 1, 3, 1, 0, 0}, hw), Activation{}},
      {shape3d(1, 8, 8, 1, Extent{3, 5, 1, 1, 1, 1}, hw, hw), Activation::clip(-0.5f, 0.5f)},
      {shape3d(1, 8, 8, 1, Extent{7, 3, 1, 3, 3, 3}, hw, hw), Activation{}},
      {shape3d(1, 24, 24, 24, Extent{4, 3, 1, 1, 1, 1}, hw, hw), Activation::relu()},
      {shape3d(1, 3, 8, 1, Extent{2, 3, 2, 1, 2, 2}, Extent{6, 7, 2, 1, 3, 3}, Extent{6, 7, 2, 1, 5, 4}),
       Activation{}},
  };
  for (const Case& c : cases)
    for (const F32GemmKernel* k : kernels) check(c, *k, 9);
}

TEST(F32Conv3d, TwoThreadsMatchTheRef) {
  const auto kernels = runnable_kernels();
  if (kernels.empty()) return;  // skipped
  testing::Pool pool(pthreadpool_create(2));
  std::mt19937 rng(6);
  for (int i = 0; i < 40 && !HasFailure(); ++i) {
    const Case c = random_case(rng);
    for (const F32GemmKernel* k : kernels) check(c, *k, uint32_t(i), pool.get());
  }
}

}  // namespace f32_conv3d_test
}  // namespace octet::kernels
