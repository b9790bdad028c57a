// FP32 narrow-group convolution in portable C++: the rows of kernels/conv/f32_gconv_list.inc at
// level scalar, the templated levels' loops (f32_gconv_loops.inc) over four floats in an array.
#include <utility>

#include "kernels/conv/f32_gconv_list.h"
#include "kernels/conv/scalar_f32_ops.h"

namespace octet::kernels::scalar {

#define OCTET_F32_GCONV_TILE c4
#include "kernels/conv/f32_gconv_loops.inc"

}  // namespace octet::kernels::scalar
