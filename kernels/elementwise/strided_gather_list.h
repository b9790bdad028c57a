#pragma once
// Row kernels of StridedCopy's gather form (kernels/elementwise/strided_copy.h): the innermost
// dimension is contiguous in the destination and strided in the source (a Slice with a step on
// the last axis, a reversed last axis, a Gather or Split whose innermost source axis is not the
// destination's). One row of the list per level (kernels/elementwise/strided_gather_list.inc),
// one function per element size:
//
//   for r < rows, i < n:  y[r * y_row + i] = x[r * x_row + i * stride]
//
// strides in elements, any sign, stride != 1 (a contiguous row is a memcpy). Bit copies, so
// exact by construction against copy_strided (kernels/ref/copy.h), whose signature differs:
// no scalar row. The kernels read nothing outside the elements they copy.
#include <cstddef>
#include <span>

#include "kernels/arch.h"
#include "kernels/isa.h"
#include "kernels/kernel_list.h"

namespace octet::kernels {

using StridedGatherFn = void (*)(size_t rows, size_t n, const void* x, ptrdiff_t x_row, ptrdiff_t stride, void* y,
                                 ptrdiff_t y_row);

struct StridedGatherKernel {
  const char* name;
  Isa isa;
  Features features;
  StridedGatherFn x8, x16, x32, x64;  // elements of 1, 2, 4, 8 bytes

  StridedGatherFn for_size(int bytes) const {
    switch (bytes) {
      case 1: return x8;
      case 2: return x16;
      case 4: return x32;
      case 8: return x64;
      default: return nullptr;
    }
  }
};

#define OCTET_STRIDED_GATHER_FN(fn) \
  void fn(size_t rows, size_t n, const void* x, ptrdiff_t x_row, ptrdiff_t stride, void* y, ptrdiff_t y_row);
#define OCTET_STRIDED_GATHER(level, file)      \
  namespace file {                             \
  OCTET_STRIDED_GATHER_FN(strided_gather_x8)   \
  OCTET_STRIDED_GATHER_FN(strided_gather_x16)  \
  OCTET_STRIDED_GATHER_FN(strided_gather_x32)  \
  OCTET_STRIDED_GATHER_FN(strided_gather_x64)  \
  }
#include "kernels/elementwise/strided_gather_list.inc"
#undef OCTET_STRIDED_GATHER
#undef OCTET_STRIDED_GATHER_FN

inline constexpr StridedGatherKernel kStridedGatherKernelRows[] = {
#define OCTET_STRIDED_GATHER(level, file)                                                              \
  {"copy_gather_rows__" #file, Isa::level, OCTET_LEVEL_FEATURES(level), &file::strided_gather_x8,     \
   &file::strided_gather_x16, &file::strided_gather_x32, &file::strided_gather_x64},
#include "kernels/elementwise/strided_gather_list.inc"
#undef OCTET_STRIDED_GATHER
    StridedGatherKernel{}};
inline constexpr std::span<const StridedGatherKernel> kStridedGatherKernels =
    rows_before_terminator(kStridedGatherKernelRows);

}  // namespace octet::kernels
