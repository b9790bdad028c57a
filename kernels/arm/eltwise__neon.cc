// Element-wise and global-pooling microkernels, AArch64 Advanced SIMD, 4 lanes of float32 /
// int32. The FP32 kernels are kernels/elementwise/eltwise_loops.inc over the Ops of kernels/arm/neon_ops.h
// (the x86 levels' template, so every path gives the same bits); tails go through small stack
// buffers, so no element outside [0, n) is read or written.
//
// The INT8 kernels are kernels/elementwise/q8_eltwise_loops.inc over I32Lanes, the x86 levels' steps one
// for one: contraction is off for this file (a multiply then an add stay two roundings; the
// FMAs of QLinearAdd's recipe are written out), the clamps use the x86 operand rule on NaN, and
// rounding to integers is to nearest even.
#include "kernels/ref/fp_contract_off.h"

#include <arm_neon.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/arm/neon_ops.h"
#include "kernels/elementwise/erf_coefficients.h"
#include "kernels/elementwise/eltwise_list.h"
#include "kernels/ref/activation.h"  // kOneSixth, GELU's constants

namespace octet::kernels::neon {

#include "kernels/elementwise/eltwise_loops.inc"
#include "kernels/elementwise/f32_act_softmax_loops.inc"

}  // namespace octet::kernels::neon
