#pragma once
// The 8-bit integer type of a quantized activation tensor, for kernels whose element type is
// chosen at run time (the fast kernels take untyped pointers and this tag).
#include <cstdint>

namespace octet::kernels {

enum class Q8 { u8, s8 };

constexpr int32_t q8_min(Q8 t) { return t == Q8::u8 ? 0 : -128; }
constexpr int32_t q8_max(Q8 t) { return t == Q8::u8 ? 255 : 127; }
constexpr const char* q8_name(Q8 t) { return t == Q8::u8 ? "u8" : "s8"; }

}  // namespace octet::kernels
