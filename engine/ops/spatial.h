#pragma once
// Window geometry shared by Conv and the pooling ops: kernel, strides, dilations and
// pads resolved from ONNX attributes (auto_pad included) into output extents.
#include <vector>

#include "engine/op_registry.h"

namespace octet::ops {

struct Window {
  int spatial_rank = 2;  // 1 or 2; 1-D ops run as 2-D with H = 1
  std::vector<int64_t> in, out, kernel, strides, dilations, pad_begin, pad_end;
};

// in_spatial: the input's spatial extents. kernel: from the weights or kernel_shape.
Window resolve_window(const OpContext& c, const std::vector<int64_t>& in_spatial,
                      const std::vector<int64_t>& kernel, bool ceil_mode);

// The 2-D view (H, W) of a 1-D or 2-D window: index 0 is H.
struct Window2d {
  int in_h, in_w, out_h, out_w, k_h, k_w, s_h, s_w, d_h, d_w, pad_top, pad_left, pad_bottom, pad_right;
};
Window2d as_2d(const Window& w);

// Rank must be 3 (N, C, L) or 4 (N, C, H, W).
void require_spatial_rank(const OpContext& c, const TensorInfo& x, const char* what);

}  // namespace octet::ops
