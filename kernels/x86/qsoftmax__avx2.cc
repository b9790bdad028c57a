// QLinearSoftmax microkernels (kernels/elementwise/qsoftmax_list.h), AVX2: 8 lanes, table lookups by
// vgatherdps.
#include "kernels/ref/fp_contract_off.h"  // first: every float step rounds as the reference's

#include "kernels/elementwise/qsoftmax_list.h"
#include "kernels/x86/avx2_ops.h"

namespace octet::kernels::avx2 {

#include "kernels/elementwise/qsoftmax_loop.inc"

}  // namespace octet::kernels::avx2
