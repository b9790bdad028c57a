#pragma once
// MaxPool with its Indices output over NHWC (NDHWC) activations on the microkernels of
// kernels/pool/argmax_pool_list.h: values and winning window positions in one pass over the
// pooling drivers' window pointers (PoolWindows), then each position turned into ONNX Runtime's
// index, (n * C + c) * plane + its row- or column-major offset (f32_maxpool_indices_nhwc__ref,
// whose results these are bit for bit). No row at the cap: kernels::Unsupported.
//
// Life cycle as the pooling drivers': bind(x) once per input address, run() any number of times.
#include <pthreadpool.h>

#include <cstdint>
#include <vector>

#include "kernels/fallback.h"
#include "kernels/isa.h"
#include "kernels/kernel_id.h"
#include "kernels/pool/argmax_pool_list.h"
#include "kernels/pool/pool2d.h"
#include "kernels/ref/maxpool_indices.h"

namespace octet::kernels {

class F32MaxPoolIndices {
 public:
  // spatial_rank and column_major as f32_maxpool_indices_nhwc__ref takes them.
  F32MaxPoolIndices(const Pool2dShape& s, int spatial_rank, bool column_major, Isa isa);
  F32MaxPoolIndices(const Pool2dShape& s, int spatial_rank, bool column_major, const PoolUkernel<F32PoolUkernel>& ukernel);

  KernelId kernel_id() const { return row_kernel(*ukernel_); }
  void bind(const float* x);
  // x: [batch][in_d][in_h][in_w][C] (the bound one); y (float) and indices (int64): NHWC outputs.
  void run(const float* x, float* y, int64_t* indices, pthreadpool_t pool) const;

 private:
  void build_offsets(int spatial_rank, bool column_major);

  Pool2dShape s_;
  const PoolUkernel<F32PoolUkernel>* ukernel_;
  PoolWindows<float> windows_;
  // [output pixel of one image][window position + 1]: the position's offset in its plane, slot 0
  // the offset of a window nothing won.
  std::vector<int64_t> offsets_;
};

}  // namespace octet::kernels
