#pragma once
// Softmax, LogSoftmax and ArgMax / ArgMin along one axis of a tensor viewed as
// [outer][len][inner] (dense), on the microkernels of kernels/eltwise_list.h. inner == 1 (the
// axis is the innermost in memory: a classifier's [N, classes], or channels of a channels-last
// map) runs one contiguous row per outer index; inner > 1 (YOLOv8's DFL softmax over axis 1 of
// [N, 16, 4, 8400]) runs vectors across the inner dimension, each lane its own column, in
// blocks of kAxisColumnBlock columns so the threads share long inner dimensions too.
// kernel_name() says which ran; with no microkernel under the cap, the reference.
#include <pthreadpool.h>

#include <cstdint>
#include <string>

#include "kernels/kernel_id.h"
#include "kernels/eltwise_list.h"

namespace octet::kernels {

inline constexpr int64_t kAxisColumnBlock = 512;

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
  const EltwiseUkernel<F32SoftmaxUkernel>* ukernel_ = nullptr;
};

}  // namespace octet::kernels
