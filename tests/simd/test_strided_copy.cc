// StridedCopy (Transpose, Slice, Split, Concat) against the element walk of kernels/ref/copy.h
// on random permutations, boxes and element sizes, with and without a thread pool: every form
// (copy_runs, transpose_tiles, copy_strided__ref) must write exactly what the walk writes and
// nothing outside the box.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kernels/elementwise/strided_copy.h"
#include "kernels/ref/copy.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace {

std::vector<int64_t> dense_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t k = dims.size(); k-- > 1;) s[k - 1] = s[k] * dims[k];
  return s;
}

struct Case {
  std::vector<int64_t> dims, src, dst;
  int64_t src_elems = 0, dst_elems = 0;
  int elem = 4;
};

std::string describe(const Case& c) {
  std::string s = "dims";
  for (auto d : c.dims) s += " " + std::to_string(d);
  s += " src";
  for (auto d : c.src) s += " " + std::to_string(d);
  s += " dst";
  for (auto d : c.dst) s += " " + std::to_string(d);
  return s + " elem " + std::to_string(c.elem);
}

// Checks StridedCopy against copy_strided on one case; the destination starts filled with a
// sentinel, so a write outside the box shows up as a difference too.
void expect_same_as_ref(const Case& c, std::mt19937& rng, pthreadpool_t pool) {
  std::vector<uint8_t> src(size_t(c.src_elems * c.elem));
  for (auto& b : src) b = uint8_t(rng());
  std::vector<uint8_t> want(size_t(c.dst_elems * c.elem), 0xA5), got = want;
  const int rank = int(c.dims.size());
  copy_strided(rank, c.dims.data(), src.data(), c.src.data(), want.data(), c.dst.data(), c.elem);
  StridedCopy copy(rank, c.dims.data(), c.src.data(), c.dst.data(), c.elem);
  copy.run(src.data(), got.data(), pool);
  ASSERT_EQ(got, want) << describe(c) << " form " << copy.kernel_name();
}

// A transpose of a random dense tensor by a random permutation (the output is dense).
Case random_transpose(std::mt19937& rng) {
  Case c;
  const int rank = 1 + int(rng() % 5);
  std::vector<int64_t> in(static_cast<size_t>(rank));
  for (auto& d : in) d = 1 + int64_t(rng() % 13);
  std::vector<int> perm(static_cast<size_t>(rank));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  const auto in_strides = dense_strides(in);
  for (int p : perm) {
    c.dims.push_back(in[size_t(p)]);
    c.src.push_back(in_strides[size_t(p)]);
  }
  c.dst = dense_strides(c.dims);
  c.src_elems = c.dst_elems = std::accumulate(in.begin(), in.end(), int64_t{1}, std::multiplies<>());
  const int sizes[] = {1, 2, 4, 8};
  c.elem = sizes[rng() % 4];
  return c;
}

// A slice (start, step per axis) of a random dense tensor into a dense box, or the same box
// written at an offset into a larger tensor (the Concat direction).
Case random_box(std::mt19937& rng, bool into_larger) {
  Case c;
  const int rank = 1 + int(rng() % 4);
  std::vector<int64_t> big(static_cast<size_t>(rank));
  for (auto& d : big) d = 1 + int64_t(rng() % 17);
  const auto big_strides = dense_strides(big);
  std::vector<int64_t> step(static_cast<size_t>(rank), 1);
  for (int k = 0; k < rank; ++k) {
    if (!into_larger && rng() % 4 == 0) step[size_t(k)] = 1 + int64_t(rng() % 3);
    c.dims.push_back(1 + int64_t(rng() % uint64_t((big[size_t(k)] + step[size_t(k)] - 1) / step[size_t(k)])));
  }
  std::vector<int64_t> scaled(static_cast<size_t>(rank));
  for (int k = 0; k < rank; ++k) scaled[size_t(k)] = big_strides[size_t(k)] * step[size_t(k)];
  const int64_t big_elems = big[0] * big_strides[0];
  const auto box_strides = dense_strides(c.dims);
  const int64_t box_elems = c.dims[0] * box_strides[0];
  if (into_larger) {
    c.src = box_strides;
    c.dst = scaled;
    c.src_elems = box_elems;
    c.dst_elems = big_elems;
  } else {
    c.src = scaled;
    c.dst = box_strides;
    c.src_elems = big_elems;
    c.dst_elems = box_elems;
  }
  c.elem = rng() % 2 ? 4 : 1;
  return c;
}

TEST(StridedCopy, RandomTransposesMatchTheRef) {
  std::mt19937 rng(7);
  testing::Pool pool(pthreadpool_create(2));
  for (int i = 0; i < 400; ++i) expect_same_as_ref(random_transpose(rng), rng, i % 2 ? pool.get() : nullptr);
}

TEST(StridedCopy, RandomSlicesAndConcatPiecesMatchTheRef) {
  std::mt19937 rng(11);
  testing::Pool pool(pthreadpool_create(2));
  for (int i = 0; i < 400; ++i) expect_same_as_ref(random_box(rng, i % 2 == 0), rng, i % 3 ? pool.get() : nullptr);
}

TEST(StridedCopy, ChannelSliceOfChannelsLastIsOneRunPerPixel) {
  // [N 2][H 3][W 5] pixels, 8 of 24 channels from channel 8: one 32-byte run per pixel.
  const int64_t dims[] = {2, 3, 5, 8};
  const int64_t src[] = {3 * 5 * 24, 5 * 24, 24, 1};
  const int64_t dst[] = {3 * 5 * 8, 5 * 8, 8, 1};
  StridedCopy copy(4, dims, src, dst, 4);
  EXPECT_STREQ(copy.kernel_name(), "copy_runs");
  EXPECT_EQ(copy.run_bytes(), 32);
  EXPECT_EQ(copy.merged_rank(), 2);  // pixels x channels
}

TEST(StridedCopy, ChannelShuffleIsTiled) {
  // ShuffleNet's [N, groups 2, C/2 58, H*W 784] -> [N, 58, 2, 784] on a row-major tensor: the
  // innermost axis stays contiguous (runs); on channels-last data the same shuffle transposes
  // the two channel axes inside each pixel.
  const int64_t dims[] = {1, 58, 2, 784};
  const int64_t src[] = {2 * 58 * 784, 784, 58 * 784, 1};
  const int64_t dst[] = {2 * 58 * 784, 2 * 784, 784, 1};
  StridedCopy runs(4, dims, src, dst, 4);
  EXPECT_STREQ(runs.kernel_name(), "copy_runs");
  // [pixels 784][groups 2][58] -> [pixels 784][58][2]
  const int64_t t_dims[] = {784, 58, 2};
  const int64_t t_src[] = {116, 1, 58};
  const int64_t t_dst[] = {116, 2, 1};
  StridedCopy tiles(3, t_dims, t_src, t_dst, 4);
  EXPECT_STREQ(tiles.kernel_name(), "transpose_tiles");
  std::mt19937 rng(3);
  testing::Pool pool(pthreadpool_create(2));
  // Two groups interleave two contiguous rows per pixel (the unrolled path): every element
  // size, odd and short halves, one thread and two.
  for (int elem : {1, 2, 4, 8})
    for (int64_t half : {58, 57, 3, 1}) {
      Case c{{784, half, 2}, {2 * half, 1, half}, {2 * half, 2, 1}, 784 * 2 * half, 784 * 2 * half, elem};
      expect_same_as_ref(c, rng, nullptr);
      expect_same_as_ref(c, rng, pool.get());
    }
}

TEST(StridedCopy, ImagePlanesInterleaveIntoPixels) {
  // NCHW [N][C][H][W] -> NHWC with 3 or 4 channels: the planes interleave (the vectorized
  // path), for every element size, pixel counts around the vector widths, one and two images,
  // one thread and two; 2 and 5 channels take the general narrow loop beside them.
  std::mt19937 rng(5);
  testing::Pool pool(pthreadpool_create(2));
  for (int elem : {1, 2, 4, 8})
    for (int64_t channels : {3, 4, 2, 5})
      for (int64_t pixels : {int64_t{1}, int64_t{31}, int64_t{64}, int64_t{97}, int64_t{224 * 224}})
        for (int64_t batch : {1, 2}) {
          const int64_t n = batch * channels * pixels;
          Case c{{batch, pixels, channels},
                 {channels * pixels, 1, pixels},
                 {channels * pixels, channels, 1},
                 n,
                 n,
                 elem};
          expect_same_as_ref(c, rng, nullptr);
          expect_same_as_ref(c, rng, pool.get());
        }
}

TEST(StridedCopy, EmptyBoxWritesNothing) {
  const int64_t dims[] = {3, 0, 4};
  const int64_t strides[] = {0, 4, 1};
  StridedCopy copy(3, dims, strides, strides, 4);
  float y = 42.0f;
  copy.run(nullptr, &y, nullptr);
  EXPECT_EQ(y, 42.0f);
}

}  // namespace
}  // namespace octet::kernels
