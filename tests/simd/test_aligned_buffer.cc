// kernels/aligned_buffer.h: the alignment every SIMD driver relies on, and the 2 MiB alignment
// that lets megabytes of weights or activations sit on transparent huge pages.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "kernels/aligned_buffer.h"

namespace {

using octet::kernels::allocate_aligned;
using octet::kernels::kHugePageBytes;

uintptr_t address(const void* p) { return reinterpret_cast<uintptr_t>(p); }

TEST(AllocateAligned, SmallBuffersAlignToACacheLine) {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{63}, size_t{4096}, kHugePageBytes - 1}) {
    void* p = allocate_aligned(bytes);
    ASSERT_NE(p, nullptr) << bytes;
    EXPECT_EQ(address(p) % 64, 0u) << bytes;
    std::memset(p, 0xA5, bytes);
    std::free(p);
  }
}

// From 2 MiB up the start is 2 MiB aligned (huge pages can back it), and every byte asked for
// is usable: a size that is not a multiple of 2 MiB keeps its 4 KiB-page tail.
TEST(AllocateAligned, LargeBuffersAlignToAHugePage) {
  for (size_t bytes : {kHugePageBytes, kHugePageBytes + 1, 5 * kHugePageBytes / 2}) {
    auto* p = static_cast<unsigned char*>(allocate_aligned(bytes));
    ASSERT_NE(p, nullptr) << bytes;
    EXPECT_EQ(address(p) % kHugePageBytes, 0u) << bytes;
    std::memset(p, 0x5A, bytes);
    EXPECT_EQ(p[bytes - 1], 0x5A);
    std::free(p);
  }
}

TEST(AllocateAligned, ZeroedFloatsAreZeroAndAligned) {
  auto floats = octet::kernels::aligned_zeroed_floats(kHugePageBytes / sizeof(float) + 3);
  EXPECT_EQ(address(floats.get()) % kHugePageBytes, 0u);
  for (size_t i = 0; i < kHugePageBytes / sizeof(float) + 3; ++i) ASSERT_EQ(floats[i], 0.0f) << i;
}

}  // namespace
