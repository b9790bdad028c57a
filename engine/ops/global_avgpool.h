#pragma once
// The FP32 global average over H and W of a channels-last tensor on the SIMD kernel of
// kernels/elementwise/eltwise.h, writing [N][C]: GlobalAveragePool, an AveragePool whose
// window is the whole input, and a ReduceMean over H and W all run it.
#include "engine/op_registry.h"

namespace octet::ops {

Kernel global_avgpool_kernel(const OpContext& c, int batch, int hw, int channels, const void* in, void* out);

}  // namespace octet::ops
