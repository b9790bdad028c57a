#pragma once
// Zeroed, cache-line-aligned float scratch for the drivers. new float[] only promises 16
// bytes: a vector load or store that straddles two cache lines costs two accesses, and a
// buffer every row of a layer goes through (a ring of rows, a padded copy) pays that on
// most of its accesses. Measured on Zen 1: MobileNetV2's 28x28 expand + depthwise blocks
// ran 6-9% slower through an unaligned image of scratch than through the arena.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

namespace octet::kernels {

struct AlignedFree {
  void operator()(float* p) const { std::free(p); }
};
using AlignedFloats = std::unique_ptr<float[], AlignedFree>;

inline AlignedFloats aligned_zeroed_floats(size_t count) {
  const size_t bytes = (count * sizeof(float) + 63) / 64 * 64;
  float* p = static_cast<float*>(std::aligned_alloc(64, bytes == 0 ? 64 : bytes));
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, bytes == 0 ? 64 : bytes);
  return AlignedFloats(p);
}

}  // namespace octet::kernels
