#include "engine/layout.h"

#include "kernels/ref/copy.h"

namespace octet {

const char* layout_name(Layout l) { return l == Layout::row_major ? "row-major" : "channels-last"; }

std::vector<int> memory_order(int rank, Layout l) {
  std::vector<int> order;
  if (l == Layout::channels_last && rank >= 3) {
    order.push_back(0);
    for (int d = 2; d < rank; ++d) order.push_back(d);
    order.push_back(1);
  } else {
    for (int d = 0; d < rank; ++d) order.push_back(d);
  }
  return order;
}

std::vector<int64_t> strides_of(const ir::Dims& dims, Layout l) {
  std::vector<int64_t> strides(dims.size());
  auto order = memory_order(int(dims.size()), l);
  int64_t s = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    strides[size_t(*it)] = s;
    s *= dims[size_t(*it)];
  }
  return strides;
}

bool same_memory(const ir::Dims& dims, Layout a, Layout b) {
  if (a == b) return true;
  // Identical when the dimensions of extent > 1 appear in the same relative order.
  auto nontrivial = [&](Layout l) {
    std::vector<int> v;
    for (int d : memory_order(int(dims.size()), l)) if (dims[size_t(d)] != 1) v.push_back(d);
    return v;
  };
  return nontrivial(a) == nontrivial(b);
}

namespace {

// [n][c][p] <-> [n][p][c] (p = all spatial positions): the relayout at a model's input and
// output, every run. A plain transpose per image; the generic strided copy below computes an
// offset per element and took 22 us for one 3x32x32 image.
template <class T>
void transpose_per_image(int64_t n, int64_t rows, int64_t cols, const T* src, T* dst) {
  for (int64_t i = 0; i < n; ++i, src += rows * cols, dst += rows * cols)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) dst[c * rows + r] = src[r * cols + c];
}

bool transpose_fast(const TensorInfo& src_info, const void* src, Layout dst_layout, void* dst) {
  const ir::Dims& d = src_info.dims;
  if (d.size() < 3 || src_info.layout == dst_layout) return false;
  int64_t spatial = 1;
  for (size_t i = 2; i < d.size(); ++i) spatial *= d[i];
  // row-major -> channels-last reads [c][p] rows; channels-last -> row-major reads [p][c].
  const bool to_channels_last = dst_layout == Layout::channels_last;
  const int64_t rows = to_channels_last ? d[1] : spatial, cols = to_channels_last ? spatial : d[1];
  switch (ir::dtype_size(src_info.dtype)) {
    case 1:
      transpose_per_image(d[0], rows, cols, static_cast<const uint8_t*>(src), static_cast<uint8_t*>(dst));
      return true;
    case 4:
      transpose_per_image(d[0], rows, cols, static_cast<const uint32_t*>(src), static_cast<uint32_t*>(dst));
      return true;
    default:
      return false;
  }
}

}  // namespace

void relayout(const TensorInfo& src_info, const void* src, Layout dst_layout, void* dst) {
  if (transpose_fast(src_info, src, dst_layout, dst)) return;
  auto s = src_info.strides();
  auto d = strides_of(src_info.dims, dst_layout);
  kernels::copy_strided(int(src_info.dims.size()), src_info.dims.data(), src, s.data(), dst, d.data(),
                        int(ir::dtype_size(src_info.dtype)));
}

}  // namespace octet
