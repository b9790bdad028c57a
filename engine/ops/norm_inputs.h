#pragma once
// The input checks InstanceNormalization (engine/ops/norm_ops.cc) and GroupNorm
// (engine/ops/group_norm_op.cc) share: X [N, C, D1, ...] and two parameters of one value per
// channel, all float32.
#include <string>

#include "engine/op_registry.h"

namespace octet::ops {

inline void require_channel_norm_inputs(const OpContext& c, const char* scale_name, const char* bias_name) {
  for (size_t i = 0; i < 3; ++i)
    if (c.info(i).dtype != ir::DType::f32)
      c.fail(std::string(ir::dtype_name(c.info(i).dtype)) + " input " + std::to_string(i) +
             " is not supported (only float32)");
  const ir::Dims& d = c.info(0).dims;
  if (d.size() < 3) c.fail("X must have rank >= 3 (N, C, D1, ...), got " + ir::dims_str(d));
  for (size_t i = 1; i < 3; ++i)
    if (c.info(i).count() != d[1])
      c.fail(std::string(i == 1 ? scale_name : bias_name) + " must hold one value per channel (" +
             std::to_string(d[1]) + ")");
}

}  // namespace octet::ops
