#pragma once
// Helpers shared by the indexing ops (engine/ops/index_ops.cc, engine/ops/scatter_ops.cc):
// index inputs of int32 or int64, negative indices counted from the end, and an index out of
// range failing the run with the node's name, as Gather does.
#include <cstdint>
#include <cstring>
#include <string>

#include "core/ir.h"
#include "engine/op_registry.h"

namespace octet::ops {

// Input `i` must be an int32 or int64 tensor of indices.
inline bool index_is_64(const OpContext& c, size_t i, const char* what) {
  const ir::DType t = c.info(i).dtype;
  if (t != ir::DType::s64 && t != ir::DType::s32) c.fail(std::string(what) + " must be int32 or int64");
  return t == ir::DType::s64;
}

// The `axis` attribute (default 0) of an op indexing along one axis of input 0 (GatherElements,
// ScatterElements), normalized.
inline int64_t element_axis(const OpContext& c) {
  return normalize_axis(c, c.node.attrs.i("axis", 0), int64_t(c.info(0).dims.size()));
}

inline int64_t index_at(const void* idx, bool idx64, int64_t j) {
  return idx64 ? static_cast<const int64_t*>(idx)[j] : static_cast<const int32_t*>(idx)[j];
}

// Index k into an axis of extent len, negative from the end; throws naming the node when out of range.
inline int64_t checked_index(int64_t k, int64_t len, const std::string& where) {
  const int64_t r = k < 0 ? k + len : k;
  if (r < 0 || r >= len)
    throw ir::Error(where + ": index " + std::to_string(k) + " is out of range for an axis of " + std::to_string(len));
  return r;
}

// Row-major strides in elements.
inline std::vector<int64_t> dense_strides(const ir::Dims& d) {
  std::vector<int64_t> s(d.size(), 1);
  for (size_t k = d.size(); k-- > 1;) s[k - 1] = s[k] * d[k];
  return s;
}

// Copies one element of `size` bytes (1, 2, 4 or 8 inline; others through memcpy).
inline void copy_element(std::byte* dst, const std::byte* src, size_t size) {
  switch (size) {
    case 1: *dst = *src; break;
    case 4: std::memcpy(dst, src, 4); break;
    case 8: std::memcpy(dst, src, 8); break;
    default: std::memcpy(dst, src, size);
  }
}

}  // namespace octet::ops
