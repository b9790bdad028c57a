#pragma once
// The input checks InstanceNormalization (engine/ops/norm_ops.cc) and GroupNorm
// (engine/ops/group_norm_op.cc) share: X [N, C, D1, ...] and two parameters of one value per
// channel, all float32.
#include <string>

#include "engine/op_registry.h"

namespace octet::ops {

// The same with `count` values per parameter, one per `unit` ("channel", "group").
inline void require_norm_inputs(const OpContext& c, const char* scale_name, const char* bias_name, int64_t count,
                                const char* unit) {
  for (size_t i = 0; i < 3; ++i)
    if (c.info(i).dtype != ir::DType::f32)
      c.fail(std::string(ir::dtype_name(c.info(i).dtype)) + " input " + std::to_string(i) +
             " is not supported (only float32)");
  const ir::Dims& d = c.info(0).dims;
  if (d.size() < 3) c.fail("X must have rank >= 3 (N, C, D1, ...), got " + ir::dims_str(d));
  for (size_t i = 1; i < 3; ++i)
    if (c.info(i).count() != count)
      c.fail(std::string(i == 1 ? scale_name : bias_name) + " must hold one value per " + unit + " (" +
             std::to_string(count) + "), holds " + std::to_string(c.info(i).count()));
}

inline void require_channel_norm_inputs(const OpContext& c, const char* scale_name, const char* bias_name) {
  const ir::Dims& d = c.info(0).dims;
  require_norm_inputs(c, scale_name, bias_name, d.size() >= 2 ? d[1] : -1, "channel");
}

}  // namespace octet::ops
