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
