#pragma once
// Where each depthwise output pixel reads its taps, shared by the FP32 and INT8 drivers.
// Output columns [lo, hi) of every row have windows inside the input horizontally and go to
// the microkernel's row function with one pointer per kernel row; the border columns go to
// its indirect function with one pointer per tap. Taps in the padding read the pad row.
#include <cstddef>
#include <vector>

#include "kernels/ref/conv2d.h"

namespace octet::kernels {

// A shape both depthwise drivers run: one filter per channel, every extent positive.
inline bool is_depthwise(const Conv2dShape& s) {
  return s.groups == s.in_c && s.out_c == s.in_c && s.in_c >= 1 && s.batch >= 1 && s.kernel_h >= 1 &&
         s.kernel_w >= 1 && s.stride_h >= 1 && s.stride_w >= 1 && s.dilation_h >= 1 && s.dilation_w >= 1 &&
         s.out_h >= 1 && s.out_w >= 1 && !s.has_depth();  // 2-D only: 3-D ones run grouped (F32Conv)
}

struct DwColumns {
  int lo = 0, hi = 0, out_w = 0;
  int border() const { return lo + (out_w - hi); }  // border pixels per output row
};

inline DwColumns dw_interior_columns(const Conv2dShape& s) {
  // lo: first ox with ox*sw - pad_left >= 0; hi: one past the last ox whose rightmost tap
  // ox*sw - pad_left + (kw-1)*dw is <= in_w - 1.
  DwColumns c;
  c.out_w = s.out_w;
  c.lo = (s.pad_left + s.stride_w - 1) / s.stride_w;
  const int last = s.in_w - 1 - (s.kernel_w - 1) * s.dilation_w + s.pad_left;
  c.hi = last < 0 ? 0 : last / s.stride_w + 1;
  if (c.lo > s.out_w) c.lo = s.out_w;
  if (c.hi > s.out_w) c.hi = s.out_w;
  if (c.hi < c.lo) c.hi = c.lo;
  return c;
}

// rows:   [batch * out_h][kernel_h] pointers at column lo*sw - pad_left of the tap row
// border: [batch * out_h][border pixels, left then right][kernel_h * kernel_w]
// pad_row holds at least in_w * C elements of the padding value. row_at(n, iy) is where input
// row iy of image n starts (pixel 0 of that row); its pixels follow at a stride of C.
template <typename T, class RowAt>
void build_dw_indirection_at(const Conv2dShape& s, const DwColumns& cols, RowAt row_at, const T* pad_row,
                             std::vector<const T*>& rows, std::vector<const T*>& border) {
  const size_t C = static_cast<size_t>(s.in_c);
  const int taps = s.kernel_h * s.kernel_w;
  const size_t out_rows = static_cast<size_t>(s.batch) * s.out_h;
  rows.assign(out_rows * s.kernel_h, pad_row);
  border.assign(out_rows * cols.border() * taps, pad_row);
  const int ix0 = cols.lo * s.stride_w - s.pad_left;
  for (int n = 0; n < s.batch; ++n) {
    for (int oy = 0; oy < s.out_h; ++oy) {
      const size_t r = static_cast<size_t>(n) * s.out_h + oy;
      auto pixel = [&](int iy, int ix) -> const T* {
        if (iy < 0 || iy >= s.in_h || ix < 0 || ix >= s.in_w) return pad_row;
        return row_at(n, iy) + static_cast<size_t>(ix) * C;
      };
      for (int ky = 0; ky < s.kernel_h; ++ky) {
        const int iy = oy * s.stride_h - s.pad_top + ky * s.dilation_h;
        if (cols.hi > cols.lo && iy >= 0 && iy < s.in_h) rows[r * s.kernel_h + ky] = pixel(iy, ix0);
      }
      const T** b = border.data() + r * cols.border() * taps;
      for (int ox = 0; ox < s.out_w; ++ox) {
        if (ox >= cols.lo && ox < cols.hi) continue;
        for (int ky = 0; ky < s.kernel_h; ++ky) {
          for (int kx = 0; kx < s.kernel_w; ++kx) {
            *b++ = pixel(oy * s.stride_h - s.pad_top + ky * s.dilation_h,
                         ox * s.stride_w - s.pad_left + kx * s.dilation_w);
          }
        }
      }
    }
  }
}

// The same for x: [batch][in_h][in_w][C], contiguous.
template <typename T>
void build_dw_indirection(const Conv2dShape& s, const DwColumns& cols, const T* x, const T* pad_row,
                          std::vector<const T*>& rows, std::vector<const T*>& border) {
  const size_t row = static_cast<size_t>(s.in_w) * s.in_c;
  build_dw_indirection_at(
      s, cols, [&](int n, int iy) { return x + (static_cast<size_t>(n) * s.in_h + iy) * row; }, pad_row, rows,
      border);
}

// One pointer per output pixel and tap of image 0, pixel-major ([out_h * out_w][kernel_h *
// kernel_w]): where the tap reads x ([in_h][in_w][C] of image 0), or `zero` in the padding. The
// narrow-group convs' indirection (other images an offset).
template <typename T>
void build_tap_pointers(const Conv2dShape& s, const T* x, const T* zero, std::vector<const T*>& taps) {
  taps.resize(static_cast<size_t>(s.out_h) * s.out_w * s.kernel_h * s.kernel_w);
  const T** out = taps.data();
  for (int oy = 0; oy < s.out_h; ++oy)
    for (int ox = 0; ox < s.out_w; ++ox)
      for (int ky = 0; ky < s.kernel_h; ++ky) {
        const int iy = oy * s.stride_h - s.pad_top + ky * s.dilation_h;
        for (int kx = 0; kx < s.kernel_w; ++kx) {
          const int ix = ox * s.stride_w - s.pad_left + kx * s.dilation_w;
          const bool inside = iy >= 0 && iy < s.in_h && ix >= 0 && ix < s.in_w;
          *out++ = inside ? x + (static_cast<size_t>(iy) * s.in_w + static_cast<size_t>(ix)) * s.in_c : zero;
        }
      }
}

}  // namespace octet::kernels
