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

}  // namespace
}  // namespace octet
