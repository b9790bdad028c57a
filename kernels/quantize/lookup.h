#pragma once
// y[i] = table[byte of x[i]] for 8-bit tensors: the INT8 element-wise ops built as 256-entry
// tables (QLinearSigmoid, QLinearLeakyRelu, octet's QLinearHardSwish / QLinearHardSigmoid,
// QLinearConcat's requantization), on the microkernels of kernels/quantize/q8_lookup_list.h.
#include "kernels/isa.h"
#include "kernels/quantize/q8_lookup_list.h"

namespace octet::kernels {

// The fastest lookup kernel for level `isa` on this CPU, or nullptr (use q8_lookup__ref).
const Q8LookupKernel* choose_q8_lookup(Isa isa);

}  // namespace octet::kernels
