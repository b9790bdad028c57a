#pragma once
// The float output of the INT8 GEMM / IGEMM drivers on the dynamic quantization path
// (ConvInteger / MatMulInteger -> Cast -> Mul -> Add -> activation fused into one step): the
// activation's scale and zero point are known only when the step runs, so the zero-point fold
// of kernels/gemm/q8_gemm_list.h moves from packing time to run time. The weights are packed once
// (with zero point 0); each run computes, per output column c,
//   acc_init[c] = -zp_r * sum_k w[k][c]        (zp_r = x_zero_point + the kernel's q8_read_shift)
//   scale[c]    = x_scale * w_scale[c]         (the graph's Mul of the two scales)
// and the microkernels' float twins (fn_f32) start their accumulators at acc_init and store
//   y = clamp(float(acc) * scale[c] + bias[c], lo, hi),
// then any other fused activation (Sigmoid, SiLU, ...) runs on the block while it is in L1: the
// same float steps ORT runs one op after the other, so the values are the same.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/elementwise/eltwise.h"
#include "kernels/gemm/q8_gemm_list.h"
#include "kernels/q8_type.h"

namespace octet::kernels {

// What follows the integer product: the weight scales, the float bias, the fused activation.
struct DequantizedOutput {
  std::vector<float> w_scale;  // 1 or n values
  std::vector<float> bias;     // empty or n values
  float lo = -std::numeric_limits<float>::infinity();  // the fused activation's clamp
  float hi = std::numeric_limits<float>::infinity();   // (Relu: lo = 0)
  Activation act;  // an activation after the clamp (F32Epilogue: Sigmoid, SiLU, Tanh, ...), or none
};

// act of a DequantizedOutput on its F32Epilogue microkernels, for drivers that apply it to each
// block right after writing it; the reference loops apply it to the whole output.
void apply_dequantized_activation__ref(const DequantizedOutput& out, int64_t count, float* y);

class Q8FloatOutput {
 public:
  // column_sums[c] = sum of output column c's int8 weights; nr = the microkernel's NR (the
  // per-run arrays are padded to whole blocks so tiles read them as whole vectors); reads =
  // the type it reads activations as (the reference loops: the activations' own type).
  // isa: the cap for the fused activation's microkernels.
  Q8FloatOutput(DequantizedOutput out, std::vector<int64_t> column_sums, size_t nr, Q8 reads, Isa isa);

  const DequantizedOutput& output() const { return out_; }
  // Fills this run's acc_init and scale. Not thread-safe: call before the tiles run.
  void prepare(Q8 x_type, float x_scale, int32_t x_zero_point);
  // Points a tile's float-output fields at block `block` (columns block * nr ...).
  void set_args(Q8IgemmArgs& args, size_t block) const;
  // The fused activation on a block a tile stored: rows x cols values, row r at y + r * ld.
  void activate(size_t rows, size_t cols, float* y, size_t ld) const {
    if (activation_.active()) activation_.run(rows, cols, y, ld);
  }

 private:
  DequantizedOutput out_;
  F32Epilogue activation_;
  std::vector<int64_t> column_sums_;
  std::vector<float> bias_;  // padded to whole blocks, or empty
  std::vector<int32_t> acc_init_;
  std::vector<float> scale_;
  size_t nr_;
  Q8 reads_;
};

// sum over taps t and k of weight(c, t, k) for every output column c < n.
template <typename WeightAt>
std::vector<int64_t> q8_column_sums(size_t n, size_t ks, size_t kc, WeightAt weight) {
  std::vector<int64_t> sums(n, 0);
  for (size_t c = 0; c < n; ++c)
    for (size_t t = 0; t < ks; ++t)
      for (size_t k = 0; k < kc; ++k) sums[c] += weight(c, t, k);
  return sums;
}

}  // namespace octet::kernels
