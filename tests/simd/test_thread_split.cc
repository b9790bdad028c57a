// The streaming passes split over a pool (kernels/elementwise/parallel_pieces.h): quantize,
// dequantize, the dynamic range and the INT8 table lookup give on 2 and 3 threads the bytes
// they give on the calling thread alone, for sizes that split into uneven pieces (a short last
// piece, a piece count that is no multiple of the threads) and for sizes too small to split.
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/quantize/lookup.h"
#include "kernels/elementwise/parallel_pieces.h"
#include "kernels/quantize/quantize.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels::thread_split_test {

// One piece, a piece and a sliver, three and a bit (3 threads: uneven), 64+ pieces (the
// range's cap on pieces).
const size_t kSizes[] = {1000, kEltwiseMinPiece + 17, 3 * kEltwiseMinPiece + 1001, 65 * kEltwiseMinPiece + 5};

std::vector<float> random_floats(std::mt19937& rng, size_t n) {
  std::normal_distribution<float> v(0.0f, 3.0f);
  std::vector<float> x(n);
  for (float& f : x) f = v(rng);
  return x;
}

std::vector<testing::Pool> pools() {
  std::vector<testing::Pool> p;
  for (size_t t : {2, 3}) p.emplace_back(pthreadpool_create(t));
  return p;
}

TEST(ThreadSplit, QuantizeAndDequantizeBytesDoNotDependOnThreads) {
  const Q8QuantizeKernel* k = choose_q8_quantize(active_isa());
  if (k == nullptr) GTEST_SKIP() << "no SIMD quantize kernel on this CPU (the ref runs unsplit)";
  std::mt19937 rng(11);
  const auto threads = pools();
  for (size_t n : kSizes) {
    const std::vector<float> x = random_floats(rng, n);
    for (Q8 type : {Q8::u8, Q8::s8}) {
      std::vector<uint8_t> want(n), got(n);
      q8_quantize(*k, type, n, x.data(), 0.03f, type == Q8::u8 ? 128 : -3, want.data(), nullptr);
      std::vector<float> want_f(n), got_f(n);
      q8_dequantize(*k, n, want.data(), type == Q8::s8, 0.03f, type == Q8::u8 ? 128 : -3, want_f.data(), nullptr);
      for (const auto& pool : threads) {
        std::fill(got.begin(), got.end(), uint8_t{0x5a});
        q8_quantize(*k, type, n, x.data(), 0.03f, type == Q8::u8 ? 128 : -3, got.data(), pool.get());
        EXPECT_EQ(got, want) << k->name << " n " << n << " threads " << pthreadpool_get_threads_count(pool.get());
        std::fill(got_f.begin(), got_f.end(), -1.0f);
        q8_dequantize(*k, n, want.data(), type == Q8::s8, 0.03f, type == Q8::u8 ? 128 : -3, got_f.data(), pool.get());
        EXPECT_EQ(std::memcmp(got_f.data(), want_f.data(), n * sizeof(float)), 0)
            << k->dequantize_name << " n " << n << " threads " << pthreadpool_get_threads_count(pool.get());
      }
    }
  }
}

TEST(ThreadSplit, RangeOfPiecesIsTheWholeRange) {
  std::mt19937 rng(12);
  const auto threads = pools();
  for (const Q8QuantizeKernel* k : {choose_q8_quantize(active_isa()), static_cast<const Q8QuantizeKernel*>(nullptr)}) {
    for (size_t n : kSizes) {
      for (int special = 0; special < 4; ++special) {
        std::vector<float> x = random_floats(rng, n);
        // The extreme in the last (short) piece; an infinity; a NaN in the last piece.
        if (special == 1) x[n - 1] = 100.0f;
        if (special == 2) x[n / 2] = -std::numeric_limits<float>::infinity();
        if (special == 3) x[n - 2] = std::numeric_limits<float>::quiet_NaN();
        const F32Range want = f32_range__ref(int64_t(n), x.data());
        for (const auto& pool : threads) {
          const F32Range got = f32_range(k, n, x.data(), pool.get());
          const std::string where = std::string(k ? k->name : "ref") + " n " + std::to_string(n) + " case " +
                                    std::to_string(special);
          if (std::isnan(want.min)) {
            EXPECT_TRUE(std::isnan(got.min) && std::isnan(got.max)) << where;
          } else {
            EXPECT_EQ(got.min, want.min) << where;
            EXPECT_EQ(got.max, want.max) << where;
          }
        }
      }
    }
  }
}

TEST(ThreadSplit, LookupBytesDoNotDependOnThreads) {
  const Q8LookupKernel* k = choose_q8_lookup(active_isa());
  if (k == nullptr) GTEST_SKIP() << "no SIMD lookup kernel on this CPU (the ref runs unsplit)";
  std::mt19937 rng(13);
  uint8_t table[256];
  for (auto& t : table) t = uint8_t(rng());
  const auto threads = pools();
  for (size_t n : kSizes) {
    std::vector<uint8_t> x(n), want(n), got(n);
    for (auto& b : x) b = uint8_t(rng());
    q8_lookup(*k, n, x.data(), table, want.data(), nullptr);
    for (size_t i = 0; i < n; i += 997) ASSERT_EQ(want[i], table[x[i]]) << k->name;
    for (const auto& pool : threads) {
      std::fill(got.begin(), got.end(), uint8_t{0});
      q8_lookup(*k, n, x.data(), table, got.data(), pool.get());
      EXPECT_EQ(got, want) << k->name << " n " << n << " threads " << pthreadpool_get_threads_count(pool.get());
    }
  }
}

TEST(ThreadSplit, PiecesCoverEveryElementOnce) {
  const auto threads = pools();
  for (size_t n : kSizes) {
    for (const auto& pool : threads) {
      std::vector<int> hits(n, 0);
      size_t calls = 0;
      std::atomic<size_t> pieces{0};
      parallel_elements(pool.get(), n, [&](size_t start, size_t count) {
        pieces.fetch_add(1);
        for (size_t i = start; i < start + count; ++i) ++hits[i];  // each piece its own slice
      });
      calls = pieces.load();
      EXPECT_EQ(std::count(hits.begin(), hits.end(), 1), ptrdiff_t(n)) << "n " << n;
      EXPECT_EQ(calls, (n + kEltwiseMinPiece - 1) / kEltwiseMinPiece) << "n " << n;
    }
  }
}

}  // namespace octet::kernels::thread_split_test
