// Linear-resize microkernels (kernels/resize/resize_list.h), NEON: 4 channels per step, with
// separate multiplies and adds (ONNX Runtime's x86 arithmetic, which octet reproduces on Arm:
// its own NEON path rounds differently).
#include "kernels/ref/fp_contract_off.h"  // first: no multiply-add contracted into an FMA

#include "kernels/resize/resize_list.h"
#include "kernels/arm/neon_ops.h"

namespace octet::kernels::neon {

#include "kernels/resize/resize_linear_loop.inc"

}  // namespace octet::kernels::neon
