#pragma once
// The FP32 global average over H and W of a channels-last tensor on the SIMD kernel of
// kernels/elementwise/eltwise.h, writing [N][C]: GlobalAveragePool, an AveragePool whose
// window is the whole input, and a ReduceMean over H and W all run it, each summing in the
// order ONNX Runtime's op does (kernels/ref/pool2d.h, GapOrder).
#include "engine/op_registry.h"
#include "kernels/ref/pool2d.h"

namespace octet::ops {

Kernel global_avgpool_kernel(const OpContext& c, int batch, int hw, int channels, kernels::GapOrder order,
                             const void* in, void* out);

}  // namespace octet::ops
