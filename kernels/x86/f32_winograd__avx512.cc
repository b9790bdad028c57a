// Winograd F(2x2, 3x3) transforms on zmm: 16 channels per vector, masked loads / stores for the
// channel tail. The math is in f32_winograd_transforms.inc; contracts in f32_winograd_list.h.
#include <immintrin.h>

#include "kernels/conv/f32_winograd_list.h"
#include "kernels/x86/avx512_ops.h"

namespace octet::kernels::avx512 {

#include "kernels/conv/f32_winograd_transforms.inc"

}  // namespace octet::kernels::avx512
