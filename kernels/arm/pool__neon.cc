// Max- and average-pooling microkernels (kernels/pool/pool_list.h), AArch64 Advanced SIMD: 4 floats
// or 16 bytes per vector. The loops are kernels/pool/pool_loops.inc, the x86 levels' template, over
// kernels/arm/neon_ops.h: max keeps the x86 kernels' rule best = (v > best) ? v : best, average
// sums in double and divides once, step for step the ref's arithmetic. A row's tail redoes its
// last full vector (max) or goes through a stack buffer (average, and rows narrower than one
// vector), so nothing past the row is read or written.
#include <arm_neon.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/arm/neon_ops.h"
#include "kernels/pool/pool_list.h"

namespace octet::kernels::neon {

#include "kernels/pool/pool_loops.inc"

}  // namespace octet::kernels::neon
