// FP32 depthwise convolution, 4 channels per float32x4 (kernels/conv/dwconv_list.h has the
// contract). The loops are kernels/conv/f32_dwconv_loops.inc, the x86 levels' template, over the Ops
// of kernels/arm/neon_ops.h; the channel tail goes through a 4-float buffer, so no load or
// store leaves the tensors.
#include <arm_neon.h>

#include <cstring>
#include <type_traits>

#include "kernels/arm/neon_ops.h"
#include "kernels/conv/dwconv_list.h"

namespace octet::kernels::neon {

#define OCTET_F32_DWCONV_TILE c4
#include "kernels/conv/f32_dwconv_loops.inc"

}  // namespace octet::kernels::neon
