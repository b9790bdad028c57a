#pragma once
// Quantized values widened to int, so gtest prints them as numbers (a uint8_t prints as a char).
#include <vector>

namespace octet::kernels {

using Ints = std::vector<int>;

template <typename T>
Ints ints(const std::vector<T>& v) {
  return Ints(v.begin(), v.end());
}

}  // namespace octet::kernels
