// Strided-gather rows on AArch64 Advanced SIMD (kernels/elementwise/strided_gather_list.h):
// y[i] = x[i * stride]. Steps 2, 3 and 4 are the structure loads vld2 / vld3 / vld4 keeping
// their first vector; -1 is a load reversed (vrev64 + vext); -2, -3 and -4 are the structure
// loads of the block's span keeping their last vector, reversed. A structure load reads up to
// stride - 1 elements past the block's last, so the loop stops while those are in the row.
// Other steps have no load that fits and are copied element by element.
#include <arm_neon.h>

#include <algorithm>
#include <cstdint>

#include "kernels/elementwise/strided_gather_list.h"

namespace octet::kernels::neon {

namespace {

#define OCTET_NEON_GATHER_TYPE(T, S, L, HALF)                                      \
  struct V_##S {                                                                   \
    using Q = decltype(vld1q_##S(nullptr));                                        \
    static constexpr size_t kLanes = L;                                            \
    static Q ld1(const T* p) { return vld1q_##S(p); }                              \
    static void st1(T* p, Q v) { vst1q_##S(p, v); }                                \
    static Q ld2(const T* p, int k) { return vld2q_##S(p).val[k]; }                \
    static Q ld3(const T* p, int k) { return vld3q_##S(p).val[k]; }                \
    static Q ld4(const T* p, int k) { return vld4q_##S(p).val[k]; }                \
    static Q rev(Q v) {                                                            \
      v = reverse_halves(v);                                                       \
      return vextq_##S(v, v, HALF);                                                \
    }                                                                              \
  };

inline uint8x16_t reverse_halves(uint8x16_t v) { return vrev64q_u8(v); }
inline uint16x8_t reverse_halves(uint16x8_t v) { return vrev64q_u16(v); }
inline uint32x4_t reverse_halves(uint32x4_t v) { return vrev64q_u32(v); }
inline uint64x2_t reverse_halves(uint64x2_t v) { return v; }  // one element per half

OCTET_NEON_GATHER_TYPE(uint8_t, u8, 16, 8)
OCTET_NEON_GATHER_TYPE(uint16_t, u16, 8, 4)
OCTET_NEON_GATHER_TYPE(uint32_t, u32, 4, 2)
OCTET_NEON_GATHER_TYPE(uint64_t, u64, 2, 1)
#undef OCTET_NEON_GATHER_TYPE

template <class T, class V>
void row(const T* x, ptrdiff_t s, T* y, size_t n) {
  constexpr size_t L = V::kLanes;
  constexpr ptrdiff_t l = ptrdiff_t(L);
  size_t i = 0;
  const auto at = [&](size_t k) { return x + ptrdiff_t(k) * s; };
  switch (s) {
    case 0: std::fill(y, y + n, *x); return;
    case 2: for (; i + L < n; i += L) V::st1(y + i, V::ld2(at(i), 0)); break;
    case 3: for (; i + L < n; i += L) V::st1(y + i, V::ld3(at(i), 0)); break;
    case 4: for (; i + L < n; i += L) V::st1(y + i, V::ld4(at(i), 0)); break;
    case -1: for (; i + L <= n; i += L) V::st1(y + i, V::rev(V::ld1(at(i) - (l - 1)))); break;
    // The span of elements i + L - 1 ... i starts -s - 1 elements before the first of them.
    case -2: for (; i + L < n; i += L) V::st1(y + i, V::rev(V::ld2(at(i + L - 1) - 1, 1))); break;
    case -3: for (; i + L < n; i += L) V::st1(y + i, V::rev(V::ld3(at(i + L - 1) - 2, 2))); break;
    case -4: for (; i + L < n; i += L) V::st1(y + i, V::rev(V::ld4(at(i + L - 1) - 3, 3))); break;
    default: break;
  }
  for (; i < n; ++i) y[i] = *at(i);
}

template <class T, class V>
void rows_of(size_t rows, size_t n, const void* x, ptrdiff_t x_row, ptrdiff_t stride, void* y, ptrdiff_t y_row) {
  const T* xr = static_cast<const T*>(x);
  T* yr = static_cast<T*>(y);
  if (n == 0) return;
  for (size_t r = 0; r < rows; ++r, xr += x_row, yr += y_row) row<T, V>(xr, stride, yr, n);
}

}  // namespace

void strided_gather_x8(size_t rows, size_t n, const void* x, ptrdiff_t x_row, ptrdiff_t stride, void* y,
                       ptrdiff_t y_row) {
  rows_of<uint8_t, V_u8>(rows, n, x, x_row, stride, y, y_row);
}
void strided_gather_x16(size_t rows, size_t n, const void* x, ptrdiff_t x_row, ptrdiff_t stride, void* y,
                        ptrdiff_t y_row) {
  rows_of<uint16_t, V_u16>(rows, n, x, x_row, stride, y, y_row);
}
void strided_gather_x32(size_t rows, size_t n, const void* x, ptrdiff_t x_row, ptrdiff_t stride, void* y,
                        ptrdiff_t y_row) {
  rows_of<uint32_t, V_u32>(rows, n, x, x_row, stride, y, y_row);
}
void strided_gather_x64(size_t rows, size_t n, const void* x, ptrdiff_t x_row, ptrdiff_t stride, void* y,
                        ptrdiff_t y_row) {
  rows_of<uint64_t, V_u64>(rows, n, x, x_row, stride, y, y_row);
}

}  // namespace octet::kernels::neon
