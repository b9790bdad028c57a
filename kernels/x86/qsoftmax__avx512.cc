// QLinearSoftmax microkernels (kernels/elementwise/qsoftmax_list.h), AVX-512: 16 lanes, table lookups by
// vgatherdps, the low bytes stored by vpmovdb.
#include "kernels/ref/fp_contract_off.h"  // first: every float step rounds as the reference's

#include "kernels/elementwise/qsoftmax_list.h"
#include "kernels/x86/avx512_ops.h"

namespace octet::kernels::avx512 {

#include "kernels/elementwise/qsoftmax_loop.inc"

}  // namespace octet::kernels::avx512
