#pragma once
// y[i] = table[byte of x[i]] for 8-bit tensors: the INT8 element-wise ops built as 256-entry
// tables (QLinearSigmoid, QLinearLeakyRelu, octet's QLinearHardSwish / QLinearHardSigmoid,
// QLinearConcat's requantization), on the microkernels of kernels/quantize/q8_lookup_list.h.
#include <pthreadpool.h>

#include "kernels/isa.h"
#include "kernels/quantize/q8_lookup_list.h"

namespace octet::kernels {

// The fastest lookup kernel for level `isa` on this CPU, or nullptr (use q8_lookup__ref).
const Q8LookupKernel* choose_q8_lookup(Isa isa);

// k over x[0..n), split over `pool` in pieces of kEltwiseMinPiece bytes (a smaller tensor, or
// no pool: the calling thread); every split writes the same bytes.
void q8_lookup(const Q8LookupKernel& k, size_t n, const uint8_t* x, const uint8_t* table, uint8_t* y,
               pthreadpool_t pool);

}  // namespace octet::kernels
