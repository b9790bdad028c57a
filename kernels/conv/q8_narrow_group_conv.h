#pragma once
// INT8 grouped convolution with narrow groups (4 or 8 input and output channels per group:
// ResNeXt-50 32x4d's first two stages, RegNet's group width 8), NHWC, on the microkernels of
// kernels/conv/q8_gconv_list.h: one dot-product instruction serves several groups, where
// Q8GroupedConv runs one dense IGEMM per group (4 of a 16-column tile busy at G = 4) on
// channels it gathers out of the input and scatters back. Static (requantized u8 / s8 output)
// and dynamic (float output) quantization; results bit-exact with the reference (integer sums,
// then the IGEMM's own store).
//
// Life cycle as Q8Conv's: construct once per layer (packs the weights, zero point folded),
// bind() once per input address (one pointer per output pixel and tap for image 0, the other
// images an offset), run() any number of times on that input; threads split the pixels.
#include <pthreadpool.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/conv/q8_gconv_list.h"
#include "kernels/elementwise/output_range.h"
#include "kernels/gemm/q8_float_output.h"
#include "kernels/isa.h"
#include "kernels/kernel_id.h"
#include "kernels/q8_type.h"
#include "kernels/ref/conv2d.h"
#include "kernels/ref/qmath.h"

namespace octet::kernels {

class PackedCache;  // kernels/packed_cache.h

// The first row of kQ8GconvKernels for x_type and groups of `group_width` that runs here under
// the cap `isa`; nullptr when none does.
const Q8GconvKernel* choose_q8_gconv_kernel(Isa isa, Q8 x_type, int group_width);

class Q8NarrowGroupConv {
 public:
  // 2-D, groups > 1, in_c / groups == out_c / groups == 4, 8 or a multiple of 16, positive
  // sizes, u8 / s8 types.
  static bool supports(const Conv2dShape& s, Q8 x_type, Q8 y_type);
  // supports() and a microkernel runs under the cap `isa` on this CPU.
  static bool runs(const Conv2dShape& s, Q8 x_type, Q8 y_type, Isa isa);

  // As Q8Conv's: w ONNX order [out_c][G][kh][kw] s8 (zero point 0), bias [out_c] or nullptr, rq
  // 1 or out_c multipliers. Throws Unsupported when !runs().
  Q8NarrowGroupConv(const Conv2dShape& s, Q8 x_type, int32_t x_zero_point, const int8_t* w, const int32_t* bias,
                    const Requantization& rq, Q8 y_type, Isa isa, PackedCache* cache = nullptr);
  // Float output (dynamic quantization), as Q8Conv's.
  Q8NarrowGroupConv(const Conv2dShape& s, Q8 x_type, const int8_t* w, const DequantizedOutput& out, Isa isa,
                    PackedCache* cache = nullptr);
  // Exactly `kernel` (tests, benchmarks); nullopt rq: the float output of `out`.
  Q8NarrowGroupConv(const Conv2dShape& s, Q8 x_type, int32_t x_zero_point, const int8_t* w, const int32_t* bias,
                    const Requantization* rq, const DequantizedOutput* out, Q8 y_type, const Q8GconvKernel& kernel,
                    PackedCache* cache = nullptr);

  const std::string& kernel_name() const { return name_.name; }
  const KernelId& kernel_id() const { return name_; }

  void bind(const void* x);  // x: [batch][in_h][in_w][C]; run() must then be given the same x
  // y: [batch][out_h][out_w][C] of y_type. Requantized output only.
  void run(const void* x, void* y, pthreadpool_t pool) const;
  // Float output only: y float; `range` gathers the output's range. Refills the padding row
  // when the zero point changed, so not reentrant on one object.
  void run_dequantized(const void* x, float x_scale, int32_t x_zero_point, float* y, pthreadpool_t pool,
                       OutputRange* range = nullptr);

 private:
  struct Task;
  static void task(void* context, size_t image, size_t pixel, size_t count);
  void run_tasks(const void* x, void* y, size_t y_bytes, pthreadpool_t pool, OutputRange* range) const;

  Conv2dShape s_;
  Q8 x_type_;
  const Q8GconvKernel* kernel_;
  KernelId name_;
  int32_t x_zero_point_ = 0, y_zero_point_ = 0;
  float lo_ = 0, hi_ = 0;
  std::shared_ptr<const std::vector<uint8_t>> packed_;  // shared by the Session's plans
  std::optional<Q8FloatOutput> float_out_;
  std::vector<uint8_t> zero_;  // the padding row: the activations' zero point
  std::vector<const uint8_t*> taps_;  // [out_h * out_w][kernel_h * kernel_w], image 0
  const void* bound_ = nullptr;
};

}  // namespace octet::kernels
