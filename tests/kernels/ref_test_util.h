#pragma once
// Helpers shared by the reference-kernel tests.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <ostream>
#include <vector>

#include "kernels/ref/conv2d.h"

namespace octet::kernels::testing {

inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Element-wise |got - want| <= abs_tol + rel_tol * |want|; reports the first mismatch.
inline ::testing::AssertionResult all_near(const std::vector<float>& got,
                                           const std::vector<float>& want, double rel_tol = 0.0,
                                           double abs_tol = 0.0) {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  }
  for (size_t i = 0; i < got.size(); ++i) {
    const double diff = std::fabs(static_cast<double>(got[i]) - want[i]);
    if (!(diff <= abs_tol + rel_tol * std::fabs(want[i]))) {
      return ::testing::AssertionFailure()
             << "at index " << i << ": got " << got[i] << ", want " << want[i];
    }
  }
  return ::testing::AssertionSuccess();
}

// Row-major rows x cols values cols * r + c + 1: the data of the hand-computed cases.
inline std::vector<float> ramp(int rows, int cols) {
  std::vector<float> v(static_cast<size_t>(rows) * cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) v[size_t(r * cols + c)] = static_cast<float>(cols * r + c + 1);
  return v;
}

// Conv geometry for parameterized tests, with the output extent derived from the pads.
struct ConvGeometry {
  int batch, in_h, in_w, in_c, out_c, k_h, k_w, stride_h, stride_w, dil_h, dil_w;
  int pad_top, pad_left, pad_bottom, pad_right, groups;
};

inline void PrintTo(const ConvGeometry& g, std::ostream* os) {
  *os << "n" << g.batch << " in" << g.in_h << "x" << g.in_w << "x" << g.in_c << " out_c" << g.out_c
      << " k" << g.k_h << "x" << g.k_w << " s" << g.stride_h << "x" << g.stride_w << " d" << g.dil_h
      << "x" << g.dil_w << " pads(t,l,b,r)=" << g.pad_top << "," << g.pad_left << ","
      << g.pad_bottom << "," << g.pad_right << " groups" << g.groups;
}

inline Conv2dShape conv_shape(const ConvGeometry& g) {
  Conv2dShape s;
  s.batch = g.batch;
  s.in_h = g.in_h;
  s.in_w = g.in_w;
  s.in_c = g.in_c;
  s.out_c = g.out_c;
  s.kernel_h = g.k_h;
  s.kernel_w = g.k_w;
  s.stride_h = g.stride_h;
  s.stride_w = g.stride_w;
  s.dilation_h = g.dil_h;
  s.dilation_w = g.dil_w;
  s.pad_top = g.pad_top;
  s.pad_left = g.pad_left;
  s.groups = g.groups;
  s.out_h = (g.in_h + g.pad_top + g.pad_bottom - g.dil_h * (g.k_h - 1) - 1) / g.stride_h + 1;
  s.out_w = (g.in_w + g.pad_left + g.pad_right - g.dil_w * (g.k_w - 1) - 1) / g.stride_w + 1;
  return s;
}

}  // namespace octet::kernels::testing
