// The SIMD 256-entry byte table lookups against q8_lookup__ref: every length up to a few vectors
// (the tails), every index value, random tables, a guard byte past the end; the rows form
// with strided rows and untouched gaps.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "kernels/quantize/lookup.h"
#include "kernels/ref/qelementwise.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace {

// Every lookup kernel this CPU runs: the one chosen at each level.
std::vector<const Q8LookupKernel*> kernels_here() {
  std::vector<const Q8LookupKernel*> ks;
  for (Isa isa : runnable_isas())
    if (const Q8LookupKernel* k = choose_q8_lookup(isa); k != nullptr)
      if (std::find(ks.begin(), ks.end(), k) == ks.end()) ks.push_back(k);
  return ks;
}

TEST(Q8Lookup, MatchesTheRefForEveryIndexAndLength) {
  const auto ks = kernels_here();
  testing::skip_when_none_run(ks.size(), "lookup (the lookup runs q8_lookup__ref)");
  if (ks.empty()) return;
  std::mt19937 rng(9);
  for (const Q8LookupKernel* k : ks) {
    for (int trial = 0; trial < 4; ++trial) {
      std::vector<uint8_t> table(256);
      for (auto& v : table) v = uint8_t(rng());
      for (size_t n : {size_t(0), size_t(1), size_t(31), size_t(32), size_t(33), size_t(63), size_t(64), size_t(65),
                       size_t(127), size_t(200), size_t(4096)}) {
        std::vector<uint8_t> x(n);
        for (size_t i = 0; i < n; ++i) x[i] = i < 256 && n >= 256 ? uint8_t(i) : uint8_t(rng());
        std::vector<uint8_t> want(n), got(n + 1, 0x5A);
        q8_lookup__ref<uint8_t>(int64_t(n), x.data(), table.data(), want.data());
        k->fn(n, x.data(), table.data(), got.data());
        for (size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], want[i]) << k->name << " n " << n << " x " << int(x[i]);
        EXPECT_EQ(got[n], 0x5A) << k->name << " wrote past the end (n " << n << ")";
      }
    }
  }
}

// The rows form (QLinearConcat's runs): 1 to 5 rows of every run length around the vector
// widths, rows strided apart with gaps the kernel must leave untouched.
TEST(Q8Lookup, RowsMatchTheRefAndLeaveTheGaps) {
  const auto ks = kernels_here();
  testing::skip_when_none_run(ks.size(), "lookup (the lookup runs q8_lookup__ref)");
  std::mt19937 rng(13);
  std::vector<uint8_t> table(256);
  for (auto& v : table) v = uint8_t(rng());
  for (const Q8LookupKernel* k : ks)
    for (size_t rows : {size_t(1), size_t(2), size_t(5)})
      for (size_t n : {size_t(1), size_t(15), size_t(16), size_t(17), size_t(32), size_t(48), size_t(63), size_t(64),
                       size_t(65), size_t(100)}) {
        const size_t xs = n + rng() % 9, ys = n + 1 + rng() % 9;
        std::vector<uint8_t> x(rows * xs);
        for (auto& v : x) v = uint8_t(rng());
        std::vector<uint8_t> want(rows * ys, 0x5A), got = want;
        for (size_t r = 0; r < rows; ++r) q8_lookup__ref<uint8_t>(int64_t(n), x.data() + r * xs, table.data(), want.data() + r * ys);
        k->rows(rows, n, x.data(), xs, table.data(), got.data(), ys);
        ASSERT_EQ(got, want) << k->name << " rows " << rows << " n " << n << " strides " << xs << " " << ys;
      }
}

TEST(Q8Lookup, FollowsTheIsaCap) {
  EXPECT_EQ(choose_q8_lookup(Isa::scalar), nullptr);
  if (isa_supported(Isa::avx2)) {
    EXPECT_STREQ(choose_q8_lookup(Isa::avx2)->name, "q8_lookup__avx2");
  }
  if (!cpu_has(kAvx512Vbmi)) {
    EXPECT_EQ(choose_q8_lookup(Isa::avx512vnni), choose_q8_lookup(Isa::avx2));
  }
}

}  // namespace
}  // namespace octet::kernels
