// FP32 depthwise convolution in portable C++: the row of kernels/conv/dwconv_list.inc at level
// scalar, which F32DwConv runs where no vector row does. The templated levels' own loops
// (kernels/conv/f32_dwconv_loops.inc) over an `Ops` whose "vector" is four floats in an array,
// so the packing, the tap order (even and odd taps in two sums, added at the end) and the fused
// multiply-adds are the vector rows', lane by lane.
#include <type_traits>

#include "kernels/cache_budgets.h"
#include "kernels/conv/dwconv_list.h"
#include "kernels/conv/scalar_f32_ops.h"

namespace octet::kernels::scalar {

#define OCTET_F32_DWCONV_TILE c4
#include "kernels/conv/f32_dwconv_loops.inc"
#undef OCTET_F32_DWCONV_TILE

}  // namespace octet::kernels::scalar
