#pragma once
// Conversions between the engine's tensors and .npy arrays.
#include "core/ir.h"
#include "io/npy.h"

namespace octet {

ir::TensorData from_npy(const npy::Array& a);
npy::Array to_npy(const ir::TensorData& t);

}  // namespace octet
