#pragma once
// y[i] = table[byte of x[i]] for 8-bit tensors: the INT8 element-wise ops built as 256-entry
// tables (QLinearSigmoid, QLinearLeakyRelu, octet's QLinearHardSwish / QLinearHardSigmoid,
// QLinearConcat's requantization). Bit-exact with q8_lookup__ref by construction (a table read).
#include <cstddef>
#include <cstdint>

#include "kernels/isa.h"

namespace octet::kernels {

using Q8LookupFn = void (*)(size_t n, const uint8_t* x, const uint8_t* table, uint8_t* y);

namespace avx2 {
// 16 vpshufb lookups of 16 entries, each selecting its row by the index's high nibble.
void q8_lookup(size_t n, const uint8_t* x, const uint8_t* table, uint8_t* y);
}

namespace avx512vbmi {
// Four vpermi2b lookups of 128 entries cover the table; the index's top bit picks the half.
void q8_lookup(size_t n, const uint8_t* x, const uint8_t* table, uint8_t* y);
}

struct Q8LookupKernel {
  const char* name;
  Q8LookupFn fn;
};

// The fastest lookup kernel for level `isa` on this CPU, or nullptr (use q8_lookup__ref).
const Q8LookupKernel* choose_q8_lookup(Isa isa);

}  // namespace octet::kernels
