// Linear-resize microkernels (kernels/resize/resize_list.h), AVX-512: 16 channels per step.
#include "kernels/ref/fp_contract_off.h"  // first: no multiply-add contracted into an FMA

#include "kernels/resize/resize_list.h"
#include "kernels/x86/avx512_ops.h"

namespace octet::kernels::avx512 {

#include "kernels/resize/resize_linear_loop.inc"

}  // namespace octet::kernels::avx512
