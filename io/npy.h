// .npy arrays: the exchange format between octet, its tests and the ONNX Runtime runner
// (tools/ort/ort_run.mjs, whose tools/ort/npy.mjs accepts and writes exactly the same subset).
//
// Supported: format versions 1, 2 and 3; little-endian; C order; the seven dtypes below.
// Anything else is rejected with an error naming the file, never guessed at.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace octet::npy {

// numpy: float32 float64 uint8 int8 int32 int64 bool ('<f4' '<f8' '|u1' '|i1' '<i4' '<i8' '|b1').
enum class DType { f32, f64, u8, s8, s32, s64, b8 };

// numpy's name: "float32", "int64", "bool", ...
std::string dtype_name(DType);
std::size_t dtype_size(DType);

// The DType a C++ element type stands for (bool for b8).
template <class T> constexpr DType dtype_of() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, float>) return DType::f32;
  else if constexpr (std::is_same_v<U, double>) return DType::f64;
  else if constexpr (std::is_same_v<U, std::uint8_t>) return DType::u8;
  else if constexpr (std::is_same_v<U, std::int8_t>) return DType::s8;
  else if constexpr (std::is_same_v<U, std::int32_t>) return DType::s32;
  else if constexpr (std::is_same_v<U, std::int64_t>) return DType::s64;
  else if constexpr (std::is_same_v<U, bool>) return DType::b8;
  else static_assert(sizeof(T) == 0, "no .npy dtype for this element type");
}

struct Array {
  DType dtype = DType::f32;
  std::vector<int64_t> shape;  // empty: a scalar (one element)
  std::vector<std::byte> data; // raw little-endian, C order; count() * dtype_size(dtype) bytes

  int64_t count() const;

  // Typed view of data. T must match dtype (uint8_t is also accepted for bool); a mismatch
  // throws std::logic_error, because it is a bug in the caller, not bad input.
  template <class T> const T* as() const {
    check_as(dtype_of<T>());
    return reinterpret_cast<const T*>(data.data());
  }
  template <class T> T* as() {
    check_as(dtype_of<T>());
    return reinterpret_cast<T*>(data.data());
  }

 private:
  void check_as(DType wanted) const;
};

// A zero-filled array.
Array make(DType dtype, std::vector<int64_t> shape);
// Copies values; throws std::invalid_argument if their number does not match the shape.
Array make_f32(std::vector<int64_t> shape, std::vector<float> values);
template <class T> Array make_array(std::vector<int64_t> shape, const std::vector<T>& values) {
  Array a = make(dtype_of<T>(), std::move(shape));
  if (static_cast<int64_t>(values.size()) != a.count())
    throw std::invalid_argument("npy::make_array: " + std::to_string(values.size()) + " values for " +
                                std::to_string(a.count()) + " elements");
  for (std::size_t i = 0; i < values.size(); ++i) a.as<T>()[i] = values[i];
  return a;
}

// "(2, 3) float32"
std::string describe(const Array& a);

// Throws std::runtime_error("<path>: <reason>"): missing file, bad magic, unsupported version,
// dtype, Fortran order or big-endian data, malformed header, truncated data (with byte counts).
Array read(const std::string& path);
// Writes a version 1 header (2 if huge) to a temporary file beside `path`, then renames it
// over `path`: readers never see half a file. Throws std::runtime_error("<path>: <reason>").
void write(const std::string& path, const Array& a);

// The same two, on bytes in memory; `where` names the source in errors.
Array decode(const std::vector<std::byte>& bytes, const std::string& where);
std::vector<std::byte> encode(const Array& a);

}  // namespace octet::npy
