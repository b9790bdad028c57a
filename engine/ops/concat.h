#pragma once
// Concat's planning, shared by Concat (engine/ops/transform_ops.cc) and com.microsoft
// QLinearConcat (engine/ops/qconcat_op.cc): the output of joining the data inputs `data`
// (indices into the node's inputs) along the node's `axis`, channels-last when every input is,
// and one planned StridedCopy per input into its place in the output.
#include <memory>
#include <string>
#include <vector>

#include "engine/op_registry.h"
#include "kernels/elementwise/strided_copy.h"

namespace octet::ops {

TensorInfo concat_output(const OpContext& c, const std::vector<size_t>& data);

struct ConcatPiece {
  std::shared_ptr<const kernels::StridedCopy> copy;  // from the input's layout into the output's
  size_t input;                                      // index into the node's inputs
  size_t dst_offset;                                 // bytes into the output
};
// `kernel` receives the copy kernel's name (the first scalar one, if any).
std::vector<ConcatPiece> concat_pieces(const OpContext& c, const std::vector<size_t>& data, kernels::KernelId* kernel);

}  // namespace octet::ops
