// FP32 depthwise convolution, 8 channels per ymm (kernels/conv/dwconv_list.h has the contract).
// The loops are kernels/conv/f32_dwconv_loops.inc; the channel tail uses vmaskmovps.
#include <immintrin.h>

#include <type_traits>

#include "kernels/conv/dwconv_list.h"
#include "kernels/x86/avx2_ops.h"

namespace octet::kernels::avx2 {

#define OCTET_F32_DWCONV_TILE c8
#include "kernels/conv/f32_dwconv_loops.inc"

}  // namespace octet::kernels::avx2
