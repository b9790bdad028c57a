#pragma once
// The 8-bit table lookups y[i] = table[x[i]] (kernels/quantize/q8_lookup_list.inc), bit-exact with
// q8_lookup__ref by construction (a table read), whose signature differs (typed, int64 count):
// no scalar row.
#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/arch.h"
#include "kernels/isa.h"
#include "kernels/kernel_list.h"

namespace octet::kernels {

using Q8LookupFn = void (*)(size_t n, const uint8_t* x, const uint8_t* table, uint8_t* y);
// The same over `rows` rows of n bytes, row r at x + r * x_stride and y + r * y_stride (the
// table loaded once: a channels-last concat's runs of a few dozen bytes).
using Q8LookupRowsFn = void (*)(size_t rows, size_t n, const uint8_t* x, ptrdiff_t x_stride, const uint8_t* table,
                                uint8_t* y, ptrdiff_t y_stride);

struct Q8LookupKernel {
  const char* name;
  Isa isa;
  Features features;
  Q8LookupFn fn;
  Q8LookupRowsFn rows;
};

#define OCTET_Q8_LOOKUP(level, file, extra)                                         \
  namespace file {                                                                  \
  void q8_lookup(size_t n, const uint8_t* x, const uint8_t* table, uint8_t* y);     \
  void q8_lookup_rows(size_t rows, size_t n, const uint8_t* x, ptrdiff_t x_stride,  \
                      const uint8_t* table, uint8_t* y, ptrdiff_t y_stride);        \
  }
#include "kernels/quantize/q8_lookup_list.inc"
#undef OCTET_Q8_LOOKUP

inline constexpr Q8LookupKernel kQ8LookupKernelRows[] = {
#define OCTET_Q8_LOOKUP(level, file, extra) \
  {"q8_lookup__" #file, Isa::level, OCTET_LEVEL_FEATURES(level) | (extra), &file::q8_lookup, &file::q8_lookup_rows},
#include "kernels/quantize/q8_lookup_list.inc"
#undef OCTET_Q8_LOOKUP
    Q8LookupKernel{}};
inline constexpr std::span<const Q8LookupKernel> kQ8LookupKernels = rows_before_terminator(kQ8LookupKernelRows);

}  // namespace octet::kernels
