// F32ConvTranspose on 3-D transposed convolutions (NDHWC, the depth fields of
// ConvTranspose2dShape) against f32_conv_transpose2d_nhwc__ref, for every entry of
// kernels/gemm/f32_gemm_list.h this CPU runs: bit-identical outputs (the driver keeps the
// reference's float steps, ORT's Col2imNd order over (kd, kh, kw)), on a 3-D decoder's layers,
// grouped and depthwise (the direct path), deep inputs over MLAS K blocks, random shapes with
// every fused activation on two threads, and infinities and NaN. The reference itself is held
// to the definition (a gather in double over three axes).
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/conv/f32_conv_transpose.h"
#include "kernels/gemm/f32_gemm_list.h"
#include "kernels/ref/conv_transpose.h"
#include "tests/simd/f32_conv_transpose_tester.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace f32_conv_transpose3d_test {

using testing::fill_uniform;

std::vector<const F32GemmKernel*> runnable_kernels() {
  return testing::runnable_entries(f32_gemm_kernels(), [](const F32GemmKernel& k) { return k.gemm_name; }, "FP32 GEMM");
}

using testing::check_conv_transpose;
using testing::Extent;
using testing::in_count;
using testing::out_count;
using testing::same_value;
using testing::w_count;
constexpr auto shape3d = &testing::conv_transpose_shape;

TEST(F32ConvTranspose3d, MatchesReferenceBitForBit) {
  const std::vector<ConvTranspose2dShape> shapes = {
      // A 3-D decoder's upsampling: k2 s2, then k3 s2 p1 output_padding 1 on every axis.
      shape3d(1, 16, 8, 1, {3, 2, 2}, {4, 2, 2}, {4, 2, 2}),
      shape3d(1, 8, 12, 1, {3, 3, 2, 1, 1, 1, 1}, {3, 3, 2, 1, 1, 1, 1}, {4, 3, 2, 1, 1, 1, 1}),
      // Stride 1 k3 p1 (a 3-D "same" deconv), odd channels, batch 2.
      shape3d(2, 5, 11, 1, {3, 3, 1, 1, 1, 1}, {3, 3, 1, 1, 1, 1}, {2, 3, 1, 1, 1, 1}),
      // Only the depth upsamples (a temporal deconv), and only the plane (1x2x2 s(1,2,2)).
      shape3d(1, 8, 8, 1, {3, 3, 2}, {3, 1}, {3, 1}),
      shape3d(1, 8, 8, 1, {3, 1}, {3, 2, 2}, {3, 2, 2}),
      // Grouped (4 outputs per group), depthwise (the direct path) and a channel multiplier.
      shape3d(1, 8, 16, 2, {2, 3, 2, 1, 1, 1}, {3, 3, 2, 1, 1, 1}, {3, 3, 2, 1, 1, 1}),
      shape3d(1, 12, 12, 12, {2, 2, 2}, {3, 3, 2, 1, 1, 1}, {3, 3, 2, 1, 1, 1}),
      shape3d(1, 4, 12, 4, {2, 3, 2}, {2, 2, 2}, {3, 3}),
      // Dilations, asymmetric pads, pads past the overlap (taps dropped), output_shape larger.
      shape3d(1, 6, 4, 1, {3, 3, 1, 2, 2, 1}, {3, 2, 2, 2, 0, 1, 1}, {3, 3, 1, 1, 0, 2}),
      shape3d(1, 4, 4, 1, {4, 3, 3, 1, 4, 4}, {3, 3, 2, 1, 1, 1}, {3, 2, 2}),
      shape3d(1, 6, 4, 1, {2, 2, 2, 1, 0, 0, 1}, {2, 2, 2, 1, 0, 0, 1}, {2, 2, 2, 1, 0, 0, 1}),
      // Depth 1, a 1x1x1 input, 1 channel each way.
      shape3d(1, 5, 7, 1, {1, 1}, {4, 3, 2, 1, 1, 1}, {4, 3, 2, 1, 1, 1}),
      shape3d(1, 7, 9, 1, {1, 3, 2}, {1, 3, 2}, {1, 3, 2}),
      shape3d(1, 1, 1, 1, {2, 2, 2}, {2, 2, 2}, {2, 1}),
  };
  for (const F32GemmKernel* k : runnable_kernels())
    for (size_t i = 0; i < shapes.size(); ++i) {
      check_conv_transpose(shapes[i], *k, uint32_t(i), true, {});
      check_conv_transpose(shapes[i], *k, uint32_t(i + 100), false, {});
      check_conv_transpose(shapes[i], *k, uint32_t(i + 200), true, Activation::silu());  // the row epilogue, every path
    }
}

TEST(F32ConvTranspose3d, DeepInputAddsMlasKBlocksInOrder) {
  for (int k_chunk : {128, 64}) {
    ConvTranspose2dShape s = shape3d(1, 300, 6, 1, {2, 2, 2}, {2, 3, 2, 1, 1, 1}, {3, 2, 2});
    s.k_chunk = k_chunk;
    ConvTranspose2dShape g = shape3d(1, 2 * 150, 2 * 4, 2, {2, 2, 2}, {2, 2, 2}, {2, 2, 2});
    g.k_chunk = k_chunk;
    for (const F32GemmKernel* k : runnable_kernels()) {
      check_conv_transpose(s, *k, 7, true, {});
      check_conv_transpose(g, *k, 8, false, {});
    }
  }
}

TEST(F32ConvTranspose3d, RandomShapesActivationsAndThreads) {
  std::mt19937 rng(2027);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  pthreadpool_t pool = pthreadpool_create(2);
  const std::vector<Activation> acts = {{},
                                        {ActKind::relu},
                                        Activation::clip(-0.5f, 0.5f),
                                        Activation::sigmoid(),
                                        Activation::silu(),
                                        Activation::hard_swish(),
                                        Activation::leaky_relu(0.1f)};
  auto extent = [&] {
    Extent e{pick(1, 4), pick(1, 3), pick(1, 3), pick(1, 2)};
    e.pad_begin = pick(0, e.k - 1), e.pad_end = pick(0, e.k - 1);
    e.extra = pick(0, std::max(e.stride, e.dilation) - 1);
    return e;
  };
  for (const F32GemmKernel* k : runnable_kernels())
    for (int t = 0; t < 30; ++t) {
      const int groups = pick(1, 3);
      const ConvTranspose2dShape s =
          shape3d(pick(1, 2), groups * pick(1, 13), groups * pick(1, 13), groups, extent(), extent(), extent());
      if (s.out_d < 1 || s.out_h < 1 || s.out_w < 1) continue;
      check_conv_transpose(s, *k, uint32_t(t), t % 3 != 0, acts[size_t(t) % acts.size()], t % 2 ? pool : nullptr);
    }
  pthreadpool_destroy(pool);
}

TEST(F32ConvTranspose3d, AdversarialValues) {
  // Infinities and NaN pass through every tap sum as in the reference; huge values overflow alike.
  for (int groups : {1, 6}) {  // the GEMM and the direct path
    const ConvTranspose2dShape s = shape3d(1, 6, 6, groups, {2, 3, 2, 1, 1, 1, 1}, {3, 3, 2, 1, 1, 1, 1}, {3, 3, 2});
    std::vector<float> x(in_count(s)), w(w_count(s)), b(size_t(s.out_c), 0.25f);
    std::mt19937 rng(5);
    fill_uniform(rng, x);
    fill_uniform(rng, w);
    x[4] = std::numeric_limits<float>::infinity();
    x[20] = std::nanf("");
    x[40] = 3e38f;
    x[41] = -std::numeric_limits<float>::infinity();
    w[7] = 3e38f;
    const size_t n = out_count(s);
    std::vector<float> expected(n), y(n);
    f32_conv_transpose2d_nhwc__ref(s, x.data(), w.data(), b.data(), {}, expected.data());
    for (const F32GemmKernel* k : runnable_kernels()) {
      F32ConvTranspose conv(s, w.data(), b.data(), {}, *k);
      std::vector<float> scratch(F32ConvTranspose::scratch_floats(s));
      conv.run(x.data(), y.data(), scratch.data(), nullptr);
      for (size_t i = 0; i < n; ++i)
        if (!same_value(y[i], expected[i])) {
          ADD_FAILURE() << k->gemm_name << " g" << groups << ": output " << i << " is " << y[i] << ", the reference "
                        << expected[i];
          break;
        }
    }
  }
}

// A 3-D shape whose depth is trivial (in_d = kernel_d = 1) is the 2-D one, plane for plane.
TEST(F32ConvTranspose3d, DepthOneIsTheTwoDimensionalOp) {
  ConvTranspose2dShape s3 = shape3d(2, 6, 5, 1, {1, 1}, {4, 3, 2, 1, 1, 1, 1}, {3, 3, 2, 1, 1, 1, 1});
  ConvTranspose2dShape s2 = s3;
  s2.in_d = s2.out_d = s2.kernel_d = 1;
  EXPECT_FALSE(s2.has_depth());
  s3.stride_d = 2;  // a stride over one plane changes nothing but marks the shape 3-D
  EXPECT_TRUE(s3.has_depth());
  std::mt19937 rng(9);
  std::vector<float> x(in_count(s3)), w(w_count(s3)), b(size_t(s3.out_c));
  fill_uniform(rng, x);
  fill_uniform(rng, w);
  fill_uniform(rng, b);
  std::vector<float> y2(out_count(s2)), y3(out_count(s3));
  f32_conv_transpose2d_nhwc__ref(s2, x.data(), w.data(), b.data(), {}, y2.data());
  f32_conv_transpose2d_nhwc__ref(s3, x.data(), w.data(), b.data(), {}, y3.data());
  EXPECT_EQ(y2, y3);
}

}  // namespace f32_conv_transpose3d_test
}  // namespace octet::kernels
