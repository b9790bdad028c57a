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
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace f32_conv_transpose_test {

using testing::fill_uniform;

std::vector<const F32GemmKernel*> runnable_kernels() {
  return testing::runnable_entries(f32_gemm_kernels(), [](const F32GemmKernel& k) { return k.gemm_name; }, "FP32 GEMM");
}

std::string describe(const ConvTranspose2dShape& s) {
  return "n" + std::to_string(s.batch) + " " + std::to_string(s.in_h) + "x" + std::to_string(s.in_w) + "x" +
         std::to_string(s.in_c) + " -> " + std::to_string(s.out_h) + "x" + std::to_string(s.out_w) + "x" +
         std::to_string(s.out_c) + " k" + std::to_string(s.kernel_h) + "x" + std::to_string(s.kernel_w) + " s" +
         std::to_string(s.stride_h) + "x" + std::to_string(s.stride_w) + " d" + std::to_string(s.dilation_h) + "x" +
         std::to_string(s.dilation_w) + " p" + std::to_string(s.pad_top) + "," + std::to_string(s.pad_left) + " g" +
         std::to_string(s.groups) + " kc" + std::to_string(s.k_chunk);
}

// out = (in - 1) * stride + (k - 1) * dilation + 1 - pads + extra (output_padding, or a larger
// output_shape); uncovered rows then hold the bias.
ConvTranspose2dShape shape(int n, int h, int w, int c, int m, int k_h, int k_w, int st_h, int st_w, int d, int pad_b,
                           int pad_e, int extra, int groups) {
  ConvTranspose2dShape s;
  s.batch = n, s.in_h = h, s.in_w = w, s.in_c = c, s.out_c = m;
  s.kernel_h = k_h, s.kernel_w = k_w, s.stride_h = st_h, s.stride_w = st_w, s.dilation_h = s.dilation_w = d;
  s.pad_top = s.pad_left = pad_b;
  s.out_h = (h - 1) * st_h + (k_h - 1) * d + 1 - pad_b - pad_e + extra;
  s.out_w = (w - 1) * st_w + (k_w - 1) * d + 1 - pad_b - pad_e + extra;
  s.groups = groups;
  return s;
}

// The definition, gathered in double: y[o] = b + sum over (i, tap) landing on o of x[i] * w.
std::vector<double> definition(const ConvTranspose2dShape& s, const std::vector<float>& x, const std::vector<float>& w,
                               const float* b) {
  const int gi = s.in_c / s.groups, go = s.out_c / s.groups;
  std::vector<double> y(size_t(s.batch) * s.out_h * s.out_w * s.out_c);
  for (int n = 0; n < s.batch; ++n)
    for (int oy = 0; oy < s.out_h; ++oy)
      for (int ox = 0; ox < s.out_w; ++ox)
        for (int oc = 0; oc < s.out_c; ++oc) {
          double acc = b ? b[oc] : 0.0;
          const int g = oc / go;
          for (int ky = 0; ky < s.kernel_h; ++ky)
            for (int kx = 0; kx < s.kernel_w; ++kx) {
              const int ty = oy + s.pad_top - ky * s.dilation_h, tx = ox + s.pad_left - kx * s.dilation_w;
              if (ty < 0 || tx < 0 || ty % s.stride_h || tx % s.stride_w) continue;
              const int iy = ty / s.stride_h, ix = tx / s.stride_w;
              if (iy >= s.in_h || ix >= s.in_w) continue;
              for (int ic = 0; ic < gi; ++ic) {
                const int c = g * gi + ic;
                acc += double(x[((size_t(n) * s.in_h + iy) * s.in_w + ix) * s.in_c + c]) *
                       w[((size_t(c) * go + oc % go) * s.kernel_h + ky) * s.kernel_w + kx];
              }
            }
          y[((size_t(n) * s.out_h + oy) * s.out_w + ox) * s.out_c + oc] = acc;
        }
  return y;
}

// Equal values (the sign of a zero may differ: ORT adds taps into +0) or both NaN.
bool same_bits(float a, float b) { return a == b || (std::isnan(a) && std::isnan(b)); }

void check(const ConvTranspose2dShape& s, const F32GemmKernel& k, uint32_t seed, bool bias, const Activation& act,
           pthreadpool_t pool = nullptr) {
  std::mt19937 rng(seed);
  std::vector<float> x(size_t(s.batch) * s.in_h * s.in_w * s.in_c), w(size_t(s.in_c) * (s.out_c / s.groups) * s.kernel_h * s.kernel_w),
      b(size_t(s.out_c));
  fill_uniform(rng, x);
  fill_uniform(rng, w);
  fill_uniform(rng, b);
  const size_t n = size_t(s.batch) * s.out_h * s.out_w * s.out_c;
  std::vector<float> expected(n), y(n, std::nanf(""));
  const float* bp = bias ? b.data() : nullptr;
  f32_conv_transpose2d_nhwc__ref(s, x.data(), w.data(), bp, act, expected.data());
  F32ConvTranspose conv(s, w.data(), bp, act, k);
  std::vector<float> scratch(F32ConvTranspose::scratch_floats(s), std::nanf(""));
  conv.run(x.data(), y.data(), scratch.data(), pool);
  for (size_t i = 0; i < n; ++i)
    if (!same_bits(y[i], expected[i])) {
      ADD_FAILURE() << conv.kernel_id().name << " " << describe(s) << (bias ? "" : " no bias") << ": output " << i
                    << " (channel " << i % s.out_c << ") is " << y[i] << ", the reference " << expected[i];
      return;
    }
  if (act.kind != ActKind::none) return;
  // The reference against the definition: float sums of |terms| bound the rounding.
  const std::vector<double> exact = definition(s, x, w, bp);
  std::vector<float> ax(x), aw(w);
  for (float& v : ax) v = std::fabs(v);
  for (float& v : aw) v = std::fabs(v);
  const std::vector<double> bound = definition(s, ax, aw, nullptr);
  for (size_t i = 0; i < n; ++i) {
    const double tol = 1e-5 * (bound[i] + (bias ? std::fabs(b[i % s.out_c]) : 0.0)) + 1e-6;
    if (!(std::fabs(expected[i] - exact[i]) <= tol)) {
      ADD_FAILURE() << "reference " << describe(s) << ": output " << i << " is " << expected[i] << ", the definition "
                    << exact[i];
      return;
    }
  }
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
      check(shapes[i], *k, uint32_t(i), true, {});
      check(shapes[i], *k, uint32_t(i + 100), false, {});
      check(shapes[i], *k, uint32_t(i + 200), true, Activation::sigmoid());  // the row epilogue, every path
    }
}

TEST(F32ConvTranspose, DeepInputAddsMlasKBlocksInOrder) {
  // K = 300 over blocks of 128 (and of 64): three partial sums added one after the other.
  for (int k_chunk : {128, 64}) {
    ConvTranspose2dShape s = shape(1, 3, 3, 300, 12, 3, 3, 2, 2, 1, 1, 1, 1, 1);
    s.k_chunk = k_chunk;
    for (const F32GemmKernel* k : runnable_kernels()) check(s, *k, 7, true, {});
    ConvTranspose2dShape g = shape(1, 2, 3, 2 * 200, 2 * 9, 2, 2, 2, 2, 1, 0, 0, 0, 2);
    g.k_chunk = k_chunk;
    for (const F32GemmKernel* k : runnable_kernels()) check(g, *k, 8, false, {});
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
      check(s, *k, uint32_t(t), t % 3 != 0, acts[size_t(t) % acts.size()], t % 2 ? pool : nullptr);
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
      if (!same_bits(y[i], expected[i])) {
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
