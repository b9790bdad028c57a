// INT8 depthwise convolution in portable C++: the row of kernels/conv/dwconv_list.inc at level
// scalar, which Q8DwConv runs where no vector row does. Weights packed Q8DwPacking::int32_taps
// (kernels/conv/dwconv_list.h), 8 channels a block, the arithmetic of the vector rows lane by
// lane: exact products summed in int32 on the folded bias, then requantize_value() of
// kernels/ref/qmath.h (float(acc) * multiplier, clamp in float with maxps / minps's operand
// rule, round half to even, + zero point).
#include "kernels/ref/fp_contract_off.h"  // first: no multiply-add contracted into an FMA

#include <cmath>
#include <cstring>

#include "kernels/conv/dwconv_list.h"

namespace octet::kernels::scalar {
namespace {

constexpr int kTile = 8;

template <bool XSigned>
inline int32_t activation(const uint8_t* p) {
  return XSigned ? static_cast<int32_t>(static_cast<int8_t>(*p)) : static_cast<int32_t>(*p);
}

// A packed weight: the low int16 of its int32 lane (the high half is 0, not the sign).
inline int32_t weight(int32_t lane) { return static_cast<int16_t>(static_cast<uint32_t>(lane) & 0xffffu); }

// acc += x * w, wrapping around in 32 bits as the vector rows' adds do (as unsigned: a signed
// overflow would be undefined).
inline void mac(int32_t& acc, int32_t x, int32_t w) {
  acc = static_cast<int32_t>(static_cast<uint32_t>(acc) + static_cast<uint32_t>(x * w));
}

// requantize_value() per channel of the block.
inline void store(uint8_t* y, const int32_t* acc, const int32_t* multiplier, size_t n, const Q8DwEpilogue& e) {
  for (size_t c = 0; c < n; ++c) {
    float m;
    std::memcpy(&m, &multiplier[c], sizeof m);
    float v = static_cast<float>(acc[c]) * m;
    v = v > e.lo ? v : e.lo;
    v = v < e.hi ? v : e.hi;
    y[c] = static_cast<uint8_t>(static_cast<int32_t>(std::nearbyint(v)) + e.zero_point);
  }
}

template <bool XSigned>
void row(const Q8DwRowArgs& a) {
  const int taps = a.kernel_h * a.kernel_w;
  const int32_t* w = a.packed;
  for (size_t c0 = 0; c0 < a.channels; c0 += kTile, w += (taps + 2) * kTile) {
    const size_t n = a.channels - c0 < kTile ? a.channels - c0 : kTile;
    for (size_t p = 0; p < a.pixels; ++p) {
      int32_t acc[kTile];
      std::memcpy(acc, w, sizeof acc);
      const int32_t* wt = w + kTile;
      for (int ky = 0; ky < a.kernel_h; ++ky) {
        const uint8_t* r = a.rows[ky] + p * a.pixel_step + c0;
        for (int kx = 0; kx < a.kernel_w; ++kx, wt += kTile)
          for (size_t c = 0; c < n; ++c) mac(acc[c], activation<XSigned>(r + kx * a.tap_step + c), weight(wt[c]));
      }
      store(a.y + p * a.channels + c0, acc, wt, n, a.ep);
    }
  }
}

template <bool XSigned>
void indirect(const Q8DwIndirectArgs& a) {
  const int taps = a.kernel_size;
  for (size_t p = 0; p < a.pixels; ++p) {
    const uint8_t* const* tp = a.taps + p * taps;
    const int32_t* w = a.packed;
    for (size_t c0 = 0; c0 < a.channels; c0 += kTile, w += (taps + 2) * kTile) {
      const size_t n = a.channels - c0 < kTile ? a.channels - c0 : kTile;
      int32_t acc[kTile];
      std::memcpy(acc, w, sizeof acc);
      for (int t = 0; t < taps; ++t) {
        const int32_t* wt = w + (t + 1) * kTile;
        for (size_t c = 0; c < n; ++c) mac(acc[c], activation<XSigned>(tp[t] + c0 + c), weight(wt[c]));
      }
      store(a.y + p * a.channels + c0, acc, w + (taps + 1) * kTile, n, a.ep);
    }
  }
}

}  // namespace

void q8_dwconv_c8_row(const Q8DwRowArgs& a) { a.ep.x_signed ? row<true>(a) : row<false>(a); }

void q8_dwconv_c8_indirect(const Q8DwIndirectArgs& a) { a.ep.x_signed ? indirect<true>(a) : indirect<false>(a); }

}  // namespace octet::kernels::scalar
