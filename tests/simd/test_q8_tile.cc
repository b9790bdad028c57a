// Every INT8 IGEMM microkernel of kernels/gemm/q8_gemm_list.h this CPU runs, one tile call at a
// time through the tile tester (q8_tile_tester.h): activations ending at a guard page (a K tail
// read past a_end faults, which the drivers' tests in test_q8_gemm.cc / test_q8_conv.cc cannot
// see), every extreme zero point, padding rows and offsets, saturation, int32 wrap-around, and
// every output byte checked, those the tile must leave alone too. Every output: requantized, the
// float twin and the int32 twin.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "kernels/isa.h"
#include "kernels/gemm/q8_gemm_list.h"
#include "tests/simd/q8_tile_tester.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace {

// The suite's fixture: the list's tiles this CPU runs (the others printed as skipped).
class Q8TileSweep : public ::testing::Test {
 protected:
  void SetUp() override {
    std::set<std::string> ran;
    for (const Q8GemmKernel* k : testing::runnable_entries(kQ8GemmKernels, ran))
      tiles_.push_back(testing::list_tile(*k));
  }
  std::vector<testing::Q8Tile> tiles_;
};

TEST_F(Q8TileSweep, RandomTiles) { testing::sweep_random_tiles(tiles_, 2024); }
TEST_F(Q8TileSweep, ExtremeValuesAndZeroPoints) { testing::sweep_extreme_values(tiles_, 77); }
TEST_F(Q8TileSweep, KTailsAtTheEndOfTheActivations) { testing::sweep_k_tails_at_the_end(tiles_, 5); }
TEST_F(Q8TileSweep, PaddingRowsAndOffsets) { testing::sweep_padding_rows_and_offsets(tiles_, 11); }
TEST_F(Q8TileSweep, OutputSaturatesAtBothEnds) { testing::sweep_output_saturation(tiles_, 3); }
TEST_F(Q8TileSweep, NonFiniteMultipliers) { testing::sweep_non_finite_multipliers(tiles_, 13); }
TEST_F(Q8TileSweep, Int32AccumulatorWrapsAround) { testing::sweep_int32_wraparound(tiles_, 17); }
TEST_F(Q8TileSweep, Int32Output) { testing::sweep_int32_output(tiles_, 29); }

}  // namespace
}  // namespace octet::kernels
