// Element-wise and global-pooling microkernels, AVX-512 (F/BW/DQ/VL), 16 lanes of float32 /
// int32. The FP32 kernels are kernels/elementwise/eltwise_loops.inc over the Ops of
// kernels/x86/avx512_ops.h, the INT8 ones kernels/elementwise/q8_eltwise_loops.inc over its I32Lanes,
// repeating the float steps of their reference variants one for one (kernels/ref/qelementwise.cc,
// qpool2d.cc); contraction is off for this file so a multiply then an add stay two roundings,
// and every FMA is written out. No element outside [0, n) is read or written.
#include "kernels/ref/fp_contract_off.h"

#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/elementwise/erf_coefficients.h"
#include "kernels/elementwise/eltwise_list.h"
#include "kernels/ref/activation.h"  // kOneSixth, GELU's constants
#include "kernels/x86/avx512_ops.h"

namespace octet::kernels::avx512 {

#include "kernels/elementwise/eltwise_loops.inc"
#include "kernels/elementwise/f32_act_softmax_loops.inc"

}  // namespace octet::kernels::avx512
