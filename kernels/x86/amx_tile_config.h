#pragma once
// The one tile configuration octet loads (LDTILECFG's 64-byte operand, palette 1): tiles 0-6 of
// 16 rows of 64 bytes. The INT8 AMX kernel (q8_gemm__avx512amx.cc) accumulates in tiles 0-3,
// reads activations into 4 and weights into 5 and 6; bench/peak's tdpbusd loop uses the same
// tiles. Plain data: includable without the AMX compiler flags.
#include <cstdint>

namespace octet::kernels::x86 {

struct alignas(64) AmxTileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t bytes_per_row[16] = {64, 64, 64, 64, 64, 64, 64};
  uint8_t rows[16] = {16, 16, 16, 16, 16, 16, 16};
};
static_assert(sizeof(AmxTileConfig) == 64);
inline constexpr AmxTileConfig kAmxTileConfig{};

}  // namespace octet::kernels::x86
