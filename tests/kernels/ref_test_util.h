#pragma once
// Helpers shared by the reference-kernel tests.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

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

}  // namespace octet::kernels::testing
