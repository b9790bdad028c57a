#pragma once
// Softmax, LogSoftmax and ArgMax / ArgMin along one axis of a tensor viewed as
// [outer][len][inner] (dense), on the microkernels of kernels/elementwise/eltwise_list.h. inner == 1 (the
// axis is the innermost in memory: a classifier's [N, classes], or channels of a channels-last
// map) runs one contiguous row per outer index; inner > 1 (YOLOv8's DFL softmax over axis 1 of
// [N, 16, 4, 8400]) runs vectors across the inner dimension, each lane its own column, in
// blocks of kAxisColumnBlock columns so the threads share long inner dimensions too.
// kernel_name() says which ran; with no microkernel under the cap, the reference. The
// microkernels compute in ONNX Runtime's arithmetic (kernels/ref/mlas_softmax.h), for the lane
// count of ORT's kernel on this CPU (ort_softmax_width); the reference computes in double.
// Q8Softmax is QLinearSoftmax (uint8 / int8) the same two ways (kernels/elementwise/qsoftmax_list.h).
#include <pthreadpool.h>

#include <cstdint>
#include <string>

#include "kernels/kernel_id.h"
#include "kernels/elementwise/eltwise_list.h"
#include "kernels/elementwise/qsoftmax_list.h"
#include "kernels/ref/qsoftmax.h"

namespace octet::kernels {

inline constexpr int64_t kAxisColumnBlock = 512;

// The lanes of ONNX Runtime's exp-and-sum kernel on this CPU: 16 where it has AVX-512F (ORT's
// AVX-512F kernel), else 8 (its AVX2 / FMA3 kernel; on Arm, the x86 arithmetic the tests hold
// octet to).
int ort_softmax_width();

class F32Softmax {
 public:
  // log: LogSoftmax.
  F32Softmax(bool log, int64_t outer, int64_t len, int64_t inner, Isa isa);
  KernelId kernel_id() const;
  std::string kernel_name() const { return kernel_id().name; }
  void run(const float* x, float* y, pthreadpool_t pool) const;

 private:
  bool log_;
  int64_t outer_, len_, inner_;
  const EltwiseUkernel<F32SoftmaxUkernel>* ukernel_ = nullptr;
};

// y [outer][inner] int64: the index along len of the largest (min: smallest) value.
class F32ArgExtremum {
 public:
  F32ArgExtremum(bool min, bool last_index, int64_t outer, int64_t len, int64_t inner, Isa isa);
  KernelId kernel_id() const;
  std::string kernel_name() const { return kernel_id().name; }
  void run(const float* x, int64_t* y, pthreadpool_t pool) const;

 private:
  bool min_, last_index_;
  int64_t outer_, len_, inner_;
  const EltwiseUkernel<F32ArgUkernel>* ukernel_ = nullptr;
};

// ReduceMax / ReduceMin over the middle dimension: y [outer][inner] float.
class F32AxisExtremum {
 public:
  F32AxisExtremum(bool min, int64_t outer, int64_t len, int64_t inner, Isa isa);
  KernelId kernel_id() const;
  std::string kernel_name() const { return kernel_id().name; }
  // The reference when no microkernel runs under the cap.
  bool fast() const { return ukernel_ != nullptr; }
  void run(const float* x, float* y, pthreadpool_t pool) const;

 private:
  int64_t outer_, len_, inner_;
  const EltwiseUkernel<F32AxisReduceUkernel>* ukernel_ = nullptr;
};

// QLinearSoftmax as q8_softmax__ref computes it, bit for bit: the first microkernel of
// kernels/elementwise/qsoftmax_list.h that runs under the cap, or the reference when none does.
class Q8Softmax {
 public:
  Q8Softmax(bool is_signed, int64_t outer, int64_t len, int64_t inner, Isa isa);
  // Runs exactly `ukernel` (tests and benchmarks); the CPU must support ukernel.isa.
  Q8Softmax(bool is_signed, int64_t outer, int64_t len, int64_t inner, const Q8SoftmaxEntry& ukernel);
  KernelId kernel_id() const;
  std::string kernel_name() const { return kernel_id().name; }
  // x, y: [outer][len][inner] of uint8 (int8 when is_signed); `table` built for this len and sign.
  void run(const void* x, void* y, const QSoftmaxTable& table, float y_scale, int32_t y_zero_point,
           pthreadpool_t pool) const;

 private:
  bool signed_;
  int64_t outer_, len_, inner_;
  const Q8SoftmaxEntry* ukernel_ = nullptr;
};

}  // namespace octet::kernels
