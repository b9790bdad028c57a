// FP32 depthwise convolution, 16 channels per zmm (kernels/conv/dwconv_list.h has the contract).
// The loops are kernels/conv/f32_dwconv_loops.inc; the channel tail uses k-masked loads/stores.
#include <immintrin.h>

#include <type_traits>

#include "kernels/conv/dwconv_list.h"
#include "kernels/x86/avx512_ops.h"

namespace octet::kernels::avx512 {

#define OCTET_F32_DWCONV_TILE c16
#include "kernels/conv/f32_dwconv_loops.inc"

}  // namespace octet::kernels::avx512
