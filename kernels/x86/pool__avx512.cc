// Max- and average-pooling microkernels (kernels/pool/pool_list.h), AVX-512 (F/BW/DQ): 16 floats or
// 64 bytes per vector. The loops are kernels/pool/pool_loops.inc over kernels/x86/avx512_ops.h.
// Tails use masked loads and stores, so no channel outside the row is touched.

#include <immintrin.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/pool/pool_list.h"
#include "kernels/x86/avx512_ops.h"

namespace octet::kernels::avx512 {

#include "kernels/pool/pool_loops.inc"

}  // namespace octet::kernels::avx512
