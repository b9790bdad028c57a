#include <gtest/gtest.h>

#include <vector>

#include "kernels/ref/pool2d.h"
#include "tests/kernels/ref_test_util.h"

namespace octet::kernels {
namespace {

using testing::all_near;
using testing::ramp;

std::vector<float> maxpool(const Pool2dShape& s, const std::vector<float>& in) {
  std::vector<float> out(static_cast<size_t>(s.batch) * s.out_h * s.out_w * s.channels, -999.0f);
  f32_maxpool2d_nhwc__ref(s, in.data(), out.data());
  return out;
}

std::vector<float> avgpool(const Pool2dShape& s, bool count_include_pad,
                           const std::vector<float>& in) {
  std::vector<float> out(static_cast<size_t>(s.batch) * s.out_h * s.out_w * s.channels, -999.0f);
  f32_avgpool2d_nhwc__ref(s, count_include_pad, in.data(), out.data(), 1);
  return out;
}


TEST(MaxPool2dRef, PaddingNeverWinsOverNegativeValues) {
  Pool2dShape s;
  s.in_h = s.in_w = 3;
  s.out_h = s.out_w = 3;
  s.kernel_h = s.kernel_w = 3;
  s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = 1;
  std::vector<float> in = ramp(3, 3);
  for (float& v : in) v = -v;
  // The max of -(3r + c + 1) is at the smallest valid r and c of each window; a padded 0
  // would win everywhere if padding were counted.
  EXPECT_TRUE(all_near(maxpool(s, in), {-1, -1, -2, -1, -1, -2, -4, -4, -5}));
}

// 4x4 input, kernel 3, stride 2, pads 1 on every side, ceil_mode: out = ceil(3 / 2) + 1 = 3.
// Window rows/cols: {-1..1}, {1..3}, {3..5}; the last runs one past the bottom/right pad.
Pool2dShape ceil_mode_shape() {
  Pool2dShape s;
  s.in_h = s.in_w = 4;
  s.out_h = s.out_w = 3;
  s.kernel_h = s.kernel_w = 3;
  s.stride_h = s.stride_w = 2;
  s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = 1;
  return s;
}

TEST(MaxPool2dRef, CeilModeTwoChannels) {
  Pool2dShape s = ceil_mode_shape();
  s.channels = 2;
  std::vector<float> in;
  for (float v : ramp(4, 4)) {
    in.push_back(v);
    in.push_back(-v);  // the max of -v picks the smallest v: tests the window's low edge
  }
  const std::vector<float> want = {6,  -1,  8,  -2,  8,  -4,  14, -5, 16,
                                   -6, 16,  -8, 14,  -13, 16, -14, 16, -16};
  EXPECT_TRUE(all_near(maxpool(s, in), want));
}

TEST(MaxPool2dRef, Dilation2SkipsNeighbours) {
  Pool2dShape s;
  s.in_h = s.in_w = 5;
  s.out_h = s.out_w = 3;
  s.kernel_h = s.kernel_w = 2;
  s.dilation_h = s.dilation_w = 2;
  std::vector<float> in(25, 0.0f);
  in[1 * 5 + 1] = 9.0f;
  // Window (y, x) samples rows {y, y+2} and cols {x, x+2}: only (1,1) reaches in[1][1].
  std::vector<float> want(9, 0.0f);
  want[1 * 3 + 1] = 9.0f;
  EXPECT_TRUE(all_near(maxpool(s, in), want));
  want[1 * 3 + 1] = 9.0f / 4.0f;
  EXPECT_TRUE(all_near(avgpool(s, false, in), want));
}

TEST(MaxPool2dRef, BatchesAreIndependent) {
  Pool2dShape s;
  s.batch = 2;
  s.in_h = s.in_w = 2;
  s.kernel_h = s.kernel_w = 2;
  const std::vector<float> in = {1, 5, 2, 3, -7, -2, -3, -4};
  EXPECT_TRUE(all_near(maxpool(s, in), {5, -2}));
}

// Sums over the in-input part of each ceil-mode window of ramp(4, 4):
// rows/cols inside the input are {0,1}, {1,2,3}, {3}.
const std::vector<float> kCeilSums = {14, 30, 12, 57, 99, 36, 27, 45, 16};

TEST(AvgPool2dRef, CeilModeExcludingPad) {
  // Divisors are the in-input counts {2,3,1} x {2,3,1}.
  const std::vector<float> want = {14.0f / 4, 30.0f / 6, 12.0f / 2, 57.0f / 6, 99.0f / 9,
                                   36.0f / 3, 27.0f / 2, 45.0f / 3, 16.0f / 1};
  EXPECT_TRUE(all_near(avgpool(ceil_mode_shape(), false, ramp(4, 4)), want, 1e-6));
}

TEST(AvgPool2dRef, CeilModeIncludingPadStopsAtThePads) {
  // Divisors count the pads but not the ceil-mode overrun: {3,3,2} x {3,3,2}.
  const std::vector<float> want = {14.0f / 9, 30.0f / 9, 12.0f / 6, 57.0f / 9, 99.0f / 9,
                                   36.0f / 6, 27.0f / 6, 45.0f / 6, 16.0f / 4};
  EXPECT_TRUE(all_near(avgpool(ceil_mode_shape(), true, ramp(4, 4)), want, 1e-6));
}

TEST(AvgPool2dRef, NoPaddingStride2) {
  Pool2dShape s;
  s.in_h = s.in_w = 4;
  s.out_h = s.out_w = 2;
  s.kernel_h = s.kernel_w = 2;
  s.stride_h = s.stride_w = 2;
  // Means of {1,2,5,6}, {3,4,7,8}, {9,10,13,14}, {11,12,15,16}.
  EXPECT_TRUE(all_near(avgpool(s, true, ramp(4, 4)), {3.5f, 5.5f, 11.5f, 13.5f}));
  EXPECT_TRUE(all_near(avgpool(s, false, ramp(4, 4)), {3.5f, 5.5f, 11.5f, 13.5f}));
}

// One 2x2 window over [[1e8, 1], [-1e8, 1]]: MLAS's vector kernel (stride_w <= 2) sums each
// column first, (1e8 - 1e8) + (1 + 1) = 2; its generic kernel (stride_w 3 here) sums row by row,
// ((1e8 + 1) - 1e8) + 1 = 1, since 1e8 + 1 rounds back to 1e8 in float.
TEST(AvgPoolRef, SumsInTheOrderOfOrtsKernel) {
  const std::vector<float> in = {1e8f, 1.0f, -1e8f, 1.0f};
  for (int stride : {1, 3}) {
    Pool2dShape s;
    s.in_h = s.in_w = s.kernel_h = s.kernel_w = 2;
    s.stride_h = s.stride_w = stride;
    EXPECT_EQ(f32_avgpool_sum_rows(s, 0), stride == 1 ? 2 : 1);
    EXPECT_EQ(f32_avgpool_sum_rows(s, 8), stride == 1 ? 2 : 1);  // 1 channel: not an NCHWc pool
    std::vector<float> out(1, -9.0f);
    f32_avgpool2d_nhwc__ref(s, false, in.data(), out.data(), f32_avgpool_sum_rows(s, 0));
    EXPECT_EQ(out[0], stride == 1 ? 0.5f : 0.25f) << "stride " << stride;
  }
  Pool2dShape nchwc;  // 16 channels on an AVX2 CPU (block 8) or an AVX-512 one (16)
  nchwc.channels = 16;
  nchwc.kernel_h = nchwc.kernel_w = 3;
  EXPECT_EQ(f32_avgpool_sum_rows(nchwc, 8), 1);
  EXPECT_EQ(f32_avgpool_sum_rows(nchwc, 16), 1);
  EXPECT_EQ(f32_avgpool_sum_rows(nchwc, 0), 3);
  nchwc.channels = 24;
  EXPECT_EQ(f32_avgpool_sum_rows(nchwc, 16), 3);
}

TEST(GlobalAvgPoolRef, MeanPerBatchAndChannel) {
  // [batch 2][hw 3][channels 2]
  const std::vector<float> in = {1, 10, 2, 20, 6, 60, -1, 0, -2, 0, -3, 3};
  for (GapOrder order : {GapOrder::sequential, GapOrder::mlas_lanes4, GapOrder::eigen_packets4, GapOrder::mlas_sgemm_m1}) {
    std::vector<float> out(4, -999.0f);
    f32_global_avgpool_nhwc__ref(2, 3, 2, in.data(), out.data(), order);
    EXPECT_TRUE(all_near(out, {3, 30, -2, 1}));
  }
}

// The two orders as ONNX Runtime sums: 1 + 2^-24 + 2^-24 + ... rounds differently by order.
TEST(GlobalAvgPoolRef, SequentialAndMlasLanes4Orders) {
  const float t = 0x1p-24f;
  // [hw 6][channels 1]: in order, each tiny term is lost against 1 (a tie to even); MLAS's
  // order adds the tiny terms at positions 1 and 3 first (lanes 1 and 3 combined), into 2^-23,
  // which survives, then positions 4 and 5.
  const std::vector<float> in = {1.0f, t, 0.0f, t, 0.0f, 0.0f};
  float seq = 0, lanes = 0;
  f32_global_avgpool_nhwc__ref(1, 6, 1, in.data(), &seq, GapOrder::sequential);
  f32_global_avgpool_nhwc__ref(1, 6, 1, in.data(), &lanes, GapOrder::mlas_lanes4);
  EXPECT_EQ(seq, 1.0f / 6.0f);
  EXPECT_EQ(lanes, (1.0f + 0x1p-23f) / 6.0f);
}

// MLAS's M = 1 SGEMM order (a batch's ReduceMean over H and W of NHWC data): groups of four
// summed in order and each added to the running sum, then a pair, then the last position. Over
// [1, t, t, t, t, t, t] (hw 7 = 4 + 2 + 1, t = 2^-24): in order every t is lost against 1 (a tie
// to even); here the group loses its three, the pair's 2t survives (1 + 2^-23), and the last t
// then ties again and rounds to the even 1 + 2^-22.
TEST(GlobalAvgPoolRef, MlasSgemmM1OrderGroupsFourThenAPairThenOne) {
  const float t = 0x1p-24f;
  const std::vector<float> in = {1.0f, t, t, t, t, t, t};
  float seq = 0, m1 = 0;
  f32_global_avgpool_nhwc__ref(1, 7, 1, in.data(), &seq, GapOrder::sequential);
  f32_global_avgpool_nhwc__ref(1, 7, 1, in.data(), &m1, GapOrder::mlas_sgemm_m1);
  EXPECT_EQ(seq, 1.0f / 7.0f);
  EXPECT_EQ(m1, (1.0f + 0x1p-22f) / 7.0f);
}

// Eigen's packets (ReduceMean's order): a row of 13 at row 1 starts 3 floats before a 16-byte
// boundary (13 mod 4 = 1), so positions 0-2 are added last, after packets [3, 7) and [7, 11) and
// their lanes; 11 and 12 follow. The big value at 0 swallows the tiny ones only in order.
TEST(GlobalAvgPoolRef, EigenPacketsOrderFollowsTheRowsAlignment) {
  EXPECT_EQ(eigen_row_lead(0, 13), 0u);
  EXPECT_EQ(eigen_row_lead(1, 13), 3u);
  EXPECT_EQ(eigen_row_lead(2, 13), 2u);
  EXPECT_EQ(eigen_row_lead(3, 14), 2u);
  EXPECT_EQ(eigen_row_lead(5, 16), 0u);
  const float t = 0x1p-24f;
  std::vector<float> row(13, 0.0f);
  row[0] = 1.0f;
  row[3] = t;  // packet 0, lane 0
  row[8] = t;  // packet 1, lane 1
  EXPECT_EQ(f32_sum_eigen_packets4(13, 3, row.data(), 1), 1.0f + 0x1p-23f);  // t + t first, then 1
  EXPECT_EQ(f32_sum_eigen_packets4(13, 0, row.data(), 1), 1.0f);  // lane 0 holds 1 + t (a tie to even)
  // Under one whole packet after the lead: in order.
  const float tiny[5] = {1.0f, t, t, t, t};
  EXPECT_EQ(f32_sum_eigen_packets4(5, 2, tiny, 1), 1.0f);
  // The NHWC ref takes channel c of image n as row n * channels + c: [batch 2][hw 13][channels 1],
  // image 1 is row 1 (lead 3).
  std::vector<float> in(26, 0.0f);
  for (size_t i = 0; i < 13; ++i) in[13 + i] = row[i];
  std::vector<float> out(2);
  f32_global_avgpool_nhwc__ref(2, 13, 1, in.data(), out.data(), GapOrder::eigen_packets4);
  EXPECT_EQ(out[1], (1.0f + 0x1p-23f) / 13.0f);
}

}  // namespace
}  // namespace octet::kernels
