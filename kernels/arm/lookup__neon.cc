// y[i] = table[x[i]] on AArch64 Advanced SIMD: four TBL lookups of 64 entries, index x - 64q
// for quarter q. TBL gives 0 for an index past its 64 entries, and x - 64q (mod 256) is in
// range for exactly one quarter, so OR-ing the four results picks the entry.
#include <arm_neon.h>

#include <cstring>

#include "kernels/quantize/lookup.h"

namespace octet::kernels::neon {

void q8_lookup_rows(size_t rows, size_t n, const uint8_t* x, ptrdiff_t x_stride, const uint8_t* table, uint8_t* y,
                    ptrdiff_t y_stride) {
  uint8x16x4_t quarter[4];
  for (int q = 0; q < 4; ++q) quarter[q] = vld1q_u8_x4(table + 64 * q);
  const uint8x16_t step = vdupq_n_u8(64);
  auto lookup = [&](uint8x16_t v) {
    uint8x16_t out = vqtbl4q_u8(quarter[0], v);
    for (int q = 1; q < 4; ++q) {
      v = vsubq_u8(v, step);
      out = vorrq_u8(out, vqtbl4q_u8(quarter[q], v));
    }
    return out;
  };
  for (size_t r = 0; r < rows; ++r, x += x_stride, y += y_stride) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) vst1q_u8(y + i, lookup(vld1q_u8(x + i)));
    if (i < n) {
      uint8_t lanes[16] = {};
      std::memcpy(lanes, x + i, n - i);
      vst1q_u8(lanes, lookup(vld1q_u8(lanes)));
      std::memcpy(y + i, lanes, n - i);
    }
  }
}

void q8_lookup(size_t n, const uint8_t* x, const uint8_t* table, uint8_t* y) { q8_lookup_rows(1, n, x, n, table, y, n); }

}  // namespace octet::kernels::neon
