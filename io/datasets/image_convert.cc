#include "io/datasets/image_convert.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace octet::data::detail {

namespace {

void luma(const uint8_t* rgb, int64_t plane, uint8_t* gray) {
  const uint8_t* r = rgb;
  const uint8_t* g = rgb + plane;
  const uint8_t* b = rgb + 2 * plane;
  for (int64_t i = 0; i < plane; ++i) gray[i] = static_cast<uint8_t>((299 * r[i] + 587 * g[i] + 114 * b[i] + 500) / 1000);
}

struct Tap {
  int i0, i1;
  float f;  // weight of i1
};

// Source coordinate of output index o under half-pixel centres, clamped at the borders.
std::vector<Tap> taps(int in, int out) {
  std::vector<Tap> t(out);
  const double scale = static_cast<double>(in) / out;
  for (int o = 0; o < out; ++o) {
    const double s = std::clamp((o + 0.5) * scale - 0.5, 0.0, static_cast<double>(in - 1));
    const int i0 = static_cast<int>(s);
    t[o] = {i0, std::min(i0 + 1, in - 1), static_cast<float>(s - i0)};
  }
  return t;
}

void resize_plane(const uint8_t* src, int h, int w, uint8_t* dst, int dh, int dw) {
  if (h == dh && w == dw) {
    std::memcpy(dst, src, static_cast<size_t>(h) * w);
    return;
  }
  const std::vector<Tap> ty = taps(h, dh), tx = taps(w, dw);
  for (int y = 0; y < dh; ++y) {
    const uint8_t* r0 = src + static_cast<int64_t>(ty[y].i0) * w;
    const uint8_t* r1 = src + static_cast<int64_t>(ty[y].i1) * w;
    const float fy = ty[y].f;
    for (int x = 0; x < dw; ++x) {
      const Tap& t = tx[x];
      const float top = r0[t.i0] + t.f * (r0[t.i1] - r0[t.i0]);
      const float bottom = r1[t.i0] + t.f * (r1[t.i1] - r1[t.i0]);
      const float v = top + fy * (bottom - top);
      dst[static_cast<int64_t>(y) * dw + x] = static_cast<uint8_t>(std::clamp(std::lround(v), 0L, 255L));
    }
  }
}

}  // namespace

void convert_image(const uint8_t* src, int c, int h, int w, uint8_t* dst, int dst_c, int dst_h, int dst_w) {
  if ((c != 1 && c != 3) || (dst_c != 1 && dst_c != 3))
    throw std::runtime_error("cannot convert " + std::to_string(c) + "-channel images to " + std::to_string(dst_c) +
                             " channels (only 1 and 3 are supported)");
  const int64_t plane = int64_t{h} * w, dst_plane = int64_t{dst_h} * dst_w;
  if (c == 3 && dst_c == 1) {
    std::vector<uint8_t> gray(plane);
    luma(src, plane, gray.data());
    resize_plane(gray.data(), h, w, dst, dst_h, dst_w);
    return;
  }
  for (int k = 0; k < c; ++k) resize_plane(src + k * plane, h, w, dst + k * dst_plane, dst_h, dst_w);
  if (c == 1 && dst_c == 3) {
    std::memcpy(dst + dst_plane, dst, dst_plane);
    std::memcpy(dst + 2 * dst_plane, dst, dst_plane);
  }
}

}  // namespace octet::data::detail
