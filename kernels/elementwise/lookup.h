#pragma once
// y[i] = table[byte of x[i]] for 8-bit tensors: the INT8 element-wise ops built as 256-entry
// tables (QLinearSigmoid, QLinearLeakyRelu, octet's QLinearHardSwish / QLinearHardSigmoid,
// QLinearConcat's requantization). Bit-exact with q8_lookup__ref by construction (a table read).
#include <cstddef>
#include <cstdint>

#include "kernels/isa.h"

namespace octet::kernels {

using Q8LookupFn = void (*)(size_t n, const uint8_t* x, const uint8_t* table, uint8_t* y);

// Each level's lookup in preference order: X(namespace and file suffix, level, needs AVX-512
// VBMI). avx2: 16 vpshufb lookups of 16 entries, each selecting its row by the index's high
// nibble; avx512vbmi: four vpermi2b lookups of 128 entries, the index's top bit picking the
// half; neon: four TBL lookups of 64 entries (kernels/<arch>/lookup__<suffix>.cc). Adding a
// kernel is one X(...) here.
#if OCTET_ARCH_X86
#define OCTET_Q8_LOOKUP_KERNELS(X) X(avx512vbmi, avx512, true) X(avx2, avx2, false)
#elif OCTET_ARCH_ARM64
#define OCTET_Q8_LOOKUP_KERNELS(X) X(neon, neon, false)
#else
#define OCTET_Q8_LOOKUP_KERNELS(X)
#endif

#define OCTET_Q8_LOOKUP_DECLARE(ns, isa, vbmi) \
  namespace ns {                               \
  void q8_lookup(size_t n, const uint8_t* x, const uint8_t* table, uint8_t* y); \
  }
OCTET_Q8_LOOKUP_KERNELS(OCTET_Q8_LOOKUP_DECLARE)
#undef OCTET_Q8_LOOKUP_DECLARE

struct Q8LookupKernel {
  const char* name;
  Isa isa;
  bool needs_avx512vbmi;
  Q8LookupFn fn;
};

// The fastest lookup kernel for level `isa` on this CPU, or nullptr (use q8_lookup__ref).
const Q8LookupKernel* choose_q8_lookup(Isa isa);

}  // namespace octet::kernels
