#pragma once
// QLinearMatMul and MatMulInteger of one [m][k] x [k][n] product on the INT8 microkernels of
// kernels/gemm/q8_gemm_list.h, bit-exact with q8_qlinear_matmul__ref / q8_gemm_int32__ref
// (docs/requantization.md): u8 or s8 A with one zero point, u8 or s8 B with one zero point or
// one per column, a requantized u8 / s8 output (1 or n multipliers) or the int32 one.
//
// The microkernels take int8 weights. A u8 B is read as the int8 b - 128 with its zero point
// moved by the same 128: b - zb = (b - 128) - (zb - 128), every product unchanged. With the
// weight zero point zw 0 after that (s8 B with zero point 0, u8 B with 128: the common QDQ
// weights) the tiles requantize themselves. Otherwise
//   sum_k (a - za)(w - zw[j]) = sum_k (a - za) w  -  zw[j] * sum_k (a - za)
// the tiles store the first sum as int32 (fn_i32), and each tile is corrected by the second
// term (a row sum of A, one per run) and requantized as it is finished, still in cache. Both
// sides are the same integers modulo 2^32, as the reference's int32 result is.
//
// B is packed once by the constructor when given (constant), else by pack() before the runs
// that use it, into bytes allocated once.
#include <pthreadpool.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "kernels/gemm/q8_pack.h"
#include "kernels/isa.h"
#include "kernels/kernel_id.h"
#include "kernels/q8_type.h"
#include "kernels/ref/qmath.h"

namespace octet::kernels {

class Q8MatMul {
 public:
  // b: [k][n] of b_type, or nullptr (given to pack() at run time). b_zero_point: 1 or n values
  // in b_type's range. rq: 1 or n multipliers (a_scale * b_scale[j]) / y_scale, y zero point
  // and clamp inside y_type; nullptr for the int32 output. max_m: the most rows a run takes.
  Q8MatMul(int64_t k, int64_t n, Q8 a_type, int32_t a_zero_point, Q8 b_type, const void* b,
           std::span<const int32_t> b_zero_point, const Requantization* rq, Q8 y_type, int64_t max_m, Isa isa,
           PackedCache* cache = nullptr);

  const KernelId& kernel_id() const { return name_; }
  // The weight zero point is not 0 after the u8 shift: int32 tiles corrected per row.
  bool corrected() const { return corrected_; }

  // B for the runs that follow ([k][n] of b_type): only when constructed without one.
  void pack(const void* b);
  // a: [m][k] of a_type, m <= max_m; y: [m][n] of y_type, or int32. Not for two threads at
  // once (run-time B and row sums are per object).
  void run(int64_t m, const void* a, void* y, pthreadpool_t pool);

 private:
  void dense_weights(const void* b);

  int64_t k_, n_, max_m_;
  Q8 a_type_, b_type_, y_type_;
  int32_t a_zero_point_;
  std::vector<int32_t> w_zero_point_;  // b_zero_point in int8 terms (minus 128 for a u8 B)
  bool corrected_ = false, int32_out_;
  std::vector<float> multiplier_;
  int32_t y_zero_point_ = 0, qmin_ = 0, qmax_ = 0;
  const Q8GemmKernel* kernel_ = nullptr;
  KernelId name_;
  std::shared_ptr<const Q8PackedWeights> packed_;  // constant B
  Q8PackedWeights run_packed_;                       // run-time B
  std::vector<int8_t> dense_;                        // B as int8, [n][k]
  std::vector<int32_t> row_sum_;                     // sum_k (a - za), per row of a run
  std::vector<int32_t> acc_;                         // corrected path: int32 tiles [max_m][n]
};

}  // namespace octet::kernels
