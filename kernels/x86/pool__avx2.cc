// Max- and average-pooling microkernels (kernels/pool/pool_list.h), AVX2: 8 floats or 32 bytes per
// vector. The loops are kernels/pool/pool_loops.inc over kernels/x86/avx2_ops.h. Float tails use
// vmaskmovps. AVX2 has no byte masks: a byte tail of a row of at least 16 channels redoes the
// row's last 16 channels (max is idempotent, so the overlap writes the same values again);
// narrower rows go through a stack buffer.
#include <immintrin.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/pool/pool_list.h"
#include "kernels/x86/avx2_ops.h"

namespace octet::kernels::avx2 {

#include "kernels/pool/pool_loops.inc"

}  // namespace octet::kernels::avx2
