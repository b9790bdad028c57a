// F32Gemm (Gemm / MatMul with a constant B on the FP32 GEMM microkernels) against
// f32_gemm__ref, for every entry of kernels/gemm/f32_gemm_list.h this CPU supports.
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "kernels/gemm/f32_gemm_list.h"
#include "kernels/gemm/f32_gemm.h"
#include "kernels/ref/gemm.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace {

using testing::absolute;
using testing::fill_uniform;
using testing::Pool;

// Runs the ref GEMM and F32Gemm on the same random data; |y - ref| <= 1e-5 * sum|a*b| + 1e-6,
// the bound coming from a second ref run on absolute values.
class F32GemmTester {
 public:
  F32GemmTester& m(int v) { m_ = v; return *this; }
  F32GemmTester& n(int v) { n_ = v; return *this; }
  F32GemmTester& k(int v) { k_ = v; return *this; }
  F32GemmTester& trans_b(bool v) { trans_b_ = v; return *this; }
  F32GemmTester& bias(bool v) { bias_ = v; return *this; }
  F32GemmTester& activation(const Activation& a) { act_ = a; return *this; }
  // A residual [m][n] added after the product, before the activation (Gemm's beta · C).
  F32GemmTester& residual(bool v) { residual_ = v; return *this; }
  F32GemmTester& seed(uint32_t v) { seed_ = v; return *this; }
  F32GemmTester& pool(pthreadpool_t p) { pool_ = p; return *this; }

  std::vector<float> test(const F32GemmKernel& kernel) const {
    std::mt19937 rng(seed_);
    std::vector<float> a(size_t(m_) * k_), b(size_t(k_) * n_), c(n_);
    fill_uniform(rng, a);
    fill_uniform(rng, b);
    fill_uniform(rng, c);
    GemmShape s;
    s.m = m_;
    s.n = n_;
    s.k = k_;
    s.trans_b = trans_b_;
    const float* bias = bias_ ? c.data() : nullptr;
    std::vector<float> expected(size_t(m_) * n_), bound(expected.size()), y(expected.size(), std::nanf(""));
    // With a residual the ref's C is [m][n]: bias + residual (their absolute values for the bound).
    std::vector<float> r, rc, arc;
    if (residual_) {
      r.resize(expected.size());
      fill_uniform(rng, r);
      for (size_t i = 0; i < r.size(); ++i) {
        rc.push_back(r[i] + (bias ? c[i % size_t(n_)] : 0.0f));
        arc.push_back(std::fabs(r[i]) + (bias ? std::fabs(c[i % size_t(n_)]) : 0.0f));
      }
    }
    const std::vector<float> aa = absolute(a), ab = absolute(b), ac = absolute(c);
    if (residual_) {
      f32_gemm__ref(s, 1.0f, a.data(), b.data(), 1.0f, rc.data(), n_, 1, act_, expected.data());
      f32_gemm__ref(s, 1.0f, aa.data(), ab.data(), 1.0f, arc.data(), n_, 1, Activation{}, bound.data());
    } else {
      f32_gemm__ref(s, 1.0f, a.data(), b.data(), 1.0f, bias, 0, 1, act_, expected.data());
      f32_gemm__ref(s, 1.0f, aa.data(), ab.data(), 1.0f, bias ? ac.data() : nullptr, 0, 1, Activation{},
                    bound.data());
    }

    F32Gemm gemm(k_, n_, b.data(), trans_b_, bias, act_, kernel);
    gemm.run(m_, a.data(), y.data(), pool_, residual_ ? r.data() : nullptr);
    for (size_t i = 0; i < y.size(); ++i) {
      const float tol = 1e-5f * bound[i] + 1e-6f;
      if (!(std::fabs(y[i] - expected[i]) <= tol)) {
        ADD_FAILURE() << gemm.kernel_name() << " m" << m_ << " n" << n_ << " k" << k_
                      << (trans_b_ ? " trans_b" : "") << ": y[" << i / n_ << "][" << i % n_ << "] is " << y[i]
                      << ", expected " << expected[i] << " +- " << tol;
        break;
      }
    }
    return y;
  }

 private:
  int m_ = 1, n_ = 1, k_ = 1;
  bool trans_b_ = false, bias_ = true, residual_ = false;
  Activation act_;
  uint32_t seed_ = 1;
  pthreadpool_t pool_ = nullptr;
};

std::vector<const F32GemmKernel*> supported_kernels() {
  return testing::runnable_entries(f32_gemm_kernels(), [](const F32GemmKernel& k) { return k.gemm_name; }, "FP32 GEMM");
}

TEST(F32Gemm, RandomShapesEveryKernel) {
  const auto kernels = supported_kernels();
  if (kernels.empty()) return;  // skipped (testing::skip_when_none_run)
  std::mt19937 rng(7);
  const Activation acts[] = {Activation{}, Activation::relu(), Activation::clip(-0.25f, 0.5f),
                             Activation::sigmoid(), Activation::hard_sigmoid(0.2f, 0.5f)};
  for (int i = 0; i < 400; ++i) {
    F32GemmTester t;
    t.m(1 + rng() % 40)
        .n(1 + rng() % 70)
        .k(1 + rng() % 90)
        .trans_b(rng() % 2)
        .bias(rng() % 4 != 0)
        .activation(acts[rng() % 5])
        .seed(i);
    for (const F32GemmKernel* k : kernels) t.test(*k);
    if (HasFailure()) break;
  }
}

// Gemm's C of shape [M, N]: added to each tile after the product, then Relu / Clip (no longer
// the microkernel's clamp) and the other activations.
TEST(F32Gemm, ResidualIsAddedBeforeTheActivation) {
  const auto kernels = supported_kernels();
  if (kernels.empty()) return;  // skipped (testing::skip_when_none_run)
  std::mt19937 rng(9);
  Pool pool(pthreadpool_create(2));
  const Activation acts[] = {Activation{}, Activation::relu(), Activation::clip(-0.25f, 0.5f), Activation::sigmoid()};
  for (int i = 0; i < 200; ++i) {
    F32GemmTester t;
    t.m(1 + rng() % 30)
        .n(1 + rng() % 50)
        .k(1 + rng() % 70)
        .trans_b(rng() % 2)
        .bias(rng() % 2)
        .residual(true)
        .activation(acts[rng() % 4])
        .pool(i % 2 ? pool.get() : nullptr)
        .seed(1000 + i);
    for (const F32GemmKernel* k : kernels) t.test(*k);
    if (HasFailure()) break;
  }
}

TEST(F32Gemm, EveryRowAndColumnCountAroundTheTile) {
  for (const F32GemmKernel* k : supported_kernels())
    for (int m = 1; m <= 2 * k->mr + 1; ++m)
      for (int n = 1; n <= 2 * k->nr + 1; n += (n < k->nr - 1 || n > k->nr + 1) ? 3 : 1)
        F32GemmTester().m(m).n(n).k(17).seed(m * 100 + n).test(*k);
}

TEST(F32Gemm, FullyConnectedLayersAndALargeOne) {
  for (const F32GemmKernel* k : supported_kernels()) {
    F32GemmTester().m(1).k(64).n(10).trans_b(true).test(*k);
    F32GemmTester().m(3).k(128).n(32).activation(Activation::relu()).test(*k);
    F32GemmTester().m(37).k(576).n(64).test(*k);
    // Packed B over the chunk budget: columns are walked in chunks over all rows.
    const size_t depth = testing::f32_depth_over_chunk_budget(300, 1);
    const size_t chunk = f32_gemm_column_chunk(*k, depth, 1, 300);
    ASSERT_LT(chunk, 300u);
    EXPECT_EQ(chunk % k->nr, 0u);
    F32GemmTester().m(2 * k->mr + 3).k(int(depth)).n(300).activation(Activation::relu()).test(*k);
  }
}

// One row runs groups of f32_gemv_blocks(NR) column blocks side by side (one weight stream
// each), then the tile loop for the rest: within the
// ref's bound, and bit-identical to that row computed as part of a two-row tile, for every
// column count around the groups, in column chunks (packed B over the budget) and split
// across two threads.
TEST(F32Gemm, OneRowWalksBlockGroupsWithTheSameBits) {
  Pool pool(pthreadpool_create(2));
  ASSERT_NE(pool, nullptr);
  for (const F32GemmKernel* k : supported_kernels()) {
    const int group = int(kF32GemvBlocks) * k->nr;
    std::vector<int> columns;
    for (int n = 1; n <= 2 * group + k->nr + 2; ++n)
      if (n % k->nr <= 1 || n % k->nr == k->nr - 1 || n % group == 0) columns.push_back(n);
    for (int n : columns) {
      for (int kk : {1, 7, 300}) {
        F32GemmTester one;
        one.m(1).n(n).k(kk).trans_b(n % 2).activation(Activation::clip(-2.0f, 2.5f)).seed(uint32_t(n * 31 + kk));
        const std::vector<float> y = one.test(*k);
        // Two rows, the second a copy of the first: the tile loop, not the GEMV.
        std::mt19937 rng(uint32_t(n * 31 + kk));
        std::vector<float> a(kk), b(size_t(kk) * n), c(n);  // what the tester drew, in its order
        fill_uniform(rng, a);
        fill_uniform(rng, b);
        fill_uniform(rng, c);
        std::vector<float> rows = a;
        rows.insert(rows.end(), a.begin(), a.end());
        F32Gemm gemm(kk, n, b.data(), n % 2, c.data(), Activation::clip(-2.0f, 2.5f), *k);
        std::vector<float> two(size_t(2) * n);
        gemm.run(2, rows.data(), two.data(), nullptr);
        ASSERT_EQ(std::vector<float>(two.begin(), two.begin() + n), y) << k->gemm_name << " n" << n << " k" << kk;
        ASSERT_EQ(std::vector<float>(two.begin() + n, two.end()), y) << k->gemm_name << " n" << n << " k" << kk;
      }
    }
    F32GemmTester big;
    const size_t depth = testing::f32_depth_over_chunk_budget(300, 1);
    big.m(1).k(int(depth)).n(300).activation(Activation::relu()).seed(5);
    ASSERT_LT(f32_gemm_column_chunk(*k, depth, 1, 300), 300u);
    EXPECT_EQ(big.test(*k), big.pool(pool.get()).test(*k)) << k->gemm_name;
  }
}

// The streaming forms (weights beyond the L2: they prefetch ahead) give the plain forms' bits,
// GEMM and IGEMM (padding taps, an image offset), for every row and column count around the
// tile and reductions shorter and longer than the prefetch distance; and the drivers take them
// exactly for weights over half the L2.
TEST(F32Gemm, StreamingFormsGiveThePlainFormsBits) {
  std::mt19937 rng(21);
  // What the streaming forms prefetch besides their own weights (F32StreamAhead): nothing, a
  // span of unrelated memory, or one reaching past any allocation (a prefetch never faults).
  const std::vector<float> elsewhere(1 << 16, 1.0f);
  const F32StreamAhead spans[] = {
      {},
      {reinterpret_cast<const char*>(elsewhere.data()), elsewhere.size() * sizeof(float)},
      {reinterpret_cast<const char*>(elsewhere.data()) + elsewhere.size() * sizeof(float), 1 << 20}};
  for (const F32GemmKernel* k : supported_kernels()) {
    ASSERT_NE(k->gemm_stream, nullptr);
    ASSERT_NE(k->igemm_stream, nullptr);
    for (int i = 0; i < 60; ++i) {
      f32_stream_ahead() = spans[i % 3];
      const size_t mr = 1 + rng() % size_t(k->mr), nc = 1 + rng() % size_t(3 * k->nr);
      const size_t kc = 1 + rng() % (i % 3 == 0 ? 1200 : 40), ks = 1 + rng() % 4;
      std::vector<float> a(size_t(k->mr) * kc * 2), w(ks * kc * nc), bias(nc);
      fill_uniform(rng, a);
      fill_uniform(rng, w);
      fill_uniform(rng, bias);
      const F32PackedWeights packed(int64_t(nc), int64_t(ks), int64_t(kc), k->nr, bias.data(),
                                    [&](int64_t o, int64_t tap, int64_t kk) { return w[(size_t(tap) * kc + kk) * nc + o]; });
      const F32MinMax clamp{-1.5f, 2.0f};
      std::vector<float> plain(size_t(k->mr) * nc, 7.0f), streamed(plain);
      k->gemm(mr, nc, kc, a.data(), kc, packed.data(), plain.data(), nc, clamp);
      k->gemm_stream(mr, nc, kc, a.data(), kc, packed.data(), streamed.data(), nc, clamp);
      ASSERT_EQ(plain, streamed) << k->gemm_name << " mr" << mr << " nc" << nc << " kc" << kc;
      // IGEMM: tap p of row r reads pixel (r + p) % mr of image 1 (a_offset kc * mr floats in),
      // every third pointer the zero row.
      const std::vector<float> zero(kc, 0.0f);
      std::vector<const float*> ind(ks * size_t(k->mr));
      for (size_t p = 0; p < ks; ++p)
        for (size_t r = 0; r < size_t(k->mr); ++r)
          ind[p * k->mr + r] = (p * 7 + r) % 3 == 0 ? zero.data() : a.data() + ((r + p) % mr) * kc;
      std::fill(plain.begin(), plain.end(), 7.0f);
      std::fill(streamed.begin(), streamed.end(), 7.0f);
      k->igemm(mr, nc, kc, ks, ind.data(), kc * k->mr, zero.data(), packed.data(), plain.data(), nc, clamp);
      k->igemm_stream(mr, nc, kc, ks, ind.data(), kc * k->mr, zero.data(), packed.data(), streamed.data(), nc, clamp);
      ASSERT_EQ(plain, streamed) << k->igemm_name << " mr" << mr << " nc" << nc << " kc" << kc << " ks" << ks;
    }
  }
  f32_stream_ahead() = {};
  const CacheBudgets b = cache_budgets(CacheSizes{48 << 10, 2 << 20, 4 << 20, true});
  EXPECT_FALSE(f32_weights_stream(1 << 20, b));
  EXPECT_TRUE(f32_weights_stream((1 << 20) + 4, b));
}

TEST(F32Gemm, TilesOverAChunkShareTheNextChunkInWholeLines) {
  // 5 chunks of 96 columns (nr 32: 3 blocks each), the last one 64 wide.
  const size_t nr = 32, block_stride = 1000, n = 448, chunk = 96;
  std::vector<float> w(14 * block_stride);
  EXPECT_EQ(f32_next_chunk(w.data(), block_stride, nr, n, chunk, 0),
            std::make_pair(static_cast<const float*>(w.data() + 3 * block_stride), 3 * block_stride * sizeof(float)));
  EXPECT_EQ(f32_next_chunk(w.data(), block_stride, nr, n, chunk, 3),
            std::make_pair(static_cast<const float*>(w.data() + 12 * block_stride), 2 * block_stride * sizeof(float)));
  EXPECT_EQ(f32_next_chunk(w.data(), block_stride, nr, n, chunk, 4).first, nullptr);  // the last chunk: none
  // Seven tiles over a chunk split the next one's bytes in whole lines, in order, none twice.
  const size_t bytes = 3 * block_stride * sizeof(float), tiles = 7;
  const char* expected = reinterpret_cast<const char*>(w.data());
  for (size_t tile = 0; tile < tiles; ++tile) {
    {
      const ScopedStreamAhead ahead(w.data(), bytes, tile, tiles);
      EXPECT_EQ(f32_stream_ahead().begin, expected) << tile;
      EXPECT_EQ(f32_stream_ahead().bytes % 64, 0u) << tile;
      expected += f32_stream_ahead().bytes;
    }
    EXPECT_EQ(f32_stream_ahead().begin, nullptr) << "cleared when the tile is done";
  }
  EXPECT_EQ(size_t(expected - reinterpret_cast<const char*>(w.data())), bytes / 64 * 64);
  const ScopedStreamAhead none(nullptr, 0, 0, tiles);
  EXPECT_EQ(f32_stream_ahead().bytes, 0u);
}

TEST(F32Gemm, ChunksAreEvenAndUnderTheBudget) {
  // A 1 MiB L2 (Zen 4, Zen 5): budgets of 2 MiB, and 512 KiB with fewer rows than columns. An
  // 8x32 tile of one ymm level reads 8 bytes of weights a cycle, which AMD's L3 keeps up with.
  const octet::kernels::F32GemmKernel tile{"t", "t", octet::kernels::Isa::avx2, 0, 8, 32, nullptr, nullptr, nullptr, nullptr};
  const octet::kernels::CacheSizes zen{48 << 10, 1 << 20, 4 << 20, true};
  EXPECT_EQ(f32_gemm_column_chunk(tile, 512, 1, 512, SIZE_MAX, zen), 512u);  // 1 MiB of weights: one piece
  // 8 MiB of weights (k 1024, n 2048): five chunks of 416 columns (the last one 384), not
  // four of 480 and a sliver of 128.
  EXPECT_EQ(f32_gemm_column_chunk(tile, 1024, 1, 2048, SIZE_MAX, zen), 416u);
  const octet::kernels::F32GemmKernel narrow{"t", "t", octet::kernels::Isa::avx2, 0, 8, 16, nullptr, nullptr, nullptr, nullptr};
  EXPECT_EQ(f32_gemm_column_chunk(narrow, 1 << 20, 1, 100, SIZE_MAX, zen), 16u);  // at least one nr block
  // Fewer rows than columns: the same 1 MiB over 49 rows (a 7x7 map) runs in three chunks of
  // 192 columns (the last one 128); over 2048 rows, in one piece.
  EXPECT_EQ(f32_gemm_column_chunk(tile, 512, 1, 512, 49, zen), 192u);
  EXPECT_EQ(f32_gemm_column_chunk(tile, 512, 1, 512, 2048, zen), 512u);
  // A 512 KiB L2 (Zen 1, or a hidden one): a 1 MiB budget, which the 1 MiB of weights plus
  // their bias row just exceed: two chunks of 256.
  const octet::kernels::CacheSizes small = octet::kernels::assumed_cache_sizes();
  EXPECT_EQ(f32_gemm_column_chunk(tile, 512, 1, 512, SIZE_MAX, small), 256u);
  EXPECT_EQ(f32_gemm_column_chunk(tile, 1024, 1, 2048, SIZE_MAX, small), 224u);
}

// A tile that reads its weights faster than the L3 delivers them keeps its chunk in half the
// L2 over any number of rows: the 1 MiB that runs in one piece above runs in chunks.
TEST(F32Gemm, ChunksStayInTheL2WhenTheTileOutrunsTheL3) {
  const octet::kernels::F32GemmKernel tile{"t", "t", octet::kernels::Isa::avx2, 0, 8, 32, nullptr, nullptr, nullptr, nullptr};
  const double demand = octet::kernels::f32_tile_weight_bytes_per_cycle(tile);
  EXPECT_EQ(demand, OCTET_ARCH_X86 ? 8.0 : 4.0);  // 4 bytes x 16 (x86) or 8 (Arm) FMA lanes / 8 rows
  octet::kernels::CacheSizes sizes{48 << 10, 1 << 20, 4 << 20, true};
  sizes.l3_bytes_per_cycle = demand;
  EXPECT_EQ(f32_gemm_column_chunk(tile, 512, 1, 512, 2048, sizes), 512u);
  sizes.l3_bytes_per_cycle = demand / 2;
  const size_t chunk = f32_gemm_column_chunk(tile, 512, 1, 512, 2048, sizes);
  EXPECT_EQ(chunk, 192u);  // 513 x 4 x 32 bytes a block: 7 blocks fit 512 KiB, evened to 6, 6, 4
}

TEST(F32Gemm, LongReductions) {
  Pool pool(pthreadpool_create(2));
  ASSERT_NE(pool, nullptr);
  for (const F32GemmKernel* k : supported_kernels()) {
    for (int kk : {1000, 2049}) {
      F32GemmTester t;
      t.m(2 * k->mr + 5).n(2 * k->nr + 7).k(kk).activation(Activation::clip(-3.0f, 2.0f)).seed(kk);
      EXPECT_EQ(t.test(*k), t.pool(pool.get()).test(*k)) << k->gemm_name << " k" << kk;
    }
  }
}

TEST(F32Gemm, TwoThreadsGiveTheSameOutput) {
  Pool pool(pthreadpool_create(2));
  ASSERT_NE(pool, nullptr);
  for (const F32GemmKernel* k : supported_kernels()) {
    for (int m : {1, 5, 200}) {
      F32GemmTester t;
      t.m(m).n(77).k(33).activation(Activation::relu());
      EXPECT_EQ(t.test(*k), t.pool(pool.get()).test(*k)) << k->gemm_name << " m" << m;
    }
    F32GemmTester chunked;  // B over the chunk budget: column chunks first
    chunked.m(27).n(300).k(2100);
    EXPECT_EQ(chunked.test(*k), chunked.pool(pool.get()).test(*k)) << k->gemm_name << " chunked";
  }
}

TEST(F32Gemm, ChoiceFollowsTheIsaAndTheTileFit) {
  std::vector<float> b(64 * 16, 1.0f);
  EXPECT_THROW(F32Gemm(64, 16, b.data(), false, nullptr, Activation{}, Isa::scalar), std::invalid_argument);
  // The least padded work wins; a tie goes to the larger tile.
  struct Case {
    Isa isa;
    int n;
    const char* expected;
  };
  const Case cases[] = {{Isa::avx2, 16, "f32_gemm_6x16__avx2"},     {Isa::avx2, 24, "f32_gemm_4x24__avx2"},
                        {Isa::avx2, 10, "f32_gemm_6x16__avx2"},     {Isa::avx512, 16, "f32_gemm_12x16__avx512"},
                        {Isa::avx512, 10, "f32_gemm_12x16__avx512"}, {Isa::avx512, 64, "f32_gemm_8x32__avx512"},
                        // 48 columns: 8x48 pads none, without 12x16's broadcast per FMA.
                        {Isa::avx512, 48, "f32_gemm_8x48__avx512"}, {Isa::avx512vnni, 32, "f32_gemm_8x32__avx512"},
                        {Isa::avx512, 96, "f32_gemm_8x48__avx512"},  // both pad none: 8 broadcasts per 24 FMAs, not 16
                        // 24 columns: a 24-wide ymm tile wastes nothing, a 16/32-wide zmm one a
                        // quarter; zmm only pays off where it runs at twice the ymm rate.
                        {Isa::avx512, 24, zmm_at_full_rate() ? "f32_gemm_8x32__avx512" : "f32_gemm_4x24__avx2"}};
  for (const Case& c : cases) {
    if (!isa_supported(c.isa)) continue;
    std::vector<float> w(size_t(c.n) * 8, 1.0f);
    EXPECT_EQ(F32Gemm(8, c.n, w.data(), false, nullptr, Activation{}, c.isa).kernel_name(), c.expected)
        << isa_name(c.isa) << " n=" << c.n;
  }
}

}  // namespace
}  // namespace octet::kernels
