#pragma once
// ONNX Reshape's target shape, shared by Reshape and the ops that contain one (ChannelShuffle).
#include "engine/op_registry.h"

namespace octet::ops {

// The dims `in` takes under the shape held by constant input `shape_input` (0 copies the
// input's extent unless allowzero, -1 is inferred); fails naming the node when it cannot.
ir::Dims reshape_target(const OpContext& c, const ir::Dims& in, size_t shape_input);

}  // namespace octet::ops
