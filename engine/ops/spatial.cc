#include "engine/ops/spatial.h"

#include <cmath>

namespace octet::ops {

void require_spatial_rank(const OpContext& c, const TensorInfo& x, const char* what, bool allow_3d) {
  if (allow_3d && x.dims.size() == 5) return;
  if (x.dims.size() != 3 && x.dims.size() != 4)
    c.fail(std::string(what) + " must have rank 3 or 4 (1-D or 2-D spatial)" +
           std::string(allow_3d ? " or 5 (3-D spatial)" : "") + ", got " + ir::dims_str(x.dims) +
           (allow_3d ? "" : "; 3-D spatial ops are not supported"));
}

Window resolve_window(const OpContext& c, const std::vector<int64_t>& in_spatial,
                      const std::vector<int64_t>& kernel, bool ceil_mode) {
  const auto& a = c.node.attrs;
  const size_t r = in_spatial.size();
  Window w;
  w.spatial_rank = int(r);
  w.in = in_spatial;
  w.kernel = kernel;
  auto list = [&](const char* name, int64_t dflt, size_t n) {
    std::vector<int64_t> v = a.has(name) ? a.ints(name) : std::vector<int64_t>{};
    if (v.empty()) v.assign(n, dflt);
    if (v.size() != n)
      c.fail(std::string(name) + " has " + std::to_string(v.size()) + " values, expected " + std::to_string(n));
    return v;
  };
  if (w.kernel.size() != r) c.fail("kernel_shape must have " + std::to_string(r) + " values");
  w.strides = list("strides", 1, r);
  w.dilations = list("dilations", 1, r);
  auto pads = list("pads", 0, 2 * r);
  for (size_t i = 0; i < r; ++i) {
    if (w.kernel[i] < 1 || w.strides[i] < 1 || w.dilations[i] < 1)
      c.fail("kernel, strides and dilations must be positive");
    if (pads[i] < 0 || pads[i + r] < 0) c.fail("negative pads are not supported");
  }
  w.pad_begin.assign(pads.begin(), pads.begin() + long(r));
  w.pad_end.assign(pads.begin() + long(r), pads.end());

  const std::string auto_pad = a.has("auto_pad") ? a.s("auto_pad") : "NOTSET";
  w.out.resize(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t eff_k = (w.kernel[i] - 1) * w.dilations[i] + 1;
    const int64_t s = w.strides[i];
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      w.out[i] = (w.in[i] + s - 1) / s;
      int64_t total = std::max<int64_t>(0, (w.out[i] - 1) * s + eff_k - w.in[i]);
      int64_t small = total / 2;
      w.pad_begin[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      w.pad_end[i] = total - w.pad_begin[i];
      continue;
    }
    if (auto_pad == "VALID") {
      w.pad_begin[i] = w.pad_end[i] = 0;
    } else if (auto_pad != "NOTSET") {
      c.fail("auto_pad '" + auto_pad + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
    }
    const int64_t span = w.in[i] + w.pad_begin[i] + w.pad_end[i] - eff_k;
    if (span < 0)
      c.fail("the window (" + std::to_string(eff_k) + ") is larger than the padded input (" +
             std::to_string(w.in[i] + w.pad_begin[i] + w.pad_end[i]) + ")");
    if (ceil_mode) {
      w.out[i] = (span + s - 1) / s + 1;
      // The last window must start inside the input or the leading padding.
      if ((w.out[i] - 1) * s >= w.in[i] + w.pad_begin[i]) --w.out[i];
    } else {
      w.out[i] = span / s + 1;
    }
  }
  return w;
}

Window2d as_2d(const Window& w) {
  Window2d v{};
  const bool one_d = w.spatial_rank == 1;
  const size_t depth = w.spatial_rank == 3 ? 1 : 0;  // H is index 1 of a 3-D window
  auto pick = [&](const std::vector<int64_t>& x, int dim2, int64_t one) {
    return int(one_d ? (dim2 == 0 ? one : x[0]) : x[size_t(dim2) + depth]);
  };
  v.in_h = pick(w.in, 0, 1);
  v.in_w = pick(w.in, 1, 1);
  v.out_h = pick(w.out, 0, 1);
  v.out_w = pick(w.out, 1, 1);
  v.k_h = pick(w.kernel, 0, 1);
  v.k_w = pick(w.kernel, 1, 1);
  v.s_h = pick(w.strides, 0, 1);
  v.s_w = pick(w.strides, 1, 1);
  v.d_h = pick(w.dilations, 0, 1);
  v.d_w = pick(w.dilations, 1, 1);
  v.pad_top = pick(w.pad_begin, 0, 0);
  v.pad_left = pick(w.pad_begin, 1, 0);
  v.pad_bottom = pick(w.pad_end, 0, 0);
  v.pad_right = pick(w.pad_end, 1, 0);
  return v;
}

ConvGeometry conv_geometry(const OpContext& c, size_t x_input, size_t w_input, bool allow_3d) {
  const TensorInfo& x = c.info(x_input);
  const TensorInfo& w = c.info(w_input);
  require_spatial_rank(c, x, "X", allow_3d);
  if (w.dims.size() != x.dims.size())
    c.fail("W " + ir::dims_str(w.dims) + " must have the rank of X " + ir::dims_str(x.dims));
  ConvGeometry g;
  g.batch = x.dims[0];
  g.in_c = x.dims[1];
  g.out_c = w.dims[0];
  g.groups = c.node.attrs.i("group", 1);
  if (g.groups < 1 || g.in_c % g.groups || g.out_c % g.groups)
    c.fail("group " + std::to_string(g.groups) + " must divide the input channels (" +
           std::to_string(g.in_c) + ") and the output channels (" + std::to_string(g.out_c) + ")");
  if (w.dims[1] * g.groups != g.in_c)
    c.fail("W " + ir::dims_str(w.dims) + " expects " + std::to_string(w.dims[1] * g.groups) +
           " input channels, X " + ir::dims_str(x.dims) + " has " + std::to_string(g.in_c));
  std::vector<int64_t> spatial(x.dims.begin() + 2, x.dims.end());
  std::vector<int64_t> kernel(w.dims.begin() + 2, w.dims.end());
  if (c.node.attrs.has("kernel_shape")) {
    const auto& ks = c.node.attrs.ints("kernel_shape");
    if (!ks.empty() && ks != kernel) c.fail("kernel_shape does not match the weights " + ir::dims_str(w.dims));
  }
  g.window = resolve_window(c, spatial, kernel, false);
  return g;
}

ir::Dims ConvGeometry::out_dims() const {
  ir::Dims out = {batch, out_c};
  out.insert(out.end(), window.out.begin(), window.out.end());
  return out;
}

kernels::Conv2dShape conv2d_shape(const ConvGeometry& g) {
  Window2d w = as_2d(g.window);
  kernels::Conv2dShape s;
  s.batch = int(g.batch);
  s.in_h = w.in_h; s.in_w = w.in_w; s.in_c = int(g.in_c);
  s.out_h = w.out_h; s.out_w = w.out_w; s.out_c = int(g.out_c);
  s.kernel_h = w.k_h; s.kernel_w = w.k_w;
  s.stride_h = w.s_h; s.stride_w = w.s_w;
  s.dilation_h = w.d_h; s.dilation_w = w.d_w;
  s.pad_top = w.pad_top; s.pad_left = w.pad_left;
  s.groups = int(g.groups);
  if (g.window.spatial_rank == 3) {
    const Window& d = g.window;
    s.in_d = int(d.in[0]); s.out_d = int(d.out[0]); s.kernel_d = int(d.kernel[0]);
    s.stride_d = int(d.strides[0]); s.dilation_d = int(d.dilations[0]); s.pad_front = int(d.pad_begin[0]);
  }
  return s;
}

int64_t conv_macs(const OpContext& c, size_t w_input, const TensorInfo& out) {
  const auto& w = c.info(w_input).dims;
  int64_t per_output = 1;
  for (size_t i = 1; i < w.size(); ++i) per_output *= w[i];
  return out.count() * per_output;
}

Window pool_window(const OpContext& c, bool allow_3d) {
  const TensorInfo& x = c.info(0);
  require_spatial_rank(c, x, "X", allow_3d);
  const std::vector<int64_t> ks =
      c.node.attrs.has("kernel_shape") ? c.node.attrs.ints("kernel_shape") : std::vector<int64_t>{};
  if (ks.size() + 2 != x.dims.size())
    c.fail("kernel_shape needs " + std::to_string(x.dims.size() - 2) + " values for X " + ir::dims_str(x.dims));
  // storage_order orders MaxPool's Indices (engine/ops/pool.cc), not its values.
  if (const int64_t order = c.node.attrs.i("storage_order", 0); order != 0 && order != 1)
    c.fail("storage_order " + std::to_string(order) + " must be 0 or 1");
  std::vector<int64_t> spatial(x.dims.begin() + 2, x.dims.end());
  return resolve_window(c, spatial, ks, c.node.attrs.i("ceil_mode", 0) != 0);
}

kernels::Pool2dShape pool2d_shape(const OpContext& c, const Window& window) {
  Window2d w = as_2d(window);
  kernels::Pool2dShape s;
  s.batch = int(c.info(0).dims[0]);
  s.channels = int(c.info(0).dims[1]);
  s.in_h = w.in_h; s.in_w = w.in_w; s.out_h = w.out_h; s.out_w = w.out_w;
  s.kernel_h = w.k_h; s.kernel_w = w.k_w; s.stride_h = w.s_h; s.stride_w = w.s_w;
  s.dilation_h = w.d_h; s.dilation_w = w.d_w;
  s.pad_top = w.pad_top; s.pad_left = w.pad_left; s.pad_bottom = w.pad_bottom; s.pad_right = w.pad_right;
  if (window.spatial_rank == 3) {
    s.in_d = int(window.in[0]); s.out_d = int(window.out[0]); s.kernel_d = int(window.kernel[0]);
    s.stride_d = int(window.strides[0]); s.dilation_d = int(window.dilations[0]);
    s.pad_front = int(window.pad_begin[0]); s.pad_back = int(window.pad_end[0]);
  }
  return s;
}

TensorInfo global_pool_output(const OpContext& c, size_t x_input) {
  const TensorInfo& x = c.info(x_input);
  if (x.dims.size() < 3) c.fail("X must have rank >= 3, got " + ir::dims_str(x.dims));
  ir::Dims out(x.dims.size(), 1);
  out[0] = x.dims[0];
  out[1] = x.dims[1];
  return {x.dtype, out, Layout::channels_last};
}

}  // namespace octet::ops
