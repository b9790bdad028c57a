#pragma once
// Data movement: transposes, concatenation slices and padding are all strided copies.
#include <cstddef>
#include <cstdint>

namespace octet::kernels {

// Copies every element of a `rank`-dimensional box of extent `dims` from src (read through
// src_strides) to dst (written through dst_strides). Strides are in elements of
// elem_size bytes. Works for any trivially copyable element type.
void copy_strided(int rank, const int64_t* dims, const void* src, const int64_t* src_strides,
                  void* dst, const int64_t* dst_strides, int elem_size);

enum class PadMode { constant, reflect, edge };

// The input index that index i of a padded axis (already shifted by its begin pad) reads on an
// input axis of extent n, or -1 for the constant: reflect about the edge elements (period
// 2(n - 1)), edge clamps. pad__ref and the pad_rows kernel both take it.
int64_t pad_source_index(int64_t i, int64_t n, PadMode mode);

// Pads a dense row-major x of extent in_dims into a dense y of extent
// in_dims[i] + pads_begin[i] + pads_end[i]. Negative pads crop. reflect mirrors
// without repeating the edge element (ONNX semantics); edge repeats it.
void f32_pad__ref(int rank, const int64_t* in_dims, const int64_t* pads_begin,
                  const int64_t* pads_end, PadMode mode, float value, const float* x, float* y);
// The same for elements of any type, elem_size bytes each; value points at one element.
void pad__ref(size_t elem_size, int rank, const int64_t* in_dims, const int64_t* pads_begin, const int64_t* pads_end,
              PadMode mode, const void* value, const void* x, void* y);

}  // namespace octet::kernels
