// The VEX AVX-VNNI INT8 IGEMM microkernels through their emulated copy
// (q8_gemm__avxvnni_emulated.cc: the same source with vpdpbusd done in AVX2), so their tile
// loop, K tails and epilogue are tested on CPUs without AVX-VNNI, by the tile tester
// (q8_tile_tester.h). Where the CPU has AVX-VNNI the real kernels run in test_q8_tile.cc.
#include <gtest/gtest.h>

#include "kernels/arch.h"

#if OCTET_ARCH_X86

#include <cstdint>
#include <iterator>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kernels/gemm/q8_gemm_list.h"
#include "tests/simd/q8_gemm_avxvnni_emulated.h"
#include "tests/simd/q8_tile_tester.h"

namespace octet::kernels {
namespace {

using testing::Q8Tile;

namespace emulated = x86::avxvnni_emulated;

struct EmulatedName {
  const char* name;
  Q8IgemmFn fn, fn_f32, fn_i32;
};

constexpr EmulatedName kEmulated[] = {
    {"qu8s8_igemm_6x16c4__avxvnni", &emulated::qu8s8_igemm_6x16c4, &emulated::qu8s8_igemm_6x16c4_f32,
     &emulated::qu8s8_igemm_6x16c4_i32},
    {"qu8s8_igemm_12x8c4__avxvnni", &emulated::qu8s8_igemm_12x8c4, &emulated::qu8s8_igemm_12x8c4_f32,
     &emulated::qu8s8_igemm_12x8c4_i32},
    {"qs8s8_igemm_6x16c4__avxvnni", &emulated::qs8s8_igemm_6x16c4, &emulated::qs8s8_igemm_6x16c4_f32,
     &emulated::qs8s8_igemm_6x16c4_i32},
    {"qs8s8_igemm_12x8c4__avxvnni", &emulated::qs8s8_igemm_12x8c4, &emulated::qs8s8_igemm_12x8c4_f32,
     &emulated::qs8s8_igemm_12x8c4_i32},
};

// Each avxvnni list entry with its emulated pair of functions in place of the real ones.
std::vector<Q8Tile> emulated_tiles() {
  std::vector<Q8Tile> out;
  for (const EmulatedName& e : kEmulated)
    for (const Q8GemmKernel& k : kQ8GemmKernels)
      if (std::string(k.name) == e.name) out.push_back({&k, e.fn, e.fn_f32, e.fn_i32, "emulated"});
  return out;
}

bool have_avx2() { return isa_supported(Isa::avx2); }
// The prefix makes tools/ci_tally.py list it as a level this machine does not test.
const std::string kNoAvx2 = std::string(testing::kIsaNotOnCpu) + "avx2: the emulated AVX-VNNI kernels need it";

// Every avxvnni entry of the list, each with its emulated twins: a tile added to the list and
// not to this test (or renamed) fails here instead of going untested.
TEST(Q8GemmAvxVnniEmulated, CoversEveryAvxVnniEntryOfTheList) {
  std::set<std::string> listed, emulated_names;
  for (const Q8GemmKernel& k : kQ8GemmKernels)
    if (k.isa == Isa::avxvnni) listed.insert(k.name);
  for (const EmulatedName& e : kEmulated) emulated_names.insert(e.name);
  EXPECT_EQ(listed, emulated_names);
  EXPECT_EQ(emulated_tiles().size(), std::size(kEmulated));
}

// The emulation alone against u8 x s8 dot products of four, added modulo 2^32.
TEST(Q8GemmAvxVnniEmulated, DpbusdEmulationIsExact) {
  if (!have_avx2()) GTEST_SKIP() << kNoAvx2;
  std::mt19937 rng(31);
  auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int iter = 0; iter < 2000; ++iter) {
    int32_t acc[8], out[8];
    uint8_t a[32];
    int8_t w[32];
    const int mode = iter % 4;  // random, extremes, random with acc at the int32 limits, all 255 x -128
    for (int i = 0; i < 32; ++i) {
      a[i] = static_cast<uint8_t>(mode == 3 ? 255 : mode == 1 ? (uniform(0, 1) ? 255 : 0) : uniform(0, 255));
      w[i] = static_cast<int8_t>(mode == 3 ? -128 : mode == 1 ? (uniform(0, 1) ? 127 : -128) : uniform(-128, 127));
    }
    for (int l = 0; l < 8; ++l) {
      acc[l] = mode >= 2
                   ? (uniform(0, 1) ? std::numeric_limits<int32_t>::max() - static_cast<int32_t>(uniform(0, 200000))
                                    : std::numeric_limits<int32_t>::min() + static_cast<int32_t>(uniform(0, 200000)))
                   : static_cast<int32_t>(uniform(-1000000, 1000000));
    }
    testing::dpbusd_emulated(acc, a, w, out);
    for (int l = 0; l < 8; ++l) {
      int64_t sum = acc[l];
      for (int j = 0; j < 4; ++j) sum += static_cast<int64_t>(a[4 * l + j]) * w[4 * l + j];
      ASSERT_EQ(out[l], testing::wrap_to_int32(sum)) << "lane " << l << " of iteration " << iter;
    }
  }
}

TEST(Q8GemmAvxVnniEmulated, RandomTiles) {
  if (!have_avx2()) GTEST_SKIP() << kNoAvx2;
  testing::sweep_random_tiles(emulated_tiles(), 2024);
}

TEST(Q8GemmAvxVnniEmulated, ExtremeValuesAndZeroPoints) {
  if (!have_avx2()) GTEST_SKIP() << kNoAvx2;
  testing::sweep_extreme_values(emulated_tiles(), 77);
}

TEST(Q8GemmAvxVnniEmulated, KTailsAtTheEndOfTheActivations) {
  if (!have_avx2()) GTEST_SKIP() << kNoAvx2;
  testing::sweep_k_tails_at_the_end(emulated_tiles(), 5);
}

TEST(Q8GemmAvxVnniEmulated, PaddingRowsAndOffsets) {
  if (!have_avx2()) GTEST_SKIP() << kNoAvx2;
  testing::sweep_padding_rows_and_offsets(emulated_tiles(), 11);
}

TEST(Q8GemmAvxVnniEmulated, OutputSaturatesAtBothEnds) {
  if (!have_avx2()) GTEST_SKIP() << kNoAvx2;
  testing::sweep_output_saturation(emulated_tiles(), 3);
}

TEST(Q8GemmAvxVnniEmulated, NonFiniteMultipliers) {
  if (!have_avx2()) GTEST_SKIP() << kNoAvx2;
  testing::sweep_non_finite_multipliers(emulated_tiles(), 13);
}

TEST(Q8GemmAvxVnniEmulated, Int32AccumulatorWrapsAround) {
  if (!have_avx2()) GTEST_SKIP() << kNoAvx2;
  testing::sweep_int32_wraparound(emulated_tiles(), 17);
}

TEST(Q8GemmAvxVnniEmulated, Int32Output) {
  if (!have_avx2()) GTEST_SKIP() << kNoAvx2;
  testing::sweep_int32_output(emulated_tiles(), 29);
}

}  // namespace
}  // namespace octet::kernels

#endif  // OCTET_ARCH_X86
