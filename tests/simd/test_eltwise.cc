// Element-wise and global-pooling microkernels (kernels/elementwise/eltwise_list.h) and their drivers
// (kernels/elementwise/eltwise.h) against the scalar reference kernels, for every entry this
// CPU supports. INT8: exact equality with the ref variant the engine runs
// (q8_add_ratio_fma_strided__ref, q8_mul_ratio_strided__ref, q8_global_avgpool_nhwc__ref),
// over all 65,536 code pairs for Add and Mul. FP32 Add / Mul / Clip / AddClamp: exact (one
// IEEE operation each, then the clamp); GAP: exact in both of ONNX Runtime's summation orders;
// Sigmoid and SiLU: exact, ONNX Runtime's logistic (mlas_logistic).
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kernels/elementwise/eltwise.h"
#include "kernels/elementwise/eltwise_list.h"
#include "kernels/elementwise/instance_norm.h"
#include "kernels/ref/activation.h"
#include "kernels/ref/elementwise.h"
#include "kernels/ref/pool2d.h"
#include "kernels/ref/qelementwise.h"
#include "kernels/ref/qlinear.h"
#include "kernels/ref/qpool2d.h"
#include "kernels/ref/qreduce.h"
#include "kernels/ref/reduce.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace {

using testing::Pool;

template <class Fn>
std::vector<const EltwiseUkernel<Fn>*> runnable(std::span<const EltwiseUkernel<Fn>> list) {
  return testing::runnable_entries(list);
}

// ---------------------------------------------------------------------------------------
// INT8 binary: a tester over [rows][cols] tiles with row strides (0 = broadcast row).

struct Q8Scales {
  QuantParams a, b, y;
};

template <class T>
class Q8BinaryTester {
 public:
  Q8BinaryTester& rows(size_t v) { rows_ = v; return *this; }
  Q8BinaryTester& cols(size_t v) { cols_ = v; return *this; }
  Q8BinaryTester& a_broadcast(bool v) { a_bcast_ = v; return *this; }
  Q8BinaryTester& b_broadcast(bool v) { b_bcast_ = v; return *this; }
  Q8BinaryTester& scales(const Q8Scales& s) { q_ = s; return *this; }
  Q8BinaryTester& clamp(int32_t lo, int32_t hi) { lo_ = lo; hi_ = hi; return *this; }
  Q8BinaryTester& data(std::vector<T> a, std::vector<T> b) { a_ = std::move(a); b_ = std::move(b); return *this; }
  Q8BinaryTester& seed(uint32_t s) { seed_ = s; return *this; }

  // Fills random data if none was given, then checks the microkernel against the ref.
  void test_add(Q8AddUkernel fn, const char* name) {
    fill();
    std::vector<T> expected(rows_ * cols_), y(rows_ * cols_, T(0x5A));
    const int64_t dims[2] = {int64_t(rows_), int64_t(cols_)};
    const int64_t as[2] = {a_bcast_ ? 0 : int64_t(cols_), 1}, bs[2] = {b_bcast_ ? 0 : int64_t(cols_), 1};
    q8_add_ratio_fma_strided__ref(2, dims, a_.data(), as, q_.a, b_.data(), bs, q_.b, q_.y, lo_, hi_,
                                  expected.data());
    fn(rows_, cols_, a_.data(), size_t(as[0]), b_.data(), size_t(bs[0]), y.data(),
       q8_add_params(q_.a, q_.b, q_.y, lo_, hi_));
    compare(expected, y, name);
  }
  void test_mul(Q8MulUkernel fn, const char* name) {
    fill();
    std::vector<T> expected(rows_ * cols_), y(rows_ * cols_, T(0x5A));
    const int64_t dims[2] = {int64_t(rows_), int64_t(cols_)};
    const int64_t as[2] = {a_bcast_ ? 0 : int64_t(cols_), 1}, bs[2] = {b_bcast_ ? 0 : int64_t(cols_), 1};
    q8_mul_ratio_strided__ref(2, dims, a_.data(), as, q_.a, b_.data(), bs, q_.b, q_.y, lo_, hi_, expected.data());
    fn(rows_, cols_, a_.data(), size_t(as[0]), b_.data(), size_t(bs[0]), y.data(),
       q8_mul_params(q_.a, q_.b, q_.y, lo_, hi_));
    compare(expected, y, name);
  }

 private:
  void fill() {
    const size_t a_count = (a_bcast_ ? 1 : rows_) * cols_, b_count = (b_bcast_ ? 1 : rows_) * cols_;
    if (a_.size() >= a_count && b_.size() >= b_count) return;
    std::mt19937 rng(seed_);
    std::uniform_int_distribution<int> byte(0, 255);
    a_.resize(a_count);
    b_.resize(b_count);
    for (T& v : a_) v = static_cast<T>(byte(rng));
    for (T& v : b_) v = static_cast<T>(byte(rng));
  }
  void compare(const std::vector<T>& expected, const std::vector<T>& y, const char* name) const {
    size_t bad = 0;
    for (size_t i = 0; i < y.size(); ++i) {
      if (expected[i] == y[i]) continue;
      if (++bad <= 3)
        ADD_FAILURE() << name << " rows " << rows_ << " cols " << cols_ << " at " << i << ": " << int(y[i])
                      << " vs ref " << int(expected[i]) << " (scales " << q_.a.scale << "/" << q_.b.scale << "/"
                      << q_.y.scale << ", zps " << q_.a.zero_point << "/" << q_.b.zero_point << "/"
                      << q_.y.zero_point << ")";
    }
    EXPECT_EQ(bad, 0u) << name;
  }

  size_t rows_ = 1, cols_ = 1;
  bool a_bcast_ = false, b_bcast_ = false;
  Q8Scales q_;
  int32_t lo_ = qmin_of<T>(), hi_ = qmax_of<T>();
  std::vector<T> a_, b_;
  uint32_t seed_ = 1;
};

// Scale sets: exact ratios where ties are common (docs/requantization.md section 9),
// calibrated-looking unrelated scales, and extreme ratios that saturate.
std::vector<Q8Scales> tie_heavy_scales(bool is_unsigned) {
  const int32_t z0 = is_unsigned ? 128 : 0, z1 = is_unsigned ? 1 : -1, z2 = is_unsigned ? 255 : 127;
  const int32_t z3 = is_unsigned ? 0 : -128;
  return {
      {{0.05f, z0}, {0.05f, z0}, {0.1f, z0}},
      {{0.05f, z1}, {0.05f, z2}, {0.1f, z3}},
      {{0.5f, z1}, {0.25f, z0}, {1.0f, z1}},
      {{0.25f, z3}, {0.25f, z2}, {0.5f, z0}},
      {{1.0f, z0}, {1.0f, z0}, {2.0f, z1}},
      {{0.0213f, z1}, {0.0178f, z0}, {0.0301f, z2}},
      {{1.0f / 3, z0}, {1.0f / 6, z1}, {0.5f, z0}},
      {{0.1f, z2}, {0.3f, z3}, {0.7f, z1}},
      {{1.0f / 1024, z0}, {4.0f, z0}, {1.0f / 1024, z0}},  // ratio 2^12: saturates
      {{4.0f, z1}, {1.0f / 1024, z0}, {4.0f, z0}},
  };
}

// Scale sets (found by a search over random scales) where a few code pairs round differently
// if the kernel contracts or uncontracts one step: Add's fma(qa, ra, t) done as mul + add, or
// Mul's product * r + y_zp done as one fma. Exact-ratio sets cannot catch that (the products
// are exact), so these guard the "same float operations in the same order" rule.
std::vector<Q8Scales> contraction_sensitive_scales(bool is_unsigned) {
  if (is_unsigned)
    return {{{0.410724998f, 126}, {0.449050009f, 55}, {0.20054999f, 25}},
            {{0.186075002f, 235}, {0.0783187523f, 142}, {0.0388875008f, 207}},
            {{0.0354249999f, 91}, {0.186212495f, 169}, {0.417025f, 174}},
            {{0.237825006f, 169}, {0.0501562506f, 54}, {1.89129996f, 108}}};
  return {{{0.279949993f, -78}, {0.120999999f, 4}, {0.62590003f, 2}},
          {{0.213100001f, -58}, {0.38440001f, -11}, {0.0604000017f, 79}},
          {{0.0729250014f, -40}, {0.173237503f, -63}, {1.36790001f, 107}},
          {{0.128787503f, 40}, {0.010139063f, -109}, {0.0210124999f, 119}}};
}

// All 65,536 (a, b) byte pairs as one [256][256] tile: a varies along the row, b down the rows.
template <class T>
void all_pairs(std::vector<T>& a, std::vector<T>& b) {
  a.resize(65536);
  b.resize(65536);
  for (int r = 0; r < 256; ++r)
    for (int c = 0; c < 256; ++c) {
      a[size_t(r) * 256 + c] = static_cast<T>(static_cast<uint8_t>(c));
      b[size_t(r) * 256 + c] = static_cast<T>(static_cast<uint8_t>(r));
    }
}

template <class T>
void exhaustive_binary(bool add) {
  const bool is_unsigned = std::is_same_v<T, uint8_t>;
  std::vector<T> a, b;
  all_pairs(a, b);
  auto check = [&](auto fn, const char* name) {
    std::vector<Q8Scales> sets = tie_heavy_scales(is_unsigned);
    for (const Q8Scales& s : contraction_sensitive_scales(is_unsigned)) sets.push_back(s);
    for (const Q8Scales& s : sets) {
      for (int clamp = 0; clamp < 2; ++clamp) {
        Q8BinaryTester<T> t;
        t.rows(256).cols(256).scales(s).data(a, b);
        if (clamp) t.clamp(qmin_of<T>() + 37, qmax_of<T>() - 61);  // a folded Clip narrows the range
        if constexpr (std::is_same_v<decltype(fn), Q8AddUkernel>) t.test_add(fn, name);
        else t.test_mul(fn, name);
      }
    }
  };
  if (add) {
    for (auto* k : runnable(is_unsigned ? kQu8AddUkernels : kQs8AddUkernels)) check(k->fn, k->name);
  } else {
    for (auto* k : runnable(is_unsigned ? kQu8MulUkernels : kQs8MulUkernels)) check(k->fn, k->name);
  }
}

TEST(Q8AddUkernel, AllCodePairsU8) { exhaustive_binary<uint8_t>(true); }
TEST(Q8AddUkernel, AllCodePairsS8) { exhaustive_binary<int8_t>(true); }
TEST(Q8MulUkernel, AllCodePairsU8) { exhaustive_binary<uint8_t>(false); }
TEST(Q8MulUkernel, AllCodePairsS8) { exhaustive_binary<int8_t>(false); }

// Random tiles: widths around the vector widths (1 ... 2*64+1), broadcast rows either side.
template <class T>
void random_tiles(bool add) {
  const bool is_unsigned = std::is_same_v<T, uint8_t>;
  const auto scales = tie_heavy_scales(is_unsigned);
  std::mt19937 rng(add ? 11 : 12);
  int shapes = 0;
  auto run = [&](auto fn, const char* name) {
    for (int i = 0; i < 300; ++i, ++shapes) {
      const size_t cols = 1 + rng() % 129, rows = 1 + rng() % 9;
      const int mode = int(rng() % 3);  // same shape, b a broadcast row (SE gate), a a broadcast row
      Q8BinaryTester<T> t;
      t.rows(rows).cols(cols).a_broadcast(mode == 2).b_broadcast(mode == 1).scales(scales[rng() % scales.size()]);
      t.seed(uint32_t(rng()));
      if (rng() % 4 == 0) t.clamp(qmin_of<T>() + int32_t(rng() % 100), qmax_of<T>() - int32_t(rng() % 100));
      if constexpr (std::is_same_v<decltype(fn), Q8AddUkernel>) t.test_add(fn, name);
      else t.test_mul(fn, name);
    }
  };
  if (add) {
    for (auto* k : runnable(is_unsigned ? kQu8AddUkernels : kQs8AddUkernels)) run(k->fn, k->name);
  } else {
    for (auto* k : runnable(is_unsigned ? kQu8MulUkernels : kQs8MulUkernels)) run(k->fn, k->name);
  }
  ::testing::Test::RecordProperty("shapes", shapes);
}

TEST(Q8AddUkernel, RandomTilesU8) { random_tiles<uint8_t>(true); }
TEST(Q8AddUkernel, RandomTilesS8) { random_tiles<int8_t>(true); }
TEST(Q8MulUkernel, RandomTilesU8) { random_tiles<uint8_t>(false); }
TEST(Q8MulUkernel, RandomTilesS8) { random_tiles<int8_t>(false); }

// ---------------------------------------------------------------------------------------
// INT8 global average pool.

template <class T>
class Q8GapTester {
 public:
  Q8GapTester& batch(int v) { batch_ = v; return *this; }
  Q8GapTester& hw(int v) { hw_ = v; return *this; }
  Q8GapTester& channels(int v) { channels_ = v; return *this; }
  Q8GapTester& constant(int v) { constant_ = v; return *this; }  // every input equal to v
  Q8GapTester& params(QuantParams x, QuantParams y) { x_ = x; y_ = y; return *this; }
  Q8GapTester& seed(uint32_t s) { seed_ = s; return *this; }

  void test(Q8GapUkernel fn, const char* name) const {
    std::vector<T> x(size_t(batch_) * hw_ * channels_);
    std::mt19937 rng(seed_);
    std::uniform_int_distribution<int> byte(0, 255);
    for (T& v : x) v = constant_ >= -128 ? static_cast<T>(constant_) : static_cast<T>(uint8_t(byte(rng)));
    std::vector<T> expected(size_t(batch_) * channels_), y(expected.size(), T(0x5A));
    q8_global_avgpool_nhwc__ref(batch_, hw_, channels_, x.data(), x_, y_, expected.data());
    const Q8GapParams p = q8_gap_params(hw_, x_, y_, std::is_same_v<T, uint8_t> ? Q8::u8 : Q8::s8);
    for (int n = 0; n < batch_; ++n)
      fn(size_t(hw_), size_t(channels_), x.data() + size_t(n) * hw_ * channels_, y.data() + size_t(n) * channels_, p);
    for (size_t i = 0; i < y.size(); ++i)
      ASSERT_EQ(int(y[i]), int(expected[i])) << name << " batch " << batch_ << " hw " << hw_ << " channels "
                                             << channels_ << " at " << i << " x " << x_.scale << "/"
                                             << x_.zero_point << " y " << y_.scale << "/" << y_.zero_point;
  }

 private:
  int batch_ = 1, hw_ = 1, channels_ = 1, constant_ = -1000;
  QuantParams x_{0.02f, 0}, y_{0.02f, 0};
  uint32_t seed_ = 1;
};

template <class T>
void gap_cases() {
  const bool is_unsigned = std::is_same_v<T, uint8_t>;
  const std::vector<int32_t> zps = is_unsigned ? std::vector<int32_t>{0, 1, 127, 128, 255}
                                               : std::vector<int32_t>{-128, -1, 0, 127};
  std::mt19937 rng(21);
  int shapes = 0;
  for (auto* k : runnable(is_unsigned ? kQu8GapUkernels : kQs8GapUkernels)) {
    // The bundled models' GAP shapes, random and saturating inputs.
    for (auto [hw, c] : {std::pair{784, 48}, {196, 72}, {49, 96}, {16, 128}, {16, 64}, {49, 64}, {64, 64}}) {
      for (int32_t zp : zps) {
        for (int constant : {-1000, int(qmin_of<T>()), int(qmax_of<T>())}) {
          Q8GapTester<T>().hw(hw).channels(c).params({0.05f, zp}, {0.04f, zps[rng() % zps.size()]})
              .constant(constant).seed(uint32_t(rng())).test(k->fn, k->name);
          ++shapes;
        }
      }
    }
    // Random shapes: channels 1 ... 2*16+1 and beyond, hw 1 ... 300, batch 1-3, multipliers
    // from 2^-10 to 2^2 of the plain average (so outputs saturate at both ends too).
    for (int i = 0; i < 400; ++i, ++shapes) {
      const int c = 1 + int(rng() % 70), hw = 1 + int(rng() % 300), batch = 1 + int(rng() % 3);
      const float x_scale = std::ldexp(1.0f, -int(rng() % 8)) * (1.0f + float(rng() % 1000) / 1000.0f);
      const float ratio = std::ldexp(1.0f, int(rng() % 13) - 10);
      const int constant = rng() % 5 == 0 ? int(rng() % 2 ? qmin_of<T>() : qmax_of<T>()) : -1000;
      Q8GapTester<T>().batch(batch).hw(hw).channels(c)
          .params({x_scale, zps[rng() % zps.size()]}, {x_scale / ratio, zps[rng() % zps.size()]})
          .constant(constant).seed(uint32_t(rng())).test(k->fn, k->name);
    }
  }
  ::testing::Test::RecordProperty("shapes", shapes);
}

TEST(Q8GapUkernel, MatchesRefU8) { gap_cases<uint8_t>(); }
TEST(Q8GapUkernel, MatchesRefS8) { gap_cases<int8_t>(); }

// ---------------------------------------------------------------------------------------
// FP32 microkernels.

std::vector<float> random_floats(std::mt19937& rng, size_t n, float lo = -4.0f, float hi = 4.0f) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

bool same_float(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
}

TEST(F32BinaryUkernel, AddSubMulDivEqualTheRefBitForBit) {
  std::mt19937 rng(31);
  int shapes = 0;
  const std::pair<BinaryOp, std::span<const EltwiseUkernel<F32BinaryUkernel>>> ops[] = {
      {BinaryOp::add, kF32AddUkernels}, {BinaryOp::sub, kF32SubUkernels},
      {BinaryOp::mul, kF32MulUkernels}, {BinaryOp::div, kF32DivUkernels}};
  for (const auto& [op, list] : ops) {
    for (auto* k : runnable(list)) {
      for (int i = 0; i < 300; ++i, ++shapes) {
        const size_t cols = 1 + rng() % 129, rows = 1 + rng() % 9;
        const int mode = int(rng() % 3);
        const size_t as = mode == 2 ? 0 : cols, bs = mode == 1 ? 0 : cols;
        auto a = random_floats(rng, (as ? rows : 1) * cols), b = random_floats(rng, (bs ? rows : 1) * cols);
        if (i % 10 == 0) a[0] = std::nanf(""), b[b.size() - 1] = INFINITY;
        if (i % 7 == 0) b[0] = 0.0f, a[a.size() - 1] = 0.0f;  // x / 0, 0 / 0
        std::vector<float> expected(rows * cols), y(rows * cols, -7.0f);
        const int64_t dims[2] = {int64_t(rows), int64_t(cols)};
        const int64_t ast[2] = {int64_t(as), 1}, bst[2] = {int64_t(bs), 1};
        f32_binary_strided__ref(op, 2, dims, a.data(), ast, b.data(), bst, Activation{}, expected.data());
        k->fn(rows, cols, a.data(), as, b.data(), bs, y.data());
        for (size_t j = 0; j < y.size(); ++j)
          ASSERT_TRUE(same_float(y[j], expected[j]))
              << k->name << " rows " << rows << " cols " << cols << " at " << j << ": " << y[j] << " vs "
              << expected[j];
      }
    }
  }
  ::testing::Test::RecordProperty("shapes", shapes);
}

TEST(F32ClampUkernel, ReluAndClipEqualTheRefIncludingNaNAndSignedZero) {
  std::mt19937 rng(41);
  for (auto* k : runnable(kF32ClampUkernels)) {
    for (int i = 0; i < 200; ++i) {
      const size_t n = 1 + rng() % 200;
      auto x = random_floats(rng, n, -10.0f, 10.0f);
      x[rng() % n] = std::nanf("");
      x[rng() % n] = -0.0f;
      x[rng() % n] = -INFINITY;
      const Activation act = i % 2 ? Activation::relu() : Activation::clip(float(int(rng() % 7)) - 3.0f, 6.0f);
      std::vector<float> expected(n), y(n, -7.0f);
      f32_unary__ref(act, int64_t(n), x.data(), expected.data());
      const float lo = act.kind == ActKind::relu ? 0.0f : act.min, hi = act.kind == ActKind::relu ? INFINITY : act.max;
      k->fn(n, x.data(), y.data(), lo, hi);
      for (size_t j = 0; j < n; ++j)
        ASSERT_TRUE(same_float(y[j], expected[j])) << k->name << " n " << n << " at " << j << ": x " << x[j];
    }
  }
}

// Where: y = c ? a : b copied bit for bit (NaN payloads, -0, infinities), at every length 0..70
// (every tail of every level), each operand a run (inc 1) or one repeated element (inc 0), the
// condition's true bytes 1 or any other nonzero byte (255 included); nothing past y[n - 1] is
// written.
TEST(F32WhereUkernel, CopiesTheChosenBitsAtEveryLengthAndBroadcast) {
  std::mt19937 rng(59);
  constexpr size_t kGuard = 8;
  int cases = 0;
  for (auto* k : runnable(kF32WhereUkernels)) {
    for (size_t n = 0; n <= 70; ++n)
      for (int incs = 0; incs < 8; ++incs) {
        const size_t c_inc = incs & 1, a_inc = (incs >> 1) & 1, b_inc = (incs >> 2) & 1;
        const size_t m = std::max<size_t>(n, 1);
        std::vector<uint8_t> c(m);
        for (auto& v : c) v = rng() % 2 ? uint8_t(1 + rng() % 255) : 0;
        if (n > 2) c[rng() % n] = 255;
        auto a = random_floats(rng, m, -10.0f, 10.0f), b = random_floats(rng, m, -10.0f, 10.0f);
        a[rng() % m] = std::nanf("7");
        b[rng() % m] = -0.0f;
        a[rng() % m] = -INFINITY;
        b[rng() % m] = std::nanf("");
        std::vector<float> expected(n + kGuard, 3.25f), y(n + kGuard, 3.25f);
        f32_where__ref(n, c.data(), c_inc, a.data(), a_inc, b.data(), b_inc, expected.data());
        k->fn(n, c.data(), c_inc, a.data(), a_inc, b.data(), b_inc, y.data());
        for (size_t j = 0; j < n + kGuard; ++j)
          ASSERT_EQ(std::bit_cast<uint32_t>(y[j]), std::bit_cast<uint32_t>(expected[j]))
              << k->name << " n " << n << " incs " << c_inc << a_inc << b_inc << " at " << j;
        ++cases;
      }
  }
  ::testing::Test::RecordProperty("cases", cases);
}

// A conv's fused residual Add and its Relu / Clip: y = clamp(x + r) equal bit for bit to the
// ref's Clip of the float sum, for relu-like (0, inf), clip-like and (-inf, inf) bounds, with
// NaN in x or in r and inf - inf passing through as NaN, -0 + -0 kept -0, +-inf clamped, at
// every tail length 1..200, in place (y == x) or not; nothing past y[n - 1] is written.
TEST(F32AddClampUkernel, EqualsTheClampedSumIncludingNaNInfAndSignedZero) {
  std::mt19937 rng(53);
  constexpr size_t kGuard = 8;
  int cases = 0;
  for (auto* k : runnable(kF32AddClampUkernels)) {
    for (int i = 0; i < 400; ++i, ++cases) {
      const size_t n = 1 + rng() % 200;
      auto x = random_floats(rng, n, -10.0f, 10.0f), r = random_floats(rng, n, -10.0f, 10.0f);
      auto set = [&](float xv, float rv) {
        const size_t j = rng() % n;
        x[j] = xv;
        r[j] = rv;
      };
      set(std::nanf(""), 1.0f);
      set(-2.0f, std::nanf(""));
      set(-0.0f, -0.0f);  // -0 (Relu keeps it, as the ref does)
      set(2.5f, -2.5f);   // +0
      set(INFINITY, 3.0f);
      set(-1.0f, -INFINITY);
      set(INFINITY, -INFINITY);  // NaN
      float lo = -INFINITY, hi = INFINITY;
      switch (i % 4) {
        case 0: lo = 0.0f; break;  // Relu
        case 1: lo = float(int(rng() % 7)) - 3.0f, hi = 6.0f; break;
        case 2: lo = -0.5f, hi = 0.75f; break;
        default: break;  // a residual Add with no activation after it
      }
      std::vector<float> expected(n);
      for (size_t j = 0; j < n; ++j) expected[j] = apply(Activation::clip(lo, hi), x[j] + r[j]);
      const bool in_place = i % 3 == 0;
      std::vector<float> y(n + kGuard, -7.0f);
      if (in_place) std::copy(x.begin(), x.end(), y.begin());
      k->fn(n, in_place ? y.data() : x.data(), r.data(), y.data(), lo, hi);
      for (size_t j = 0; j < n; ++j)
        ASSERT_TRUE(same_float(y[j], expected[j]))
            << k->name << " n " << n << (in_place ? " in place" : "") << " [" << lo << ", " << hi << "] at " << j
            << ": x " << x[j] << " r " << r[j] << " gives " << y[j] << ", expected " << expected[j];
      for (size_t j = n; j < y.size(); ++j) ASSERT_EQ(y[j], -7.0f) << k->name << " n " << n << " wrote y[" << j << "]";
    }
  }
  ::testing::Test::RecordProperty("cases", cases);
}

// y = x * scale + shift as two roundings (the Mul and the Add it replaces), bit for bit against
// the scalar product then sum, never a fused multiply-add (which rounds once: random values tell
// the two apart), with NaN, infinities and signed zeros in x and in the constants, at every tail
// length 1..200, in place or not; nothing past y[n - 1] is written.
TEST(F32ScaleShiftUkernel, MultipliesThenAddsBitForBit) {
  std::mt19937 rng(61);
  constexpr size_t kGuard = 8;
  int cases = 0, differ_from_fma = 0;
  const std::vector<std::pair<float, float>> constants = {
      {1.375f, -0.3f}, {-2.5f, 0.75f}, {0.1f, 0.2f}, {1.0f, 0.0f}, {-0.0f, -0.0f}, {INFINITY, 1.0f}, {3.0f, -INFINITY},
      {std::nanf(""), 0.5f}, {1e-30f, 1e30f}};
  for (auto* k : runnable(kF32ScaleShiftUkernels)) {
    for (int i = 0; i < 360; ++i, ++cases) {
      const size_t n = 1 + rng() % 200;
      const auto [scale, shift] = constants[size_t(i) % constants.size()];
      auto x = random_floats(rng, n, -10.0f, 10.0f);
      x[rng() % n] = std::nanf("");
      x[rng() % n] = -0.0f;
      x[rng() % n] = INFINITY;
      x[rng() % n] = -INFINITY;
      x[rng() % n] = 1e-40f;  // subnormal
      std::vector<float> expected(n);
      for (size_t j = 0; j < n; ++j) {
        const float product = x[j] * scale;
        expected[j] = product + shift;
        differ_from_fma += !same_float(expected[j], std::fma(x[j], scale, shift));
      }
      const bool in_place = i % 3 == 0;
      std::vector<float> y(n + kGuard, -7.0f);
      if (in_place) std::copy(x.begin(), x.end(), y.begin());
      k->fn(n, in_place ? y.data() : x.data(), y.data(), scale, shift);
      for (size_t j = 0; j < n; ++j)
        ASSERT_TRUE(same_float(y[j], expected[j])) << k->name << " n " << n << " x " << x[j] << " * " << scale
                                                   << " + " << shift << " gives " << y[j] << ", expected " << expected[j];
      for (size_t j = n; j < y.size(); ++j) ASSERT_EQ(y[j], -7.0f) << k->name << " n " << n << " wrote y[" << j << "]";
    }
  }
  if (cases > 0) {
    EXPECT_GT(differ_from_fma, 100) << "the inputs cannot tell two roundings from one";
  }
  ::testing::Test::RecordProperty("cases", cases);
}

// A conv's epilogue with a scale and shift after the activation: after the microkernel's clamp
// (Relu, Clip) or the activation it applies itself, y * scale + shift, equal to the ref's
// apply() (bit for bit but for SiLU's tolerance), plain and after a residual sum, at every ISA
// (Isa::scalar: the epilogue's own loop).
TEST(EltwiseDriver, EpilogueScalesAndShiftsAfterTheActivation) {
  std::mt19937 rng(67);
  for (Isa isa : runnable_isas()) {
    for (Activation act : {Activation::relu(), Activation::clip(-0.5f, 0.75f), Activation::hard_swish(),
                           Activation::silu(), Activation{}}) {
      act.scale_shift = true;
      act.scale = -1.375f;
      act.shift = 0.3f;
      const F32Epilogue e(act, isa);
      ASSERT_TRUE(e.active());
      if (isa != Isa::scalar) {
        EXPECT_NE(e.kernel_name().find("f32_scale_shift__"), std::string::npos) << e.kernel_name();
        EXPECT_EQ(e.kernel_name().find("__ref"), std::string::npos) << e.kernel_name();
      }
      const bool exact = act.kind != ActKind::silu;
      const F32MinMax clamp = f32_clamp_for(act);
      for (int i = 0; i < 20; ++i) {
        const size_t rows = 1 + rng() % 5, cols = 1 + rng() % 40, ld = cols + rng() % 4;
        const auto y0 = random_floats(rng, rows * ld, -6.0f, 6.0f), r = random_floats(rng, rows * ld, -6.0f, 6.0f);
        auto y = y0;  // as the microkernel leaves it: clamped
        for (float& v : y) v = v < clamp.min ? clamp.min : (v > clamp.max ? clamp.max : v);
        e.run(rows, cols, y.data(), ld);
        auto summed = y0;
        e.run_residual(rows, cols, summed.data(), ld, r.data());
        for (size_t j = 0; j < y.size(); ++j) {
          if (j % ld >= cols) {
            ASSERT_TRUE(same_float(summed[j], y0[j])) << "wrote past the block";
            continue;
          }
          const float plain = apply(act, y0[j]), residual = apply(act, y0[j] + r[j]);
          if (exact) {
            ASSERT_TRUE(same_float(y[j], plain)) << isa_name(isa) << " act " << int(act.kind) << " x " << y0[j];
            ASSERT_TRUE(same_float(summed[j], residual)) << isa_name(isa) << " act " << int(act.kind);
          } else {
            ASSERT_NEAR(y[j], plain, 1e-6f * std::fabs(plain) + 1e-6f) << isa_name(isa);
            ASSERT_NEAR(summed[j], residual, 1e-6f * std::fabs(residual) + 1e-6f) << isa_name(isa);
          }
        }
      }
    }
  }
}

// Sigmoid is ONNX Runtime's (mlas_logistic: clamped to [-18, 18], a rational approximation by
// fused multiply-adds): every kernel equals the reference bit for bit, over a fine sweep, the
// clamp's edges, random values, NaN (in its own lane), infinities and signed zeros.
std::vector<float> logistic_inputs() {
  std::vector<float> x;
  for (float v = -110.0f; v <= 110.0f; v += 0.0007f) x.push_back(v);
  std::mt19937 rng(51);
  for (int i = 0; i < 200000; ++i) x.push_back(random_floats(rng, 1, -20.0f, 20.0f)[0]);
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-45f, 88.7f, -88.7f, -87.3f, -18.0f, 18.0f, std::nextafter(18.0f, 0.0f),
                  std::nextafter(-18.0f, 0.0f), 17.3f, -17.3f, 16.63553f, INFINITY, -INFINITY,
                  std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(), std::nanf("")})
    x.push_back(v);
  return x;
}

TEST(F32SigmoidUkernel, EqualsOrtsLogisticBitForBit) {
  const std::vector<float> x = logistic_inputs();
  for (auto* k : runnable(kF32SigmoidUkernels)) {
    std::vector<float> y(x.size());
    k->fn(x.size(), x.data(), y.data());
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_TRUE(same_float(y[i], mlas_logistic(x[i]))) << k->name << " x " << x[i] << ": " << y[i];
    // A NaN among the vectors the kernel computes together stays in its own lane.
    std::vector<float> zeros(96, 0.0f), gate(96);
    zeros[29] = std::nanf("");
    k->fn(zeros.size(), zeros.data(), gate.data());
    for (size_t i = 0; i < gate.size(); ++i)
      EXPECT_TRUE(i == 29 ? std::isnan(gate[i]) : gate[i] == 0.5f) << k->name << " at " << i << ": " << gate[i];
  }
}

// The approximation itself: within 2e-7 of the true logistic everywhere (its clamp at +-18
// costs at most 1.6e-8), so the constants are the right ones.
TEST(F32SigmoidUkernel, OrtsLogisticIsCloseToTheTrueOne) {
  double worst = 0;
  for (float x : logistic_inputs()) {
    if (std::isnan(x)) continue;
    const double exact = 1.0 / (1.0 + std::exp(-static_cast<double>(x)));
    worst = std::max(worst, std::fabs(mlas_logistic(x) - exact));
  }
  EXPECT_LT(worst, 2e-7);
  std::printf("mlas_logistic: worst absolute error %.3g\n", worst);
}

// HardSwish and HardSigmoid repeat the ref's IEEE steps one for one: equal bit for bit, NaN,
// signed zero, infinities and the kinks at -3 / +3 (HardSwish) included.
TEST(F32ActUkernel, HardSwishAndHardSigmoidEqualTheRefBitForBit) {
  std::mt19937 rng(43);
  struct Entry {
    const EltwiseUkernel<F32ActUkernel>* k;
    Activation act;
  };
  std::vector<Entry> entries;
  for (auto* k : runnable(kF32HardSwishUkernels)) entries.push_back({k, Activation::hard_swish()});
  for (auto* k : runnable(kF32HardSigmoidUkernels)) {
    entries.push_back({k, Activation::hard_sigmoid(0.2f, 0.5f)});
    entries.push_back({k, Activation::hard_sigmoid(1.0f / 6.0f, 0.5f)});  // MobileNetV3's gate
    entries.push_back({k, Activation::hard_sigmoid(-0.7f, 0.1f)});
  }
  for (const Entry& e : entries) {
    for (int i = 0; i < 200; ++i) {
      const size_t n = 1 + rng() % 200;
      auto x = random_floats(rng, n, -8.0f, 8.0f);
      const float special[] = {std::nanf(""), -0.0f, 0.0f, -INFINITY, INFINITY, -3.0f, 3.0f, -2.5f, 2.5f};
      for (int j = 0; j < 3; ++j) x[rng() % n] = special[rng() % std::size(special)];
      std::vector<float> expected(n), y(n, -7.0f);
      f32_unary__ref(e.act, int64_t(n), x.data(), expected.data());
      e.k->fn(n, x.data(), y.data(), e.act.alpha, e.act.beta);
      for (size_t j = 0; j < n; ++j)
        ASSERT_TRUE(same_float(y[j], expected[j])) << e.k->name << " n " << n << " at " << j << ": x " << x[j];
    }
  }
}

// SiLU is ORT's Sigmoid, then Mul (two roundings): bit-identical to the reference.
TEST(F32ActUkernel, SiluEqualsTheRefBitForBit) {
  const std::vector<float> x = logistic_inputs();
  for (auto* k : runnable(kF32SiluUkernels)) {
    std::vector<float> y(x.size()), expected(x.size());
    k->fn(x.size(), x.data(), y.data(), 0.0f, 0.0f);
    f32_unary__ref(Activation::silu(), int64_t(x.size()), x.data(), expected.data());
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_TRUE(same_float(y[i], expected[i])) << k->name << " x " << x[i] << ": " << y[i] << " vs " << expected[i];
  }
}

// The conv / GEMM epilogue over a strided block touches exactly the block, at every ISA.
TEST(EltwiseDriver, EpilogueAppliesToTheBlockOnly) {
  std::mt19937 rng(47);
  for (Isa isa : runnable_isas()) {
    for (const Activation act : {Activation::hard_swish(), Activation::hard_sigmoid(0.2f, 0.5f), Activation::silu(),
                                 Activation::sigmoid(), Activation::relu(), Activation{}}) {
      const F32Epilogue e(act, isa);
      const size_t rows = 1 + rng() % 7, cols = 1 + rng() % 40, ld = cols + rng() % 5;
      auto y = random_floats(rng, rows * ld, -6.0f, 6.0f);
      auto expected = y;
      if (e.active())
        for (size_t r = 0; r < rows; ++r) f32_unary__ref(act, int64_t(cols), &expected[r * ld], &expected[r * ld]);
      e.run(rows, cols, y.data(), ld);
      if (isa != Isa::scalar && e.active()) {
        EXPECT_EQ(e.kernel_name().find("__ref"), std::string::npos) << e.kernel_name();
      }
      for (size_t i = 0; i < y.size(); ++i)
        ASSERT_NEAR(y[i], expected[i], 4e-7f * std::fabs(expected[i]) + 1e-30f) << e.kernel_name() << " at " << i;
    }
  }
}

// run_residual over a strided block: y = act(y + r) on the first cols of each row, the values
// past them untouched (r is NaN there, so a read of it into y would show) and r unchanged;
// Relu and Clip clamp the sum, not y. At every ISA this CPU runs: the add-clamp microkernel at
// the vector levels, the scalar loop at Isa::scalar. Relu, Clip, HardSwish and none bit for
// bit (NaN and -0 sums included), SiLU within the tolerance of the test above.
TEST(EltwiseDriver, ResidualEpilogueAddsThenActivatesTheBlockOnly) {
  std::mt19937 rng(59);
  int blocks = 0;
  for (Isa isa : runnable_isas()) {
    for (const Activation act : {Activation::relu(), Activation::clip(-0.5f, 0.75f), Activation::hard_swish(),
                                 Activation::silu(), Activation{}}) {
      const F32Epilogue e(act, isa);
      const bool exact = act.kind != ActKind::silu;
      for (int i = 0; i < 30; ++i, ++blocks) {
        // Every 5th block dense (ld == cols: the rows run as one); the others strided.
        const size_t rows = 1 + rng() % 7, cols = 1 + rng() % 40, ld = cols + (i % 5 == 0 ? 0 : 1 + rng() % 5);
        auto y = random_floats(rng, rows * ld, -6.0f, 6.0f), r = random_floats(rng, rows * ld, -6.0f, 6.0f);
        for (size_t row = 0; row < rows; ++row)
          for (size_t c = cols; c < ld; ++c) r[row * ld + c] = std::nanf("");
        if (exact) {
          const size_t a = (rng() % rows) * ld + rng() % cols, b = (rng() % rows) * ld + rng() % cols;
          const size_t z = (rng() % rows) * ld + rng() % cols, s = (rng() % rows) * ld + rng() % cols;
          y[a] = std::nanf("");
          r[b] = std::nanf("");
          y[z] = -0.0f, r[z] = -0.0f;
          y[s] = -3.0f, r[s] = 5.0f;  // y below Relu's bound, the sum above it
        }
        const auto y0 = y, r0 = r;
        e.run_residual(rows, cols, y.data(), ld, r.data());
        for (size_t j = 0; j < y.size(); ++j) {
          if (j % ld >= cols) {
            ASSERT_TRUE(same_float(y[j], y0[j])) << isa_name(isa) << " rows " << rows << " cols " << cols << " ld "
                                                 << ld << ": wrote past the block at " << j;
            continue;
          }
          const float expected = apply(act, y0[j] + r0[j]);
          if (exact) {
            ASSERT_TRUE(same_float(y[j], expected))
                << isa_name(isa) << " act " << int(act.kind) << " rows " << rows << " cols " << cols << " ld " << ld
                << " at " << j << ": y " << y0[j] << " r " << r0[j] << " gives " << y[j] << ", expected " << expected;
          } else {
            ASSERT_NEAR(y[j], expected, 4e-7f * std::fabs(expected) + 1e-30f)
                << isa_name(isa) << " act " << int(act.kind) << " at " << j;
          }
        }
        for (size_t j = 0; j < r.size(); ++j) ASSERT_TRUE(same_float(r[j], r0[j])) << isa_name(isa) << " changed r";
      }
    }
  }
  ::testing::Test::RecordProperty("blocks", blocks);
}

// GAP sums in ONNX Runtime's orders (kernels/ref/pool2d.h): every kernel equals the ref bit for
// bit in each, for channel counts around the vector widths and the chunks, pixel counts around
// the four position sums and Eigen's two packets, rows starting at each 16-byte phase, and values
// whose sum's order shows.
TEST(F32GapUkernel, EveryOrderEqualsTheRefBitForBit) {
  std::mt19937 rng(61);
  int shapes = 0;
  for (auto* k : runnable(kF32GapUkernels)) {
    for (int i = 0; i < 300; ++i, ++shapes) {
      const int c = i < 70 ? 1 + i : 1 + int(rng() % 200), hw = i < 24 ? 1 + i : 1 + int(rng() % (i < 40 ? 3600 : 200));
      const int batch = 1 + i % 3;
      auto x = random_floats(rng, size_t(batch) * hw * c, -3.0f, 5.0f);
      for (GapOrder order : {GapOrder::sequential, GapOrder::mlas_lanes4, GapOrder::eigen_packets4, GapOrder::mlas_sgemm_m1}) {
        std::vector<float> expected(size_t(batch) * c);
        f32_global_avgpool_nhwc__ref(batch, hw, c, x.data(), expected.data(), order);
        for (int n = 0; n < batch; ++n) {
          std::vector<float> y(static_cast<size_t>(c) + 3, -7.0f);
          k->fn(size_t(hw), size_t(c), x.data() + size_t(n) * hw * c, y.data(), order, size_t(n) * c);
          for (int j = 0; j < c; ++j)
            ASSERT_TRUE(same_float(y[size_t(j)], expected[size_t(n) * c + j]))
                << k->name << " order " << int(order) << " hw " << hw << " channels " << c << " image " << n
                << " at " << j << ": " << y[size_t(j)] << " vs " << expected[size_t(n) * c + j];
          for (size_t j = size_t(c); j < y.size(); ++j) ASSERT_EQ(y[j], -7.0f) << k->name << " wrote y[" << j << "]";
        }
      }
    }
  }
  ::testing::Test::RecordProperty("shapes", shapes);
}

// Row sums in Eigen's packet order (ReduceSum / ReduceMean over trailing axes of a row-major
// tensor): every kernel equals the ref bit for bit for row counts around the vector widths and
// the two-vector chunk, lengths around one and two packets and every length mod 4 (so the rows'
// leads cycle through 0 to 3), first rows at every phase, divisors 1 (the sum) and n (the mean),
// on uniform values and on powers of two from 2^-24 to 2^24 of either sign, whose float sum
// changes with the order; y past the rows is never written.
TEST(F32RowSumsUkernel, EqualsTheEigenOrderRefBitForBit) {
  std::mt19937 rng(67);
  int shapes = 0;
  for (auto* k : runnable(kF32RowSumsUkernels)) {
    for (int i = 0; i < 400; ++i, ++shapes) {
      const size_t rows = i < 70 ? size_t(1 + i) : size_t(1 + rng() % 150);
      const size_t n = i < 40 ? size_t(1 + i % 20) : size_t(1 + rng() % (i < 80 ? 3200 : 120));
      const size_t first_row = i % 4 == 0 ? 0 : size_t(rng() % 1000);
      std::vector<float> x = random_floats(rng, rows * n, -3.0f, 5.0f);
      if (i % 2 == 1)
        for (float& v : x) v = std::ldexp(rng() % 2 ? 1.0f : -1.0f, int(rng() % 49) - 24);
      for (float divisor : {1.0f, float(n)}) {
        std::vector<float> expected(rows), y(rows + 5, -7.0f);
        f32_row_sums_eigen__ref(rows, n, x.data(), expected.data(), first_row, divisor);
        k->fn(rows, n, x.data(), y.data(), first_row, divisor);
        for (size_t r = 0; r < rows; ++r)
          ASSERT_TRUE(same_float(y[r], expected[r]))
              << k->name << " rows " << rows << " n " << n << " first row " << first_row << " divisor " << divisor
              << " at " << r << ": " << y[r] << " vs " << expected[r];
        for (size_t r = rows; r < y.size(); ++r) ASSERT_EQ(y[r], -7.0f) << k->name << " wrote y[" << r << "]";
      }
    }
  }
  ::testing::Test::RecordProperty("shapes", shapes);
}

// Long rows side by side (InstanceNormalization's statistics, ReduceMean over long trailing rows):
// every kernel equals the ref bit for bit for 1 to 9 rows (a call takes kEigenSumsRows at a time),
// every length up to 5 packet pairs and then long ones, each row with its own lead (0 to 3, and
// past n: no whole packet) so that the rows' pair loops end at different steps, plain sums and
// squares about a center (near the values and far from them: 1000 + small spread); values
// uniform, powers of two of either sign from 2^-24 to 2^24 (whose sums change with the order),
// and infinities and NaN in a few rows; sums past the rows are never written.
TEST(F32EigenSumsUkernel, EqualsTheRefBitForBit) {
  std::mt19937 rng(73);
  int shapes = 0;
  for (auto* k : runnable(kF32EigenSumsUkernels)) {
    for (int i = 0; i < 600; ++i, ++shapes) {
      const size_t rows = 1 + size_t(i) % 9;
      const size_t n = i < 200 ? size_t(i) / 4 % 48 : size_t(1 + rng() % 5000);
      std::vector<std::vector<float>> data(rows);
      std::vector<const float*> x(rows);
      std::vector<size_t> lead(rows);
      std::vector<float> center(rows);
      for (size_t r = 0; r < rows; ++r) {
        data[r] = random_floats(rng, std::max<size_t>(1, n), -3.0f, 5.0f);
        if (i % 3 == 1)
          for (float& v : data[r]) v = std::ldexp(rng() % 2 ? 1.0f : -1.0f, int(rng() % 49) - 24);
        if (i % 3 == 2)
          for (float& v : data[r]) v = 1000.0f + 0.01f * v;
        if (i % 17 == 5 && n > 0) data[r][rng() % n] = (r % 3 == 0)   ? std::numeric_limits<float>::quiet_NaN()
                                                    : (r % 3 == 1) ? std::numeric_limits<float>::infinity()
                                                                   : -std::numeric_limits<float>::infinity();
        x[r] = data[r].data();
        lead[r] = rng() % 11 == 0 ? n + 1 + rng() % 3 : size_t(rng() % 4);
        center[r] = i % 2 == 0 ? float(rng() % 5) - 2.0f : 1000.0f;
      }
      for (const float* c : {static_cast<const float*>(nullptr), static_cast<const float*>(center.data())}) {
        std::vector<float> expected(rows), sums(rows + 3, -7.0f);
        f32_eigen_sums__ref(rows, n, x.data(), lead.data(), c, expected.data());
        k->fn(rows, n, x.data(), lead.data(), c, sums.data());
        for (size_t r = 0; r < rows; ++r)
          ASSERT_TRUE(same_float(sums[r], expected[r]))
              << k->name << " rows " << rows << " n " << n << " lead " << lead[r] << (c ? " squares" : " sums")
              << " at " << r << ": " << sums[r] << " vs " << expected[r];
        for (size_t r = rows; r < sums.size(); ++r) ASSERT_EQ(sums[r], -7.0f) << k->name << " wrote sums[" << r << "]";
      }
    }
  }
  ::testing::Test::RecordProperty("shapes", shapes);
}

// The same sums over 8-bit codes dequantized in the register: every kernel equals the ref bit for
// bit (which equals the float kernel on the codes dequantized first), u8 and s8, zero points at
// both ends of the range, leads 0 to 3 and past n, 1 to 9 rows, plain sums and squares.
TEST(Q8EigenSumsUkernel, EqualsTheRefAndTheFloatSumsOfTheDequantizedCodesBitForBit) {
  std::mt19937 rng(89);
  int shapes = 0;
  for (auto* k : runnable(kQ8EigenSumsUkernels)) {
    for (int i = 0; i < 300; ++i, ++shapes) {
      const size_t rows = 1 + size_t(i) % 9;
      const size_t n = i < 100 ? size_t(i) / 2 % 50 : size_t(1 + rng() % 5000);
      const bool is_signed = i % 2 == 1;
      const int32_t zp = is_signed ? (i % 3 == 0 ? -128 : i % 3 == 1 ? 127 : -5) : (i % 3 == 0 ? 0 : i % 3 == 1 ? 255 : 131);
      const float scale = i % 5 == 0 ? 1e-3f : 0.037f;
      std::vector<std::vector<uint8_t>> data(rows);
      std::vector<std::vector<float>> dequantized(rows);
      std::vector<const void*> x(rows);
      std::vector<const float*> fx(rows);
      std::vector<size_t> lead(rows);
      std::vector<float> center(rows);
      for (size_t r = 0; r < rows; ++r) {
        data[r].resize(std::max<size_t>(1, n));
        for (auto& v : data[r]) v = uint8_t(rng());
        dequantized[r].resize(data[r].size());
        for (size_t j = 0; j < data[r].size(); ++j) {
          const int32_t q = is_signed ? int32_t(int8_t(data[r][j])) : int32_t(data[r][j]);
          dequantized[r][j] = float(q - zp) * scale;
        }
        x[r] = data[r].data();
        fx[r] = dequantized[r].data();
        lead[r] = rng() % 11 == 0 ? n + 1 + rng() % 3 : size_t(rng() % 4);
        center[r] = float(int(rng() % 9) - 4) * scale * 10.0f;
      }
      for (const float* c : {static_cast<const float*>(nullptr), static_cast<const float*>(center.data())}) {
        std::vector<float> expected(rows), from_floats(rows), sums(rows + 3, -7.0f);
        q8_eigen_sums__ref(rows, n, x.data(), is_signed, scale, zp, lead.data(), c, expected.data());
        f32_eigen_sums__ref(rows, n, fx.data(), lead.data(), c, from_floats.data());
        k->fn(rows, n, x.data(), is_signed, scale, zp, lead.data(), c, sums.data());
        for (size_t r = 0; r < rows; ++r) {
          ASSERT_TRUE(same_float(expected[r], from_floats[r])) << "ref vs float ref, n " << n << " at " << r;
          ASSERT_TRUE(same_float(sums[r], expected[r]))
              << k->name << " rows " << rows << " n " << n << " lead " << lead[r] << (is_signed ? " s8" : " u8")
              << (c ? " squares" : " sums") << " at " << r << ": " << sums[r] << " vs " << expected[r];
        }
        for (size_t r = rows; r < sums.size(); ++r) ASSERT_EQ(sums[r], -7.0f) << k->name << " wrote sums[" << r << "]";
      }
    }
  }
  ::testing::Test::RecordProperty("shapes", shapes);
}

// InstanceNormalization on its kernels (the rows' statistics side by side, the affine per row)
// equals the per-row reference (f32_instance_norm_stats, then x * a + b) bit for bit at every
// level, the scalar one included: rows 1 to 11 of n off and on a 16-byte boundary (their starts
// cycle), rows shorter than a packet, large rows split over two threads, in place and not.
TEST(EltwiseDriver, F32InstanceNormEqualsThePerRowRefBitForBit) {
  std::mt19937 rng(79);
  testing::Pool pool(pthreadpool_create(2));
  for (Isa isa : runnable_isas()) {
    for (const size_t n : {size_t(3), size_t(7), size_t(49), size_t(63), size_t(300), size_t(12544), size_t(40000)}) {
      for (const size_t rows : {size_t(1), size_t(5), size_t(11)}) {
        const size_t channels = rows > 4 ? 4 : rows;
        std::vector<float> x = random_floats(rng, rows * n, -2.0f, 6.0f);
        if (n == 49)
          for (float& v : x) v = 1000.0f + 0.01f * v;  // spread small against the mean
        const std::vector<float> scale = random_floats(rng, channels, -2.0f, 2.0f);
        const std::vector<float> bias = random_floats(rng, channels, -1.0f, 1.0f);
        std::vector<float> expected(rows * n);
        for (size_t r = 0; r < rows; ++r) {
          float mean, inv_std;
          f32_instance_norm_stats(x.data() + r * n, n, eigen_row_lead(r, n), 1e-5f, &mean, &inv_std);
          const float a = inv_std * scale[r % channels], b = bias[r % channels] - mean * a;
          for (size_t j = 0; j < n; ++j) {
            const float t = x[r * n + j] * a;
            expected[r * n + j] = t + b;
          }
        }
        const F32InstanceNorm norm(n, isa);
        EXPECT_EQ(norm.kernel_id().scalar, isa == Isa::scalar) << norm.kernel_id().name;
        std::vector<float> y(rows * n + 1, -7.0f), in_place = x;
        norm.run(rows, channels, x.data(), scale.data(), bias.data(), 1e-5f, y.data(), rows * n > 100000 ? pool.get() : nullptr);
        norm.run(rows, channels, in_place.data(), scale.data(), bias.data(), 1e-5f, in_place.data(), nullptr);
        ASSERT_EQ(y.back(), -7.0f) << "wrote past the output";
        for (size_t j = 0; j < rows * n; ++j) {
          ASSERT_TRUE(same_float(y[j], expected[j])) << norm.kernel_id().name << " n " << n << " rows " << rows << " at " << j;
          ASSERT_TRUE(same_float(in_place[j], expected[j])) << norm.kernel_id().name << " in place, n " << n << " at " << j;
        }
      }
    }
  }
}

// QDQ GroupNorm on its kernels equals the five steps apart on the reference kernels (dequantize,
// f32_instance_norm_stats and x * a + b per row, the Mul by gamma and the Add of beta per channel,
// quantize) byte for byte at every level, the scalar one included: u8 and s8 both ways, 1 to 4
// channels a row (runs of the row's values, some longer than a chunk), rows short, off a 16-byte
// boundary and 400 KB as floats, one to seven rows over two threads, outputs that saturate.
TEST(EltwiseDriver, Q8GroupNormEqualsTheStepsApartByteForByte) {
  std::mt19937 rng(83);
  testing::Pool pool(pthreadpool_create(2));
  for (Isa isa : runnable_isas()) {
    int shape = 0;
    for (const size_t n : {size_t(12), size_t(63 * 4), size_t(4 * 3136), size_t(4 * 100352)}) {
      for (const size_t per_row : {size_t(1), size_t(2), size_t(4)}) {
        const size_t rows = n > 100000 ? 3 : 1 + size_t(shape++) % 7, groups = rows > 2 ? 2 : rows;
        const Q8 xt = shape % 2 ? Q8::s8 : Q8::u8, yt = shape % 3 ? Q8::u8 : Q8::s8;
        std::vector<uint8_t> x(rows * n);
        for (auto& v : x) v = uint8_t(rng());
        const QuantParams xq{0.05f, xt == Q8::u8 ? 131 : -7}, yq{0.02f, yt == Q8::u8 ? 120 : 3};
        const std::vector<float> scale = random_floats(rng, groups, 0.5f, 2.0f), bias = random_floats(rng, groups, -1.0f, 1.0f);
        const std::vector<float> gamma = random_floats(rng, groups * per_row, -2.0f, 2.0f);
        const std::vector<float> beta = random_floats(rng, groups * per_row, -1.0f, 1.0f);
        // The steps apart.
        std::vector<float> f(rows * n);
        if (xt == Q8::u8) q8_dequantize_linear__ref(int64_t(f.size()), x.data(), xq.scale, xq.zero_point, f.data());
        else q8_dequantize_linear__ref(int64_t(f.size()), reinterpret_cast<const int8_t*>(x.data()), xq.scale, xq.zero_point, f.data());
        for (size_t r = 0; r < rows; ++r) {
          float mean, inv_std;
          f32_instance_norm_stats(f.data() + r * n, n, eigen_row_lead(r, n), 1e-5f, &mean, &inv_std);
          const size_t g = r % groups;
          const float a = inv_std * scale[g], b = bias[g] - mean * a;
          for (size_t j = 0; j < n; ++j) {
            const size_t c = g * per_row + j / (n / per_row);
            float t = f[r * n + j] * a;
            t = t + b;
            t = t * gamma[c];
            f[r * n + j] = t + beta[c];
          }
        }
        std::vector<uint8_t> expected(rows * n);
        if (yt == Q8::u8) q8_quantize_linear__ref(int64_t(f.size()), f.data(), yq.scale, yq.zero_point, expected.data());
        else q8_quantize_linear__ref(int64_t(f.size()), f.data(), yq.scale, yq.zero_point, reinterpret_cast<int8_t*>(expected.data()));

        const Q8GroupNorm norm(xt, yt, n, per_row, isa);
        EXPECT_EQ(norm.kernel_id().scalar, isa == Isa::scalar) << norm.kernel_id().name;
        if (isa != Isa::scalar) {
          EXPECT_NE(norm.kernel_id().name.find("q8_eigen_sums"), std::string::npos) << norm.kernel_id().name;
        }
        for (pthreadpool_t p : {static_cast<pthreadpool_t>(nullptr), pool.get()}) {
          std::vector<float> scratch(2 * norm.scratch_floats(), std::nanf(""));
          std::vector<uint8_t> y(rows * n + 1, 0x5A);
          norm.run(rows, groups, x.data(), xq, scale.data(), bias.data(), gamma.data(), beta.data(), 1e-5f, yq, y.data(),
                   scratch.data(), p);
          ASSERT_EQ(y.back(), 0x5A) << "wrote past the output";
          y.pop_back();
          ASSERT_EQ(y, expected) << norm.kernel_id().name << " n " << n << " rows " << rows << " runs " << per_row
                                 << (p ? ", two threads" : "");
        }
      }
    }
  }
}

// Channel moments (GroupNorm's statistics in channels-last): every kernel equals the ref bit for
// bit for channel counts 1 ... 4 vectors + 3 and past (every chunk width and tail), pixel counts
// around the block (63, 64, 65, 129) and 0, centers near and far from the values (a map of mean
// 1000 and spread 0.01 about a center of 0 and of its mean), and powers of two of either sign.
TEST(F32ChannelMomentsUkernel, EqualsTheRefBitForBit) {
  std::mt19937 rng(71);
  int shapes = 0;
  const size_t pixel_counts[] = {0, 1, 3, 63, 64, 65, 129, 200};
  for (auto* k : runnable(kF32ChannelMomentsUkernels)) {
    for (int i = 0; i < 240; ++i, ++shapes) {
      const size_t channels = i < 67 ? size_t(1 + i) : size_t(1 + rng() % 300);
      const size_t pixels = i < 160 ? pixel_counts[size_t(i) % 8] : size_t(rng() % 700);
      std::vector<float> x = random_floats(rng, std::max<size_t>(1, pixels * channels), -3.0f, 5.0f);
      std::vector<float> center(channels, 0.0f);
      if (i % 3 == 1)
        for (float& v : x) v = 1000.0f + 0.01f * v;
      if (i % 3 == 2)
        for (float& v : x) v = std::ldexp(rng() % 2 ? 1.0f : -1.0f, int(rng() % 49) - 24);
      if (i % 2 == 1) center = random_floats(rng, channels, -2.0f, 2.0f);
      if (i % 6 == 1) std::fill(center.begin(), center.end(), 1000.0f);
      std::vector<double> sum(channels + 2, -7.0), sq(channels + 2, -7.0), want(channels), want_sq(channels);
      f32_channel_moments__ref(pixels, channels, x.data(), center.data(), want.data(), want_sq.data());
      k->fn(pixels, channels, x.data(), center.data(), sum.data(), sq.data());
      for (size_t c = 0; c < channels; ++c) {
        ASSERT_EQ(std::bit_cast<uint64_t>(sum[c]), std::bit_cast<uint64_t>(want[c]))
            << k->name << " channels " << channels << " pixels " << pixels << " sum at " << c << ": " << sum[c]
            << " vs " << want[c];
        ASSERT_EQ(std::bit_cast<uint64_t>(sq[c]), std::bit_cast<uint64_t>(want_sq[c]))
            << k->name << " channels " << channels << " pixels " << pixels << " sum of squares at " << c;
      }
      ASSERT_EQ(sum[channels], -7.0) << k->name << " wrote past the channels";
      ASSERT_EQ(sq[channels], -7.0) << k->name << " wrote past the channels";
    }
  }
  ::testing::Test::RecordProperty("shapes", shapes);
}

// The ref's sums are accurate where one float sum is not: 100000 pixels of 1 + 2^-12, whose
// blocks of 64 sum exactly in float, give the exact total in double, where a float running sum
// (its ulp 2^-7 past 65536) is off.
TEST(F32ChannelMomentsUkernel, TheRefSumsBlocksInDouble) {
  const size_t pixels = 100000;
  const float v = 1.0f + std::ldexp(1.0f, -12);
  const std::vector<float> x(pixels, v);
  const float zero = 0.0f;
  double sum, sq;
  f32_channel_moments__ref(pixels, 1, x.data(), &zero, &sum, &sq);
  EXPECT_EQ(sum, double(pixels) * double(v));
  EXPECT_NEAR(sq, double(pixels) * double(v) * double(v), 1e-7 * double(pixels));
  float running = 0.0f;
  for (float e : x) running += e;
  EXPECT_GT(std::abs(double(running) - sum), 1.0);
}

// The ref is Eigen's order, not any order: with t = 2^-24, row 0 (lead 0) sums its packet
// (1, t, t, t) as (1 + t) + (t + t) = 1 + 2^-23, then + t ties to even 1 + 2^-22, where the sum
// in order loses every t (1); row 1 (n = 7: lead 1) starts its packet at its 1 and gets the same,
// where a packet from its first value would give (0 + t) + (1 + t) = 1 and stay 1.
TEST(F32RowSumsUkernel, TheRefsOrderIsEigensPackets) {
  const float t = std::ldexp(1.0f, -24);
  const std::vector<float> x = {1.0f, t, t, t, t, 0.0f, 0.0f, 0.0f, 1.0f, t, t, t, t, 0.0f};
  float y[2];
  f32_row_sums_eigen__ref(2, 7, x.data(), y, 0, 1.0f);
  EXPECT_EQ(y[0], 1.0f + std::ldexp(1.0f, -22));
  EXPECT_EQ(y[1], 1.0f + std::ldexp(1.0f, -22));
}

// The i-th random walk of the strided-reduction tests: lane counts 1 ... 4 vectors + 3 (every
// block width and tail) then random, lane strides 1 (loads) and above (gathers), up to max_terms
// offsets in the order a reduction walks (shuffled for i % 4 == 1), x covering every offset.
struct StridedWalk {
  size_t count, lane_stride, terms;
  std::vector<int64_t> offsets;
  std::vector<float> x;
};
StridedWalk random_strided_walk(std::mt19937& rng, int i, size_t max_terms) {
  StridedWalk w;
  w.count = i < 67 ? size_t(1 + i) : size_t(1 + rng() % 90);
  w.lane_stride = i % 3 == 0 ? 1 : size_t(1 + rng() % 40);
  w.terms = i % 50 == 0 ? 0 : size_t(1 + rng() % max_terms);
  w.offsets.resize(w.terms);
  const size_t span = w.count * w.lane_stride;
  for (size_t t = 0; t < w.terms; ++t) w.offsets[t] = int64_t(t * span);
  if (i % 4 == 1) std::shuffle(w.offsets.begin(), w.offsets.end(), rng);
  w.x = random_floats(rng, std::max<size_t>(1, w.terms) * span, -3.0f, 5.0f);
  return w;
}

// f32_strided_sums against its ref bit for bit: lane counts 1 ... 4 vectors + 3 (every block
// width and tail), lane strides 1 (loads) and above (gathers), offsets in the order a reduction
// walks and shuffled (the order must be kept, not re-derived), on values whose float sum depends
// on the order; y past count is never written.
TEST(F32StridedSumsUkernel, EqualsTheRefBitForBit) {
  std::mt19937 rng(68);
  int shapes = 0;
  for (auto* k : runnable(kF32StridedSumsUkernels)) {
    for (int i = 0; i < 300; ++i, ++shapes) {
      StridedWalk w = random_strided_walk(rng, i, 60);
      const size_t count = w.count, lane_stride = w.lane_stride, terms = w.terms;
      const std::vector<int64_t>& offsets = w.offsets;
      std::vector<float>& x = w.x;
      if (i % 2 == 1)
        for (float& v : x) v = std::ldexp(rng() % 2 ? 1.0f : -1.0f, int(rng() % 49) - 24);
      for (float divisor : {1.0f, float(std::max<size_t>(1, terms))}) {
        std::vector<float> expected(count), y(count + 5, -7.0f);
        f32_strided_sums__ref(count, lane_stride, x.data(), terms, offsets.data(), expected.data(), divisor);
        k->fn(count, lane_stride, x.data(), terms, offsets.data(), y.data(), divisor);
        for (size_t j = 0; j < count; ++j)
          ASSERT_TRUE(same_float(y[j], expected[j])) << k->name << " count " << count << " stride " << lane_stride
                                                     << " terms " << terms << " at " << j;
        for (size_t j = count; j < y.size(); ++j) ASSERT_EQ(y[j], -7.0f) << k->name << " wrote y[" << j << "]";
      }
    }
  }
  ::testing::Test::RecordProperty("shapes", shapes);
}

// f32_strided_max / f32_strided_min against f32_strided_extremum__ref bit for bit, on the shapes
// of the sums' test, with values drawn from a few (so ties are common), signed zeros, NaNs and
// infinities placed at random: a NaN anywhere wins, a tie keeps the earlier element's sign.
TEST(F32StridedExtremumUkernel, EqualsTheRefBitForBit) {
  std::mt19937 rng(70);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const float pool_of_values[] = {0.0f, -0.0f, 1.0f, -1.0f, 2.5f, inf, -inf, nan, 1e-42f, -3.0f};
  int shapes = 0;
  for (Extremum kind : {Extremum::max, Extremum::min}) {
    const auto rows = kind == Extremum::max ? kF32StridedMaxUkernels : kF32StridedMinUkernels;
    for (auto* k : runnable(rows)) {
      for (int i = 0; i < 200; ++i, ++shapes) {
        StridedWalk w = random_strided_walk(rng, i, 30);
        const size_t count = w.count, lane_stride = w.lane_stride, terms = w.terms;
        const std::vector<int64_t>& offsets = w.offsets;
        std::vector<float>& x = w.x;
        const size_t special = i % 2 == 0 ? 8 : 10;  // even shapes without NaN and infinities
        for (float& v : x)
          if (rng() % 3 == 0) v = pool_of_values[rng() % special];
        std::vector<float> expected(count), y(count + 5, -7.0f);
        f32_strided_extremum__ref(kind, count, lane_stride, x.data(), terms, offsets.data(), expected.data());
        k->fn(count, lane_stride, x.data(), terms, offsets.data(), y.data(), 1.0f);
        for (size_t j = 0; j < count; ++j)
          ASSERT_TRUE(same_float(y[j], expected[j])) << k->name << " count " << count << " stride " << lane_stride
                                                     << " terms " << terms << " at " << j << ": " << y[j] << " vs "
                                                     << expected[j];
        for (size_t j = count; j < y.size(); ++j) ASSERT_EQ(y[j], -7.0f) << k->name << " wrote y[" << j << "]";
      }
    }
  }
  ::testing::Test::RecordProperty("shapes", shapes);
}

// The driver over axes that are not one run (RKRK, KRKR, KRK of 4-D and 5-D tensors, a
// channels-last walk), every ISA and the pool, against the ref walk of the same order.
TEST(EltwiseDriver, F32StridedReduceEveryIsaMatchesTheRef) {
  std::mt19937 rng(69);
  Pool pool(pthreadpool_create(2));
  struct Case {
    std::vector<int64_t> dims, strides;
    std::vector<bool> reduced;
  };
  const std::vector<Case> cases = {
      {{2, 16, 7, 7}, {784, 49, 7, 1}, {true, false, true, false}},
      {{2, 16, 7, 7}, {784, 49, 7, 1}, {false, true, false, true}},
      {{2, 16, 7, 7}, {784, 49, 7, 1}, {false, true, false, false}},
      {{2, 16, 7, 7}, {784, 1, 112, 16}, {false, true, false, false}},  // channels-last memory
      {{3, 2, 5, 9, 11}, {990, 495, 99, 11, 1}, {false, true, false, true, false}},
      {{4, 70, 33}, {2310, 33, 1}, {true, false, true}},
      {{2, 0, 3}, {0, 3, 1}, {false, true, false}},  // no terms: zeros (0 / divisor)
  };
  for (Isa isa : testing::isas_under_test()) {
    for (const Case& k : cases) {
      int64_t n = 1, outputs = 1, extent = 1;
      for (size_t d = 0; d < k.dims.size(); ++d) {
        (k.reduced[d] ? n : outputs) *= k.dims[d];
        extent += std::max<int64_t>(0, k.dims[d] - 1) * k.strides[d];
      }
      std::vector<float> x = random_floats(rng, size_t(extent), -3.0f, 5.0f);
      std::unique_ptr<bool[]> flags(new bool[k.dims.size()]);
      for (size_t d = 0; d < k.dims.size(); ++d) flags[d] = k.reduced[d];
      for (float divisor : {1.0f, float(std::max<int64_t>(1, n))}) {
        const F32StridedReduce op(int(k.dims.size()), k.dims.data(), k.strides.data(), flags.get(), divisor, isa);
        std::vector<float> y(size_t(outputs) + 3, -7.0f), expected(size_t(outputs), 0.0f);
        op.run(x.data(), y.data(), pool.get());
        // The ref walk: every output's reduced elements in row-major order of the reduced axes.
        const int rank = int(k.dims.size());
        std::vector<int64_t> idx(size_t(rank), 0);
        size_t out = 0;
        std::function<void(int, int64_t)> kept_walk = [&](int d, int64_t base) {
          if (d == rank) {
            float sum = 0.0f;
            std::function<void(int, int64_t)> red_walk = [&](int e, int64_t off) {
              if (e == rank) { sum += x[size_t(off)]; return; }
              if (!k.reduced[size_t(e)]) return red_walk(e + 1, off);
              for (int64_t i = 0; i < k.dims[size_t(e)]; ++i) red_walk(e + 1, off + i * k.strides[size_t(e)]);
            };
            red_walk(0, base);
            expected[out++] = sum / divisor;
            return;
          }
          if (k.reduced[size_t(d)]) return kept_walk(d + 1, base);
          for (int64_t i = 0; i < k.dims[size_t(d)]; ++i) kept_walk(d + 1, base + i * k.strides[size_t(d)]);
        };
        kept_walk(0, 0);
        for (size_t j = 0; j < expected.size(); ++j)
          ASSERT_TRUE(same_float(y[j], expected[j])) << op.kernel_name() << " at " << j << " isa " << isa_name(isa);
        for (size_t j = expected.size(); j < y.size(); ++j) ASSERT_EQ(y[j], -7.0f) << op.kernel_name();
        EXPECT_EQ(op.kernel_id().scalar, isa == Isa::scalar) << op.kernel_name();
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// Drivers: broadcast reduction, ISA choice, ref fallback and threads, on NHWC boxes.

struct Box {
  std::vector<int64_t> dims, a_strides, b_strides;
  size_t a_size = 0, b_size = 0;
};

// dims [n, h, w, c] in memory order; what b (and, for mode 3, a) broadcasts over.
Box nhwc_box(int64_t n, int64_t h, int64_t w, int64_t c, int mode) {
  Box box;
  box.dims = {n, h, w, c};
  const std::vector<int64_t> dense = {h * w * c, w * c, c, 1};
  box.a_strides = dense;
  box.a_size = size_t(n * h * w * c);
  switch (mode) {
    case 0: box.b_strides = dense; box.b_size = box.a_size; break;            // same shape
    case 1: box.b_strides = {c, 0, 0, 1}; box.b_size = size_t(n * c); break;  // SE gate [N,1,1,C]
    case 2: box.b_strides = {0, 0, 0, 0}; box.b_size = 1; break;              // scalar: ref
    case 3:                                                                   // a is the gate
      box.b_strides = dense;
      box.b_size = box.a_size;
      box.a_strides = {c, 0, 0, 1};
      box.a_size = size_t(n * c);
      break;
    default:  // b transposed (NCHW read from an NHWC walk): ref
      box.b_strides = {c * h * w, w, 1, h * w};
      box.b_size = box.a_size;
      break;
  }
  return box;
}

TEST(EltwiseDriver, TilingMergesDimensionsAndSpotsTheGate) {
  Box se = nhwc_box(2, 28, 28, 48, 1);
  BinaryTiling t = tile_binary(4, se.dims.data(), se.a_strides.data(), se.b_strides.data());
  ASSERT_TRUE(t.fits);
  EXPECT_EQ(t.outer_rank, 1);
  EXPECT_EQ(t.rows, 784);
  EXPECT_EQ(t.cols, 48);
  EXPECT_EQ(t.a_row_stride, 48);
  EXPECT_EQ(t.b_row_stride, 0);
  Box same = nhwc_box(3, 5, 7, 9, 0);
  t = tile_binary(4, same.dims.data(), same.a_strides.data(), same.b_strides.data());
  ASSERT_TRUE(t.fits);
  EXPECT_EQ(t.outer_rank, 0);
  EXPECT_EQ(t.rows, 1);
  EXPECT_EQ(t.cols, 3 * 5 * 7 * 9);
  Box scalar = nhwc_box(1, 4, 4, 8, 2);
  EXPECT_FALSE(tile_binary(4, scalar.dims.data(), scalar.a_strides.data(), scalar.b_strides.data()).fits);
}

TEST(EltwiseDriver, Q8BinaryEveryIsaMatchesTheRefOnNhwcBoxes) {
  std::mt19937 rng(71);
  Pool pool(pthreadpool_create(2));
  int shapes = 0;
  for (Isa isa : testing::isas_under_test()) {
    for (int i = 0; i < 120; ++i, ++shapes) {
      const bool add = i % 2 == 0, u8 = (i / 2) % 2 == 0;
      const int mode = int(rng() % 5);
      const bool big = i % 40 == 0;  // large enough for several threaded pieces
      const int64_t n = 1 + rng() % 3, h = big ? 64 : 1 + rng() % 9, w = big ? 64 : 1 + rng() % 9;
      const int64_t c = 1 + rng() % 70;
      const Box box = nhwc_box(n, h, w, c, mode);
      std::vector<uint8_t> a(box.a_size), b(box.b_size);
      for (auto& v : a) v = uint8_t(rng());
      for (auto& v : b) v = uint8_t(rng());
      const Q8 type = u8 ? Q8::u8 : Q8::s8;
      const QuantParams aq{0.05f, u8 ? 128 : 0}, bq{0.0213f, u8 ? 3 : -5}, yq{0.1f, u8 ? 100 : -20};
      const Q8Binary::Kind kind = add ? Q8Binary::Kind::add : Q8Binary::Kind::mul;
      const Q8Binary op(kind, type, 4, box.dims.data(), box.a_strides.data(), box.b_strides.data(), isa);
      std::vector<uint8_t> y(box.a_size > box.b_size ? box.a_size : box.b_size, 0x5A), expected(y.size());
      op.run(a.data(), aq, b.data(), bq, yq, q8_min(type), q8_max(type), y.data(), big ? pool.get() : nullptr);
      const int64_t* d = box.dims.data();
      if (u8) {
        if (add)
          q8_add_ratio_fma_strided__ref(4, d, a.data(), box.a_strides.data(), aq, b.data(), box.b_strides.data(), bq,
                                        yq, 0, 255, expected.data());
        else
          q8_mul_ratio_strided__ref(4, d, a.data(), box.a_strides.data(), aq, b.data(), box.b_strides.data(), bq, yq,
                                    0, 255, expected.data());
      } else {
        auto sa = reinterpret_cast<const int8_t*>(a.data());
        auto sb = reinterpret_cast<const int8_t*>(b.data());
        auto sy = reinterpret_cast<int8_t*>(expected.data());
        if (add)
          q8_add_ratio_fma_strided__ref(4, d, sa, box.a_strides.data(), aq, sb, box.b_strides.data(), bq, yq, -128,
                                        127, sy);
        else
          q8_mul_ratio_strided__ref(4, d, sa, box.a_strides.data(), aq, sb, box.b_strides.data(), bq, yq, -128, 127,
                                    sy);
      }
      ASSERT_EQ(y, expected) << op.kernel_name() << " isa " << isa_name(isa) << " mode " << mode << " dims " << n
                             << "x" << h << "x" << w << "x" << c;
      // Every broadcast, the transposed operand included, runs on the microkernels.
      EXPECT_EQ(op.kernel_name().find("__ref") != std::string::npos, isa == Isa::scalar) << op.kernel_name();
    }
  }
  ::testing::Test::RecordProperty("shapes", shapes);
}

// An operand constant along each run of the other: the NCHW gate [N,C,1,1] against a row-major
// [N,C,H,W] map, split attention's [N,2,C,1,1] against [N,2,C,H,W] (5-D), either side, short
// and long runs (the 512-byte chunks and their tails), on every ISA against the refs.
TEST(EltwiseDriver, Q8BinaryConstantPerRunMatchesTheRef) {
  std::mt19937 rng(73);
  Pool pool(pthreadpool_create(2));
  int shapes = 0;
  for (Isa isa : testing::isas_under_test()) {
    for (int i = 0; i < 96; ++i, ++shapes) {
      const bool add = i % 2 == 0, u8 = (i / 2) % 2 == 0, gate_is_a = (i / 4) % 2 == 1, five_d = (i / 8) % 2 == 1;
      const bool big = i % 24 == 0;
      const int64_t n = 1 + rng() % 2, c = 1 + rng() % 20;
      const int64_t h = big ? 40 : 1 + rng() % 30, w = big ? 33 : 1 + rng() % 30;
      std::vector<int64_t> dims, map, gate;
      if (five_d) {
        dims = {n, 2, c, h, w};
        map = {2 * c * h * w, c * h * w, h * w, w, 1};
        gate = {2 * c, c, 1, 0, 0};
      } else {
        dims = {n, c, h, w};
        map = {c * h * w, h * w, w, 1};
        gate = {c, 1, 0, 0};
      }
      const int rank = int(dims.size());
      const size_t map_size = size_t(n * (five_d ? 2 : 1) * c * h * w), gate_size = size_t(n * (five_d ? 2 : 1) * c);
      const std::vector<int64_t>& as = gate_is_a ? gate : map;
      const std::vector<int64_t>& bs = gate_is_a ? map : gate;
      std::vector<uint8_t> a(gate_is_a ? gate_size : map_size), b(gate_is_a ? map_size : gate_size);
      for (auto& v : a) v = i % 16 == 5 ? 255 : uint8_t(rng());  // some all-saturating inputs
      for (auto& v : b) v = i % 16 == 7 ? 0 : uint8_t(rng());
      const Q8 type = u8 ? Q8::u8 : Q8::s8;
      const QuantParams aq{0.05f, u8 ? (i % 3 ? 255 : 0) : (i % 3 ? 127 : -128)}, bq{0.0213f, u8 ? 3 : -5};
      const QuantParams yq{0.01f, u8 ? 100 : -20};
      const Q8Binary::Kind kind = add ? Q8Binary::Kind::add : Q8Binary::Kind::mul;
      const Q8Binary op(kind, type, rank, dims.data(), as.data(), bs.data(), isa);
      std::vector<uint8_t> y(map_size, 0x5A), expected(map_size);
      op.run(a.data(), aq, b.data(), bq, yq, q8_min(type), q8_max(type), y.data(), big ? pool.get() : nullptr);
      const int64_t* d = dims.data();
      if (u8) {
        if (add)
          q8_add_ratio_fma_strided__ref(rank, d, a.data(), as.data(), aq, b.data(), bs.data(), bq, yq, 0, 255,
                                        expected.data());
        else
          q8_mul_ratio_strided__ref(rank, d, a.data(), as.data(), aq, b.data(), bs.data(), bq, yq, 0, 255,
                                    expected.data());
      } else {
        auto sa = reinterpret_cast<const int8_t*>(a.data());
        auto sb = reinterpret_cast<const int8_t*>(b.data());
        auto sy = reinterpret_cast<int8_t*>(expected.data());
        if (add) q8_add_ratio_fma_strided__ref(rank, d, sa, as.data(), aq, sb, bs.data(), bq, yq, -128, 127, sy);
        else q8_mul_ratio_strided__ref(rank, d, sa, as.data(), aq, sb, bs.data(), bq, yq, -128, 127, sy);
      }
      ASSERT_EQ(y, expected) << op.kernel_name() << " isa " << isa_name(isa) << " dims " << n << "x" << c << "x" << h
                             << "x" << w << (five_d ? " 5-D" : "") << (gate_is_a ? " gate a" : " gate b");
      EXPECT_EQ(op.kernel_name().find("__ref") != std::string::npos, isa == Isa::scalar) << op.kernel_name();
      if (isa != Isa::scalar && h * w < 16 && h * w > 1 && c > 1) {  // short runs: packed blocks
        EXPECT_NE(op.kernel_name().find("packed"), std::string::npos) << op.kernel_name();
      }
    }
  }
  ::testing::Test::RecordProperty("shapes", shapes);
}

// Equal, or both NaN (a range with a NaN in the data is NaN at both ends).
bool same_value(float a, float b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// The bounds of a binary's output are folded into an OutputRange tile by tile when asked.
TEST(EltwiseDriver, F32BinaryEveryIsaMatchesTheRefOnNhwcBoxes) {
  std::mt19937 rng(81);
  Pool pool(pthreadpool_create(2));
  for (Isa isa : testing::isas_under_test()) {
    for (int i = 0; i < 100; ++i) {
      const BinaryOp op = i % 2 ? BinaryOp::mul : BinaryOp::add;
      const int mode = int(rng() % 5);
      const bool big = i % 25 == 0;
      const int64_t n = 1 + rng() % 3, h = big ? 70 : 1 + rng() % 9, w = big ? 70 : 1 + rng() % 9;
      const int64_t c = 1 + rng() % 70;
      const Box box = nhwc_box(n, h, w, c, mode);
      auto a = random_floats(rng, box.a_size), b = random_floats(rng, box.b_size);
      const F32Binary k(op, 4, box.dims.data(), box.a_strides.data(), box.b_strides.data(), isa);
      if (i % 10 == 9) a[rng() % a.size()] = std::numeric_limits<float>::quiet_NaN();
      std::vector<float> y(std::max(box.a_size, box.b_size), -7.0f), expected(y.size());
      OutputRange range(isa);  // what a following DynamicQuantizeLinear reads
      k.run(a.data(), b.data(), y.data(), big ? pool.get() : nullptr, i % 2 ? &range : nullptr);
      f32_binary_strided__ref(op, 4, box.dims.data(), a.data(), box.a_strides.data(), b.data(), box.b_strides.data(),
                              Activation{}, expected.data());
      for (size_t j = 0; j < y.size(); ++j)
        ASSERT_EQ(std::bit_cast<uint32_t>(y[j]), std::bit_cast<uint32_t>(expected[j])) << k.kernel_name() << " mode "
                                                                                       << mode << " at " << j;
      if (i % 2 == 0) continue;
      const F32Range want = f32_range__ref(int64_t(expected.size()), expected.data());
      const F32Range got = range.get();
      EXPECT_TRUE(same_value(got.min, want.min)) << k.kernel_name() << " mode " << mode << ": " << got.min;
      EXPECT_TRUE(same_value(got.max, want.max)) << k.kernel_name() << " mode " << mode << ": " << got.max;
    }
  }
}

TEST(EltwiseDriver, UnaryAndPoolsEveryIsa) {
  std::mt19937 rng(91);
  Pool pool(pthreadpool_create(2));
  for (Isa isa : runnable_isas()) {
    // Relu / Clip exact; Clip with min > max goes to the ref (which returns min).
    for (const Activation act : {Activation::relu(), Activation::clip(0.0f, 6.0f), Activation::clip(2.0f, 1.0f)}) {
      const F32Unary u(act.kind, isa);
      auto x = random_floats(rng, 100000, -8.0f, 8.0f);
      std::vector<float> y(x.size()), expected(x.size());
      u.run(act, int64_t(x.size()), x.data(), y.data(), pool.get());
      f32_unary__ref(act, int64_t(x.size()), x.data(), expected.data());
      ASSERT_EQ(y, expected) << u.kernel_name();
    }
    const F32Unary sig(ActKind::sigmoid, isa);
    auto x = random_floats(rng, 1000, -30.0f, 30.0f);
    std::vector<float> y(x.size()), expected(x.size());
    sig.run(Activation::sigmoid(), int64_t(x.size()), x.data(), y.data(), nullptr);
    f32_unary__ref(Activation::sigmoid(), int64_t(x.size()), x.data(), expected.data());
    for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(y[i], expected[i], 4e-7f * expected[i] + 1e-37f);

    const int batch = 3, hw = 49, c = 37;
    auto fx = random_floats(rng, size_t(batch) * hw * c);
    std::vector<float> fy(size_t(batch) * c), fe(fy.size());
    for (GapOrder order : {GapOrder::sequential, GapOrder::mlas_lanes4, GapOrder::eigen_packets4, GapOrder::mlas_sgemm_m1}) {
      F32GlobalAvgPool(batch, hw, c, order, isa).run(fx.data(), fy.data(), pool.get());
      f32_global_avgpool_nhwc__ref(batch, hw, c, fx.data(), fe.data(), order);
      for (size_t i = 0; i < fy.size(); ++i) ASSERT_TRUE(same_float(fy[i], fe[i])) << isa_name(isa) << " at " << i;
    }

    // Row sums split over two threads: each piece keeps its rows' leads. Rows of
    // F32RowSums::kLongRow floats or more run the long-row kernel.
    for (const size_t n : {size_t(49), size_t(3), size_t(1000), size_t(257), size_t(255)}) {
      const size_t rows = 5000 * 49 / n + 3, first_row = 2;
      auto rx = random_floats(rng, rows * n);
      std::vector<float> ry(rows), re(rows);
      const F32RowSums sums(n, isa);
      if (isa != Isa::scalar) {
        EXPECT_EQ(sums.kernel_name().find("f32_eigen_sums") != std::string::npos, n >= F32RowSums::kLongRow)
            << sums.kernel_name() << " n " << n;
      }
      sums.run(rows, rx.data(), ry.data(), first_row, float(n), pool.get());
      f32_row_sums_eigen__ref(rows, n, rx.data(), re.data(), first_row, float(n));
      for (size_t i = 0; i < rows; ++i) ASSERT_TRUE(same_float(ry[i], re[i])) << sums.kernel_name() << " at " << i;
    }

    std::vector<uint8_t> qx(size_t(batch) * hw * c), qy(size_t(batch) * c), qe(qy.size());
    for (auto& v : qx) v = uint8_t(rng());
    const Q8GlobalAvgPool gap(Q8::s8, batch, hw, c, isa);
    gap.run(qx.data(), {0.03f, -3}, {0.01f, 5}, qy.data(), pool.get());
    q8_global_avgpool_nhwc__ref(batch, hw, c, reinterpret_cast<const int8_t*>(qx.data()), {0.03f, -3}, {0.01f, 5},
                                reinterpret_cast<int8_t*>(qe.data()));
    ASSERT_EQ(qy, qe) << gap.kernel_name();
  }
}

// A single-element operand (x / 2, 0.5 - x) runs on the microkernels through the driver,
// spread over a row: every op, either side, tensors shorter and longer than the row with a
// tail, two threads, equal to the reference bit for bit.
TEST(F32BinaryDriver, SingleElementOperandOnTheMicrokernels) {
  std::mt19937 rng(37);
  testing::Pool pool(pthreadpool_create(2));
  for (Isa isa : runnable_isas()) {
    for (BinaryOp op : {BinaryOp::add, BinaryOp::sub, BinaryOp::mul, BinaryOp::div}) {
      for (int64_t n : {int64_t(1), int64_t(7), int64_t(2048), int64_t(5000), int64_t(70001)}) {
        for (bool scalar_first : {false, true}) {
          const int64_t dims[3] = {1, 2, n};  // e.g. [1, 2, anchors] / 2
          const int64_t dense[3] = {2 * n, n, 1}, zero[3] = {0, 0, 0};
          auto x = random_floats(rng, size_t(2 * n));
          const float scalar = op == BinaryOp::div ? 2.0f : random_floats(rng, 1)[0];
          const float* a = scalar_first ? &scalar : x.data();
          const float* b = scalar_first ? x.data() : &scalar;
          const int64_t* as = scalar_first ? zero : dense;
          const int64_t* bs = scalar_first ? dense : zero;
          std::vector<float> expected(size_t(2 * n)), y(size_t(2 * n) + 1, -7.0f);
          f32_binary_strided__ref(op, 3, dims, a, as, b, bs, Activation{}, expected.data());
          const F32Binary driver(op, 3, dims, as, bs, isa);
          if (isa != Isa::scalar) {
            EXPECT_EQ(driver.kernel_name().find("__ref"), std::string::npos) << driver.kernel_name();
          }
          driver.run(a, b, y.data(), n > 4000 ? pool.get() : nullptr);
          EXPECT_EQ(y.back(), -7.0f) << "wrote past the output";
          for (size_t j = 0; j + 1 < y.size(); ++j)
            ASSERT_TRUE(same_float(y[j], expected[j])) << driver.kernel_name() << " n " << n << " at " << j;
        }
      }
    }
  }
}

// An operand constant along each innermost run of the other, on the microkernels one run at a
// time: ConvNeXt's layer scale [C,1,1] over row-major NCHW (either side, every op), runs shorter
// and longer than the stack chunk with a tail, a [N,C,1,1] operand over two images, two threads;
// equal to the reference bit for bit. Runs below the minimum run packed.
TEST(F32BinaryDriver, OperandConstantAlongRunsOnTheMicrokernels) {
  std::mt19937 rng(41);
  testing::Pool pool(pthreadpool_create(2));
  struct Case {
    int64_t n, c, hw;
    bool per_image;  // the constant operand is [N,C,1,1] instead of [C,1,1]
  };
  for (Isa isa : runnable_isas()) {
    for (BinaryOp op : {BinaryOp::add, BinaryOp::sub, BinaryOp::mul, BinaryOp::div}) {
      for (const Case& k : {Case{1, 3, 16, false}, Case{1, 5, 49, false}, Case{2, 7, 513, true},
                            Case{1, 4, 3136, false}, Case{2, 3, 1000, false}, Case{1, 6, 15, false}}) {
        for (bool constant_first : {false, true}) {
          const int64_t dims[4] = {k.n, k.c, 1, k.hw};
          const int64_t dense[4] = {k.c * k.hw, k.hw, k.hw, 1};
          const int64_t channel[4] = {k.per_image ? k.c : 0, 1, 0, 0};
          const size_t total = size_t(k.n * k.c * k.hw);
          auto x = random_floats(rng, total);
          auto scale = random_floats(rng, size_t(k.n * k.c));
          if (op == BinaryOp::div)
            for (float& v : scale) v = v == 0.0f ? 0.5f : v;
          const float* a = constant_first ? scale.data() : x.data();
          const float* b = constant_first ? x.data() : scale.data();
          const int64_t* as = constant_first ? channel : dense;
          const int64_t* bs = constant_first ? dense : channel;
          std::vector<float> expected(total), y(total + 1, -7.0f);
          f32_binary_strided__ref(op, 4, dims, a, as, b, bs, Activation{}, expected.data());
          const F32Binary driver(op, 4, dims, as, bs, isa);
          const bool on_microkernel = driver.kernel_name().find("__ref") == std::string::npos;
          if (isa != Isa::scalar) {
            EXPECT_TRUE(on_microkernel) << driver.kernel_name() << " run " << k.hw;
            EXPECT_EQ(driver.kernel_name().find("packed") != std::string::npos, k.hw < 16) << driver.kernel_name();
          }
          driver.run(a, b, y.data(), total > 4000 ? pool.get() : nullptr);
          EXPECT_EQ(y.back(), -7.0f) << "wrote past the output";
          for (size_t j = 0; j + 1 < y.size(); ++j)
            ASSERT_TRUE(same_float(y[j], expected[j])) << driver.kernel_name() << " run " << k.hw << " at " << j;
        }
      }
    }
  }
}

// An operand of a random broadcast: each dimension kept or broadcast (stride 0), its kept
// dimensions laid out in a random memory order (a transposed read), sometimes with a gap
// between elements (a strided read). Returns the strides; *size the elements to allocate.
std::vector<int64_t> random_operand(std::mt19937& rng, const std::vector<int64_t>& dims, size_t* size) {
  const size_t rank = dims.size();
  std::vector<bool> kept(rank);
  for (size_t d = 0; d < rank; ++d) kept[d] = rng() % 3 != 0;
  std::vector<size_t> order(rank);
  for (size_t d = 0; d < rank; ++d) order[d] = d;
  if (rng() % 3 == 0) std::shuffle(order.begin(), order.end(), rng);
  std::vector<int64_t> strides(rank, 0);
  int64_t step = rng() % 5 == 0 ? 2 + int64_t(rng() % 2) : 1;
  for (size_t k = rank; k-- > 0;) {
    const size_t d = order[k];
    if (!kept[d]) continue;
    strides[d] = step;
    step *= dims[d];
  }
  *size = size_t(step);
  return strides;
}

struct RandomBroadcast {
  std::vector<int64_t> dims, a_strides, b_strides;
  size_t a_size = 0, b_size = 0, y_size = 1;
};

// Output extents 1..9 with sometimes a long last run (rows split in pieces) or many rows
// (several threaded pieces): both-sided broadcasts, short runs, transposed and strided operands.
RandomBroadcast random_broadcast(std::mt19937& rng, int i) {
  RandomBroadcast r;
  const size_t rank = 1 + rng() % 6;
  for (size_t d = 0; d < rank; ++d) r.dims.push_back(1 + int64_t(rng() % 9));
  if (i % 17 == 3) r.dims.back() = 1000 + int64_t(rng() % 9000);
  else if (i % 23 == 5) r.dims[0] = 3000;
  int64_t total = 1;
  for (int64_t v : r.dims) total *= v;
  for (size_t d = 1; d + 1 < rank && total > (int64_t{1} << 18); ++d) {  // at most about 256K outputs
    total /= r.dims[d];
    r.dims[d] = 1;
  }
  r.a_strides = random_operand(rng, r.dims, &r.a_size);
  r.b_strides = random_operand(rng, r.dims, &r.b_size);
  for (int64_t v : r.dims) r.y_size *= size_t(v);
  return r;
}

std::string dims_text(const std::vector<int64_t>& v) {
  std::string t;
  for (int64_t x : v) t += (t.empty() ? "" : ",") + std::to_string(x);
  return "[" + t + "]";
}

// Any pair of broadcastable operands runs on the microkernels (only Isa::scalar on the
// reference), equal to the reference bit for bit: every FP32 op and PRelu, two threads.
TEST(F32BinaryDriver, AnyBroadcastOnTheMicrokernels) {
  std::mt19937 rng(97);
  Pool pool(pthreadpool_create(2));
  for (Isa isa : testing::isas_under_test()) {
    for (int i = 0; i < 300; ++i) {
      const BinaryOp op = BinaryOp(i % 5);
      const RandomBroadcast r = random_broadcast(rng, i);
      auto a = random_floats(rng, r.a_size), b = random_floats(rng, r.b_size);
      if (i % 11 == 0) a[rng() % a.size()] = std::numeric_limits<float>::quiet_NaN();
      const int rank = int(r.dims.size());
      const F32Binary k(op, rank, r.dims.data(), r.a_strides.data(), r.b_strides.data(), isa);
      std::vector<float> y(r.y_size + 1, -7.0f), expected(r.y_size);
      OutputRange range(isa);
      k.run(a.data(), b.data(), y.data(), pool.get(), i % 2 ? &range : nullptr);
      f32_binary_strided__ref(op, rank, r.dims.data(), a.data(), r.a_strides.data(), b.data(), r.b_strides.data(),
                              Activation{}, expected.data());
      EXPECT_EQ(y.back(), -7.0f) << "wrote past the output";
      for (size_t j = 0; j < r.y_size; ++j)
        ASSERT_EQ(std::bit_cast<uint32_t>(y[j]), std::bit_cast<uint32_t>(expected[j]))
            << k.kernel_name() << " dims " << dims_text(r.dims) << " a " << dims_text(r.a_strides) << " b "
            << dims_text(r.b_strides) << " at " << j;
      EXPECT_EQ(k.kernel_id().scalar, isa == Isa::scalar) << k.kernel_name() << " dims " << dims_text(r.dims);
      if (i % 2 == 1) {
        const F32Range want = f32_range__ref(int64_t(expected.size()), expected.data());
        EXPECT_TRUE(same_value(range.get().min, want.min)) << k.kernel_name();
        EXPECT_TRUE(same_value(range.get().max, want.max)) << k.kernel_name();
      }
    }
  }
}

// The same boxes through Q8Binary: Add and Mul, u8 and s8, zero points at the ends of the
// range, byte for byte with the references.
TEST(EltwiseDriver, Q8BinaryAnyBroadcastOnTheMicrokernels) {
  std::mt19937 rng(98);
  Pool pool(pthreadpool_create(2));
  for (Isa isa : testing::isas_under_test()) {
    for (int i = 0; i < 240; ++i) {
      const bool add = i % 2 == 0, u8 = (i / 2) % 2 == 0;
      const RandomBroadcast r = random_broadcast(rng, i);
      std::vector<uint8_t> a(r.a_size), b(r.b_size);
      for (auto& v : a) v = i % 13 == 4 ? 255 : uint8_t(rng());
      for (auto& v : b) v = i % 13 == 6 ? 0 : uint8_t(rng());
      const Q8 type = u8 ? Q8::u8 : Q8::s8;
      const QuantParams aq{0.05f, u8 ? (i % 3 ? 255 : 0) : (i % 3 ? 127 : -128)}, bq{0.0213f, u8 ? 3 : -5};
      const QuantParams yq{i % 4 ? 0.1f : 0.004f, u8 ? 100 : -20};
      const int rank = int(r.dims.size());
      const int64_t* d = r.dims.data();
      const Q8Binary op(add ? Q8Binary::Kind::add : Q8Binary::Kind::mul, type, rank, d, r.a_strides.data(),
                        r.b_strides.data(), isa);
      std::vector<uint8_t> y(r.y_size + 1, 0x5A), expected(r.y_size);
      op.run(a.data(), aq, b.data(), bq, yq, q8_min(type), q8_max(type), y.data(), pool.get());
      const int64_t *as = r.a_strides.data(), *bs = r.b_strides.data();
      if (u8) {
        if (add) q8_add_ratio_fma_strided__ref(rank, d, a.data(), as, aq, b.data(), bs, bq, yq, 0, 255, expected.data());
        else q8_mul_ratio_strided__ref(rank, d, a.data(), as, aq, b.data(), bs, bq, yq, 0, 255, expected.data());
      } else {
        auto sa = reinterpret_cast<const int8_t*>(a.data());
        auto sb = reinterpret_cast<const int8_t*>(b.data());
        auto sy = reinterpret_cast<int8_t*>(expected.data());
        if (add) q8_add_ratio_fma_strided__ref(rank, d, sa, as, aq, sb, bs, bq, yq, -128, 127, sy);
        else q8_mul_ratio_strided__ref(rank, d, sa, as, aq, sb, bs, bq, yq, -128, 127, sy);
      }
      EXPECT_EQ(y.back(), 0x5A) << "wrote past the output";
      y.pop_back();
      ASSERT_EQ(y, expected) << op.kernel_name() << " dims " << dims_text(r.dims) << " a " << dims_text(r.a_strides)
                             << " b " << dims_text(r.b_strides);
      EXPECT_EQ(op.kernel_id().scalar, isa == Isa::scalar) << op.kernel_name() << " dims " << dims_text(r.dims);
    }
  }
}

// QLinearReduceMean's driver over any axes and layouts: row-major, a dense permutation (the
// spatial mean of channels-last data on the float GAP, other sets through the strided walk),
// strided x (gathered first), sizes of one, u8 and s8 with zero points at the ends of the range
// and saturating outputs; byte for byte with q8_reduce_mean_strided__ref, on SIMD at every
// level but scalar.
TEST(EltwiseDriver, Q8ReduceMeanAnyAxesMatchesTheRef) {
  std::mt19937 rng(99);
  Pool pool(pthreadpool_create(2));
  int shapes = 0;
  for (Isa isa : testing::isas_under_test()) {
    for (int i = 0; i < 200; ++i, ++shapes) {
      const bool u8 = i % 2 == 0;
      std::vector<int64_t> dims;
      const bool nhwc_spatial = i % 5 == 1;
      const bool many_rows = i % 50 == 7;  // rows dequantized and summed in many chunks, two threads
      const size_t rank = nhwc_spatial ? 4 : many_rows ? 3 : (i % 50 == 17 || i % 50 == 43) ? 4 : 1 + rng() % 5;
      for (size_t d = 0; d < rank; ++d) dims.push_back(1 + int64_t(rng() % 7));
      if (i % 31 == 2) dims.back() = 300;  // a long row, several threaded pieces
      if (many_rows) dims = {40, 7, 500};
      // ORT's rows case on long rows (the long-row kernel, rows side by side): an SE mean over
      // 56x56 and an odd row length, rows not a multiple of a call's.
      const bool long_rows = i % 50 == 17 || i % 50 == 43;
      if (long_rows) dims = i % 50 == 17 ? std::vector<int64_t>{1, 37, 56, 56} : std::vector<int64_t>{3, 11, 1, 257};
      std::vector<bool> reduced(rank);
      bool any = false;
      for (size_t d = 0; d < rank; ++d) any = (reduced[d] = rng() % 2 == 0) || any;
      if (!any) reduced[rng() % rank] = true;
      if (nhwc_spatial) reduced = {false, false, true, true};
      if (many_rows) reduced = {false, false, true};
      if (long_rows) reduced = {false, false, true, true};
      // Memory: row-major, channels-last for the spatial case, a random order, or with gaps.
      std::vector<size_t> order(rank);
      for (size_t d = 0; d < rank; ++d) order[d] = d;
      const int layout = nhwc_spatial ? 1 : many_rows || long_rows ? 0 : int(rng() % 3);
      if (nhwc_spatial) order = {0, 2, 3, 1};
      else if (layout == 1) std::shuffle(order.begin(), order.end(), rng);
      std::vector<int64_t> strides(rank);
      int64_t step = layout == 2 ? 2 : 1;
      for (size_t k = rank; k-- > 0;) {
        strides[order[k]] = step;
        step *= dims[order[k]];
      }
      std::vector<uint8_t> x(static_cast<size_t>(step));
      for (auto& v : x) v = i % 17 == 3 ? (u8 ? 255 : 0x80) : uint8_t(rng());
      int64_t outputs = 1;
      bool flags[kMaxRank] = {};
      for (size_t d = 0; d < rank; ++d) {
        flags[d] = reduced[d];
        if (!reduced[d]) outputs *= dims[d];
      }
      const Q8 type = u8 ? Q8::u8 : Q8::s8;
      const QuantParams xq{0.0437f + 0.01f * float(i % 3), u8 ? (i % 3 ? 255 : 0) : (i % 3 ? 127 : -128)};
      const QuantParams yq{i % 4 ? 0.0123f : 0.5f, u8 ? 117 : -9};
      const Q8ReduceMean mean(type, int(rank), dims.data(), strides.data(), flags, isa);
      std::vector<uint8_t> y(static_cast<size_t>(outputs) + 1, 0x5A), expected(static_cast<size_t>(outputs));
      mean.run(x.data(), xq, yq, y.data(), pool.get());
      if (u8)
        q8_reduce_mean_strided__ref(int(rank), dims.data(), flags, x.data(), strides.data(), xq, yq, expected.data());
      else
        q8_reduce_mean_strided__ref(int(rank), dims.data(), flags, reinterpret_cast<const int8_t*>(x.data()),
                                    strides.data(), xq, yq, reinterpret_cast<int8_t*>(expected.data()));
      EXPECT_EQ(y.back(), 0x5A) << "wrote past the output";
      y.pop_back();
      ASSERT_EQ(y, expected) << mean.kernel_name() << " dims " << dims_text(dims) << " strides " << dims_text(strides);
      EXPECT_EQ(mean.kernel_id().scalar, isa == Isa::scalar) << mean.kernel_name();
      if (isa != Isa::scalar && long_rows) {
        EXPECT_NE(mean.kernel_name().find("f32_eigen_sums"), std::string::npos) << mean.kernel_name();
      }
      if (isa != Isa::scalar && nhwc_spatial && dims[2] * dims[3] > 1 && dims[1] > 1) {
        EXPECT_NE(mean.kernel_name().find("f32_gap"), std::string::npos) << mean.kernel_name();
      }
    }
  }
  ::testing::Test::RecordProperty("shapes", shapes);
}

}  // namespace
}  // namespace octet::kernels
