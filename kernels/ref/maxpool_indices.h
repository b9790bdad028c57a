#pragma once
// MaxPool's second output, Indices, beside its values, over NHWC (NDHWC) activations, as ONNX
// Runtime computes them (its MaxPool1D/2D/3DTask): per channel the first window position, in
// (d, h, w) order, whose value is greater than all before it (the running best starts at
// lowest(), so NaN and -inf never win: Y is then lowest() as in f32_maxpool2d_nhwc__ref), and
// its index into the whole NCHW input: (n * C + c) * plane + offset, the offset row-major over
// the spatial axes (storage_order 0) or column-major (storage_order 1). A window where nothing
// won keeps coordinate -1 on every spatial axis of the op, as ORT's tasks leave it.
#include <cstdint>

#include "kernels/ref/pool2d.h"

namespace octet::kernels {

// spatial_rank: 1 (s holds it as W, H = 1), 2 or 3 (the depth fields). y, indices: NHWC.
void f32_maxpool_indices_nhwc__ref(const Pool2dShape& s, int spatial_rank, bool column_major, const float* x,
                                   float* y, int64_t* indices);

}  // namespace octet::kernels
