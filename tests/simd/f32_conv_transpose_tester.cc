#include "tests/simd/f32_conv_transpose_tester.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernels/conv/f32_conv_transpose.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels::testing {

ConvTranspose2dShape conv_transpose_shape(int batch, int in_c, int out_c, int groups, Extent d, Extent h, Extent w) {
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

namespace {

// Input index along one axis that tap k brings to output o, or -1.
int source(int o, int k, int stride, int dilation, int pad, int in) {
  const int t = o + pad - k * dilation;
  if (t < 0 || t % stride || t / stride >= in) return -1;
  return t / stride;
}

}  // namespace

std::vector<double> conv_transpose_definition(const ConvTranspose2dShape& s, const std::vector<float>& x,
                                              const std::vector<float>& w, const float* b) {
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

void check_conv_transpose(const ConvTranspose2dShape& s, const F32GemmKernel& k, uint32_t seed, bool bias,
                          const Activation& act, pthreadpool_t pool) {
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
    if (!same_value(y[i], expected[i])) {
      ADD_FAILURE() << conv.kernel_id().name << " " << describe(s) << (bias ? "" : " no bias") << ": output " << i
                    << " (channel " << i % s.out_c << ") is " << y[i] << ", the reference " << expected[i];
      return;
    }
  if (act.kind != ActKind::none) return;
  // The reference against the definition: float sums of |terms| bound the rounding.
  const std::vector<double> exact = conv_transpose_definition(s, x, w, bp);
  std::vector<float> ax(x), aw(w);
  for (float& v : ax) v = std::fabs(v);
  for (float& v : aw) v = std::fabs(v);
  const std::vector<double> bound = conv_transpose_definition(s, ax, aw, nullptr);
  for (size_t i = 0; i < n; ++i) {
    const double tol = 1e-5 * (bound[i] + (bias ? std::fabs(b[i % s.out_c]) : 0.0)) + 1e-6;
    if (!(std::fabs(expected[i] - exact[i]) <= tol)) {
      ADD_FAILURE() << "reference " << describe(s) << ": output " << i << " is " << expected[i] << ", the definition "
                    << exact[i];
      return;
    }
  }
}

}  // namespace octet::kernels::testing
