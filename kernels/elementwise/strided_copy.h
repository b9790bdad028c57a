#pragma once
// Data movement between two stride sets (Transpose, Slice, Split, Concat, relayouts) planned
// once: extent-1 dimensions are dropped and dimensions that are adjacent in both source and
// destination are merged, so a channels-last concat or slice along C becomes one memcpy per
// pixel and a row-major slice along an outer axis one memcpy in all. What remains with a
// strided innermost dimension (a real transpose) runs as tiles over the two innermost
// source/destination axes, so both sides are read and written in cache lines: through vector
// registers for 4-byte elements (8x8), 2-byte (8x8) and 1-byte (16x16; INT8 maps), element by
// element for 8-byte ones and sides shorter than a tile. An
// innermost dimension contiguous in the destination and strided in every source axis (a Slice
// with a step on the last axis, a reversed last axis) runs the gather rows of
// kernels/elementwise/strided_gather_list.h, two dimensions per call.
//
// An innermost dimension strided in the destination (extent-1 pieces concatenated along the last
// axis) runs typed stores one by one, "copy_scatter_rows": no level has a scatter store that
// beats them.
//
// kernel_name() says which form ran: "copy_runs" (the innermost dimension is contiguous on
// both sides: memcpy of runs), "transpose_tiles", the gather row's name
// ("copy_gather_rows__avx2"), "copy_scatter_rows", or the element walk of kernels/ref/copy.h,
// named for why: "copy_strided_odd_elem__ref" (elements not of 1, 2, 4 or 8 bytes: no ONNX
// type has them) and "copy_strided__ref" (no gather row runs under the cap: --isa scalar).
#include <pthreadpool.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/elementwise/strided_gather_list.h"
#include "kernels/quantize/q8_lookup_list.h"
#include "kernels/isa.h"
#include "kernels/kernel_id.h"

namespace octet::kernels {

class StridedCopy {
 public:
  // dims and both stride sets in elements, indexed by the same logical dimension. The gather
  // rows are chosen under the cap `isa`.
  StridedCopy(int rank, const int64_t* dims, const int64_t* src_strides, const int64_t* dst_strides, int elem_size,
              Isa isa = active_isa());

  void run(const void* src, void* dst, pthreadpool_t pool = nullptr) const;
  // Byte runs only (maps_runs()): each run passes through `map` (a kernels/quantize/
  // q8_lookup_list.h row: y[i] = table[x[i]], called once per row of runs) on its way, so a
  // QLinearConcat input that needs requantizing is read and written once.
  bool maps_runs() const { return form_ == Form::runs && elem_ == 1; }
  void run_mapped(const void* src, void* dst, Q8LookupRowsFn map, const uint8_t* table,
                  pthreadpool_t pool = nullptr) const;
  const char* kernel_name() const;
  KernelId kernel_id() const;

  // After merging: how many dimensions remain and the contiguous run length in bytes (0 when
  // the innermost dimension is strided on one side). For tests.
  int merged_rank() const { return int(dims_.size()); }
  int64_t run_bytes() const { return run_bytes_; }

 private:
  enum class Form { runs, transpose, gather, scatter, elements };
  struct RunMap {
    Q8LookupRowsFn fn = nullptr;  // nullptr: copy as is
    const uint8_t* table = nullptr;
  };
  void run_with(const void* src, void* dst, const RunMap& map, pthreadpool_t pool) const;
  void run_range(const void* src, void* dst, int64_t begin, int64_t end, const RunMap& map) const;
  static void run_slab(void* ctx, size_t i);

  std::vector<int64_t> dims_, src_, dst_;  // merged, outermost first
  int elem_ = 1;
  int64_t run_bytes_ = 0;
  int64_t outer_count_ = 1;  // units of work: runs (Form::runs) or tiles' outer index
  Form form_ = Form::elements;
  int t_src_axis_ = -1, t_dst_axis_ = -1;  // Form::transpose: the axis contiguous in src / dst
  std::vector<int64_t> t_dims_, t_src_, t_dst_;  // Form::transpose: the other (outer) axes
  const StridedGatherKernel* gather_ = nullptr;   // Form::gather
  StridedGatherFn gather_fn_ = nullptr;
  const char* elements_name_ = "copy_strided__ref";  // Form::elements: why
};

}  // namespace octet::kernels
