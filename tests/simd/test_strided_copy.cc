// StridedCopy (Transpose, Slice, Split, Concat) against the element walk of kernels/ref/copy.h
// on random permutations, boxes and element sizes, with and without a thread pool: every form
// (copy_runs, transpose_tiles, the gather and scatter rows, the element walk) must write exactly what the
// walk writes and nothing outside the box. The gather rows of every level that runs here are
// also called directly, every step from -5 to 5, every row length up to past two vectors, with
// the source's first or last element against an inaccessible page. Byte runs mapped through a
// lookup table on their way (QLinearConcat) against the table, then the walk.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/elementwise/strided_copy.h"
#include "kernels/elementwise/strided_gather_list.h"
#include "kernels/quantize/lookup.h"
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
  int64_t start = 0;  // the box's first source element
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
  const uint8_t* first = src.data() + c.start * c.elem;
  copy_strided(rank, c.dims.data(), first, c.src.data(), want.data(), c.dst.data(), c.elem);
  StridedCopy copy(rank, c.dims.data(), c.src.data(), c.dst.data(), c.elem);
  copy.run(first, got.data(), pool);
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

TEST(StridedCopy, ChannelsLastToRowMajorTakesTheRegisterTiles) {
  // [N][HW][C] -> [N][C][HW] (a relayout to row-major): 4-byte elements go 8x8 through
  // registers, with the edges (HW or C not a multiple of 8) element by element; every size
  // around the tile, a detection head's 255 channels over 80x80, 1 and 2 threads.
  std::mt19937 rng(11);
  testing::Pool pool(pthreadpool_create(2));
  for (int64_t pixels : {8, 9, 15, 16, 17, 31, 64, 6400})
    for (int64_t channels : {8, 9, 15, 16, 24, 255})
      for (int64_t batch : {1, 2}) {
        if (pixels * channels > 6400 * 16 && batch == 2) continue;
        const int64_t n = batch * pixels * channels;
        Case c{{batch, channels, pixels}, {pixels * channels, 1, channels}, {pixels * channels, pixels, 1}, n, n, 4};
        StridedCopy copy(3, c.dims.data(), c.src.data(), c.dst.data(), 4);
        EXPECT_STREQ(copy.kernel_name(), "transpose_tiles");
        expect_same_as_ref(c, rng, nullptr);
        expect_same_as_ref(c, rng, pool.get());
      }
}

TEST(StridedCopy, ByteAndShortTransposesTakeTheRegisterSquares) {
  // [N][cols][rows] read with rows contiguous into [N][rows][cols]: 1- and 2-byte elements go
  // through 16x16 / 8x8 squares in registers when both sides are at least a square; every size
  // around the square (1 row or column, tails of every length below a square, several squares),
  // a source that is a slice (a column stride past the rows: channels of a wider map) and a
  // destination that is a slice (a row stride past the columns: a Concat piece), 1 and 2 images,
  // 1 and 2 threads.
  std::mt19937 rng(23);
  testing::Pool pool(pthreadpool_create(2));
  const int64_t sizes[] = {1, 2, 5, 7, 8, 9, 15, 16, 17, 23, 31, 32, 33, 47, 64, 65, 116, 255};
  for (int elem : {1, 2})
    for (int64_t rows : sizes)
      for (int64_t cols : sizes)
        for (int variant = 0; variant < 4; ++variant) {
          const int64_t batch = variant == 3 ? 2 : 1;
          const int64_t xs_col = rows + (variant == 1 ? 3 : 0), ys_row = cols + (variant == 2 ? 5 : 0);
          const int64_t src_elems = batch * cols * xs_col, dst_elems = batch * rows * ys_row;
          Case c{{batch, rows, cols}, {cols * xs_col, 1, xs_col}, {rows * ys_row, ys_row, 1}, src_elems, dst_elems, elem};
          if (rows > 1 && cols > 1) {
            StridedCopy copy(3, c.dims.data(), c.src.data(), c.dst.data(), elem);
            EXPECT_STREQ(copy.kernel_name(), "transpose_tiles") << describe(c);
          }
          expect_same_as_ref(c, rng, nullptr);
          if ((rows + cols + variant) % 3 == 0) expect_same_as_ref(c, rng, pool.get());
        }
}

std::vector<int64_t> strides_4d(const std::vector<int64_t>& d, bool channels_last) {
  if (!channels_last) return dense_strides(d);
  return {d[1] * d[2] * d[3], 1, d[3] * d[1], d[1]};
}

TEST(StridedCopy, DepthToSpaceShuffleAndRelayoutBytesMatchTheRef) {
  // The relayouts the engine plans on INT8 maps, as it plans them: NCHW <-> NHWC of a whole map
  // (engine/layout.cc), DepthToSpace (DCR, CRD) and SpaceToDepth over their 6-D view in either
  // layout (engine/ops/transform_ops.cc), and a channel shuffle of g groups (Reshape + Transpose)
  // on a row-major and a channels-last map; 1-, 2- and 4-byte elements.
  std::mt19937 rng(29);
  testing::Pool pool(pthreadpool_create(2));
  for (int elem : {1, 2, 4}) {
    for (const std::vector<int64_t>& d : {std::vector<int64_t>{1, 255, 20, 20}, std::vector<int64_t>{2, 116, 7, 9},
                                          std::vector<int64_t>{1, 17, 1, 33}, std::vector<int64_t>{1, 3, 16, 16}})
      for (bool to_last : {false, true}) {
        const int64_t n = d[0] * d[1] * d[2] * d[3];
        Case c{d, strides_4d(d, !to_last), strides_4d(d, to_last), n, n, elem};
        expect_same_as_ref(c, rng, pool.get());
      }
    for (int64_t b : {2, 3})
      for (int64_t cp : {1, 5, 16, 21})
        for (bool channels_last : {false, true})
          for (int mode = 0; mode < 3; ++mode) {  // DCR, CRD, SpaceToDepth
            const int64_t h = 4, w = 6, ch = cp * b * b;
            Case c;
            if (mode < 2) {
              const std::vector<int64_t> xd = {1, ch, h, w}, yd = {1, cp, h * b, w * b};
              const auto xs = strides_4d(xd, channels_last), ys = strides_4d(yd, channels_last);
              c.dims = {1, cp, h, b, w, b};
              c.dst = {ys[0], ys[1], b * ys[2], ys[2], b * ys[3], ys[3]};
              const bool crd = mode == 1;
              c.src = {xs[0], crd ? b * b * xs[1] : xs[1], xs[2], crd ? b * xs[1] : b * cp * xs[1], xs[3],
                       crd ? xs[1] : cp * xs[1]};
            } else {
              const std::vector<int64_t> xd = {1, cp, h * b, w * b}, yd = {1, ch, h, w};
              const auto xs = strides_4d(xd, channels_last), ys = strides_4d(yd, channels_last);
              c.dims = {1, cp, h, b, w, b};
              c.src = {xs[0], xs[1], b * xs[2], xs[2], b * xs[3], xs[3]};
              c.dst = {ys[0], ys[1], ys[2], b * cp * ys[1], ys[3], cp * ys[1]};
            }
            c.src_elems = c.dst_elems = ch * h * w;
            c.elem = elem;
            expect_same_as_ref(c, rng, nullptr);
          }
    for (int64_t groups : {2, 3, 4, 8, 16, 29})
      for (bool channels_last : {false, true}) {
        const int64_t per = 58 * 2 / 2, hw = 28 * 28;
        const int64_t ch = groups * per;
        Case c;
        if (channels_last) {  // [HW][g][per] -> [HW][per][g]
          c.dims = {hw, groups, per};
          c.src = {ch, per, 1};
          c.dst = {ch, 1, groups};
        } else {  // [g][per][HW] -> [per][g][HW]: whole planes move
          c.dims = {groups, per, hw};
          c.src = {per * hw, hw, 1};
          c.dst = {hw, groups * hw, 1};
        }
        c.src_elems = c.dst_elems = ch * hw;
        c.elem = elem;
        expect_same_as_ref(c, rng, channels_last ? pool.get() : nullptr);
      }
  }
}

TEST(StridedCopy, RandomSlicesAndConcatPiecesMatchTheRef) {
  std::mt19937 rng(11);
  testing::Pool pool(pthreadpool_create(2));
  for (int i = 0; i < 400; ++i) expect_same_as_ref(random_box(rng, i % 2 == 0), rng, i % 3 ? pool.get() : nullptr);
}

// A box of bytes into (or out of) a larger tensor of `big` dims, every stride its own: nothing
// merges, so the runs are walked over three outer dimensions with carries between them.
Case byte_box(const std::vector<int64_t>& big, const std::vector<int64_t>& box, const std::vector<int64_t>& at) {
  Case c;
  c.dims = box;
  c.src = dense_strides(box);
  c.dst = dense_strides(big);
  c.src_elems = std::accumulate(box.begin(), box.end(), int64_t{1}, std::multiplies<>());
  c.dst_elems = std::accumulate(big.begin(), big.end(), int64_t{1}, std::multiplies<>());
  c.elem = 1;
  for (size_t k = 0; k < at.size(); ++k) c.start -= at[k] * c.dst[k];  // dst is offset below, not src
  return c;
}

// QLinearConcat's runs through a table (run_mapped, rows of runs per call) and plain byte runs:
// small random boxes and channels-last pieces of several 64 KiB slabs, whose slabs end in the
// middle of a row of runs and of an image, with and without two threads; each against the
// table applied to the whole source, then the element walk. Every lookup kernel this CPU runs.
TEST(StridedCopy, MappedByteRunsMatchTheTableThenTheRef) {
  std::mt19937 rng(71);
  testing::Pool pool(pthreadpool_create(2));
  std::vector<const Q8LookupKernel*> maps;
  for (Isa isa : runnable_isas())
    if (const Q8LookupKernel* k = choose_q8_lookup(isa); k != nullptr && std::find(maps.begin(), maps.end(), k) == maps.end())
      maps.push_back(k);
  testing::skip_when_none_run(maps.size(), "lookup (the concat runs its table over a scratch copy)");
  if (maps.empty()) return;
  std::vector<Case> cases;
  for (int i = 0; i < 200; ++i) {
    Case c = random_box(rng, true);
    c.elem = 1;
    cases.push_back(c);
  }
  for (int64_t channels : {16, 17, 32, 48, 64, 100, 256, 300})  // [2, 37, 45, C] into [2, 40, 47, C + 24]
    cases.push_back(byte_box({2, 40, 47, channels + 24}, {2, 37, 45, channels}, {0, 2, 1, 5}));
  std::vector<uint8_t> table(256);
  for (auto& v : table) v = uint8_t(rng());
  int mapped = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const int rank = int(c.dims.size());
    std::vector<uint8_t> src(size_t(c.src_elems)), mapped_src(src.size());
    for (auto& b : src) b = uint8_t(rng());
    for (size_t k = 0; k < src.size(); ++k) mapped_src[k] = table[src[k]];
    // byte_box places the box at -start in the destination (start <= 0); random boxes at 0.
    const int64_t offset = -c.start;
    StridedCopy copy(rank, c.dims.data(), c.src.data(), c.dst.data(), 1);
    pthreadpool_t p = i % 2 ? pool.get() : nullptr;
    for (bool plain : {true, false}) {
      if (!plain && !copy.maps_runs()) continue;
      std::vector<uint8_t> want(size_t(c.dst_elems), 0xA5), got = want;
      copy_strided(rank, c.dims.data(), (plain ? src : mapped_src).data(), c.src.data(), want.data() + offset,
                   c.dst.data(), 1);
      for (const Q8LookupKernel* k : maps) {
        std::fill(got.begin(), got.end(), 0xA5);
        if (plain) copy.run(src.data(), got.data() + offset, p);
        else copy.run_mapped(src.data(), got.data() + offset, k->rows, table.data(), p);
        ASSERT_EQ(got, want) << describe(c) << (plain ? " plain" : " mapped by ") << (plain ? "" : k->name);
        mapped += !plain;
        if (plain) break;
      }
    }
  }
  EXPECT_GT(mapped, 100);
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

// A slice with a step (or a reversal) on the last axis of a random dense tensor: the gather form.
Case random_last_axis_step(std::mt19937& rng) {
  Case c;
  const int rank = 1 + int(rng() % 4);
  std::vector<int64_t> big(static_cast<size_t>(rank));
  for (auto& d : big) d = 1 + int64_t(rng() % 9);
  big.back() = 1 + int64_t(rng() % 70);
  const auto big_strides = dense_strides(big);
  int64_t step = int64_t(rng() % 5) + 2;
  if (rng() % 2) step = -step + 1;  // -1 ... -5
  c.dims = big;
  const int64_t last = big.back();
  const int64_t abs_step = step < 0 ? -step : step;
  c.dims.back() = (last + abs_step - 1) / abs_step;
  c.src = big_strides;
  c.src.back() = step;
  c.dst = dense_strides(c.dims);
  // A negative step starts at the row's last element: the walk's offsets go down from it.
  c.src_elems = big[0] * big_strides[0];
  c.dst_elems = c.dims[0] * c.dst[0];
  const int sizes[] = {1, 2, 4, 8};
  c.elem = sizes[rng() % 4];
  c.start = step < 0 ? last - 1 : 0;
  return c;
}

TEST(StridedCopy, RandomLastAxisStepsMatchTheRef) {
  std::mt19937 rng(13);
  testing::Pool pool(pthreadpool_create(2));
  for (int i = 0; i < 600; ++i) {
    const Case c = random_last_axis_step(rng);
    expect_same_as_ref(c, rng, i % 2 ? pool.get() : nullptr);
  }
}

// Extent-1 pieces written into every k-th element of the last axis (Concat of [.., 1] inputs
// along it), with a step on the source too: the scatter rows.
TEST(StridedCopy, ScatterIntoAStridedLastAxisMatchesTheRef) {
  std::mt19937 rng(19);
  testing::Pool pool(pthreadpool_create(2));
  for (int i = 0; i < 300; ++i) {
    Case c;
    const int64_t rows = 1 + int64_t(rng() % 9), n = 1 + int64_t(rng() % 40), pieces = 2 + int64_t(rng() % 4);
    const int64_t x_step = rng() % 3 == 0 ? -2 : 1;
    c.dims = {rows, n};
    c.src = {n * 2, x_step};
    c.dst = {n * pieces, pieces};
    c.src_elems = rows * n * 2;
    c.dst_elems = rows * n * pieces;
    c.start = x_step < 0 ? 2 * (n - 1) : 0;
    const int sizes[] = {1, 2, 4, 8};
    c.elem = sizes[rng() % 4];
    expect_same_as_ref(c, rng, i % 2 ? pool.get() : nullptr);
  }
}

TEST(StridedCopy, LastAxisStepsTakeTheGatherRows) {
  // [2][6][4][5] step 2 on the last axis: [2][6][4][3] from strides 120, 20, 5, 2.
  const int64_t dims[] = {2, 6, 4, 3};
  const int64_t src[] = {120, 20, 5, 2};
  const int64_t dst[] = {72, 12, 3, 1};
  for (int elem : {1, 2, 4, 8}) {
    StridedCopy copy(4, dims, src, dst, elem);
    const StridedGatherKernel* row = first_runnable(kStridedGatherKernels, active_isa());
    if (row) {
      EXPECT_STREQ(copy.kernel_name(), row->name);
      EXPECT_FALSE(copy.kernel_id().scalar);
    } else {
      EXPECT_TRUE(copy.kernel_id().scalar);
    }
    StridedCopy capped(4, dims, src, dst, elem, Isa::scalar);
    EXPECT_STREQ(capped.kernel_name(), "copy_strided__ref");
    EXPECT_TRUE(capped.kernel_id().scalar);
  }
  // A strided destination innermost (extent-1 pieces concatenated along the last axis).
  const int64_t s_dims[] = {4, 6};
  const int64_t s_src[] = {6, 1};
  const int64_t s_dst[] = {18, 3};
  EXPECT_STREQ(StridedCopy(2, s_dims, s_src, s_dst, 4).kernel_name(), "copy_scatter_rows");
  EXPECT_FALSE(StridedCopy(2, s_dims, s_src, s_dst, 4).kernel_id().scalar);
  const int64_t o_dims[] = {4, 6};
  const int64_t o_src[] = {12, 2};
  const int64_t o_dst[] = {6, 1};
  EXPECT_STREQ(StridedCopy(2, o_dims, o_src, o_dst, 3).kernel_name(), "copy_strided_odd_elem__ref");
}

// Pages around a buffer: `bytes` usable, with an inaccessible page right before and right after
// the span [first, first + bytes) placed against one of them.
class GuardedSpan {
 public:
  GuardedSpan(size_t bytes, bool against_end) {
    page_ = size_t(sysconf(_SC_PAGESIZE));
    const size_t data = (std::max<size_t>(bytes, 1) + page_ - 1) / page_ * page_;
    mapped_ = data + 2 * page_;
    void* p = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("GuardedSpan: mmap failed");
    base_ = static_cast<uint8_t*>(p);
    mprotect(base_, page_, PROT_NONE);
    mprotect(base_ + page_ + data, page_, PROT_NONE);
    first_ = against_end ? base_ + page_ + data - bytes : base_ + page_;
  }
  ~GuardedSpan() { munmap(base_, mapped_); }
  GuardedSpan(const GuardedSpan&) = delete;
  GuardedSpan& operator=(const GuardedSpan&) = delete;
  uint8_t* first() { return first_; }

 private:
  size_t page_ = 0, mapped_ = 0;
  uint8_t* base_ = nullptr;
  uint8_t* first_ = nullptr;
};

// One call of a gather row over `rows` rows of n elements at `step`, the source span exactly
// the elements read, against the page after it or before it; compared with the walk.
void expect_gather_row(const StridedGatherKernel& k, int elem, size_t rows, size_t n, ptrdiff_t step, bool at_end,
                       std::mt19937& rng) {
  SCOPED_TRACE(std::string(k.name) + " elem " + std::to_string(elem) + " rows " + std::to_string(rows) + " n " +
               std::to_string(n) + " step " + std::to_string(step) + (at_end ? " at end" : " at start"));
  const ptrdiff_t abs_step = step < 0 ? -step : step;
  const ptrdiff_t row_span = n == 0 ? 0 : ptrdiff_t(n - 1) * abs_step + 1;  // elements a row spans
  const ptrdiff_t x_row = row_span + ptrdiff_t(rng() % 3);
  const size_t span = rows == 0 || n == 0 ? 0 : size_t(ptrdiff_t(rows - 1) * x_row + row_span);
  GuardedSpan src(span * size_t(elem), at_end);
  for (size_t b = 0; b < span * size_t(elem); ++b) src.first()[b] = uint8_t(rng());
  // A negative step starts each row at its highest element.
  const uint8_t* x = src.first() + (step < 0 ? size_t(row_span - 1) * size_t(elem) : 0);
  const ptrdiff_t y_row = ptrdiff_t(n) + ptrdiff_t(rng() % 2);
  const size_t out = rows == 0 ? 0 : size_t(ptrdiff_t(rows - 1) * y_row + ptrdiff_t(n));
  std::vector<uint8_t> want(out * size_t(elem) + 16, 0x5A), got = want;
  const int64_t dims[] = {int64_t(rows), int64_t(n)};
  const int64_t xs[] = {x_row, step}, ys[] = {y_row, 1};
  copy_strided(2, dims, x, xs, want.data(), ys, elem);
  k.for_size(elem)(rows, n, x, x_row, step, got.data(), y_row);
  ASSERT_EQ(got, want);
}

TEST(StridedGatherRows, EveryStepLengthAndSizeMatchesTheWalk) {
  std::mt19937 rng(17);
  for (const StridedGatherKernel* row : testing::runnable_entries(kStridedGatherKernels)) {
    const StridedGatherKernel& k = *row;
    for (int elem : {1, 2, 4, 8})
      for (ptrdiff_t step = -5; step <= 5; ++step) {
        if (step == 1) continue;  // a contiguous row is a memcpy, never a gather
        for (size_t n = 0; n <= 70; ++n)
          for (bool at_end : {false, true}) expect_gather_row(k, elem, 1 + n % 3, n, step, at_end, rng);
        for (size_t n : {255, 256, 257, 1000})
          for (bool at_end : {false, true}) expect_gather_row(k, elem, 2, n, step, at_end, rng);
      }
    // Large steps (a Gather's or transposed slice's innermost source axis).
    for (int elem : {1, 2, 4, 8})
      for (ptrdiff_t step : {ptrdiff_t(97), ptrdiff_t(-128), ptrdiff_t(4099)})
        for (size_t n : {1, 7, 8, 9, 33}) expect_gather_row(k, elem, 2, n, step, true, rng);
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
