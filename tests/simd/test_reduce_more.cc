// The reduce_more family (kernels/elementwise/reduce_more_list.h) against its scalar references
// (kernels/ref/reduce_more.h) at every level this CPU runs: the sums, products, sqrt and log bit
// for bit (each lane folds its elements in the reference's order), ReduceLogSumExp within the
// levels' exp (a few ulp of std::exp, so 1e-6 relative); CumSum bit for bit; then the drivers
// over tensor shapes.
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "kernels/elementwise/reduce_more.h"
#include "kernels/elementwise/reduce_more_list.h"
#include "kernels/ref/reduce_more.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace {
namespace reduce_more_test {  // unity builds join the test files

constexpr MapReduce kKinds[] = {MapReduce::l1,      MapReduce::l2,          MapReduce::sum_square,
                                MapReduce::log_sum, MapReduce::log_sum_exp, MapReduce::prod, MapReduce::sum};

template <class Fn>
std::vector<const ReduceMoreUkernel<Fn>*> runnable(std::span<const ReduceMoreUkernel<Fn>> list) {
  return testing::runnable_entries(list);
}

std::vector<float> random_floats(std::mt19937& rng, size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Bit for bit, or (kind log_sum_exp: the levels' exp) within 1e-6 relative / 1e-6 absolute near 0;
// NaN matches NaN, infinities their own sign.
::testing::AssertionResult agree(MapReduce kind, float got, float want) {
  if (std::isnan(want) ? std::isnan(got) : std::memcmp(&got, &want, sizeof got) == 0)
    return ::testing::AssertionSuccess();
  if (kind == MapReduce::log_sum_exp && std::isfinite(want) && std::fabs(got - want) <= 1e-6f * std::max(1.0f, std::fabs(want)))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << got << " vs " << want;
}

// Values for a kind: the logs' sums positive on most shapes; products near 1 so 60 terms stay
// finite; every fourth shape adversarial (signed zeros, infinities, NaN, subnormals, huge).
void fill(std::mt19937& rng, MapReduce kind, int i, std::vector<float>& x) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const float specials[] = {0.0f, -0.0f, inf, -inf, nan, 1e-40f, -1e-40f, 3e38f, -3e38f, 1.0f};
  if (kind == MapReduce::prod) x = random_floats(rng, x.size(), 0.6f, 1.5f);
  else if (kind == MapReduce::log_sum && i % 2 == 0) x = random_floats(rng, x.size(), 0.0f, 5.0f);
  else if (kind == MapReduce::log_sum_exp && i % 2 == 0) x = random_floats(rng, x.size(), -60.0f, 60.0f);
  else x = random_floats(rng, x.size(), -3.0f, 5.0f);
  if (i % 4 == 3)
    for (float& v : x)
      if (rng() % 7 == 0) v = specials[rng() % 10];
}

TEST(F32MapReduceUkernel, EqualsTheRef) {
  std::mt19937 rng(470);
  int shapes = 0;
  testing::skip_when_none_run(runnable(kF32MapReduceUkernels).size(), "f32_map_reduce");
  for (auto* k : runnable(kF32MapReduceUkernels)) {
    for (MapReduce kind : kKinds) {
      for (int i = 0; i < 160; ++i, ++shapes) {
        // Counts 1 ... 70 (every block width and tail of 4, 8 and 16 lanes), lane strides 1 (loads)
        // and above (gathers), offsets in walk order or shuffled (the order is the reference's).
        const size_t count = i < 70 ? size_t(1 + i) : size_t(1 + rng() % 90);
        const size_t lane_stride = i % 3 == 0 ? 1 : size_t(1 + rng() % 40);
        const size_t terms = size_t(1 + rng() % 60);
        std::vector<int64_t> offsets(terms);
        const size_t span = count * lane_stride;
        for (size_t t = 0; t < terms; ++t) offsets[t] = int64_t(t * span);
        if (i % 4 == 1) std::shuffle(offsets.begin(), offsets.end(), rng);
        std::vector<float> x(terms * span);
        fill(rng, kind, i, x);
        std::vector<float> want(count), y(count + 5, -7.0f);
        f32_map_reduce__ref(kind, count, lane_stride, x.data(), terms, offsets.data(), want.data());
        k->fn(kind, count, lane_stride, x.data(), terms, offsets.data(), y.data());
        for (size_t j = 0; j < count; ++j)
          ASSERT_TRUE(agree(kind, y[j], want[j])) << k->name << " kind " << int(kind) << " count " << count
                                                  << " stride " << lane_stride << " terms " << terms << " at " << j;
        for (size_t j = count; j < y.size(); ++j) ASSERT_EQ(y[j], -7.0f) << k->name << " wrote y[" << j << "]";
      }
    }
  }
  ::testing::Test::RecordProperty("shapes", shapes);
}

// Whole tensors: every length 1 ... 80 (fewer than one packet, one, odd and even packet counts,
// every tail), then long ones, Eigen's packet order reproduced bit for bit.
TEST(F32EigenFoldUkernel, EqualsTheRef) {
  std::mt19937 rng(471);
  testing::skip_when_none_run(runnable(kF32EigenFoldUkernels).size(), "f32_eigen_fold");
  for (auto* k : runnable(kF32EigenFoldUkernels)) {
    for (MapReduce kind : kKinds) {
      for (int i = 0; i < 110; ++i) {
        const size_t n = i < 80 ? size_t(1 + i) : size_t(1 + rng() % 5000);
        std::vector<float> x(n);
        fill(rng, kind, i, x);
        if (kind == MapReduce::prod && n > 200) x = random_floats(rng, n, 0.99f, 1.01f);
        ASSERT_TRUE(agree(kind, k->fn(kind, n, x.data()), f32_eigen_fold__ref(kind, n, x.data())))
            << k->name << " kind " << int(kind) << " n " << n;
      }
    }
  }
}

TEST(F32SubDivUkernel, EqualsTheRefBitForBit) {
  std::mt19937 rng(472);
  testing::skip_when_none_run(runnable(kF32SubDivUkernels).size(), "f32_sub_div");
  for (auto* k : runnable(kF32SubDivUkernels)) {
    for (int i = 0; i < 300; ++i) {
      const size_t n = i < 70 ? size_t(i) : size_t(1 + rng() % 300);
      const size_t inc = i % 2;
      const bool zero = i % 3 != 0, with_a = i % 5 != 0;
      std::vector<float> x = random_floats(rng, n, -3.0f, 3.0f), a = random_floats(rng, std::max<size_t>(1, n), -1, 1),
                         b = random_floats(rng, std::max<size_t>(1, n), -2.0f, 2.0f);
      for (float& v : b)
        if (rng() % 4 == 0) v = rng() % 2 ? 0.0f : -0.0f;
      if (i % 7 == 0 && n > 0) x[0] = std::numeric_limits<float>::quiet_NaN();
      std::vector<float> want(n), y(n + 5, -7.0f);
      const float* ap = with_a ? a.data() : nullptr;
      f32_sub_div__ref(n, x.data(), ap, b.data(), inc, want.data(), zero);
      k->fn(n, x.data(), ap, b.data(), inc, y.data(), zero);
      for (size_t j = 0; j < n; ++j)
        ASSERT_TRUE(agree(MapReduce::l1, y[j], want[j])) << k->name << " n " << n << " inc " << inc << " at " << j;
      for (size_t j = n; j < y.size(); ++j) ASSERT_EQ(y[j], -7.0f) << k->name << " wrote y[" << j << "]";
    }
  }
}

// CumSum: every column count 1 ... 70 (blocks of four vectors and every tail of 4, 8 and 16
// lanes), row strides past the columns (their gaps never written), 1 to 40 rows, exclusive x
// reverse; every third shape with infinities, NaN, signed zeros, subnormals and huge values (a
// sum to inf, then inf - inf). Bit for bit (NaN matches NaN).
TEST(F32CumSumUkernel, EqualsTheRefBitForBit) {
  std::mt19937 rng(476);
  testing::skip_when_none_run(runnable(kF32CumSumUkernels).size(), "f32_cumsum");
  for (auto* k : runnable(kF32CumSumUkernels)) {
    for (int i = 0; i < 280; ++i) {
      const size_t count = i < 70 ? size_t(1 + i) : size_t(1 + rng() % 150);
      const size_t stride = count + (i % 2 ? rng() % 5 : 0), len = i % 35 == 0 ? 1 : size_t(1 + rng() % 40);
      const bool exclusive = i % 4 >= 2, reverse = i % 2 == 1;
      std::vector<float> x(len * stride);
      fill(rng, MapReduce::sum, i % 3 == 2 ? 3 : 0, x);
      std::vector<float> want(len * stride + 3, -7.0f), y = want;
      f32_cumsum__ref(len, count, stride, x.data(), want.data(), exclusive, reverse);
      k->fn(len, count, stride, x.data(), y.data(), exclusive, reverse);
      for (size_t j = 0; j < y.size(); ++j)
        ASSERT_TRUE(agree(MapReduce::sum, y[j], want[j])) << k->name << " len " << len << " count " << count << " stride "
                                                          << stride << " exclusive " << exclusive << " reverse "
                                                          << reverse << " at " << j;
    }
  }
}

// The CumSum driver at each level against level scalar: the axis outer, middle and innermost,
// slabs wider than a piece of columns, on 2 threads.
TEST(F32CumSum, EveryLevelEqualsTheScalarLevel) {
  std::mt19937 rng(477);
  testing::Pool pool(pthreadpool_create(2));
  struct Case {
    int64_t outer, len, inner;
  };
  for (Isa isa : testing::isas_under_test())
    for (Case c : {Case{2, 16, 49}, Case{1, 2, 784}, Case{112, 7, 1}, Case{3, 100, 700}, Case{3, 1, 5}, Case{2, 0, 3},
                   Case{1, 50, 3}})
      for (int flags = 0; flags < 4; ++flags) {
        const size_t n = size_t(c.outer * c.len * c.inner);
        std::vector<float> x(n);
        fill(rng, MapReduce::sum, flags == 3 ? 3 : 0, x);
        const F32CumSum fast(c.outer, c.len, c.inner, flags & 1, flags & 2, isa);
        const F32CumSum ref(c.outer, c.len, c.inner, flags & 1, flags & 2, Isa::scalar);
        std::vector<float> y(n + 3, -7.0f), want = y;
        fast.run(x.data(), y.data(), pool.get());
        ref.run(x.data(), want.data(), nullptr);
        for (size_t j = 0; j < y.size(); ++j)
          ASSERT_TRUE(agree(MapReduce::sum, y[j], want[j])) << fast.kernel_name() << " flags " << flags << " at " << j;
        if (isa != Isa::scalar) {
          EXPECT_FALSE(fast.kernel_id().scalar) << fast.kernel_name();
        }
      }
}

// The drivers at each level against the same drivers at level scalar (the references), over
// row-major and channels-last strides, every axis, none, and an empty reduced axis.
TEST(F32MapReduce, EveryLevelEqualsTheScalarLevel) {
  std::mt19937 rng(473);
  testing::Pool pool(pthreadpool_create(2));
  struct Case {
    std::vector<int64_t> dims, strides;
    std::vector<bool> reduced;
  };
  const Case cases[] = {
      {{2, 16, 7, 7}, {784, 49, 7, 1}, {false, true, false, false}},
      {{2, 16, 7, 7}, {784, 1, 112, 16}, {false, true, false, false}},  // channels-last memory
      {{2, 16, 7, 7}, {784, 1, 112, 16}, {false, false, true, true}},
      {{1, 64, 9, 9}, {5184, 81, 9, 1}, {true, true, true, true}},      // every axis: Eigen's order
      {{1, 64, 9, 9}, {5184, 1, 576, 64}, {true, true, true, true}},    // every axis, channels-last
      {{4, 70, 33}, {2310, 33, 1}, {true, false, true}},
      {{3, 5}, {5, 1}, {false, false}},                                  // no axis (noop): each element
      {{2, 0, 3}, {0, 3, 1}, {false, true, false}},                      // an empty reduction
  };
  for (Isa isa : testing::isas_under_test()) {
    for (MapReduce kind : kKinds)
      for (const Case& c : cases) {
        int64_t outputs = 1, extent = 1;
        for (size_t d = 0; d < c.dims.size(); ++d) {
          if (!c.reduced[d]) outputs *= c.dims[d];
          extent += std::max<int64_t>(0, c.dims[d] - 1) * c.strides[d];
        }
        std::vector<float> x(static_cast<size_t>(extent));
        fill(rng, kind, 0, x);
        std::unique_ptr<bool[]> flags(new bool[c.dims.size()]);
        for (size_t d = 0; d < c.dims.size(); ++d) flags[d] = c.reduced[d];
        const int rank = int(c.dims.size());
        const F32MapReduce fast(kind, rank, c.dims.data(), c.strides.data(), flags.get(), isa);
        const F32MapReduce ref(kind, rank, c.dims.data(), c.strides.data(), flags.get(), Isa::scalar);
        std::vector<float> y(size_t(outputs) + 3, -7.0f), want(size_t(outputs) + 3, -7.0f);
        fast.run(x.data(), y.data(), pool.get());
        ref.run(x.data(), want.data(), nullptr);
        for (size_t j = 0; j < y.size(); ++j)
          ASSERT_TRUE(agree(kind, y[j], want[j])) << fast.kernel_name() << " kind " << int(kind) << " at " << j;
        if (isa != Isa::scalar && outputs > 0) {
          EXPECT_EQ(fast.kernel_id().scalar, false) << fast.kernel_name();
        }
      }
  }
}

TEST(F32LpNorm, EveryLevelEqualsTheScalarLevel) {
  std::mt19937 rng(474);
  testing::Pool pool(pthreadpool_create(2));
  struct Case {
    int64_t outer, len, inner;
  };
  for (Isa isa : testing::isas_under_test())
    for (int p : {1, 2})
      for (Case c : {Case{4, 512, 1}, Case{2, 16, 49}, Case{3, 5, 1}, Case{1, 7, 3}, Case{300, 33, 1}, Case{2, 1, 17}}) {
        const size_t n = size_t(c.outer * c.len * c.inner);
        std::vector<float> x = random_floats(rng, n, -2.0f, 2.0f);
        // A vector of zeros (its output 0, not NaN) and one of subnormals (a squared norm of 0).
        for (int64_t k = 0; k < c.len; ++k) {
          x[size_t(k * c.inner)] = 0.0f;
          if (c.outer * c.inner > 1) x[size_t(k * c.inner + 1)] = 1e-40f;
        }
        const F32LpNorm fast(p, c.outer, c.len, c.inner, isa), ref(p, c.outer, c.len, c.inner, Isa::scalar);
        std::vector<float> y(n), want(n), norms(fast.scratch_floats()), ref_norms(ref.scratch_floats());
        fast.run(x.data(), y.data(), norms.data(), pool.get());
        ref.run(x.data(), want.data(), ref_norms.data(), nullptr);
        for (size_t j = 0; j < n; ++j)
          ASSERT_TRUE(agree(MapReduce::l1, y[j], want[j])) << fast.kernel_name() << " p " << p << " at " << j;
      }
}

// MeanVarianceNormalization at each level against level scalar: normalized axes trailing (one
// statistic per run), leading (one per element of the run), mixed, all.
TEST(F32MeanVarianceNorm, EveryLevelEqualsTheScalarLevel) {
  std::mt19937 rng(475);
  const std::vector<int64_t> dims = {2, 5, 7, 9};
  const std::vector<std::vector<bool>> sets = {{true, false, true, true},  {false, false, true, true},
                                               {true, true, true, false},  {true, true, true, true},
                                               {false, true, false, true}, {false, false, false, true}};
  for (Isa isa : testing::isas_under_test())
    for (const auto& set : sets) {
      std::unique_ptr<bool[]> flags(new bool[4]);
      for (size_t d = 0; d < 4; ++d) flags[d] = set[d];
      const F32MeanVarianceNorm fast(4, dims.data(), flags.get(), isa), ref(4, dims.data(), flags.get(), Isa::scalar);
      std::vector<float> x = random_floats(rng, 2 * 5 * 7 * 9, -3.0f, 5.0f);
      std::vector<float> y(x.size()), want(x.size()), s1(fast.scratch_floats()), s2(ref.scratch_floats());
      fast.run(x.data(), y.data(), s1.data());
      ref.run(x.data(), want.data(), s2.data());
      for (size_t j = 0; j < x.size(); ++j) ASSERT_TRUE(agree(MapReduce::sum, y[j], want[j])) << fast.kernel_name() << " at " << j;
    }
}

}  // namespace reduce_more_test
}  // namespace
}  // namespace octet::kernels
