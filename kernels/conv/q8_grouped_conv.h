#pragma once
// INT8 grouped convolution (ResNeXt, RegNet, grouped 1x1s), NHWC: one dense Q8Conv per group on
// the group's channels. Each run gathers a group's input channels into a dense buffer, runs
// that group's conv (its own packed weights, zero-point fold and indirection, bound once to
// the buffer) and scatters its output channels into y: two passes over the activations per
// run on top of the SIMD IGEMMs, against the scalar reference it replaces. Depthwise convs
// (one channel per group) have their own driver (Q8DwConv).
#include <pthreadpool.h>

#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel_id.h"
#include "kernels/conv/q8_conv.h"

namespace octet::kernels {

class Q8GroupedConv {
 public:
  // groups > 1 that divide in_c and out_c, and what Q8Conv takes for one group.
  static bool supports(const Conv2dShape& s, Q8 x_type, Q8 y_type);

  // As Q8Conv: w ONNX order [out_c][in_c / groups][kh][kw] int8, bias [out_c] or nullptr, rq 1
  // or out_c multipliers. Throws Unsupported when a group's conv has no microkernel under isa.
  // Each group's conv packs through `cache` as Q8Conv does (nullptr: private copies).
  Q8GroupedConv(const Conv2dShape& s, Q8 x_type, int32_t x_zero_point, const int8_t* w, const int32_t* bias,
                const Requantization& rq, Q8 y_type, Isa isa, PackedCache* cache = nullptr);

  // Float output (dynamic quantization), as Q8Conv's: w s8 with zero point 0, out's w_scale
  // and bias 1 or out_c values each.
  Q8GroupedConv(const Conv2dShape& s, Q8 x_type, const int8_t* w, const DequantizedOutput& out, Isa isa,
                PackedCache* cache = nullptr);

  const std::string& kernel_name() const { return name_.name; }
  const KernelId& kernel_id() const { return name_; }

  void bind(const void* x);  // nothing to bind: the groups read the gather buffer
  void run(const void* x, void* y, pthreadpool_t pool) const;
  // Float output only: y is [batch][out_h][out_w][out_c] float; `range` gathers every group's.
  void run_dequantized(const void* x, float x_scale, int32_t x_zero_point, float* y, pthreadpool_t pool,
                       OutputRange* range = nullptr);

 private:
  size_t start(Q8 x_type, Q8 y_type);  // checks the shape, sets the group widths; weights per group
  void finish(size_t y_bytes);  // checks every group has a microkernel, sizes the buffers, binds
  template <class RunGroup>
  void run_groups(const void* x, void* y, size_t y_bytes, const RunGroup& run_group) const;

  Conv2dShape s_;
  size_t group_in_c_, group_out_c_;
  std::vector<std::unique_ptr<Q8Conv>> groups_;
  mutable std::vector<uint8_t> x_group_, y_group_;  // one group's input and output, dense
  KernelId name_;
};

}  // namespace octet::kernels
