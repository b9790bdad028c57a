// The QLinearSoftmax microkernels (kernels/elementwise/qsoftmax_list.h) against q8_softmax__ref, byte for
// byte, uint8 and int8, for every entry this CPU runs: contiguous rows (inner == 1) and columns
// (inner > 1, tails of every width), reduction lengths 1 to 300, the x / y scales and zero
// points ORT's quantizer writes and others (coarse and huge steps), and adversarial rows (all
// equal, all at either end of the type, one value far above the rest, alternating ends).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/elementwise/softmax.h"
#include "kernels/elementwise/qsoftmax_list.h"
#include "kernels/ref/qsoftmax.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels::qsoftmax_tests {

using testing::Pool;

const float kXScales[] = {0.001f, 0.01f, 0.05f, 0.1f, 0.18032639f, 0.37f, 1.0f, 4.0f, 30.0f};
// 1/256 is what ORT's quantizer writes; the others take the floor(1 / y_scale) shortcut
// elsewhere: coarse, a single step, no step at all (2.0), and steps past the type (1e-4).
const float kYScales[] = {1.0f / 256.0f, 1.0f / 255.0f, 0.0031f, 0.0043f, 0.01f, 0.7f, 2.0f, 1e-4f};

template <class T>
std::vector<int32_t> zero_points() {
  if constexpr (std::is_same_v<T, uint8_t>) return {0, 1, 127, 128, 255};
  else return {-128, -1, 0, 127};
}

enum class Pattern { random, narrow, all_equal, all_zero, all_top, all_bottom, one_huge, two_huge, alternating, count };

template <class T>
void fill(std::mt19937& rng, Pattern pattern, std::vector<T>& x) {
  constexpr int lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  std::uniform_int_distribution<int> any(lo, hi);
  const T same = T(any(rng));
  const int base = any(rng);
  for (size_t i = 0; i < x.size(); ++i) {
    switch (pattern) {
      case Pattern::narrow: x[i] = T(std::clamp(base + int(rng() % 9) - 4, lo, hi)); break;
      case Pattern::all_equal: x[i] = same; break;
      case Pattern::all_zero: x[i] = 0; break;
      case Pattern::all_top: x[i] = T(hi); break;
      case Pattern::all_bottom: x[i] = T(lo); break;
      case Pattern::one_huge:
      case Pattern::two_huge: x[i] = T(lo + int(rng() % 8)); break;
      case Pattern::alternating: x[i] = T(i % 2 ? hi : lo); break;
      default: x[i] = T(any(rng)); break;
    }
  }
  if (!x.empty() && (pattern == Pattern::one_huge || pattern == Pattern::two_huge)) {
    x[rng() % x.size()] = T(hi);
    if (pattern == Pattern::two_huge) x[rng() % x.size()] = T(hi);
  }
}

struct Case {
  size_t outer, d, inner;
  float x_scale, y_scale;
  int32_t y_zero_point;
  Pattern pattern;
};

std::string describe(const Case& c) {
  return "outer " + std::to_string(c.outer) + " d " + std::to_string(c.d) + " inner " + std::to_string(c.inner) +
         " x_scale " + std::to_string(c.x_scale) + " y_scale " + std::to_string(c.y_scale) + " y_zp " +
         std::to_string(c.y_zero_point) + " pattern " + std::to_string(int(c.pattern));
}

// The microkernel through the driver (which splits rows and column blocks) against the
// reference on the same data; a guard band around y must stay untouched.
template <class T>
void check(const Q8SoftmaxEntry& k, const Case& c, std::mt19937& rng, pthreadpool_t pool = nullptr) {
  const size_t n = c.outer * c.d * c.inner, guard = 64;
  std::vector<T> x(n);
  fill(rng, c.pattern, x);
  const bool is_signed = std::is_same_v<T, int8_t>;
  const QSoftmaxTable table = qsoftmax_table(c.x_scale, c.d, is_signed);
  std::vector<T> want(n), got(n + 2 * guard, T(0x5A));
  q8_softmax__ref<T>(c.outer, c.d, c.inner, x.data(), table, c.y_scale, c.y_zero_point, want.data());
  const Q8Softmax softmax(is_signed, int64_t(c.outer), int64_t(c.d), int64_t(c.inner), k);
  softmax.run(x.data(), got.data() + guard, table, c.y_scale, c.y_zero_point, pool);
  for (size_t i = 0; i < guard; ++i) {
    ASSERT_EQ(got[i], T(0x5A)) << k.name << " wrote before y, " << describe(c);
    ASSERT_EQ(got[guard + n + i], T(0x5A)) << k.name << " wrote past y, " << describe(c);
  }
  for (size_t i = 0; i < n; ++i)
    ASSERT_EQ(int(got[guard + i]), int(want[i]))
        << k.name << " at " << i << " (x " << int(x[i]) << "), " << describe(c);
}

template <class T>
void sweep(std::span<const Q8SoftmaxEntry> list, uint32_t seed) {
  const auto zps = zero_points<T>();
  for (const Q8SoftmaxEntry* k : testing::runnable_entries(list)) {
    std::mt19937 rng(seed);
    size_t cases = 0;
    for (size_t inner : {size_t(1), size_t(2), size_t(3), size_t(5), size_t(8), size_t(16), size_t(17), size_t(23),
                         size_t(33), size_t(67)}) {
      for (size_t d = 1; d <= 300; d += (d < 40 ? 1 : 1 + rng() % 29)) {
        if (inner > 17 && d > 64 && rng() % 3) continue;  // keep the long columns few
        Case c;
        c.outer = 1 + rng() % 3;
        c.d = d;
        c.inner = inner;
        c.x_scale = kXScales[rng() % std::size(kXScales)];
        c.y_scale = rng() % 2 ? 1.0f / 256.0f : kYScales[rng() % std::size(kYScales)];
        c.y_zero_point = zps[rng() % zps.size()];
        c.pattern = Pattern(rng() % int(Pattern::count));
        check<T>(*k, c, rng);
        ++cases;
      }
    }
    // Every pattern at every zero point and scale pair, on a row and on columns with a tail.
    for (int pattern = 0; pattern < int(Pattern::count); ++pattern)
      for (int32_t zp : zps)
        for (float xs : kXScales)
          for (float ys : kYScales)
            for (size_t inner : {size_t(1), size_t(13)}) {
              check<T>(*k, {2, 10 + rng() % 40, inner, xs, ys, zp, Pattern(pattern)}, rng);
              ++cases;
            }
    std::printf("%s: %zu cases identical to q8_softmax__ref\n", k->name, cases);
  }
}

TEST(Q8SoftmaxUkernel, Uint8MatchesTheRefByteForByte) { sweep<uint8_t>(kQu8SoftmaxUkernels, 11); }

TEST(Q8SoftmaxUkernel, Int8MatchesTheRefByteForByte) { sweep<int8_t>(kQs8SoftmaxUkernels, 12); }

// The outputs of one row with its entries summed in `order` (indices into the row) instead of
// index order: the reference's arithmetic otherwise.
template <class T>
std::vector<int> outputs_summed_in(const std::vector<T>& x, const std::vector<size_t>& order, const QSoftmaxTable& t,
                                   float y_scale, int32_t zp) {
  const int top = std::is_same_v<T, uint8_t> ? 255 : 127;
  int xmax = x[0];
  for (T v : x) xmax = std::max(xmax, int(v));
  auto entry = [&](T v) { return t[uint8_t(v + top - xmax)]; };
  float sum = 0.0f;
  for (size_t i : order) sum += entry(x[i]);
  std::vector<int> y;
  for (T v : x) y.push_back(std::min(int(std::nearbyint((entry(v) * std::floor(1.0f / y_scale)) / sum)) + zp, 255));
  return y;
}

// Rows whose bytes change when their sum is reassociated as a vector or a reversed loop would
// do it (fine output steps): a microkernel
// that adds in any other order than the reference's fails on them, which random rows with
// 1/256 steps almost never show.
TEST(Q8SoftmaxUkernel, RowsSensitiveToTheSumOrder) {
  std::mt19937 rng(16);
  struct Row {
    std::vector<uint8_t> x;
    float x_scale, y_scale;
  };
  std::vector<Row> rows;
  for (int tries = 0; tries < 20000 && rows.size() < 40; ++tries) {
    const size_t d = 24 + rng() % 277;
    // Entries within 25% of each other and y_scale about 1 / (100 d): outputs near 100, where an
    // ulp of the sum moves the most codes. (Not much finer: the table's top entry is
    // FLT_MAX / (d e^5), so e * floor(1 / y_scale) overflows past about 148 d.)
    Row r{std::vector<uint8_t>(d), 0.0002f * float(1 + rng() % 5), 1.0f / (float(d) * float(70 + rng() % 60))};
    fill(rng, Pattern::random, r.x);
    const QSoftmaxTable t = qsoftmax_table(r.x_scale, d, false);
    std::vector<size_t> in_order(d);
    for (size_t i = 0; i < d; ++i) in_order[i] = i;
    const auto want = outputs_summed_in(r.x, in_order, t, r.y_scale, 0);
    bool sensitive = false;
    for (size_t lanes : {size_t(4), size_t(8), size_t(16), size_t(0)}) {
      std::vector<size_t> order;
      if (lanes == 0) order.assign(in_order.rbegin(), in_order.rend());
      else
        for (size_t lane = 0; lane < lanes; ++lane)  // lane sums, then added lane by lane
          for (size_t i = lane; i < d; i += lanes) order.push_back(i);
      sensitive = sensitive || outputs_summed_in(r.x, order, t, r.y_scale, 0) != want;
      if (lanes != 0) {  // each block of `lanes` reversed
        order.clear();
        for (size_t b = 0; b < d; b += lanes)
          for (size_t i = std::min(d, b + lanes); i-- > b;) order.push_back(i);
        sensitive = sensitive || outputs_summed_in(r.x, order, t, r.y_scale, 0) != want;
      }
    }
    if (sensitive) rows.push_back(std::move(r));
  }
  ASSERT_GE(rows.size(), 20u) << "too few order-sensitive rows found";
  for (const Q8SoftmaxEntry* k : testing::runnable_entries(kQu8SoftmaxUkernels)) {
    for (const Row& r : rows) {
      const size_t d = r.x.size();
      const QSoftmaxTable t = qsoftmax_table(r.x_scale, d, false);
      std::vector<uint8_t> want(d), got(d);
      q8_softmax__ref<uint8_t>(1, d, 1, r.x.data(), t, r.y_scale, 0, want.data());
      Q8Softmax(false, 1, int64_t(d), 1, *k).run(r.x.data(), got.data(), t, r.y_scale, 0, nullptr);
      ASSERT_EQ(got, want) << k->name << " row of " << d;
      // The same row as the column 3 of 11 (the others random).
      const size_t inner = 11;
      std::vector<uint8_t> xc(d * inner), wc(d * inner), gc(d * inner);
      fill(rng, Pattern::narrow, xc);
      for (size_t i = 0; i < d; ++i) xc[i * inner + 3] = r.x[i];
      q8_softmax__ref<uint8_t>(1, d, inner, xc.data(), t, r.y_scale, 0, wc.data());
      Q8Softmax(false, 1, int64_t(d), int64_t(inner), *k).run(xc.data(), gc.data(), t, r.y_scale, 0, nullptr);
      ASSERT_EQ(gc, wc) << k->name << " column of " << d;
    }
  }
}

// The zoo's shapes through the driver with two threads: YOLOv5nu's DFL head at 320 px
// ([1, 16, 4, 2100]: column blocks split over the threads) and a 1000-class head; and rows and
// columns too long for the entries kept on the stack (looked up twice).
TEST(Q8SoftmaxUkernel, ModelShapesOnThreads) {
  Pool pool(pthreadpool_create(2));
  for (const Q8SoftmaxEntry* k : testing::runnable_entries(kQu8SoftmaxUkernels)) {
    std::mt19937 rng(13);
    check<uint8_t>(*k, {1, 16, 4 * 2100, 0.14f, 1.0f / 256.0f, 0, Pattern::random}, rng, pool.get());
    check<uint8_t>(*k, {4, 1000, 1, 0.21f, 1.0f / 256.0f, 0, Pattern::random}, rng, pool.get());
    check<uint8_t>(*k, {2, 3001, 1, 0.05f, 1.0f / 256.0f, 0, Pattern::narrow}, rng, pool.get());
    check<uint8_t>(*k, {1, 1100, 19, 0.05f, 1.0f / 256.0f, 0, Pattern::narrow}, rng, pool.get());
  }
  for (const Q8SoftmaxEntry* k : testing::runnable_entries(kQs8SoftmaxUkernels)) {
    std::mt19937 rng(14);
    check<int8_t>(*k, {1, 16, 4 * 2100, 0.14f, 1.0f / 256.0f, -128, Pattern::random}, rng, pool.get());
    check<int8_t>(*k, {4, 1000, 1, 0.21f, 1.0f / 256.0f, -128, Pattern::random}, rng, pool.get());
    check<int8_t>(*k, {2, 3001, 1, 0.05f, 1.0f / 256.0f, -128, Pattern::narrow}, rng, pool.get());
    check<int8_t>(*k, {1, 1100, 19, 0.05f, 1.0f / 256.0f, -128, Pattern::narrow}, rng, pool.get());
  }
}

// A microkernel called on fewer columns than its stride (the driver's last column block)
// writes those columns only.
TEST(Q8SoftmaxUkernel, ColumnsShorterThanTheStrideLeaveTheRestAlone) {
  for (const Q8SoftmaxEntry* k : testing::runnable_entries(kQu8SoftmaxUkernels)) {
    std::mt19937 rng(15);
    const size_t d = 7, stride = 40;
    for (size_t columns = 1; columns < stride; ++columns) {
      std::vector<uint8_t> x(d * stride), got(d * stride, 0x5A), want(d * stride);
      fill(rng, Pattern::random, x);
      const QSoftmaxTable table = qsoftmax_table(0.1f, d, false);
      q8_softmax__ref<uint8_t>(1, d, stride, x.data(), table, 1.0f / 256.0f, 3, want.data());
      k->fn(d, columns, stride, x.data(), got.data(), {table.data(), 256.0f, 3});
      for (size_t r = 0; r < d; ++r)
        for (size_t j = 0; j < stride; ++j)
          ASSERT_EQ(int(got[r * stride + j]), j < columns ? int(want[r * stride + j]) : 0x5A)
              << k->name << " columns " << columns << " row " << r << " column " << j;
    }
  }
}

TEST(Q8SoftmaxDriver, NamesTheMicrokernelOrTheReference) {
  EXPECT_EQ(Q8Softmax(false, 1, 10, 1, Isa::scalar).kernel_name(), "qu8_softmax__ref");
  EXPECT_EQ(Q8Softmax(true, 1, 10, 1, Isa::scalar).kernel_name(), "qs8_softmax__ref");
  const Isa best = active_isa();
  if (best == Isa::scalar || kQu8SoftmaxUkernels.empty()) GTEST_SKIP() << testing::kIsaNotOnCpu << "no SIMD level";
  EXPECT_EQ(Q8Softmax(false, 1, 16, 4, best).kernel_name().find("__ref"), std::string::npos);
  EXPECT_NE(Q8Softmax(true, 1, 16, 1, best).kernel_name().find("qs8_softmax__"), std::string::npos);
}

}  // namespace octet::kernels::qsoftmax_tests
