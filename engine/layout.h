#pragma once
// Physical layouts of runtime tensors. Shapes stay in ONNX logical order (N, C, H, W);
// a layout says in which order those dimensions are laid out in memory.
#include <cstdint>
#include <optional>
#include <vector>

#include "core/ir.h"
#include "kernels/elementwise/strided_copy.h"

namespace octet {

enum class Layout : uint8_t {
  row_major,      // logical order, last dimension contiguous
  channels_last,  // for rank >= 3: N, spatial..., C (NHWC for rank 4)
};

const char* layout_name(Layout l);

// Memory order of the logical dimensions, outermost first.
std::vector<int> memory_order(int rank, Layout l);

// Strides in elements, indexed by logical dimension. With a row_stride, the rows of the innermost
// memory dimension are that many elements apart instead of its extent (a view into a wider map).
std::vector<int64_t> strides_of(const ir::Dims& dims, Layout l, int64_t row_stride = 0);

// True when both layouts put the elements of a tensor of these dims at the same
// offsets, e.g. NCHW and NHWC with H = W = 1, so switching layouts needs no copy.
bool same_memory(const ir::Dims& dims, Layout a, Layout b);

// Strides that view a tensor of `dims` laid out with `strides` as `new_dims` (same element
// count, ONNX Reshape's row-major reading of both) without moving data: a dimension may split
// into several or adjacent dimensions merge where memory allows (a channels-last [N, C, H, W]
// viewed as [N, g, C/g, H, W]). nullopt when that needs a copy.
std::optional<std::vector<int64_t>> view_strides(const ir::Dims& dims, const std::vector<int64_t>& strides,
                                                 const ir::Dims& new_dims);

struct TensorInfo {
  ir::DType dtype = ir::DType::f32;
  ir::Dims dims;
  Layout layout = Layout::row_major;

  int64_t count() const { return ir::element_count(dims); }
  size_t bytes() const { return size_t(count()) * ir::dtype_size(dtype); }
  std::vector<int64_t> strides() const { return strides_of(dims, layout); }
};

// The copy from src_info's layout to dst_layout, planned once (a plan step keeps it): the
// relayout of a feature map is a transpose of [c][pixels] per image.
kernels::StridedCopy relayout_copy(const TensorInfo& src_info, Layout dst_layout);
// Plans and runs that copy once (constants, outputs handed back to the caller).
void relayout(const TensorInfo& src_info, const void* src, Layout dst_layout, void* dst);

}  // namespace octet
