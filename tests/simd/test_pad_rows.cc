// PadRows (Pad in memory order: rows, fills and copies of written blocks) against pad__ref byte
// for byte: every mode, elements of 1, 2, 4 and 8 bytes, ranks 1 to 5, pads -2..3 on each side
// of the innermost and outermost axes (negative pads crop, in every mode as the op accepts
// them), reflect up to dim - 1, edge and reflect of size-1 dims, empty inputs under a constant
// pad, with and without a thread pool. The axes given are memory order: a channels-last map is
// the same call with C last (the op's permutation is tested through a Session in
// tests/engine/test_pad_layouts.cc).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/elementwise/pad.h"
#include "kernels/ref/copy.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace {

constexpr PadMode kModes[] = {PadMode::constant, PadMode::reflect, PadMode::edge};

const char* mode_name(PadMode m) {
  return m == PadMode::constant ? "constant" : m == PadMode::reflect ? "reflect" : "edge";
}

struct Case {
  std::vector<int64_t> dims, begin, end;
  PadMode mode = PadMode::constant;
  size_t elem = 4;
};

std::string describe(const Case& c) {
  std::string s = std::string(mode_name(c.mode)) + " elem " + std::to_string(c.elem) + " dims";
  for (auto d : c.dims) s += " " + std::to_string(d);
  s += " begin";
  for (auto d : c.begin) s += " " + std::to_string(d);
  s += " end";
  for (auto d : c.end) s += " " + std::to_string(d);
  return s;
}

// The pads engine/ops/misc_ops.cc's pad_spec lets through.
bool accepted(const Case& c) {
  for (size_t i = 0; i < c.dims.size(); ++i) {
    const int64_t d = c.dims[i], b = c.begin[i], e = c.end[i];
    if (d + b + e < 0) return false;
    if (c.mode == PadMode::reflect && (b >= d || e >= d) && (b > 0 || e > 0)) return false;
    if (c.mode == PadMode::edge && d == 0 && d + b + e > 0) return false;
  }
  return true;
}

// Runs both on random bytes (NaN and infinity patterns among them for floats) and compares the
// whole output and a guard after it.
void expect_same_as_ref(const Case& c, std::mt19937& rng, pthreadpool_t pool, uint64_t value) {
  SCOPED_TRACE(describe(c));
  const int rank = int(c.dims.size());
  int64_t in_count = 1, out_count = 1;
  for (int i = 0; i < rank; ++i) {
    in_count *= c.dims[size_t(i)];
    out_count *= c.dims[size_t(i)] + c.begin[size_t(i)] + c.end[size_t(i)];
  }
  std::vector<uint8_t> x(size_t(in_count) * c.elem + 1);
  for (auto& b : x) b = uint8_t(rng());
  const size_t guard = 64;
  std::vector<uint8_t> want(size_t(out_count) * c.elem + guard, 0xA5), got = want;
  pad__ref(c.elem, rank, c.dims.data(), c.begin.data(), c.end.data(), c.mode, &value, x.data(), want.data());
  PadRows pad(rank, c.dims.data(), c.begin.data(), c.end.data(), c.mode, c.elem);
  pad.run(x.data(), got.data(), &value, pool);
  ASSERT_EQ(want, got);
}

// Every pad pair -2..3 on both axes of small rank-1 and rank-2 boxes: the innermost axis's rows
// and the outer axis's copies, crops and fills in every combination.
TEST(PadRows, EveryPadPairOnSmallBoxes) {
  std::mt19937 rng(1);
  for (PadMode mode : kModes)
    for (size_t elem : {size_t(1), size_t(4)})
      for (int64_t n = 0; n <= 5; ++n)
        for (int64_t b = -2; b <= 3; ++b)
          for (int64_t e = -2; e <= 3; ++e) {
            Case c{{n}, {b}, {e}, mode, elem};
            if (accepted(c)) expect_same_as_ref(c, rng, nullptr, 0x0807060504030201ull);
            for (int64_t m = 1; m <= 4; ++m)
              for (int64_t b1 = -1; b1 <= 3; ++b1)
                for (int64_t e1 = -1; e1 <= 3; ++e1) {
                  Case c2{{n, m}, {b, b1}, {e, e1}, mode, elem};
                  if (accepted(c2)) expect_same_as_ref(c2, rng, nullptr, 0x0807060504030201ull);
                  if (::testing::Test::HasFatalFailure()) return;
                }
          }
}

// Random boxes of rank 1 to 5 with pads on any axes, every element size, every mode, and values
// whose bytes differ (a typed fill) or repeat (a memset).
TEST(PadRows, RandomBoxesOfEveryRankAndElementSize) {
  std::mt19937 rng(2);
  testing::Pool pool(pthreadpool_create(2));
  int run = 0;
  while (run < 4000) {
    Case c;
    const int rank = 1 + int(rng() % 5);
    c.mode = kModes[rng() % 3];
    c.elem = size_t(1) << (rng() % 4);
    for (int i = 0; i < rank; ++i) {
      c.dims.push_back(int64_t(rng() % 6));
      const bool padded = rng() % 3 != 0;
      c.begin.push_back(padded ? int64_t(rng() % 6) - 2 : 0);
      c.end.push_back(padded ? int64_t(rng() % 6) - 2 : 0);
    }
    if (!accepted(c)) continue;
    ++run;
    const uint64_t value = rng() % 2 ? 0x8877665544332211ull : 0xFFFFFFFFFFFFFFFFull;
    expect_same_as_ref(c, rng, rng() % 2 ? pool.get() : nullptr, value);
    if (HasFatalFailure()) return;
  }
}

// Outputs large enough to split over the pool (blocks walked, filled and copied at more than one
// split axis), in both memory orders of a 4-D and a 5-D map.
TEST(PadRows, LargeMapsSplitOverThePool) {
  std::mt19937 rng(3);
  testing::Pool pool(pthreadpool_create(2));
  const std::vector<Case> cases = {
      // 1x64x32x32 channels-last (N, H, W, C) and row-major, 1 px
      {{1, 32, 32, 64}, {0, 1, 1, 0}, {0, 1, 1, 0}, PadMode::reflect, 4},
      {{1, 64, 32, 32}, {0, 0, 1, 1}, {0, 0, 1, 1}, PadMode::reflect, 4},
      // 1x3x128x128 row-major and channels-last, 3 px
      {{1, 3, 128, 128}, {0, 0, 3, 3}, {0, 0, 3, 3}, PadMode::reflect, 4},
      {{1, 128, 128, 3}, {0, 3, 3, 0}, {0, 3, 3, 0}, PadMode::edge, 8},
      {{2, 40, 40, 16}, {0, 2, 0, 1}, {1, 0, 3, 2}, PadMode::constant, 2},
      {{2, 40, 40, 16}, {1, -2, 3, 0}, {-1, 2, -3, 0}, PadMode::edge, 8},
      // 5-D: N, D, H, W, C and N, C, D, H, W
      {{1, 8, 20, 20, 16}, {0, 2, 1, 1, 0}, {0, 1, 2, 1, 0}, PadMode::reflect, 4},
      {{1, 16, 8, 20, 20}, {0, 1, 2, 1, 1}, {0, 2, 1, 2, 1}, PadMode::constant, 4},
      {{3, 130, 130}, {2, 3, 3}, {0, 3, 3}, PadMode::edge, 4},
      {{3, 130, 130}, {-1, 3, 3}, {0, 3, -2}, PadMode::reflect, 8},
  };
  for (const Case& c : cases) {
    ASSERT_TRUE(accepted(c)) << describe(c);
    PadRows pad(int(c.dims.size()), c.dims.data(), c.begin.data(), c.end.data(), c.mode, c.elem);
    EXPECT_GT(pad.task_count(), 1u) << describe(c);
    expect_same_as_ref(c, rng, pool.get(), 0x0102030405060708ull);
    expect_same_as_ref(c, rng, nullptr, 0);
  }
}

TEST(PadRows, PlansPixelsAsUnitsAndDropsUnpaddedOuterAxes) {
  // channels-last 1x64x128x128, reflect of H and W: rows of 130 pixels of 64 floats
  const int64_t d[] = {1, 128, 128, 64}, b[] = {0, 1, 1, 0}, e[] = {0, 1, 1, 0};
  PadRows pad(4, d, b, e, PadMode::reflect, 4);
  EXPECT_EQ(pad.planned_rank(), 2);
  EXPECT_EQ(pad.unit_bytes(), 64 * 4);
  // nothing padded: one unit, the whole tensor
  const int64_t z[] = {0, 0, 0, 0};
  PadRows copy(4, d, z, z, PadMode::edge, 1);
  EXPECT_EQ(copy.planned_rank(), 1);
  EXPECT_EQ(copy.unit_bytes(), 128 * 128 * 64);
  EXPECT_THROW(PadRows(4, d, b, e, PadMode::constant, 3), std::invalid_argument);
}

}  // namespace
}  // namespace octet::kernels
