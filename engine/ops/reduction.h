#pragma once
// A Reduce op's reduced axes and output shape, from its axes (input 1; the importer moves the
// attribute of opsets before 18 there), keepdims and noop_with_empty_axes. Shared by ReduceSum,
// ReduceMean, ReduceMax, ReduceMin (misc_ops.cc) and the mapped reductions (reduce_more.cc).
#include <vector>

#include "engine/op_registry.h"

namespace octet::ops {

struct Reduction {
  std::vector<bool> reduced;  // per input axis
  ir::Dims out;
  bool identity = false;  // noop_with_empty_axes with no axes: each element on its own
};

inline Reduction reduction(const OpContext& c) {
  const auto& d = c.info(0).dims;
  Reduction r;
  r.reduced.assign(d.size(), false);
  std::vector<int64_t> axes;
  if (c.has(1)) axes = c.constant(1, "axes").to_i64();
  if (axes.empty()) {
    if (c.node.attrs.i("noop_with_empty_axes") != 0) r.identity = true;
    else r.reduced.assign(d.size(), true);
  }
  for (int64_t a : axes) r.reduced[size_t(normalize_axis(c, a, int64_t(d.size())))] = true;
  const bool keep = c.node.attrs.i("keepdims") != 0;
  for (size_t i = 0; i < d.size(); ++i) {
    if (!r.reduced[i]) r.out.push_back(d[i]);
    else if (keep) r.out.push_back(1);
  }
  return r;
}

}  // namespace octet::ops
