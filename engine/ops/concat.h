#pragma once
// Concat's planning, shared by Concat (engine/ops/transform_ops.cc) and com.microsoft
// QLinearConcat (engine/ops/qconcat_op.cc): the output of joining the data inputs `data`
// (indices into the node's inputs) along the node's `axis`, channels-last when every input is,
// and one planned StridedCopy per input into its place in the output.
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/op_registry.h"
#include "kernels/elementwise/strided_copy.h"

namespace octet::ops {

TensorInfo concat_output(const OpContext& c, const std::vector<size_t>& data);

struct ConcatPiece {
  std::shared_ptr<const kernels::StridedCopy> copy;  // from the input's layout into the output's
  size_t input;                                      // index into the node's inputs
  const void* src;                                   // the input
  std::byte* dst;                                    // its place in the output
  // Its producer wrote it there (a view, engine/plan_views.cc): nothing to copy.
  bool in_place() const { return src == dst; }
};
// Pieces from the node's inputs `in` into `out`; `kernel` receives the copy kernel's name (the
// first scalar one, if any).
std::vector<ConcatPiece> concat_pieces(const OpContext& c, const std::vector<size_t>& data,
                                       std::span<const void* const> in, void* out, kernels::KernelId* kernel);

}  // namespace octet::ops
