#pragma once
// LRN over channels-last activations on the microkernels of kernels/pool/lrn_list.h: the first
// row that runs under the cap; none (or a beta that is not a positive finite float, or no
// channels): kernels::Unsupported, and the op runs f32_lrn_nhwc__ref. Threads take contiguous
// runs of pixel blocks, each with its own part of the caller's scratch.
#include <pthreadpool.h>

#include <cstddef>

#include "kernels/fallback.h"
#include "kernels/isa.h"
#include "kernels/kernel_id.h"
#include "kernels/pool/lrn_list.h"
#include "kernels/ref/lrn.h"

namespace octet::kernels {

class F32Lrn {
 public:
  F32Lrn(const LrnParams& p, size_t channels, Isa isa);
  // Runs exactly `ukernel` (tests and benchmarks); the CPU must support ukernel.isa.
  F32Lrn(const LrnParams& p, size_t channels, const LrnUkernel& ukernel);

  KernelId kernel_id() const { return row_kernel(*ukernel_); }
  // Bytes of scratch run() needs with `threads` threads (64-byte aligned parts).
  size_t scratch_bytes(size_t threads) const;
  // x, y: [pixels][channels]; scratch: scratch_bytes(threads of pool) bytes.
  void run(const float* x, float* y, size_t pixels, void* scratch, pthreadpool_t pool) const;

 private:
  size_t part_bytes() const;

  LrnParams params_;
  size_t channels_;
  const LrnUkernel* ukernel_;
};

}  // namespace octet::kernels
