// The GEMM tile choice (choose_f32_gemm_kernel, choose_q8_gemm_kernel) with its memory side
// (kernels/gemm/choose_tile.h): properties of the cost on given cache sizes, never timings.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <tuple>

#include "kernels/cache_budgets.h"
#include "kernels/gemm/choose_tile.h"
#include "kernels/gemm/f32_gemm.h"
#include "kernels/gemm/q8_pack.h"
#include "kernels/isa.h"
#include "tests/util/skip_reasons.h"

namespace {

using octet::kernels::CacheSizes;
using octet::kernels::Isa;
using octet::kernels::Q8;
using octet::kernels::reread_cycles;
using octet::kernels::tile_traffic_cycles;
using octet::kernels::TileTraffic;

constexpr size_t KiB = 1024, MiB = 1024 * KiB;
// A Zen 4 core's caches (32 KiB L1D, 1 MiB L2, 4 MiB of L3 per core); the tests pass them in, so
// they decide the same on every machine.
const CacheSizes kZen4{32 * KiB, 1 * MiB, 4 * MiB, true};

TEST(TileTraffic, ReReadsCostWhatTheirLevelCharges) {
  EXPECT_EQ(reread_cycles(1e6, 16 * KiB, kZen4), 0.0);  // within half the L1D
  const double l2 = reread_cycles(1e6, 512 * KiB, kZen4);
  const double l3 = reread_cycles(1e6, 2 * MiB, kZen4);
  const double memory = reread_cycles(1e6, 64 * MiB, kZen4);
  EXPECT_GT(l2, 0.0);
  EXPECT_LT(l2, l3);
  EXPECT_LT(l3, memory);
  EXPECT_DOUBLE_EQ(memory, 1e6 / octet::kernels::kMemoryBytesPerCycle);
}

// 1 MiB of packed weights over 64 rows in two chunks of 512 KiB (each stays in L2): a tile of 8
// rows reads them 8 times, one of 4 rows 16 times.
TEST(TileTraffic, WeightsComeBackOncePerGroupOfRows) {
  // 512 floats of k per column.
  TileTraffic t{.m = 64, .n = 512, .mr = 4, .nr = 16, .block_bytes = 2 * KiB * 16, .row_bytes = 128,
                .chunk_bytes = 512 * KiB};
  const double four_rows = tile_traffic_cycles(t, kZen4).total();
  t.mr = 8;
  const double eight_rows = tile_traffic_cycles(t, kZen4).total();
  // The 32 KiB blocks evict each group's rows: 64 rows of 128 bytes come back for 30 of the 32
  // blocks (the first block of each of the two chunks finds them), whatever the tile.
  const double activations = 64.0 * 128 * 30;
  EXPECT_NEAR(four_rows, (15.0 * MiB + activations) / octet::kernels::kL2BytesPerCycle, 1e-6);
  EXPECT_NEAR(eight_rows, (7.0 * MiB + activations) / octet::kernels::kL2BytesPerCycle, 1e-6);
  t.m = 0;  // rows not known yet: no traffic term
  EXPECT_EQ(tile_traffic_cycles(t, kZen4).total(), 0.0);
}

TEST(TileTraffic, WeightsThatStayInTheL1DAreFree) {
  const TileTraffic t{.m = 1000, .n = 32, .mr = 4, .nr = 16, .block_bytes = 2 * KiB, .row_bytes = 64,
                      .chunk_bytes = 1 * MiB};
  EXPECT_EQ(tile_traffic_cycles(t, kZen4).total(), 0.0);
}

// A group's activations come back once per block of columns only when the block streaming past
// them evicts them from the L1D.
TEST(TileTraffic, ActivationsComeBackPerBlockWhenTheBlockEvictsThem) {
  TileTraffic t{.m = 6, .n = 64, .mr = 6, .nr = 16, .block_bytes = 1 * KiB, .row_bytes = 256, .chunk_bytes = 1 * MiB};
  EXPECT_EQ(tile_traffic_cycles(t, kZen4).total(), 0.0);
  t.block_bytes = 32 * KiB;
  t.row_bytes = 2 * KiB;
  EXPECT_NEAR(tile_traffic_cycles(t, kZen4).total(), 3.0 * 6 * 2 * KiB / octet::kernels::kL2BytesPerCycle, 1e-9);
}

// The INT8 chooser overlaps the weight re-reads with the tile's instructions: they cost
// only what exceeds the compute; the activation re-reads still add.
TEST(TileTraffic, WeightReReadsOverlapTheCompute) {
  using octet::kernels::overlapped_tile_cycles;
  // The 1 MiB of weights of WeightsComeBackOncePerGroupOfRows, re-read from the L2 by 4-row
  // tiles, their activations evicted per block.
  const TileTraffic t{.m = 64, .n = 512, .mr = 4, .nr = 16, .block_bytes = 2 * KiB * 16, .row_bytes = 128,
                      .chunk_bytes = 512 * KiB};
  const auto traffic = tile_traffic_cycles(t, kZen4);
  ASSERT_GT(traffic.weights, 0.0);
  ASSERT_GT(traffic.activations, 0.0);
  EXPECT_DOUBLE_EQ(overlapped_tile_cycles(2.0 * traffic.weights, t, kZen4), 2.0 * traffic.weights + traffic.activations);
  EXPECT_DOUBLE_EQ(overlapped_tile_cycles(0.5 * traffic.weights, t, kZen4), traffic.weights + traffic.activations);
}

#if OCTET_ARCH_X86
// The tiles below are x86's; the prefix makes tools/ci_tally.py list a CPU without AVX2 as a level
// this machine does not test.
bool runs(Isa isa) { return octet::kernels::isa_supported(isa); }
const std::string kNoAvx2 = std::string(octet::testing::kIsaNotOnCpu) + "avx2: the AVX2 tiles are chosen among";
// The FP32 tile chosen at AVX2 for m rows (0: not known), n columns and a reduction of k.
std::string pick(int64_t m, int64_t n, int64_t k) {
  return octet::kernels::choose_f32_gemm_kernel(Isa::avx2, m, n, k, kZen4).gemm_name;
}

// FP32 1x1 conv at 8x8 (ResNeXt's 512 -> 512): 64 rows fit 6- and 4-row tiles alike, and 1 MiB of
// weights (in L2 chunks) come back 10 times for 6x16 against 15 for 4x24.
TEST(F32TileChoice, SixtyFourRowsWithAMegabyteOfWeightsTakeTheTileThatReadsThemFewerTimes) {
  if (!runs(Isa::avx2)) GTEST_SKIP() << kNoAvx2;
  EXPECT_EQ(std::string(octet::kernels::choose_f32_gemm_kernel(Isa::avx2, 64, 512, 512, kZen4).gemm_name),
            "f32_gemm_6x16__avx2");
}

// Shapes where padding decides keep the pick of the padded-work rule: 16 rows (6x16 pads 2 of
// 18), 24 columns (6x16 pads 8 of 32), 64 columns over many rows (4x24 pads 8 of 72).
TEST(F32TileChoice, PaddingStillDecidesWhereItDiffers) {
  if (!runs(Isa::avx2)) GTEST_SKIP() << kNoAvx2;
  EXPECT_EQ(pick(16, 1024, 512), "f32_gemm_4x24__avx2");
  EXPECT_EQ(pick(784, 24, 72), "f32_gemm_4x24__avx2");
  EXPECT_EQ(pick(1024, 64, 576), "f32_gemm_6x16__avx2");
  EXPECT_EQ(pick(0, 72, 512), "f32_gemm_4x24__avx2");  // rows not known: the columns alone (80 vs 72)
}

// The one-vector 8x8 tile serves the groups of 4 and 8 channels that 6x16 pads to 16 (RegNetY's
// 3x3 groups of 8 at 28x28, ResNeXt's groups of 4 at 56x56), and nothing wider: 12, 16, 24, 40
// columns or a 1x1 conv over 1024 channels keep the two-vector tiles.
TEST(F32TileChoice, NarrowGroupsTakeTheOneVectorTileAndNothingElseDoes) {
  if (!runs(Isa::avx2)) GTEST_SKIP() << kNoAvx2;
  EXPECT_EQ(pick(784, 8, 72), "f32_gemm_8x8__avx2");
  EXPECT_EQ(pick(3136, 4, 36), "f32_gemm_8x8__avx2");
  EXPECT_EQ(pick(49, 8, 72), "f32_gemm_8x8__avx2");
  for (const int64_t n : {12, 16, 24, 40, 104})
    EXPECT_NE(pick(784, n, 72), "f32_gemm_8x8__avx2") << n << " columns";
  EXPECT_NE(pick(196, 256, 1024), "f32_gemm_8x8__avx2");
  EXPECT_NE(pick(0, 1000, 1280), "f32_gemm_8x8__avx2");
}

// INT8 1x1 conv at 14x14 (MnasNet's 240 -> 40): 196 rows, 40 columns. 6x16 pads 8 of 48 columns
// and reads its 23 KiB of int16 weights (past half the L1D) 33 times; 12x8 pads none and reads
// 19 KiB 17 times.
TEST(Q8TileChoice, FewColumnsWithWeightsPastHalfTheL1DTakeTheTallTile) {
  if (!runs(Isa::avx2)) GTEST_SKIP() << kNoAvx2;
  const auto* k = octet::kernels::choose_q8_gemm_kernel(Isa::avx2, Q8::u8, 196, 40, 240, kZen4);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(std::string(k->name), "qu8s8_igemm_12x8c2__avx2_madd16");
}

// Where the weights stay in the L1D the memory side is silent and the compute estimate decides
// as before: 6x16 at 64 columns.
TEST(Q8TileChoice, WeightsInTheL1DLeaveTheComputeEstimateAlone) {
  if (!runs(Isa::avx2)) GTEST_SKIP() << kNoAvx2;
  const auto* k = octet::kernels::choose_q8_gemm_kernel(Isa::avx2, Q8::u8, 1600, 64, 64, kZen4);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(std::string(k->name), "qu8s8_igemm_6x16c2__avx2_madd16");
}

// The AMX tile takes a layer whose taps fill its 64-byte steps (ResNet-50's 3x3 256 -> 256 at
// 14x14: 36 steps of 4 tdpbusd per 16 x 64 outputs) and leaves one whose taps are a few bytes
// each to the vector tiles (a 3-channel 3x3 conv per tap: 9 steps of 3 bytes), though both have
// the same m, n and about the same k.
TEST(Q8TileChoice, TheTileUnitTakesLongTapsAndLeavesShortOnes) {
  if (!runs(Isa::avx512amx)) {
    GTEST_SKIP() << octet::testing::kIsaNotOnCpu << "avx512amx: the AMX tile is chosen among";
  }
  auto pick_q8 = [](size_t m, size_t n, size_t k, size_t tap_k) {
    const auto* k8 = octet::kernels::choose_q8_gemm_kernel(Isa::avx512amx, Q8::u8, m, n, k,
                                                          octet::kernels::cache_sizes(), tap_k);
    return k8 == nullptr ? std::string() : std::string(k8->name);
  };
  EXPECT_EQ(pick_q8(196, 256, 2304, 256), "qu8s8_igemm_16x64c4__avx512amx");
  EXPECT_EQ(pick_q8(3136, 64, 64, 64), "qu8s8_igemm_16x64c4__avx512amx");
  EXPECT_NE(pick_q8(4096, 16, 27, 3), "qu8s8_igemm_16x64c4__avx512amx");
  // Under the vector level's cap the tile unit is never chosen.
  const auto* vnni = octet::kernels::choose_q8_gemm_kernel(Isa::avx512vnni, Q8::u8, 196, 256, 2304);
  ASSERT_NE(vnni, nullptr);
  EXPECT_EQ(vnni->isa, Isa::avx512vnni);
}

// A level with a dot-product row (VNNI, SDOT, SMMLA, AMX) never takes a row that widens to
// int16, not even where the widening row pads fewer columns: MnasNet's 1x1 8->24 and 16->8 at
// 112x112, whose 24 and 8 columns 12x8c2 fits exactly. At AVX2 (and NEON) the widening rows are
// all there is and stay chosen.
TEST(Q8TileChoice, DotProductLevelsLeaveTheWideningRows) {
  const struct {
    size_t m, n, k;
  } shapes[] = {{12544, 24, 8}, {12544, 8, 16}, {196, 40, 240}, {3136, 64, 576}};
  int checked = 0;
  for (Isa isa : octet::kernels::runnable_isas()) {
    if (isa == Isa::scalar) continue;
    bool has_dot = false;
    for (const auto& e : octet::kernels::kQ8GemmKernels)
      has_dot |= e.isa != Isa::scalar && e.w_bytes == 1 && octet::kernels::isa_runs(e.isa, isa);
    for (const auto& s : shapes) {
      const auto* k = octet::kernels::choose_q8_gemm_kernel(isa, Q8::u8, s.m, s.n, s.k, kZen4);
      ASSERT_NE(k, nullptr);
      EXPECT_EQ(k->w_bytes, has_dot ? 1 : 2) << octet::kernels::isa_name(isa) << " " << s.n << " columns: " << k->name;
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

// At large k the VNNI tiles are compute-bound and the broadcasts of A decide: the one-vector
// 12x16c4 splats one activation group per vpdpbusd, 6x32c4 and 4x64c4 one per two or four. On
// a Zen 4 12x16c4 ran AlexNet-mini's 3x3 192->384 at 7x7 x 16 images 1.23x slower than the
// wide tiles (on an Intel Xeon the shuffle port makes it slower still); 12 rows' fewer passes
// over the weights do not make up for it.
TEST(Q8TileChoice, LargeKLayersTakeAWideVnniTile) {
  if (!runs(Isa::avx512vnni)) {
    GTEST_SKIP() << octet::testing::kIsaNotOnCpu << "avx512vnni: the zmm VNNI tiles are chosen among";
  }
  const auto* k = octet::kernels::choose_q8_gemm_kernel(Isa::avx512vnni, Q8::u8, 784, 384, 1728,
                                                       octet::kernels::cache_sizes(), 192);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->isa, Isa::avx512vnni) << k->name;
  EXPECT_GT(k->nr, 16) << k->name;
}

// At large m the fewest passes over the weights do not win once their re-reads from the L2
// overlap the multiply-adds: AlexNet-mini's 3x3 64->128 stride 2 at 32x32 over 16 images
// (4096 rows, k = 576) ran 1795 µs on 12x16c4 and 1555 on 4x64c4 on a Zen 4
// (bench/dispatch_results_zen4.md); full-rate zmm cores take a wide tile for its broadcasts.
TEST(Q8TileChoice, ManyRowLayersTakeAWideVnniTile) {
  if (!runs(Isa::avx512vnni)) {
    GTEST_SKIP() << octet::testing::kIsaNotOnCpu << "avx512vnni: the zmm VNNI tiles are chosen among";
  }
  const auto* k = octet::kernels::choose_q8_gemm_kernel(Isa::avx512vnni, Q8::u8, 4096, 128, 576);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->isa, Isa::avx512vnni) << k->name;
  EXPECT_GT(k->nr, 16) << k->name;
}

// At small k the per-tile epilogue decides, and on x86 a zmm tile's costs about what a ymm
// tile's does while covering twice the columns: MnasNet's 1x1 8->24 at 112x112 (k = 8) ran 62 µs
// on 6x32c4 and 76 on the ymm 4x32c4 on a Zen 4, which the estimate had taken, counting the zmm
// epilogue twice where zmm runs at half rate.
TEST(Q8TileChoice, SmallKLayersTakeAZmmVnniTile) {
  if (!runs(Isa::avx512vnni)) {
    GTEST_SKIP() << octet::testing::kIsaNotOnCpu << "avx512vnni: the zmm VNNI tiles are chosen among";
  }
  const auto* k = octet::kernels::choose_q8_gemm_kernel(Isa::avx512vnni, Q8::u8, 12544, 24, 8);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->isa, Isa::avx512vnni) << k->name;
}

// Rows count too: a 7x7 map's 49 rows fill seven 7-row tiles, where 8-row ones compute 56
// (the cost the chooser weighs, the same rate for both on any CPU); with rows every tile
// fills, the two cost the same and the 8-row sibling, first in the list, wins the tie.
TEST(F32TileChoice, SevenRowTilesCostLessWhereEightRowsPad) {
  auto tile = [](const char* name) -> const octet::kernels::F32GemmKernel& {
    for (const auto& k : octet::kernels::f32_gemm_kernels())
      if (std::string(k.gemm_name) == name) return k;
    throw std::runtime_error(std::string("no tile ") + name);
  };
  using octet::kernels::f32_gemm_compute_cycles;
  for (auto [seven, eight, n] : {std::tuple{"f32_gemm_7x48__avx512", "f32_gemm_8x48__avx512", 192},
                                 std::tuple{"f32_gemm_7x32__avx512", "f32_gemm_8x32__avx512", 320}}) {
    const double c7 = f32_gemm_compute_cycles(tile(seven), 49, n, 1152), c8 = f32_gemm_compute_cycles(tile(eight), 49, n, 1152);
    EXPECT_NEAR(c7 / c8, 49.0 / 56.0, 1e-9) << seven;
    EXPECT_DOUBLE_EQ(f32_gemm_compute_cycles(tile(seven), 784, n, 1152), f32_gemm_compute_cycles(tile(eight), 784, n, 1152));
  }
  if (runs(Isa::avx512) && octet::kernels::zmm_at_full_rate()) {
    EXPECT_EQ(std::string(octet::kernels::choose_f32_gemm_kernel(Isa::avx512, 49, 192, 1152, kZen4).gemm_name),
              "f32_gemm_7x48__avx512");
    EXPECT_EQ(std::string(octet::kernels::choose_f32_gemm_kernel(Isa::avx512, 784, 192, 1152, kZen4).gemm_name),
              "f32_gemm_8x48__avx512");
  }
}

#endif  // OCTET_ARCH_X86

}  // namespace
