#include "engine/layout.h"

#include "kernels/elementwise/strided_copy.h"

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

std::vector<int64_t> strides_of(const ir::Dims& dims, Layout l, int64_t row_stride) {
  std::vector<int64_t> strides(dims.size());
  auto order = memory_order(int(dims.size()), l);
  int64_t s = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    strides[size_t(*it)] = s;
    s = it == order.rbegin() && row_stride != 0 ? row_stride : s * dims[size_t(*it)];
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

std::optional<std::vector<int64_t>> view_strides(const ir::Dims& dims, const std::vector<int64_t>& strides,
                                                 const ir::Dims& new_dims) {
  std::vector<int64_t> out(new_dims.size(), 0);
  if (ir::element_count(dims) != ir::element_count(new_dims)) return std::nullopt;
  if (ir::element_count(dims) == 0) return strides_of(new_dims, Layout::row_major);
  // Walk both shapes from the innermost dimension in blocks of old dimensions that are
  // contiguous with each other (stride[d - 1] == extent[d] * stride[d]); within a block the new
  // dimensions take strides as if it were one dense run, and each block must be covered by
  // whole new dimensions.
  int64_t v = int64_t(new_dims.size()) - 1;
  int64_t base = strides.empty() ? 1 : strides.back();
  int64_t old_count = 1, new_count = 1;
  for (int64_t d = int64_t(dims.size()) - 1; d >= 0; --d) {
    old_count *= dims[size_t(d)];
    const bool block_ends = d == 0 || (dims[size_t(d - 1)] != 1 && strides[size_t(d - 1)] != old_count * base);
    if (!block_ends) continue;
    while (v >= 0 && (new_count < old_count || new_dims[size_t(v)] == 1)) {
      out[size_t(v)] = new_count * base;
      new_count *= new_dims[size_t(v)];
      --v;
    }
    if (new_count != old_count) return std::nullopt;
    if (d > 0) {
      base = strides[size_t(d - 1)];
      old_count = new_count = 1;
    }
  }
  // Leading new dimensions of extent 1 (a rank-0 input viewed as [1, 1]).
  for (; v >= 0; --v) {
    if (new_dims[size_t(v)] != 1) return std::nullopt;
    out[size_t(v)] = 1;
  }
  return out;
}

kernels::StridedCopy relayout_copy(const TensorInfo& src_info, Layout dst_layout) {
  const auto src = src_info.strides();
  const auto dst = strides_of(src_info.dims, dst_layout);
  return kernels::StridedCopy(int(src_info.dims.size()), src_info.dims.data(), src.data(), dst.data(),
                              int(ir::dtype_size(src_info.dtype)));
}

void relayout(const TensorInfo& src_info, const void* src, Layout dst_layout, void* dst) {
  relayout_copy(src_info, dst_layout).run(src, dst);
}

}  // namespace octet
