// F32ConvTranspose against f32_conv_transpose2d_nhwc__ref, for every entry of
// kernels/gemm/f32_gemm_list.h this CPU runs. The driver performs the reference's float steps
// in its order (ORT's), so every output must be bit-identical; and the reference itself is held
// to the definition (a gather in double) within the float tolerance.
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/conv/f32_conv_transpose.h"
#include "kernels/fallback.h"
#include "kernels/gemm/f32_gemm_list.h"
#include "kernels/ref/conv_transpose.h"
#include "tests/simd/f32_conv_transpose_tester.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace f32_conv_transpose_test {

using testing::fill_uniform;

std::vector<const F32GemmKernel*> runnable_kernels() {
  return testing::runnable_entries(f32_gemm_kernels(), [](const F32GemmKernel& k) { return k.gemm_name; }, "FP32 GEMM");
}

using testing::check_conv_transpose;
using testing::same_value;

// A 2-D shape: one dilation for both axes, the same pads and extra size on both.
ConvTranspose2dShape shape(int n, int h, int w, int c, int m, int k_h, int k_w, int st_h, int st_w, int d, int pad_b,
                           int pad_e, int extra, int groups) {
  return testing::conv_transpose_shape(n, c, m, groups, {1, 1}, {h, k_h, st_h, d, pad_b, pad_e, extra},
                                       {w, k_w, st_w, d, pad_b, pad_e, extra});
}

TEST(F32ConvTranspose, MatchesReferenceBitForBit) {
  const std::vector<ConvTranspose2dShape> shapes = {
      shape(1, 4, 4, 8, 8, 2, 2, 2, 2, 1, 0, 0, 0, 1),       // 2x upsampling
      shape(1, 5, 6, 16, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1),      // 3x3 s2 p1 output_padding 1
      shape(2, 3, 4, 5, 11, 3, 3, 1, 1, 1, 1, 1, 0, 1),      // odd channels, batch 2
      shape(1, 4, 4, 16, 16, 4, 4, 2, 2, 1, 1, 1, 0, 16),    // depthwise k4 s2
      shape(1, 4, 5, 8, 16, 3, 3, 2, 2, 1, 1, 1, 0, 4),      // grouped, 4 outputs per group
      shape(1, 3, 3, 6, 4, 1, 3, 3, 2, 1, 0, 0, 2, 2),       // 1x3, strides 3x2, larger output
      shape(1, 3, 3, 6, 4, 3, 1, 1, 3, 2, 2, 1, 0, 1),       // 3x1, dilation 2, asymmetric pads
      shape(1, 1, 1, 7, 9, 5, 5, 2, 2, 1, 0, 0, 0, 1),       // 1x1 input
      shape(1, 1, 7, 3, 5, 1, 3, 1, 2, 1, 0, 0, 1, 1),       // 1-D (H = 1)
      shape(1, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1),       // 1 channel each way
      shape(1, 6, 6, 4, 4, 3, 3, 3, 3, 1, 4, 4, 0, 1),       // pads larger than the overlap: taps dropped
  };
  for (const F32GemmKernel* k : runnable_kernels())
    for (size_t i = 0; i < shapes.size(); ++i) {
      check_conv_transpose(shapes[i], *k, uint32_t(i), true, {});
      check_conv_transpose(shapes[i], *k, uint32_t(i + 100), false, {});
      check_conv_transpose(shapes[i], *k, uint32_t(i + 200), true, Activation::sigmoid());  // the row epilogue, every path
    }
}

TEST(F32ConvTranspose, DeepInputAddsMlasKBlocksInOrder) {
  // K = 300 over blocks of 128 (and of 64): three partial sums added one after the other.
  for (int k_chunk : {128, 64}) {
    ConvTranspose2dShape s = shape(1, 3, 3, 300, 12, 3, 3, 2, 2, 1, 1, 1, 1, 1);
    s.k_chunk = k_chunk;
    for (const F32GemmKernel* k : runnable_kernels()) check_conv_transpose(s, *k, 7, true, {});
    ConvTranspose2dShape g = shape(1, 2, 3, 2 * 200, 2 * 9, 2, 2, 2, 2, 1, 0, 0, 0, 2);
    g.k_chunk = k_chunk;
    for (const F32GemmKernel* k : runnable_kernels()) check_conv_transpose(g, *k, 8, false, {});
  }
}

TEST(F32ConvTranspose, RandomShapesActivationsAndThreads) {
  std::mt19937 rng(2026);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  pthreadpool_t pool = pthreadpool_create(2);
  // Relu and Clip clamp per pixel; the others (a fused activation's epilogue) run per row.
  const std::vector<Activation> acts = {{},
                                        {ActKind::relu},
                                        Activation::clip(-0.5f, 0.5f),
                                        Activation::sigmoid(),
                                        Activation::silu(),
                                        Activation::hard_swish(),
                                        Activation::leaky_relu(0.1f)};
  for (const F32GemmKernel* k : runnable_kernels())
    for (int t = 0; t < 40; ++t) {
      const int groups = pick(1, 3);
      const int kh = pick(1, 5), kw = pick(1, 5), st = pick(1, 3), d = pick(1, 2);
      const int pad_b = pick(0, kh - 1), pad_e = pick(0, kh - 1);
      ConvTranspose2dShape s = shape(pick(1, 2), pick(1, 6), pick(1, 6), groups * pick(1, 19), groups * pick(1, 19),
                                     kh, kw, st, st, d, pad_b, pad_e, pick(0, st - 1), groups);
      if (s.out_h < 1 || s.out_w < 1) continue;
      check_conv_transpose(s, *k, uint32_t(t), t % 3 != 0, acts[size_t(t) % acts.size()], t % 2 ? pool : nullptr);
    }
  pthreadpool_destroy(pool);
}

TEST(F32ConvTranspose, AdversarialValues) {
  // Infinities and NaN pass through every tap sum as in the reference; huge values overflow alike.
  const ConvTranspose2dShape s = shape(1, 3, 3, 9, 10, 3, 3, 2, 2, 1, 1, 1, 1, 1);
  std::vector<float> x(size_t(9) * 9), w(size_t(9) * 10 * 9), b(10, 0.25f);
  std::mt19937 rng(5);
  fill_uniform(rng, x);
  fill_uniform(rng, w);
  x[4] = std::numeric_limits<float>::infinity();
  x[20] = std::nanf("");
  x[40] = 3e38f;
  w[7] = 3e38f;
  const size_t n = size_t(s.out_h) * s.out_w * s.out_c;
  std::vector<float> expected(n), y(n);
  f32_conv_transpose2d_nhwc__ref(s, x.data(), w.data(), b.data(), {}, expected.data());
  for (const F32GemmKernel* k : runnable_kernels()) {
    F32ConvTranspose conv(s, w.data(), b.data(), {}, *k);
    std::vector<float> scratch(F32ConvTranspose::scratch_floats(s));
    conv.run(x.data(), y.data(), scratch.data(), nullptr);
    for (size_t i = 0; i < n; ++i)
      if (!same_value(y[i], expected[i])) {
        ADD_FAILURE() << k->gemm_name << ": output " << i << " is " << y[i] << ", the reference " << expected[i];
        break;
      }
  }
}

TEST(F32ConvTranspose, ScalarCapIsUnsupported) {
  const ConvTranspose2dShape s = shape(1, 2, 2, 4, 4, 2, 2, 2, 2, 1, 0, 0, 0, 1);
  std::vector<float> w(size_t(4) * 4 * 4, 0.5f);
  EXPECT_THROW(F32ConvTranspose(s, w.data(), nullptr, {}, Isa::scalar), Unsupported);
}

TEST(F32ConvTranspose, MlasKBlock) {
  EXPECT_EQ(mlas_sgemm_k_chunk(1000, 300, true), 128);
  EXPECT_EQ(mlas_sgemm_k_chunk(4, 300, true), 128);
  EXPECT_EQ(mlas_sgemm_k_chunk(4, 300, false), 1024);   // N = 4: 128 -> 16 columns, K x 8
  EXPECT_EQ(mlas_sgemm_k_chunk(40, 300, false), 256);   // 128 -> 64 columns
  EXPECT_EQ(mlas_sgemm_k_chunk(300, 300, false), 128);
}

}  // namespace f32_conv_transpose_test
}  // namespace octet::kernels
