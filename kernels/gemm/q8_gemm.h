#pragma once
// QGemm (quantized output) / QLinearMatMul with a constant B: y[m][n] = requantize(A[m][k] *
// B[k][n] + bias) with the INT8 microkernels of kernels/gemm/q8_gemm_list.h (plain GEMM = IGEMM
// with one tap). B is s8 with zero point 0 (the caller checks it and falls back to
// q8_gemm__ref otherwise). Bit-exact with q8_gemm__ref (docs/requantization.md).
//
// The constructor packs B; run() takes any m and never allocates. Every level has a row (the
// portable ones at Isa::scalar): one path everywhere, and kernel_name() says which row runs.
// The DequantizedOutput constructor is MatMulInteger -> Cast -> Mul -> Add (dynamic
// quantization): float y, the activation's scale and zero point given per run
// (kernels/gemm/q8_float_output.h).
#include <pthreadpool.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/kernel_id.h"
#include "kernels/elementwise/output_range.h"
#include "kernels/gemm/q8_float_output.h"
#include "kernels/gemm/q8_pack.h"
#include "kernels/isa.h"
#include "kernels/gemm/q8_gemm_list.h"
#include "kernels/q8_type.h"
#include "kernels/ref/qmath.h"

namespace octet::kernels {

class Q8Gemm {
 public:
  // b: [k][n] int8, or [n][k] when trans_b (a PyTorch Linear's weight); bias: [n] int32 or
  // nullptr; rq: 1 or n multipliers, y zero point, clamp [qmin, qmax] inside y_type's range.
  // Every constructor packs B, or takes the packing `cache` holds for the same recipe
  // (nullptr: a private copy).
  Q8Gemm(int64_t k, int64_t n, Q8 a_type, int32_t a_zero_point, const int8_t* b, bool trans_b,
         const int32_t* bias, const Requantization& rq, Q8 y_type, Isa isa, PackedCache* cache = nullptr);
  // Uses exactly this microkernel (tests, benchmarks).
  Q8Gemm(int64_t k, int64_t n, Q8 a_type, int32_t a_zero_point, const int8_t* b, bool trans_b,
         const int32_t* bias, const Requantization& rq, Q8 y_type, const Q8GemmKernel& kernel,
         PackedCache* cache = nullptr);

  // Float output: y = clamp(float(acc) * a_scale * b_scale[c] + bias[c]).
  Q8Gemm(int64_t k, int64_t n, Q8 a_type, const int8_t* b, bool trans_b, DequantizedOutput out, Isa isa,
         PackedCache* cache = nullptr);
  Q8Gemm(int64_t k, int64_t n, Q8 a_type, const int8_t* b, bool trans_b, DequantizedOutput out,
         const Q8GemmKernel& kernel, PackedCache* cache = nullptr);

  const std::string& kernel_name() const { return name_.name; }
  const KernelId& kernel_id() const { return name_; }
  const Q8GemmKernel& kernel() const { return *kernel_; }

  // a: [m][k] of a_type (dense rows); y: [m][n] of y_type.
  void run(int64_t m, const void* a, void* y, pthreadpool_t pool) const;
  // Float-output GEMMs only; y: [m][n] float. Not for two threads at once (per-run state).
  // With `range`, the range of y is folded into it as the rows are written.
  void run_dequantized(int64_t m, const void* a, float a_scale, int32_t a_zero_point, float* y,
                       pthreadpool_t pool, OutputRange* range = nullptr);

 private:
  void init(const int8_t* b, bool trans_b, const int32_t* bias, const Requantization& rq, PackedCache* cache);
  void init_float_output(const int8_t* b, bool trans_b, DequantizedOutput out, Isa isa, PackedCache* cache);
  void run_tiles(int64_t m, const void* a, void* y, pthreadpool_t pool, OutputRange* range = nullptr) const;

  int64_t k_, n_;
  Q8 a_type_, y_type_;
  int32_t a_zero_point_;
  int32_t y_zero_point_, qmin_, qmax_;
  std::vector<float> multiplier_;
  const Q8GemmKernel* kernel_ = nullptr;
  KernelId name_;
  std::shared_ptr<const Q8PackedWeights> packed_;  // shared by the Session's plans
  std::optional<Q8FloatOutput> float_out_;  // dynamic quantization; empty when requantizing

};

}  // namespace octet::kernels
