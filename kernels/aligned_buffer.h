#pragma once
// Zeroed, cache-line-aligned float scratch for the drivers. new float[] only promises 16
// bytes: a vector load or store that straddles two cache lines costs two accesses, and a
// buffer every row of a layer goes through (a ring of rows, a padded copy) pays that on
// most of its accesses. Measured on Zen 1: MobileNetV2's 28x28 expand + depthwise blocks
// ran 6-9% slower through an unaligned image of scratch than through the arena.
#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

namespace octet::kernels {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;  // x86-64's and AArch64's transparent huge page

// 64-byte aligned memory (free it with std::free), or nullptr when there is none. From 2 MiB
// up it is aligned to 2 MiB and asks for transparent huge pages over its whole 2 MiB spans
// (advice only; the tail stays on 4 KiB pages). Megabytes of weights or activations stream
// from DRAM layer after layer, and on 4 KiB pages every 4 KiB costs a TLB miss and stops the
// hardware prefetcher. Zen 5, ResNet-50's 3x3 512 -> 512 conv at 7x7 with its 9.4 MB of
// weights coming from DRAM: 1584 -> 1442 us (median of 180 runs, alternated); the whole
// ResNet-50 at batch 1, octet / ORT: 0.920, 0.894 -> 0.890, 0.890.
inline void* allocate_aligned(size_t bytes) {
  const size_t alignment = bytes >= kHugePageBytes ? kHugePageBytes : 64;
  void* p = nullptr;
  if (posix_memalign(&p, alignment, bytes == 0 ? 1 : bytes) != 0) return nullptr;
  if (alignment == kHugePageBytes) madvise(p, bytes / kHugePageBytes * kHugePageBytes, MADV_HUGEPAGE);
  return p;
}

struct AlignedFree {
  void operator()(float* p) const { std::free(p); }
};
using AlignedFloats = std::unique_ptr<float[], AlignedFree>;

inline AlignedFloats aligned_zeroed_floats(size_t count) {
  const size_t bytes = (count * sizeof(float) + 63) / 64 * 64;
  float* p = static_cast<float*>(allocate_aligned(bytes == 0 ? 64 : bytes));
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, bytes == 0 ? 64 : bytes);
  return AlignedFloats(p);
}

}  // namespace octet::kernels
