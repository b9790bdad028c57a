// NonZero, Compress and Unique: ops whose output shape is decided by their input values, run by
// Session between two stages (OpImpl::outputs_from_values). Semantics of ONNX Runtime's CPU
// kernels (tensor/nonzero_op.cc, compress.cc, unique.cc), including their dtypes.
#include <cstring>
#include <map>
#include <vector>

#include "engine/op_registry.h"

namespace octet {
namespace {

template <class T>
void nonzero_coordinates(const ir::TensorData& x, std::vector<int64_t>& found) {
  const T* v = reinterpret_cast<const T*>(x.bytes.data());
  const int64_t n = x.count(), rank = int64_t(x.dims.size());
  std::vector<int64_t> at(size_t(rank), 0);
  for (int64_t i = 0; i < n; ++i) {
    if (v[i] != T{}) {
      if (rank == 0) found.push_back(0);
      found.insert(found.end(), at.begin(), at.end());
    }
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++at[size_t(d)] < x.dims[size_t(d)]) break;
      at[size_t(d)] = 0;
    }
  }
}

// [rank, count] of the coordinates of the non-zero elements in row-major order; a scalar has one
// coordinate (0).
std::vector<ir::TensorData> nonzero(const OpContext& c) {
  const ir::TensorData& x = *c.in_const[0];
  std::vector<int64_t> found;  // count x rank, row by row
  switch (x.dtype) {
    case ir::DType::f32: nonzero_coordinates<float>(x, found); break;
    case ir::DType::s32: nonzero_coordinates<int32_t>(x, found); break;
    case ir::DType::s64: nonzero_coordinates<int64_t>(x, found); break;
    case ir::DType::u8:
    case ir::DType::b8: nonzero_coordinates<uint8_t>(x, found); break;
    default: c.fail(std::string("input type ") + ir::dtype_name(x.dtype) + " is not supported (ONNX Runtime takes "
                    "float, int32, int64, uint8 and bool)");
  }
  const int64_t coords = std::max<int64_t>(int64_t(x.dims.size()), 1);
  const int64_t count = int64_t(found.size()) / coords;
  ir::TensorData y = ir::TensorData::make(ir::DType::s64, {coords, count});
  int64_t* out = reinterpret_cast<int64_t*>(y.bytes.data());
  for (int64_t k = 0; k < count; ++k)
    for (int64_t d = 0; d < coords; ++d) out[d * count + k] = found[size_t(k * coords + d)];
  return {std::move(y)};
}

// The selected slices along `axis` (or elements of the flattened input without one); a condition
// longer than the axis is read only as far as the axis goes, a shorter one selects nothing beyond
// its end.
std::vector<ir::TensorData> compress(const OpContext& c) {
  const ir::TensorData& x = *c.in_const[0];
  const ir::TensorData& cond = *c.in_const[1];
  if (cond.dtype != ir::DType::b8) c.fail("condition must be bool");
  if (cond.dims.size() != 1) c.fail("condition must be 1-D, is " + ir::dims_str(cond.dims));
  const bool has_axis = c.node.attrs.has("axis");
  const int64_t rank = int64_t(x.dims.size());
  const int64_t axis = has_axis ? normalize_axis(c, c.node.attrs.i("axis"), rank) : 0;
  const int64_t length = has_axis ? x.dims[size_t(axis)] : x.count();
  const int64_t used = std::min(length, cond.count());
  const auto* keep = reinterpret_cast<const uint8_t*>(cond.bytes.data());
  int64_t kept = 0;
  for (int64_t j = 0; j < used; ++j) kept += keep[j] != 0;
  int64_t outer = 1, inner = 1;
  ir::Dims dims{kept};
  if (has_axis) {
    dims = x.dims;
    dims[size_t(axis)] = kept;
    for (int64_t d = 0; d < axis; ++d) outer *= x.dims[size_t(d)];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= x.dims[size_t(d)];
  }
  ir::TensorData y = ir::TensorData::make(x.dtype, dims);
  const size_t row = size_t(inner) * ir::dtype_size(x.dtype);
  std::byte* out = y.bytes.data();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < used; ++j)
      if (keep[j]) {
        std::memcpy(out, x.bytes.data() + (size_t(o * length + j)) * row, row);
        out += row;
      }
  return {std::move(y)};
}

// Unique as ONNX Runtime computes it: slices along the axis (single elements when flattened)
// keyed in a map ordered by operator< on their elements, outer row by outer row; each slice's
// value is its first occurrence's.
template <class T>
std::vector<ir::TensorData> unique_of(const OpContext& c, const ir::TensorData& x) {
  const bool flat = !c.node.attrs.has("axis");
  const bool sorted = c.node.attrs.i("sorted", 1) != 0;
  const ir::Dims dims = flat ? ir::Dims{x.count()} : x.dims;
  const int64_t rank = int64_t(dims.size());
  const int64_t axis = flat ? 0 : normalize_axis(c, c.node.attrs.i("axis"), rank);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= dims[size_t(d)];
  for (int64_t d = axis + 1; d < rank; ++d) inner *= dims[size_t(d)];
  const int64_t n = dims[size_t(axis)];
  const T* v = reinterpret_cast<const T*>(x.bytes.data());
  std::map<std::vector<T>, int64_t> first_seen;  // slice -> its place in order of first occurrence
  std::vector<std::vector<T>> slices;             // in order of first occurrence
  std::vector<int64_t> first, count, inverse;
  for (int64_t j = 0; j < n; ++j) {
    std::vector<T> s;
    s.reserve(size_t(outer * inner));
    for (int64_t o = 0; o < outer; ++o) s.insert(s.end(), v + (o * n + j) * inner, v + (o * n + j + 1) * inner);
    auto [it, added] = first_seen.try_emplace(s, int64_t(slices.size()));
    if (added) {
      slices.push_back(std::move(s));
      first.push_back(j);
      count.push_back(0);
    }
    ++count[size_t(it->second)];
    inverse.push_back(it->second);
  }
  const int64_t u = int64_t(slices.size());
  std::vector<int64_t> place(static_cast<size_t>(u));  // place in the output of each slice in order of first occurrence
  int64_t rank_in_map = 0;
  for (const auto& [s, k] : first_seen) place[size_t(k)] = sorted ? rank_in_map++ : k;
  ir::Dims ydims = dims;
  ydims[size_t(axis)] = u;
  ir::TensorData y = ir::TensorData::make(x.dtype, ydims);
  ir::TensorData indices = ir::TensorData::make(ir::DType::s64, {u});
  ir::TensorData inverse_indices = ir::TensorData::make(ir::DType::s64, {n});
  ir::TensorData counts = ir::TensorData::make(ir::DType::s64, {u});
  T* yv = reinterpret_cast<T*>(y.bytes.data());
  auto* iv = reinterpret_cast<int64_t*>(indices.bytes.data());
  auto* inv = reinterpret_cast<int64_t*>(inverse_indices.bytes.data());
  auto* cv = reinterpret_cast<int64_t*>(counts.bytes.data());
  for (int64_t k = 0; k < u; ++k) {
    const int64_t p = place[size_t(k)];
    for (int64_t o = 0; o < outer; ++o)
      std::copy_n(slices[size_t(k)].data() + o * inner, inner, yv + (o * u + p) * inner);
    iv[p] = first[size_t(k)];
    cv[p] = count[size_t(k)];
  }
  for (int64_t j = 0; j < n; ++j) inv[j] = place[size_t(inverse[size_t(j)])];
  return {std::move(y), std::move(indices), std::move(inverse_indices), std::move(counts)};
}

std::vector<ir::TensorData> unique(const OpContext& c) {
  const ir::TensorData& x = *c.in_const[0];
  switch (x.dtype) {
    case ir::DType::f32: return unique_of<float>(c, x);
    case ir::DType::f64: return unique_of<double>(c, x);
    case ir::DType::s64: return unique_of<int64_t>(c, x);
    case ir::DType::s8: return unique_of<int8_t>(c, x);
    default:
      c.fail(std::string("input type ") + ir::dtype_name(x.dtype) + " is not supported (ONNX Runtime takes float, "
             "double, int64 and int8)");
  }
}

}  // namespace

void register_value_shaped_ops(OpTable& t) {
  t.emplace_back("NonZero", value_shaped_op(nonzero));
  t.emplace_back("Compress", value_shaped_op(compress));
  t.emplace_back("Unique", value_shaped_op(unique));
}

}  // namespace octet
