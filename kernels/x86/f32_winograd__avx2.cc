// Winograd F(2x2, 3x3) transforms on ymm: 8 channels per vector; the channel tail uses
// vmaskmovps (slow stores on AMD, hence only for the tail). The math is in
// f32_winograd_transforms.inc; contracts in f32_winograd_list.h.
#include <immintrin.h>

#include "kernels/conv/f32_winograd_list.h"
#include "kernels/x86/avx2_ops.h"

namespace octet::kernels::avx2 {

#include "kernels/conv/f32_winograd_transforms.inc"

}  // namespace octet::kernels::avx2
