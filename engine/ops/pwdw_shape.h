#pragma once
// The two convs of a PointwiseDepthwise step (engine/ops/pwdw_op.cc) as the kernels see them:
// the 1x1 expand over x's map, then the depthwise conv with the node's window attributes. Shared
// with bench/dispatch_check, which times each part's candidates.
#include <string>

#include "engine/op_registry.h"
#include "engine/ops/spatial.h"
#include "engine/ops/two_conv_inputs.h"
#include "kernels/ref/conv2d.h"

namespace octet::ops {

struct PwDwShape {
  kernels::Conv2dShape pw, dw;
};

inline PwDwShape pwdw_shape(const OpContext& c) {
  const TensorInfo& x = c.info(kX);
  if (x.dtype != ir::DType::f32 || x.dims.size() != 4) c.fail("x must be a float32 NCHW tensor, got " + ir::dims_str(x.dims));
  const ir::Dims& w1 = c.info(kW1).dims;
  const ir::Dims& w2 = c.info(kW2).dims;
  if (w1.size() != 4 || w1[1] != x.dims[1] || w1[2] != 1 || w1[3] != 1)
    c.fail("the 1x1 weights " + ir::dims_str(w1) + " do not fit x " + ir::dims_str(x.dims));
  const int64_t mid = w1[0];
  if (w2.size() != 4 || w2[0] != mid || w2[1] != 1 || c.node.attrs.i("group", 1) != mid)
    c.fail("the depthwise weights " + ir::dims_str(w2) + " (group " + std::to_string(c.node.attrs.i("group", 1)) +
           ") do not fit " + std::to_string(mid) + " channels");
  for (size_t b : {kB1, kB2})
    if (c.has(b) && c.info(b).count() != mid) c.fail("a bias has " + std::to_string(c.info(b).count()) + " values, expected " + std::to_string(mid));
  ops::ConvGeometry g;
  g.batch = x.dims[0];
  g.in_c = g.out_c = g.groups = mid;
  g.window = ops::resolve_window(c, {x.dims[2], x.dims[3]}, {w2[2], w2[3]}, false);
  PwDwShape s;
  s.dw = ops::conv2d_shape(g);
  s.pw = s.dw;
  s.pw.in_c = int(x.dims[1]);
  s.pw.groups = 1;
  s.pw.out_h = s.pw.in_h;
  s.pw.out_w = s.pw.in_w;
  s.pw.kernel_h = s.pw.kernel_w = s.pw.stride_h = s.pw.stride_w = s.pw.dilation_h = s.pw.dilation_w = 1;
  s.pw.pad_top = s.pw.pad_left = 0;
  return s;
}

}  // namespace octet::ops
