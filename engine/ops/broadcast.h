#pragma once
// numpy broadcasting of two operands whose physical layouts may differ (a channels-last map
// against a per-channel vector, say), shared by the FP32 binary ops and QLinearAdd/QLinearMul:
// the output shape, the output's layout, and strides for a strided kernel that walks the
// output densely in its memory order.
#include <algorithm>
#include <vector>

#include "engine/op_registry.h"

namespace octet::ops {

inline ir::Dims broadcast_dims(const OpContext& c, const ir::Dims& a, const ir::Dims& b) {
  size_t rank = std::max(a.size(), b.size());
  ir::Dims out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      c.fail("shapes " + ir::dims_str(a) + " and " + ir::dims_str(b) + " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// Keeps channels-last flowing: the output takes the layout of a full-size channels-last input.
inline Layout broadcast_layout(const TensorInfo& a, const TensorInfo& b, const ir::Dims& out) {
  for (const TensorInfo* t : {&a, &b})
    if (t->dims == out && t->layout == Layout::channels_last && out.size() >= 3) return Layout::channels_last;
  return Layout::row_major;
}

// The output box in its memory order and each input's strides along it (0 where it broadcasts).
struct StridedBroadcast {
  int rank = 0;
  std::vector<int64_t> dims, a_strides, b_strides;
};

inline StridedBroadcast strided_broadcast(const TensorInfo& a, const TensorInfo& b, const ir::Dims& out,
                                          Layout out_layout) {
  StridedBroadcast r;
  r.rank = int(out.size());
  const auto order = memory_order(r.rank, out_layout);
  auto input_strides = [&](const TensorInfo& t) {
    const auto s = t.strides();
    std::vector<int64_t> aligned(out.size(), 0);
    const size_t off = out.size() - t.dims.size();
    for (size_t d = 0; d < t.dims.size(); ++d) aligned[off + d] = t.dims[d] == 1 ? 0 : s[d];
    std::vector<int64_t> phys(out.size());
    for (size_t k = 0; k < out.size(); ++k) phys[k] = aligned[size_t(order[k])];
    return phys;
  };
  r.dims.resize(out.size());
  for (size_t k = 0; k < out.size(); ++k) r.dims[k] = out[size_t(order[k])];
  r.a_strides = input_strides(a);
  r.b_strides = input_strides(b);
  return r;
}

}  // namespace octet::ops
