// QLinearSoftmax microkernels (kernels/elementwise/qsoftmax_list.h), NEON: 4 lanes; NEON has no gather, so
// each lane's table entry is loaded into its lane.
#include "kernels/ref/fp_contract_off.h"  // first: every float step rounds as the reference's

#include "kernels/elementwise/qsoftmax_list.h"
#include "kernels/arm/neon_ops.h"

namespace octet::kernels::neon {

#include "kernels/elementwise/qsoftmax_loop.inc"

}  // namespace octet::kernels::neon
