#pragma once
// The ISA-independent half of the "kw4" INT8 depthwise kernels (format: dwconv_list.h): which
// entries of a built row take the fast path, and the walk over output rows that keeps the
// input rows of each window built in a ring. Each kernel file supplies how a row is
// built and how an output row is computed (x86/q8_dwconv__avx512vnni.cc,
// arm/q8_dwconv__neondot.cc).
#include <algorithm>
#include <climits>
#include <type_traits>

#include "kernels/conv/dwconv_list.h"

namespace octet::kernels {

// Builds input row iy of the image a.x (the pad row outside it) into the kw4 layout at q:
// [dw_kw4_entries][(C + 15) / 16 slots of 16 lanes x 4 bytes]. The entries whose four taps
// x[ix0 .. ix0 + 3], ix0 = ox * stride_w - pad_left, all lie inside the input row go to
// interior(std::integral_constant<int, stride_w>, row, lo, hi, q) as one run [lo, hi) when
// dilation_w is 1 and stride_w 1 or 2 (consecutive entries share loads there); every other
// entry to entry(row, ox, q), row nullptr for the pad row.
template <class Entry, class Interior>
void dw_kw4_build_row(const Q8DwImageRowsArgs& a, int iy, uint8_t* q, Entry&& entry, Interior&& interior) {
  const Conv2dShape& s = *a.shape;
  const uint8_t* row = iy >= 0 && iy < s.in_h ? a.x + static_cast<size_t>(iy) * s.in_w * s.in_c : nullptr;
  const int entries = dw_kw4_entries(s);
  int lo = entries, hi = entries;
  if (row && s.dilation_w == 1 && (s.stride_w == 1 || s.stride_w == 2)) {
    lo = (s.pad_left + s.stride_w - 1) / s.stride_w;
    const int last = s.in_w - 4 + s.pad_left;
    hi = last < 0 ? 0 : std::min(last / s.stride_w + 1, entries);
    if (hi <= lo) lo = hi = entries;
  }
  for (int ox = 0; ox < lo; ++ox) entry(row, ox, q);
  if (lo < hi) {
    if (s.stride_w == 1) {
      interior(std::integral_constant<int, 1>{}, row, lo, hi, q);
    } else {
      interior(std::integral_constant<int, 2>{}, row, lo, hi, q);
    }
  }
  for (int ox = hi; ox < entries; ++ox) entry(row, ox, q);
}

// Output rows [a.oy_begin, a.oy_end) of a kw4 conv. For each, build(iy, q) writes every input
// row iy of the window (the pad row outside the image) into its slot q of the ring in
// a.scratch, unless the slot holds it already; then compute(words, qtaps, taps, y) computes the
// output row at y from its window's `taps` words, word t = ky * dw_kw4_words + j of kernel row
// ky at qtaps[t]. `words` is std::integral_constant<int, taps> for the counts of
// dw_kw4_register_words, whose kernels keep the words in registers, else <int, 0>.
template <class Build, class Compute>
void dw_kw4_walk_rows(const Q8DwImageRowsArgs& a, Build&& build, Compute&& compute) {
  const Conv2dShape& s = *a.shape;
  const int ring = dw_kw4_ring(s);
  const size_t pixel_bytes = static_cast<size_t>(s.in_c + 15) / 16 * 64;
  const size_t slot_bytes = static_cast<size_t>(dw_kw4_entries(s)) * pixel_bytes;
  const int row_words = dw_kw4_words(s), taps = s.kernel_h * row_words;
  const size_t word_bytes = static_cast<size_t>(dw_kw4_word_shift(s)) * pixel_bytes;
  int held[kDwKw4MaxRing];
  for (int i = 0; i < ring; ++i) held[i] = INT_MIN;  // no row
  const uint8_t* qtaps[2 * kDwKw4MaxRing];
  for (int oy = a.oy_begin; oy < a.oy_end; ++oy) {
    for (int ky = 0; ky < s.kernel_h; ++ky) {
      const int iy = oy * s.stride_h - s.pad_top + ky * s.dilation_h;
      const int slot = ((iy % ring) + ring) % ring;
      uint8_t* q = a.scratch + slot * slot_bytes;
      if (held[slot] != iy) {
        build(iy, q);
        held[slot] = iy;
      }
      for (int j = 0; j < row_words; ++j) qtaps[ky * row_words + j] = q + j * word_bytes;
    }
    uint8_t* y = a.y + static_cast<size_t>(oy) * s.out_w * s.in_c;
    // The word counts of dw_kw4_register_words; two-word kernels take no other (dw_kw4_fits).
    switch (taps) {
      case 1: compute(std::integral_constant<int, 1>{}, qtaps, taps, y); break;
      case 2: compute(std::integral_constant<int, 2>{}, qtaps, taps, y); break;  // 2xN, or 1x5 .. 1x8
      case 3: compute(std::integral_constant<int, 3>{}, qtaps, taps, y); break;
      case 10: compute(std::integral_constant<int, 10>{}, qtaps, taps, y); break;  // 5x5 .. 5x8
      case 14: compute(std::integral_constant<int, 14>{}, qtaps, taps, y); break;  // 7x5 .. 7x8
      default: compute(std::integral_constant<int, 0>{}, qtaps, taps, y); break;
    }
  }
}

}  // namespace octet::kernels
