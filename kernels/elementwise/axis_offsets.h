#pragma once
// The element offsets a walk over some axes of a strided tensor visits, shared by the reduction
// drivers (eltwise.cc's ReduceSum / ReduceMean, reduce_more.cc's mapped reductions).
#include <cstdint>
#include <vector>

namespace octet::kernels {

// Every index of `axes` (row-major over them, the first axis outermost) as an offset.
inline std::vector<int64_t> offsets_of(const std::vector<int>& axes, const int64_t* dims, const int64_t* strides) {
  std::vector<int64_t> out = {0};
  for (int d : axes) {
    std::vector<int64_t> next;
    next.reserve(out.size() * size_t(dims[d]));
    for (int64_t o : out)
      for (int64_t i = 0; i < dims[d]; ++i) next.push_back(o + i * strides[d]);
    out.swap(next);
  }
  return out;
}

}  // namespace octet::kernels
