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
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace f32_conv_transpose3d_test {

using testing::fill_uniform;

std::vector<const F32GemmKernel*> runnable_kernels() {
  return testing::runnable_entries(f32_gemm_kernels(), [](const F32GemmKernel& k) { return k.gemm_name; }, "FP32 GEMM");
}

// One spatial axis: out = (in - 1) * stride + (k - 1) * dilation + 1 - pads + extra
// (output_padding, or a larger output_shape: the uncovered planes then hold the bias).
struct Extent {
  int in, k, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0, extra = 0;
  int out() const { return (in - 1) * stride + (k - 1) * dilation + 1 - pad_begin - pad_end + extra; }
};

ConvTranspose2dShape shape3d(int batch, int in_c, int out_c, int groups, Extent d, Extent h, Extent w) {
  ConvTranspose2dShape s;
  s.batch = batch, s.in_c = in_c, s.out_c = out_c, s.groups = groups;
  s.in_d = d.in, s.kernel_d = d.k, s.stride_d = d.stride, s.dilation_d = d.dilation, s.pad_front = d.pad_begin;
  s.in_h = h.in, s.kernel_h = h.k, s.stride_h = h.stride, s.dilation_h = h.dilation, s.pad_top = h.pad_begin;
  s.in_w = w.in, s.kernel_w = w.k, s.stride_w = w.stride, s.dilation_w = w.dilation, s.pad_left = w.pad_begin;
  s.out_d = d.out(), s.out_h = h.out(), s.out_w = w.out();
  return s;
}

std::string describe(const ConvTranspose2dShape& s) {
  auto axes = [](int a, int b, int c) { return std::to_string(a) + "x" + std::to_string(b) + "x" + std::to_string(c); };
  return "n" + std::to_string(s.batch) + " " + axes(s.in_d, s.in_h, s.in_w) + "x" + std::to_string(s.in_c) + " -> " +
         axes(s.out_d, s.out_h, s.out_w) + "x" + std::to_string(s.out_c) + " k" +
         axes(s.kernel_d, s.kernel_h, s.kernel_w) + " s" + axes(s.stride_d, s.stride_h, s.stride_w) + " d" +
         axes(s.dilation_d, s.dilation_h, s.dilation_w) + " p" + axes(s.pad_front, s.pad_top, s.pad_left) + " g" +
         std::to_string(s.groups) + " kc" + std::to_string(s.k_chunk);
}

size_t in_count(const ConvTranspose2dShape& s) { return size_t(s.batch) * s.in_d * s.in_h * s.in_w * s.in_c; }
size_t out_count(const ConvTranspose2dShape& s) { return size_t(s.batch) * s.out_d * s.out_h * s.out_w * s.out_c; }
size_t w_count(const ConvTranspose2dShape& s) {
  return size_t(s.in_c) * (s.out_c / s.groups) * s.kernel_d * s.kernel_h * s.kernel_w;
}

// Input index along one axis that tap k brings to output o, or -1.
int source(int o, int k, int stride, int dilation, int pad, int in) {
  const int t = o + pad - k * dilation;
  if (t < 0 || t % stride || t / stride >= in) return -1;
  return t / stride;
}

// The definition, gathered in double: y[o] = b + sum over (i, tap) landing on o of x[i] * w.
std::vector<double> definition(const ConvTranspose2dShape& s, const std::vector<float>& x, const std::vector<float>& w,
                               const float* b) {
  const int gi = s.in_c / s.groups, go = s.out_c / s.groups;
  std::vector<double> y(out_count(s));
  size_t at = 0;
  for (int n = 0; n < s.batch; ++n)
    for (int oz = 0; oz < s.out_d; ++oz)
      for (int oy = 0; oy < s.out_h; ++oy)
        for (int ox = 0; ox < s.out_w; ++ox)
          for (int oc = 0; oc < s.out_c; ++oc, ++at) {
            double acc = b ? b[oc] : 0.0;
            const int g = oc / go;
            for (int kz = 0; kz < s.kernel_d; ++kz) {
              const int iz = source(oz, kz, s.stride_d, s.dilation_d, s.pad_front, s.in_d);
              if (iz < 0) continue;
              for (int ky = 0; ky < s.kernel_h; ++ky) {
                const int iy = source(oy, ky, s.stride_h, s.dilation_h, s.pad_top, s.in_h);
                if (iy < 0) continue;
                for (int kx = 0; kx < s.kernel_w; ++kx) {
                  const int ix = source(ox, kx, s.stride_w, s.dilation_w, s.pad_left, s.in_w);
                  if (ix < 0) continue;
                  for (int ic = 0; ic < gi; ++ic) {
                    const int c = g * gi + ic;
                    const size_t xi = (((size_t(n) * s.in_d + iz) * s.in_h + iy) * s.in_w + ix) * s.in_c + c;
                    const size_t wi = (((size_t(c) * go + oc % go) * s.kernel_d + kz) * s.kernel_h + ky) * s.kernel_w + kx;
                    acc += double(x[xi]) * w[wi];
                  }
                }
              }
            }
            y[at] = acc;
          }
  return y;
}

// Equal values (the sign of a zero may differ: ORT adds taps into +0) or both NaN.
bool same_bits(float a, float b) { return a == b || (std::isnan(a) && std::isnan(b)); }

void check(const ConvTranspose2dShape& s, const F32GemmKernel& k, uint32_t seed, bool bias, const Activation& act,
           pthreadpool_t pool = nullptr) {
  std::mt19937 rng(seed);
  std::vector<float> x(in_count(s)), w(w_count(s)), b(size_t(s.out_c));
  fill_uniform(rng, x);
  fill_uniform(rng, w);
  fill_uniform(rng, b);
  const size_t n = out_count(s);
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
      check(shapes[i], *k, uint32_t(i), true, {});
      check(shapes[i], *k, uint32_t(i + 100), false, {});
      check(shapes[i], *k, uint32_t(i + 200), true, Activation::silu());  // the row epilogue, every path
    }
}

TEST(F32ConvTranspose3d, DeepInputAddsMlasKBlocksInOrder) {
  for (int k_chunk : {128, 64}) {
    ConvTranspose2dShape s = shape3d(1, 300, 6, 1, {2, 2, 2}, {2, 3, 2, 1, 1, 1}, {3, 2, 2});
    s.k_chunk = k_chunk;
    ConvTranspose2dShape g = shape3d(1, 2 * 150, 2 * 4, 2, {2, 2, 2}, {2, 2, 2}, {2, 2, 2});
    g.k_chunk = k_chunk;
    for (const F32GemmKernel* k : runnable_kernels()) {
      check(s, *k, 7, true, {});
      check(g, *k, 8, false, {});
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
      check(s, *k, uint32_t(t), t % 3 != 0, acts[size_t(t) % acts.size()], t % 2 ? pool : nullptr);
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
        if (!same_bits(y[i], expected[i])) {
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
