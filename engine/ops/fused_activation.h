#pragma once
// The activation a pass fused into a producer node, stored as node attributes:
// "fused_act" = op type of the removed activation node, "fused_act_params" = its
// parameters ([min, max] for Clip, [alpha, beta] for HardSigmoid); and a scale and shift after
// it, "fused_scale_shift" = [scale, shift] (passes::fuse_scalar_affine), read by the first form.
#include <string>

#include "core/ir.h"
#include "kernels/ref/activation.h"

namespace octet::ops {

// The attribute passes::fuse_scalar_affine writes (see above).
inline constexpr const char* kScaleShiftAttr = "fused_scale_shift";

kernels::Activation fused_activation(const ir::Node& n);
// The same, read from other attribute names (SqueezeExcite's "gate_act" / "gate_act_params").
kernels::Activation fused_activation(const ir::Node& n, const std::string& kind_attr, const std::string& params_attr);
std::string fused_activation_name(const ir::Node& n);  // "" when none

}  // namespace octet::ops
