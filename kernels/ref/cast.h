#pragma once
// Scalar element type conversion (ONNX Cast) between float, double, uint8, int8, int32, int64
// and bool (stored as one byte, 0 or 1).
//
// ONNX leaves a float -> integer conversion undefined when the value does not fit the target
// (and for NaN). octet gives what ONNX Runtime 1.30 computes on x86-64, measured value by value:
//   - the float is truncated toward zero to int32 (int64 for an int64 target) the way x86's
//     cvttss2si / cvttsd2si do: a NaN or a value outside that type's range becomes its most
//     negative value ("integer indefinite"), e.g. 3e9 -> INT32_MIN, 1e19 -> INT64_MIN;
//   - a narrower target (uint8, int8) then keeps the low bits of that int32, modulo 2^8:
//     300.7 -> 44, -1.5 -> 255 (uint8) / -1 (int8), 256 -> 0, 1e10 -> 0 (from INT32_MIN).
// Integer -> integer keeps the low bits (two's complement); integer -> float rounds to nearest
// even; double -> float rounds to nearest even and overflows to +-inf (IEEE); anything -> bool
// is "!= 0" (NaN is true). The `saturate` attribute only concerns float8 targets, which octet
// does not have, so it plays no part here.
#include <cstdint>
#include <type_traits>

namespace octet::kernels {

namespace cast_detail {

// x86's truncating conversion of a float or double to a signed integer of I's width.
template <typename I, typename F>
I truncate_like_x86(F v) {
  // Both bounds are powers of two, exact in float and double; NaN fails both comparisons.
  constexpr double lo = -static_cast<double>(uint64_t{1} << (8 * sizeof(I) - 1));
  const double d = static_cast<double>(v);
  if (d >= lo && d < -lo) return static_cast<I>(d);
  return static_cast<I>(lo);
}

}  // namespace cast_detail

template <typename To, typename From>
To cast_value(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_floating_point_v<To>) {
    return static_cast<To>(v);
  } else if constexpr (std::is_floating_point_v<From>) {
    if constexpr (sizeof(To) == 8) return static_cast<To>(cast_detail::truncate_like_x86<int64_t>(v));
    // Narrowing an int32 to an 8-bit type keeps its low bits (C++20 defines it as modular).
    else return static_cast<To>(cast_detail::truncate_like_x86<int32_t>(v));
  } else {
    return static_cast<To>(v);  // integer (or bool) to integer: modular, well defined in C++20
  }
}

// y[i] = cast_value<To>(x[i]). Bool tensors are arrays of bool (one byte, 0 or 1).
template <typename To, typename From>
void cast__ref(int64_t count, const From* x, To* y) {
  for (int64_t i = 0; i < count; ++i) y[i] = cast_value<To, From>(x[i]);
}

}  // namespace octet::kernels
