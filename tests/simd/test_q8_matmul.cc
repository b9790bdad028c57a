// Q8MatMul (QLinearMatMul and MatMulInteger on the INT8 microkernels, kernels/gemm/q8_matmul.h)
// against q8_qlinear_matmul__ref / q8_gemm_int32__ref: bit-exact at every level this CPU runs,
// for every type combination (u8 / s8 A, B and Y), constant and run-time B, per-tensor and
// per-column B parameters, the weight zero points that need the row-sum correction and those
// that do not.
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/fallback.h"
#include "kernels/gemm/q8_matmul.h"
#include "kernels/ref/qgemm.h"
#include "tests/simd/q8_test_data.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace {

using testing::Fill;

std::map<std::string, int>& runs() {
  static std::map<std::string, int> counts;
  return counts;
}

struct MatMulCase {
  int m = 1, n = 1, k = 1;
  Q8 a_type = Q8::u8, b_type = Q8::s8, y_type = Q8::u8;
  int32_t a_zero_point = 0, y_zero_point = 0;
  std::vector<int32_t> b_zero_point{0};  // 1 or n
  bool per_column_scale = false;
  bool b_const = true;
  bool int32_out = false;  // MatMulInteger
  Fill fill = Fill::random;
  float gain = 1.0f;  // > 1: outputs saturate at both ends
};

std::string describe(const MatMulCase& c, const Q8MatMul& mm, Isa isa) {
  std::string zb;
  for (size_t j = 0; j < c.b_zero_point.size() && j < 8; ++j) zb += std::to_string(c.b_zero_point[j]) + " ";
  return mm.kernel_id().name + " at " + isa_name(isa) + ": m " + std::to_string(c.m) + " n " + std::to_string(c.n) +
         " k " + std::to_string(c.k) + ", a " + q8_name(c.a_type) + " zp " + std::to_string(c.a_zero_point) + ", b " +
         q8_name(c.b_type) + " zp " + zb + (c.b_const ? "(constant)" : "(run time)") + ", y " +
         (c.int32_out ? "int32" : std::string(q8_name(c.y_type)) + " zp " + std::to_string(c.y_zero_point)) +
         (mm.corrected() ? ", corrected" : "");
}

// Values of `type` as bytes: uniform, or (extreme) each column of B / all of A at the end of
// the range farthest from its zero point, so |a - za| * |b - zb| is as large as it gets.
std::vector<uint8_t> draw(std::mt19937& rng, size_t rows, size_t cols, Q8 type, const std::vector<int32_t>& zp,
                          bool per_column, Fill fill) {
  std::vector<uint8_t> v(rows * cols);
  std::uniform_int_distribution<int> byte(0, 255);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c) {
      const int32_t z = zp[per_column && zp.size() > 1 ? c : 0];
      const int32_t far = z - q8_min(type) > q8_max(type) - z ? q8_min(type) : q8_max(type);
      v[r * cols + c] = fill == Fill::extreme ? static_cast<uint8_t>(far) : static_cast<uint8_t>(byte(rng));
    }
  }
  return v;
}

void check(std::mt19937& rng, const MatMulCase& c, pthreadpool_t pool = nullptr) {
  GemmShape s;
  s.m = c.m;
  s.n = c.n;
  s.k = c.k;
  const size_t mn = static_cast<size_t>(c.m) * c.n;
  const std::vector<uint8_t> a = draw(rng, c.m, c.k, c.a_type, {c.a_zero_point}, false, c.fill);
  const std::vector<uint8_t> b = draw(rng, c.k, c.n, c.b_type, c.b_zero_point, true, c.fill);
  const int32_t za[] = {c.a_zero_point};

  std::vector<int32_t> acc(mn);
  testing::with_q8_types(c.a_type, c.b_type, [&](auto a_tag, auto b_tag) {
    using A = decltype(a_tag);
    using B = decltype(b_tag);
    q8_gemm_int32__ref<A, B>(s, reinterpret_cast<const A*>(a.data()), za, reinterpret_cast<const B*>(b.data()),
                             c.b_zero_point, nullptr, 0, 0, acc.data());
  });
  // Scales: a_scale and b_scale[j] drawn, y_scale from the observed accumulators so that the
  // outputs span the type (gain > 1 saturates).
  std::uniform_real_distribution<float> scale(0.5f, 2.0f);
  const float a_scale = scale(rng) / 64;
  std::vector<float> b_scale(c.per_column_scale ? c.n : 1);
  for (float& v : b_scale) v = scale(rng) / 128;
  int64_t max_abs = 1;
  for (int32_t v : acc) max_abs = std::max<int64_t>(max_abs, std::llabs(static_cast<int64_t>(v)));
  const float y_scale = a_scale * b_scale[0] * static_cast<float>(max_abs) / (c.gain * 128.0f) * scale(rng);

  std::vector<uint8_t> expected(c.int32_out ? mn * 4 : mn);
  std::vector<float> multiplier;
  for (float sb : b_scale) multiplier.push_back(requant_multiplier(a_scale, sb, y_scale));
  if (c.int32_out) {
    std::memcpy(expected.data(), acc.data(), mn * 4);
  } else {
    const float sa[] = {a_scale};
    testing::with_q8_types(c.a_type, c.b_type, [&](auto a_tag, auto b_tag) {
      using A = decltype(a_tag);
      using B = decltype(b_tag);
      testing::with_q8_types(c.y_type, c.y_type, [&](auto y_tag, auto) {
        using Y = decltype(y_tag);
        constexpr bool u8_b_to_other_type = std::is_same_v<B, uint8_t> && !std::is_same_v<A, Y>;
        if constexpr (u8_b_to_other_type) {
          FAIL() << "the reference has no QLinearMatMul of these types";
        } else {
          q8_qlinear_matmul__ref<A, B, Y>(s, reinterpret_cast<const A*>(a.data()), sa, za,
                                          reinterpret_cast<const B*>(b.data()), b_scale, c.b_zero_point, y_scale,
                                          c.y_zero_point, reinterpret_cast<Y*>(expected.data()));
        }
      });
    });
  }
  const Requantization rq{multiplier, c.y_zero_point, q8_min(c.y_type), q8_max(c.y_type)};

  for (Isa isa : runnable_isas()) {
    Q8MatMul mm(c.k, c.n, c.a_type, c.a_zero_point, c.b_type, c.b_const ? b.data() : nullptr, c.b_zero_point,
                c.int32_out ? nullptr : &rq, c.y_type, c.m, isa);
    std::vector<uint8_t> y(expected.size() + 4, 0x5A);  // guard bytes past the end
    for (int run = 0; run < 2; ++run) {  // a second run reuses the packing and the scratch
      if (!c.b_const) mm.pack(b.data());
      mm.run(c.m, a.data(), y.data(), pool);
      for (size_t i = expected.size(); i < y.size(); ++i) ASSERT_EQ(y[i], 0x5A) << describe(c, mm, isa) << ": wrote past y";
      for (size_t i = 0; i < mn; ++i) {
        int32_t got = 0, want = 0;
        if (c.int32_out) {
          std::memcpy(&got, &y[i * 4], 4);
          std::memcpy(&want, &expected[i * 4], 4);
        } else {
          got = c.y_type == Q8::u8 ? y[i] : static_cast<int8_t>(y[i]);
          want = c.y_type == Q8::u8 ? expected[i] : static_cast<int8_t>(expected[i]);
        }
        ASSERT_EQ(got, want) << describe(c, mm, isa) << " at row " << i / c.n << " column " << i % c.n << " (acc "
                             << acc[i] << ", multiplier " << multiplier[multiplier.size() == 1 ? 0 : i % c.n]
                             << ", run " << run << ")";
      }
    }
    ++runs()[mm.kernel_id().name + (mm.corrected() ? " corrected" : " fused") + (c.int32_out ? " int32" : "")];
  }
}

std::vector<int32_t> zero_points(std::mt19937& rng, Q8 type, int n, bool per_column) {
  std::vector<int32_t> zp(per_column ? n : 1);
  for (int32_t& v : zp) v = testing::random_zero_point(rng, type);
  return zp;
}

void print_runs() {
  for (const auto& [name, count] : runs()) std::printf("ran %s on %d products\n", name.c_str(), count);
  runs().clear();
}

TEST(Q8MatMul, EveryTypeCombinationOfTheRefRandomShapes) {
  std::mt19937 rng(4321);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  // The combinations the reference is instantiated for (kernels/ref/q8_type_combinations.inc).
  const Q8 u8 = Q8::u8, s8 = Q8::s8;
  const Q8 combinations[][3] = {{u8, s8, u8}, {u8, u8, u8}, {s8, s8, s8}, {u8, s8, s8}, {s8, s8, u8}, {s8, u8, s8}};
  for (const auto& [a_type, b_type, y_type] : combinations)
        for (int iter = 0; iter < 40; ++iter) {
          MatMulCase c;
          c.m = uniform(1, iter % 8 == 0 ? 40 : 14);
          c.n = uniform(1, iter % 8 == 1 ? 150 : 40);
          c.k = uniform(1, iter % 8 == 2 ? 500 : 70);
          c.a_type = a_type;
          c.b_type = b_type;
          c.y_type = y_type;
          c.a_zero_point = testing::random_zero_point(rng, a_type);
          c.y_zero_point = testing::random_zero_point(rng, y_type);
          // A third each: the weight zero point of the fused path (0, or 128 for u8), one random
          // per tensor, one per column.
          const int kind = iter % 3;
          c.b_zero_point = kind == 0 ? std::vector<int32_t>{b_type == Q8::u8 ? 128 : 0}
                                     : zero_points(rng, b_type, c.n, kind == 2);
          c.per_column_scale = uniform(0, 1) == 1;
          c.b_const = iter % 4 != 3;
          c.gain = iter % 5 == 0 ? 4.0f : 1.0f;
          check(rng, c);
          if (HasFatalFailure()) return;
          c.int32_out = true;
          check(rng, c);
          if (HasFatalFailure()) return;
        }
  print_runs();
}

// K from 1 to 70 (every tail of every KR), M and N around the tiles, extreme values and every
// extreme zero point of A and B, saturating outputs.
TEST(Q8MatMul, KTailsExtremeValuesAndZeroPoints) {
  std::mt19937 rng(77);
  for (Q8 a_type : {Q8::u8, Q8::s8})
    for (Q8 b_type : {Q8::u8, Q8::s8})
      for (int k = 1; k <= 70; ++k) {
        const std::vector<int32_t> za = testing::extreme_zero_points(a_type), zb = testing::extreme_zero_points(b_type);
        MatMulCase c;
        c.m = 1 + k % 13;
        c.n = 1 + (k * 7) % 35;
        c.k = k;
        c.a_type = a_type;
        c.b_type = b_type;
        c.y_type = a_type;  // (u8, u8, s8) and (s8, u8, u8) have no reference
        c.a_zero_point = za[static_cast<size_t>(k) % za.size()];
        c.b_zero_point = {zb[static_cast<size_t>(k / 2) % zb.size()]};
        if (k % 3 == 0) {
          c.b_zero_point.resize(c.n);
          for (int j = 0; j < c.n; ++j) c.b_zero_point[j] = zb[static_cast<size_t>(j) % zb.size()];
        }
        c.y_zero_point = testing::extreme_zero_point(rng, c.y_type);
        c.fill = k % 4 == 0 ? Fill::random : Fill::extreme;
        c.per_column_scale = k % 5 == 0;
        c.b_const = k % 2 == 1;
        c.gain = k % 3 == 1 ? 8.0f : 1.0f;
        check(rng, c);
        if (HasFatalFailure()) return;
        c.int32_out = true;
        check(rng, c);
        if (HasFatalFailure()) return;
      }
  print_runs();
}

// A u8 B is read as b - 128 with its zero point moved by 128. Every pair of a byte of B and a
// zero point, times every byte of A: k = 1, A [256][1] holding 0..255, B [1][256] holding
// 0..255, one zero point per column; the int32 products must be (a - za) * (b - zb) exactly.
TEST(Q8MatMul, U8WeightShiftIsExact) {
  for (Q8 a_type : {Q8::u8, Q8::s8}) {
    for (int32_t shift = 0; shift < 256; shift += 51) {
      std::vector<uint8_t> a(256), b(256);
      std::vector<int32_t> zb(256);
      for (int i = 0; i < 256; ++i) {
        a[i] = static_cast<uint8_t>(i);
        b[i] = static_cast<uint8_t>(i);
        zb[i] = (i + shift) % 256;
      }
      const int32_t za = a_type == Q8::u8 ? 3 : -3;
      for (Isa isa : runnable_isas()) {
        Q8MatMul mm(1, 256, a_type, za, Q8::u8, b.data(), zb, nullptr, a_type, 256, isa);
        EXPECT_TRUE(mm.corrected());
        std::vector<int32_t> y(256 * 256);
        mm.run(256, a.data(), y.data(), nullptr);
        for (int i = 0; i < 256; ++i) {
          const int32_t av = a_type == Q8::u8 ? a[i] : static_cast<int8_t>(a[i]);
          for (int j = 0; j < 256; ++j)
            ASSERT_EQ(y[i * 256 + j], (av - za) * (b[j] - zb[j]))
                << mm.kernel_id().name << " a " << av << " b " << int(b[j]) << " zb " << zb[j];
        }
      }
    }
  }
}

TEST(Q8MatMul, TwoThreadsMatchTheReference) {
  testing::Pool pool(pthreadpool_create(2));
  ASSERT_NE(pool, nullptr);
  std::mt19937 rng(5);
  for (bool corrected : {false, true}) {
    MatMulCase c;
    c.m = 49;
    c.n = 130;
    c.k = 257;
    c.a_type = Q8::u8;
    c.b_type = Q8::u8;
    c.b_zero_point = corrected ? zero_points(rng, Q8::u8, c.n, true) : std::vector<int32_t>{128};
    c.a_zero_point = 100;
    c.y_zero_point = 120;
    c.b_const = !corrected;
    check(rng, c, pool.get());
    if (HasFatalFailure()) return;
  }
}

TEST(Q8MatMul, RefusesWhatItCannotRun) {
  const int8_t b[4] = {};
  const int32_t zb[] = {0};
  EXPECT_THROW(Q8MatMul(0, 4, Q8::u8, 0, Q8::s8, b, zb, nullptr, Q8::u8, 1, Isa::scalar), Unsupported);
  EXPECT_THROW(Q8MatMul(1, 4, Q8::u8, 300, Q8::s8, b, zb, nullptr, Q8::u8, 1, Isa::scalar), std::invalid_argument);
  const int32_t zb_bad[] = {200};
  EXPECT_THROW(Q8MatMul(1, 4, Q8::u8, 0, Q8::s8, b, zb_bad, nullptr, Q8::u8, 1, Isa::scalar), std::invalid_argument);
}

}  // namespace
}  // namespace octet::kernels
