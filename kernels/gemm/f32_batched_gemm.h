#pragma once
// FP32 matrix products whose B is an activation (a MatMul of two run-time tensors, as a
// global-context block's [C, HW] x [HW, 1] attention pooling, or a Gemm whose B is an input):
// B is packed into the chosen microkernel's layout at each run, into a buffer of this driver's
// own, then the tiles run as F32Gemm's do, with Gemm's alpha folded into the packing and its
// bias row, residual ([m][n], Gemm's beta · C) and activation in each tile's epilogue.
#include <pthreadpool.h>

#include <cstdint>
#include <cstdlib>
#include <memory>

#include "kernels/elementwise/eltwise.h"
#include "kernels/gemm/f32_gemm_list.h"
#include "kernels/isa.h"
#include "kernels/kernel_id.h"
#include "kernels/ref/activation.h"

namespace octet::kernels {

// What F32BatchedGemm adds to the product, per run: y = act(alpha · a·b + bias[j] + residual[i][j]).
struct F32GemmAddends {
  float alpha = 1.0f;               // multiplies B as it is packed
  const float* bias = nullptr;      // [n], the microkernel's starting row, or nullptr
  const float* residual = nullptr;  // [m][n] row-major, added after the product, or nullptr
};

class F32BatchedGemm {
 public:

  // Products of a [m][k] by b [k][n] (or [n][k] when trans_b), both row-major, then `act`.
  // Throws Unsupported when no microkernel runs under the cap `isa` (isa == scalar): callers
  // use the ref kernel then.
  F32BatchedGemm(int64_t m, int64_t k, int64_t n, Isa isa, bool trans_b = false, const Activation& act = {});
  const KernelId& kernel_id() const { return name_; }
  // y[m][n] = act(alpha · a · b + bias + residual), packing b first. Not for two threads at
  // once (the packed buffer is the driver's own; one plan runs one call at a time).
  void run(const float* a, const float* b, float* y, pthreadpool_t pool, const F32GemmAddends& add = {}) const;

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  int64_t m_, k_, n_;
  bool trans_b_;
  F32MinMax clamp_;
  F32Epilogue epilogue_;
  const F32GemmKernel* kernel_;
  KernelId name_;
  size_t block_stride_ = 0;
  std::unique_ptr<float[], Free> packed_;
};

}  // namespace octet::kernels
