#pragma once
// FP32 matrix products whose B is an activation (a MatMul of two run-time tensors, as a
// global-context block's [C, HW] x [HW, 1] attention pooling): B is packed into the chosen
// microkernel's layout at each run, into a buffer of this driver's own, then the tiles run as
// F32Gemm's do. No bias, no activation (those MatMuls have none).
#include <pthreadpool.h>

#include <cstdint>
#include <cstdlib>
#include <memory>

#include "kernels/gemm/f32_gemm_list.h"
#include "kernels/isa.h"
#include "kernels/kernel_id.h"

namespace octet::kernels {

class F32BatchedGemm {
 public:
  // One product of a [m][k] by b [k][n], both row-major. Throws Unsupported when no
  // microkernel runs under the cap `isa` (isa == scalar): callers use the ref kernel then.
  F32BatchedGemm(int64_t m, int64_t k, int64_t n, Isa isa);
  const KernelId& kernel_id() const { return name_; }
  // y[m][n] = a · b, packing b first. Not for two threads at once (the packed buffer is the
  // driver's own; one plan runs one call at a time).
  void run(const float* a, const float* b, float* y, pthreadpool_t pool) const;

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  int64_t m_, k_, n_;
  const F32GemmKernel* kernel_;
  KernelId name_;
  size_t block_stride_ = 0;
  std::unique_ptr<float[], Free> packed_;
};

}  // namespace octet::kernels
