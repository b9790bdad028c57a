#pragma once
// MaxPool and AveragePool (FP32, uint8, int8) over NHWC activations on the microkernels
// of kernels/pool/pool_list.h: each driver takes the first entry that runs under its cap
// (isa_runs), and falls back to the scalar ref kernel (kernels/ref/pool2d.h), whose
// results the microkernels reproduce bit for bit, when none does. kernel_name() says which ran.
//
// Life cycle (as F32DwConv's): construct once per layer, bind(x) once per input address
// (builds, for image 0, one pointer per window position of every output pixel; positions
// outside the input point at a fill row; every image reuses the pointers), run() any number of
// times on that input: no allocation, threads split the output rows.
#include <pthreadpool.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernel_id.h"
#include "kernels/isa.h"
#include "kernels/pool/pool_list.h"
#include "kernels/q8_type.h"
#include "kernels/ref/pool2d.h"

namespace octet::kernels {

// The window pointers, fill row and divisors the three drivers share, and their row loop.
template <class T>
class PoolWindows {
 public:
  PoolWindows(const Pool2dShape& s, T fill);
  // The pointers point into fill_: a copy would share the original's row, a move keeps it.
  PoolWindows(const PoolWindows&) = delete;
  PoolWindows& operator=(const PoolWindows&) = delete;
  PoolWindows(PoolWindows&&) noexcept = default;
  PoolWindows& operator=(PoolWindows&&) noexcept = default;
  // Average pooling: the divisor of every output pixel (0 counts as 1: the sum is then 0).
  void set_divisors(std::vector<double> per_pixel) { divisors_ = std::move(per_pixel); }
  // FP32 average pooling: PoolArgs::sum_rows (f32_avgpool_sum_rows, kernels/ref/pool2d.h).
  void set_sum_rows(int rows) { sum_rows_ = static_cast<size_t>(rows); }
  int sum_rows() const { return static_cast<int>(sum_rows_); }
  // build = false (the ref kernel runs): only remember x.
  void bind(const T* x, bool build);
  void check_bound(const T* x, const char* who) const;
  // `params` reaches the microkernel as PoolArgs::params (INT8 average pooling's).
  void run(void (*ukernel)(const PoolArgs<T>&), T* y, pthreadpool_t pool, const void* params = nullptr) const;

 private:
  static void row_task(void* context, size_t row);

  Pool2dShape s_;
  std::vector<T> fill_;
  std::vector<const T*> taps_;  // [out_h][out_w][kernel_h * kernel_w], image 0
  std::vector<double> divisors_;
  size_t sum_rows_ = 1;
  const T* bound_ = nullptr;
};

class F32MaxPool2d {
 public:
  F32MaxPool2d(const Pool2dShape& s, Isa isa);
  // Runs exactly `ukernel` (tests and benchmarks); the CPU must support ukernel.isa.
  F32MaxPool2d(const Pool2dShape& s, const PoolUkernel<F32PoolUkernel>& ukernel);

  KernelId kernel_id() const;
  std::string kernel_name() const { return kernel_id().name; }
  void bind(const float* x);
  // x: [batch][in_h][in_w][C], the one bind() was given; y: [batch][out_h][out_w][C].
  void run(const float* x, float* y, pthreadpool_t pool) const;

 private:
  Pool2dShape s_;
  const PoolUkernel<F32PoolUkernel>* ukernel_;
  PoolWindows<float> windows_;
};

// Bytes of the type `type` names.
class Q8MaxPool2d {
 public:
  Q8MaxPool2d(Q8 type, const Pool2dShape& s, Isa isa);
  Q8MaxPool2d(Q8 type, const Pool2dShape& s, const PoolUkernel<Q8PoolUkernel>& ukernel);

  KernelId kernel_id() const;
  std::string kernel_name() const { return kernel_id().name; }
  void bind(const void* x);
  void run(const void* x, void* y, pthreadpool_t pool) const;

 private:
  Q8 type_;
  Pool2dShape s_;
  const PoolUkernel<Q8PoolUkernel>* ukernel_;
  PoolWindows<uint8_t> windows_;
};

// ONNX Runtime's NCHWc block on this CPU (MLAS: 16 floats with AVX-512F, 8 on any other x86-64,
// 0 on AArch64): its layout pass runs an AveragePool of a multiple of that many channels as an NCHWc
// pool, summing in another order (f32_avgpool_sum_rows), but only a pool whose input shape it
// knows (ir::kShapeKnownToOrtAttr).
int ort_nchwc_block();

class F32AvgPool2d {
 public:
  // count_include_pad as f32_avgpool2d_nhwc__ref takes it.
  // ort_nchwc: ONNX Runtime would run this pool in its NCHWc layout where the channels allow
  // (it knows the input's shape), which decides the summation order to follow.
  F32AvgPool2d(const Pool2dShape& s, bool count_include_pad, Isa isa, bool ort_nchwc = true);
  F32AvgPool2d(const Pool2dShape& s, bool count_include_pad, const PoolUkernel<F32PoolUkernel>& ukernel);

  KernelId kernel_id() const;
  std::string kernel_name() const { return kernel_id().name; }
  void bind(const float* x);
  void run(const float* x, float* y, pthreadpool_t pool) const;

 private:
  Pool2dShape s_;
  bool count_include_pad_;
  const PoolUkernel<F32PoolUkernel>* ukernel_;
  PoolWindows<float> windows_;
};

// QLinearAveragePool (uint8 or int8, as `type` says) with the reference's float arithmetic
// (Q8AvgPoolParams, kernels/pool/pool_list.h): bit-identical to q8_avgpool2d_nhwc__ref. The fill
// row holds x's zero point, whose dequantized value is +0.0.
class Q8AvgPool2d {
 public:
  Q8AvgPool2d(Q8 type, const Pool2dShape& s, bool count_include_pad, const Q8AvgPoolParams& params, Isa isa);
  Q8AvgPool2d(Q8 type, const Pool2dShape& s, bool count_include_pad, const Q8AvgPoolParams& params,
              const PoolUkernel<Q8PoolUkernel>& ukernel);

  KernelId kernel_id() const;
  std::string kernel_name() const { return kernel_id().name; }
  void bind(const void* x);
  void run(const void* x, void* y, pthreadpool_t pool) const;

 private:
  Q8 type_;
  Pool2dShape s_;
  bool count_include_pad_;
  Q8AvgPoolParams params_;
  const PoolUkernel<Q8PoolUkernel>* ukernel_;
  PoolWindows<uint8_t> windows_;
};

}  // namespace octet::kernels
