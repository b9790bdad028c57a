#include "tools/datasets/image_decode.h"

#include <stb/stb_image.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <memory>
#include <span>

namespace octet::data {
namespace {

// Whether every Huffman table of a JPEG holds at most 256 codes. Debian 12's stb_image builds
// its code-length list in a 257-byte array without that check, so a crafted table writes past
// it (found by tests/fuzz/fuzz_images): such files are refused before stb sees them. Walks the
// markers, skipping entropy-coded data (stuffed 0xFF00 bytes, restart markers) between scans.
bool jpeg_huffman_tables_fit(std::span<const uint8_t> b) {
  size_t pos = 0;
  while (pos < b.size() && b[pos] == 0xFF) ++pos;  // stb skips fill bytes before SOI too
  if (pos == 0 || pos >= b.size() || b[pos] != 0xD8) return true;  // not a JPEG
  ++pos;
  while (pos + 1 < b.size()) {
    if (b[pos] != 0xFF) {
      ++pos;
      continue;
    }
    const uint8_t m = b[pos + 1];
    if (m == 0xFF) {
      ++pos;
      continue;
    }
    if (m == 0x00 || m == 0x01 || (m >= 0xD0 && m <= 0xD7)) {
      pos += 2;
      continue;
    }
    if (m == 0xD9 || pos + 4 > b.size()) return true;
    const size_t len = size_t(b[pos + 2]) << 8 | b[pos + 3];
    if (m == 0xC4) {
      const size_t end = std::min(b.size(), pos + 2 + len);
      for (size_t t = pos + 4; t < end;) {
        if (t + 17 > end) return false;
        size_t codes = 0;
        for (size_t i = 1; i <= 16; ++i) codes += b[t + i];
        if (codes > 256) return false;
        t += 17 + codes;
      }
    }
    pos += 2 + len;
  }
  return true;
}

// Whether every PNG chunk fits in the file. stb grows its IDAT buffer to a chunk's declared
// length before reading it, so a 60-byte file declaring a 1.2 GB chunk allocated 1.2 GB
// (found by tests/fuzz/fuzz_images).
bool png_chunks_fit(std::span<const uint8_t> b) {
  static const uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
  if (b.size() < 8 || !std::equal(kSignature, kSignature + 8, b.begin())) return true;  // not a PNG
  for (size_t pos = 8; pos + 8 <= b.size();) {
    const uint64_t len = uint64_t(b[pos]) << 24 | uint64_t(b[pos + 1]) << 16 | uint64_t(b[pos + 2]) << 8 | b[pos + 3];
    if (pos + 12 + len > b.size()) return false;  // length, type, data, CRC
    if (b[pos + 4] == 'I' && b[pos + 5] == 'E' && b[pos + 6] == 'N' && b[pos + 7] == 'D') return true;
    pos += 12 + len;
  }
  return true;
}

}  // namespace

DecodedImage decode_image(const uint8_t* bytes, size_t size, const std::string& name, int64_t max_pixels) {
  using Kind = ImageDecodeError::Kind;
  const std::span<const uint8_t> b(bytes, size);
  if (!jpeg_huffman_tables_fit(b))
    throw ImageDecodeError(Kind::damaged,
                           name + ": not a readable image (a JPEG Huffman table holds more than 256 codes)");
  if (!png_chunks_fit(b))
    throw ImageDecodeError(Kind::damaged,
                           name + ": not a readable image (a PNG chunk is longer than the rest of the file)");
  if (size > size_t(std::numeric_limits<int>::max()))
    throw ImageDecodeError(Kind::damaged, name + ": too large for the image decoder");
  auto too_many = [&](int w, int h) {
    char limit[32];
    std::snprintf(limit, sizeof limit, "%.1f", double(max_pixels) / 1e6);
    return ImageDecodeError(Kind::too_many_pixels, name + ": " + std::to_string(w) + "x" + std::to_string(h) +
                                                       " pixels, more than octet decodes (" + limit +
                                                       " megapixels); downscale it first");
  };
  // stb reads a BMP's missing pixel rows as zeros, so a 191-byte header announcing 8 x 12.5 M
  // pixels decoded for seconds: the header is checked first.
  int w = 0, h = 0, n = 0;
  const bool known = stbi_info_from_memory(bytes, int(size), &w, &h, &n) != 0;
  if (known && int64_t{w} * h > max_pixels) throw too_many(w, h);
  std::unique_ptr<stbi_uc, void (*)(void*)> data(stbi_load_from_memory(bytes, int(size), &w, &h, &n, 0),
                                                 stbi_image_free);
  if (!data)
    throw ImageDecodeError(known ? Kind::damaged : Kind::not_an_image,
                           name + ": not a readable image (stb_image: " + stbi_failure_reason() + ")");
  if (w <= 0 || h <= 0 || n <= 0)  // a decoder may accept a header of zero width or height (fuzz finding)
    throw ImageDecodeError(Kind::damaged,
                           name + ": an image of " + std::to_string(w) + "x" + std::to_string(h) + " pixels");
  if (int64_t{w} * h > max_pixels) throw too_many(w, h);
  DecodedImage im;
  im.channels = n >= 3 ? 3 : 1;
  im.height = h;
  im.width = w;
  const int64_t plane = int64_t{h} * w;
  im.chw.resize(size_t(im.channels * plane));
  for (int c = 0; c < im.channels; ++c)
    for (int64_t i = 0; i < plane; ++i) im.chw[size_t(c * plane + i)] = data.get()[i * n + c];
  return im;
}

}  // namespace octet::data
