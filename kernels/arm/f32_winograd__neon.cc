// Winograd F(2x2, 3x3) transforms on NEON: 4 channels per float32x4; the channel tail goes
// through a 4-float buffer, so no load or store leaves the tensors. The math is in
// kernels/conv/f32_winograd_transforms.inc (adds and subtracts only: the x86 levels' bits);
// contracts in kernels/conv/f32_winograd_list.h.
#include <arm_neon.h>

#include <cstring>

#include "kernels/arm/neon_ops.h"
#include "kernels/conv/f32_winograd_list.h"

namespace octet::kernels::neon {

#include "kernels/conv/f32_winograd_transforms.inc"

}  // namespace octet::kernels::neon
