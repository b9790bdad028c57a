#pragma once
// Window geometry shared by Conv and the pooling ops: kernel, strides, dilations and
// pads resolved from ONNX attributes (auto_pad included) into output extents.
#include <vector>

#include "engine/op_registry.h"
#include "kernels/ref/conv2d.h"
#include "kernels/ref/pool2d.h"

namespace octet::ops {

struct Window {
  int spatial_rank = 2;  // 1, 2 or 3; 1-D ops run as 2-D with H = 1, 3-D ones add a depth
  std::vector<int64_t> in, out, kernel, strides, dilations, pad_begin, pad_end;
};

// in_spatial: the input's spatial extents. kernel: from the weights or kernel_shape.
Window resolve_window(const OpContext& c, const std::vector<int64_t>& in_spatial,
                      const std::vector<int64_t>& kernel, bool ceil_mode);

// The 2-D view (H, W) of a 1-D or 2-D window: index 0 is H; of a 3-D window, its last two
// dimensions (index 0 is the depth).
struct Window2d {
  int in_h, in_w, out_h, out_w, k_h, k_w, s_h, s_w, d_h, d_w, pad_top, pad_left, pad_bottom, pad_right;
};
Window2d as_2d(const Window& w);

// Rank must be 3 (N, C, L) or 4 (N, C, H, W), or 5 (N, C, D, H, W) where the op runs 3-D.
void require_spatial_rank(const OpContext& c, const TensorInfo& x, const char* what, bool allow_3d = false);

// Conv geometry (Conv, QLinearConv, ConvInteger): X is input x_input, W (ONNX order
// [M, C / group, kernel...]) is input w_input; attributes group, kernel_shape, pads,
// strides, dilations, auto_pad.
struct ConvGeometry {
  Window window;
  int64_t batch, in_c, out_c, groups;
  ir::Dims out_dims() const;  // [N, M, spatial...]
};
// allow_3d: the op runs 5-D X (the depth fields of Conv2dShape).
ConvGeometry conv_geometry(const OpContext& c, size_t x_input, size_t w_input, bool allow_3d = false);
kernels::Conv2dShape conv2d_shape(const ConvGeometry& g);
// Multiply-accumulates: every output element sums over C / group * kernel positions.
int64_t conv_macs(const OpContext& c, size_t w_input, const TensorInfo& out);

// Pooling window of input 0 from kernel_shape, pads, strides, dilations, auto_pad, ceil_mode.
// allow_3d: the op runs 5-D X (the depth fields of Pool2dShape).
Window pool_window(const OpContext& c, bool allow_3d = false);
kernels::Pool2dShape pool2d_shape(const OpContext& c, const Window& w);
// A global pool's output of X (input x, rank >= 3): [N, C, 1, ...], channels-last, X's type.
TensorInfo global_pool_output(const OpContext& c, size_t x);

}  // namespace octet::ops
