// OutputRange, the range a producer gathers for the DynamicQuantizeLinear after it: chunks
// added in any order and from several threads at once give f32_range__ref of their union
// (NaN anywhere: NaN at both ends; nothing added: +inf / -inf).
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/elementwise/output_range.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace {

std::vector<float> random_values(std::mt19937& rng, size_t n) {
  std::normal_distribution<float> v(0.0f, 5.0f);
  std::vector<float> x(n);
  for (float& f : x) f = v(rng);
  return x;
}

TEST(OutputRange, ChunksFromTwoThreadsGiveTheWholeRange) {
  std::mt19937 rng(5);
  testing::Pool pool(pthreadpool_create(2));
  for (Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512}) {
    if (!isa_supported(isa)) continue;
    OutputRange range(isa);
    for (int iter = 0; iter < 40; ++iter) {
      const size_t n = 1 + rng() % 50000, chunk = 1 + rng() % 3000;
      std::vector<float> x = random_values(rng, n);
      if (iter % 4 == 1) x[rng() % n] = -std::numeric_limits<float>::infinity();
      if (iter % 4 == 2) x[rng() % n] = std::numeric_limits<float>::quiet_NaN();
      range.reset();
      auto add = [&](size_t c) { range.add(std::min(chunk, n - c * chunk), x.data() + c * chunk); };
      pthreadpool_parallelize_1d(pool.get(), add, (n + chunk - 1) / chunk, 0);
      const F32Range want = f32_range__ref(int64_t(n), x.data());
      const F32Range got = range.get();
      if (std::isnan(want.min)) {
        EXPECT_TRUE(std::isnan(got.min) && std::isnan(got.max)) << range.kernel_name() << " iter " << iter;
      } else {
        EXPECT_EQ(got.min, want.min) << range.kernel_name() << " iter " << iter;
        EXPECT_EQ(got.max, want.max) << range.kernel_name() << " iter " << iter;
      }
    }
  }
}

TEST(OutputRange, NothingAddedIsTheEmptyRange) {
  OutputRange range(Isa::avx512);
  range.add(0, nullptr);
  EXPECT_EQ(range.get().min, std::numeric_limits<float>::infinity());
  EXPECT_EQ(range.get().max, -std::numeric_limits<float>::infinity());
  const float one = 1.5f;
  range.add(1, &one);
  range.reset();  // a new run forgets the last one
  EXPECT_EQ(range.get().min, std::numeric_limits<float>::infinity());
}

}  // namespace
}  // namespace octet::kernels
