// relayout() between row-major and channels-last, against an element-by-element walk of the
// logical index: rank 3 to 5, 1- and 4-byte types, both directions, batch > 1, extents of 1.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <random>

#include "engine/layout.h"

namespace octet {
namespace {

// Offset of logical index idx in a tensor of `dims` stored in layout l.
int64_t offset(const ir::Dims& dims, Layout l, const std::vector<int64_t>& idx) {
  auto s = strides_of(dims, l);
  int64_t o = 0;
  for (size_t k = 0; k < dims.size(); ++k) o += idx[k] * s[k];
  return o;
}

template <class T>
void check(const ir::Dims& dims, ir::DType dtype, Layout from, Layout to) {
  const int64_t n = ir::element_count(dims);
  std::vector<T> src(static_cast<size_t>(n)), dst(static_cast<size_t>(n));
  std::iota(src.begin(), src.end(), T(1));
  TensorInfo info{dtype, dims, from};
  relayout(info, src.data(), to, dst.data());
  std::vector<int64_t> idx(dims.size(), 0);
  for (int64_t e = 0; e < n; ++e) {
    ASSERT_EQ(dst[size_t(offset(dims, to, idx))], src[size_t(offset(dims, from, idx))])
        << ir::dims_str(dims) << " " << layout_name(from) << " -> " << layout_name(to);
    for (int k = int(dims.size()) - 1; k >= 0 && ++idx[size_t(k)] == dims[size_t(k)]; --k) idx[size_t(k)] = 0;
  }
}

TEST(Relayout, BothDirectionsMatchTheLogicalIndex) {
  std::mt19937 rng(5);
  for (int t = 0; t < 200; ++t) {
    const size_t rank = 3 + rng() % 3;
    ir::Dims dims;
    for (size_t k = 0; k < rank; ++k) dims.push_back(1 + int64_t(rng() % 6));
    for (auto [from, to] : {std::pair{Layout::row_major, Layout::channels_last},
                            std::pair{Layout::channels_last, Layout::row_major}}) {
      check<uint8_t>(dims, ir::DType::u8, from, to);
      check<float>(dims, ir::DType::f32, from, to);
      check<int64_t>(dims, ir::DType::s64, from, to);  // 8-byte elements: the generic path
    }
  }
}

// The element at logical index `idx` of `dims`, found through `strides`.
int64_t offset_of(const std::vector<int64_t>& idx, const std::vector<int64_t>& strides) {
  int64_t o = 0;
  for (size_t k = 0; k < idx.size(); ++k) o += idx[k] * strides[k];
  return o;
}

// Every element of the view lands where ONNX Reshape's row-major reading puts it: the i-th
// element (row-major over new_dims) is the i-th element row-major over dims.
void expect_same_elements(const ir::Dims& dims, const std::vector<int64_t>& strides, const ir::Dims& new_dims,
                          const std::vector<int64_t>& new_strides) {
  const int64_t n = ir::element_count(dims);
  std::vector<int64_t> a(dims.size(), 0), b(new_dims.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(offset_of(a, strides), offset_of(b, new_strides)) << "element " << i << " of " << ir::dims_str(new_dims);
    for (int64_t k = int64_t(a.size()) - 1; k >= 0 && ++a[size_t(k)] == dims[size_t(k)]; --k) a[size_t(k)] = 0;
    for (int64_t k = int64_t(b.size()) - 1; k >= 0 && ++b[size_t(k)] == new_dims[size_t(k)]; --k) b[size_t(k)] = 0;
  }
}

TEST(ViewStrides, SplitsAndMergesWhereMemoryAllows) {
  const ir::Dims nchw = {2, 12, 3, 5};
  const auto cl = strides_of(nchw, Layout::channels_last), rm = strides_of(nchw, Layout::row_major);
  struct Case {
    std::vector<int64_t> strides;
    ir::Dims to;
  };
  for (const Case& c : {Case{cl, {2, 3, 4, 3, 5}},   // C split: the channel shuffle's view
                        Case{cl, {2, 12, 15}},       // H and W merge (adjacent in NHWC)
                        Case{cl, {2, 12, 3, 5, 1}},  // a trailing 1
                        Case{cl, {1, 2, 12, 3, 5}},  // a leading 1
                        Case{rm, {2, 36, 5}},        // C and H merge in NCHW
                        Case{rm, {4, 6, 3, 5}},      // N and C regrouped
                        Case{rm, {360}}}) {
    const auto v = view_strides(nchw, c.strides, c.to);
    ASSERT_TRUE(v.has_value()) << ir::dims_str(c.to);
    expect_same_elements(nchw, c.strides, c.to, *v);
  }
  // C and H are not adjacent in NHWC memory; N and C neither.
  EXPECT_FALSE(view_strides(nchw, cl, {2, 36, 5}).has_value());
  EXPECT_FALSE(view_strides(nchw, cl, {24, 3, 5}).has_value());
  EXPECT_FALSE(view_strides(nchw, cl, {360}).has_value());
  EXPECT_FALSE(view_strides(nchw, rm, {2, 12, 16}).has_value());  // a different count
  EXPECT_EQ(view_strides({}, {}, {1, 1}), (std::vector<int64_t>{1, 1}));
}

}  // namespace
}  // namespace octet
