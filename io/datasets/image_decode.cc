#include "io/datasets/image_decode.h"

#include <stb/stb_image.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <memory>
#include <new>
#include <span>
#include <vector>

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

uint32_t be32(const uint8_t* p) { return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3]; }

// A PNG's IHDR and its IDAT chunks, walked as stb_image walks them (CgBI may come before IHDR;
// reading stops at IEND).
struct PngStream {
  bool found = false;  // a PNG with an IHDR stb accepts and at least one IDAT
  uint32_t width = 0, height = 0;
  int depth = 0, color = 0, interlace = 0;
  bool iphone = false;  // Apple's CgBI: raw deflate, no zlib header
  std::vector<std::span<const uint8_t>> idat;
};

PngStream png_stream(std::span<const uint8_t> b) {
  static const uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
  PngStream s;
  if (b.size() < 8 || !std::equal(kSignature, kSignature + 8, b.begin())) return s;
  bool ihdr = false;
  for (size_t pos = 8; pos + 8 <= b.size();) {
    const uint64_t len = be32(&b[pos]);
    if (pos + 12 + len > b.size()) break;  // png_chunks_fit refused it already
    const std::span<const uint8_t> data = b.subspan(pos + 8, size_t(len));
    const uint32_t type = be32(&b[pos + 4]);
    auto is = [type](const char* t) { return type == be32(reinterpret_cast<const uint8_t*>(t)); };
    if (is("CgBI")) {
      s.iphone = true;
    } else if (is("IHDR")) {
      if (ihdr || len != 13) return {};
      ihdr = true;
      s.width = be32(&data[0]);
      s.height = be32(&data[4]);
      s.depth = data[8];
      s.color = data[9];
      s.interlace = data[12];
    } else if (is("IDAT")) {
      if (!ihdr) return {};
      s.idat.push_back(data);
    } else if (is("IEND")) {
      break;
    } else if (!ihdr) {
      return {};  // stb: "first not IHDR"
    }
    pos += 12 + len;
  }
  // What stb refuses at IHDR, before it inflates anything (its rules, stb_image.h's
  // stbi__parse_png_file): such a file needs no bound here.
  const bool depth_ok = s.depth == 1 || s.depth == 2 || s.depth == 4 || s.depth == 8 || s.depth == 16;
  const bool color_ok = s.color == 0 || s.color == 2 || s.color == 4 || s.color == 6 || (s.color == 3 && s.depth != 16);
  const uint32_t kStbMaxDimension = uint32_t{1} << 24;
  s.found = ihdr && depth_ok && color_ok && s.interlace <= 1 && s.width > 0 && s.height > 0 &&
            s.width <= kStbMaxDimension && s.height <= kStbMaxDimension && !s.idat.empty();
  return s;
}

// The bytes a PNG's zlib stream must inflate to: each row of each (Adam7) pass is a filter byte
// and its packed samples. At most 2^24 x 2^24 pixels of 64 bits: no overflow in 64 bits.
uint64_t png_raw_bytes(const PngStream& s) {
  const uint64_t bits = uint64_t(s.color == 3 ? 1 : (s.color & 2 ? 3 : 1) + (s.color & 4 ? 1 : 0)) * s.depth;
  auto rows = [bits](uint64_t w, uint64_t h) { return w == 0 || h == 0 ? 0 : h * (1 + (w * bits + 7) / 8); };
  if (s.interlace == 0) return rows(s.width, s.height);
  static const int x0[7] = {0, 4, 0, 2, 0, 1, 0}, y0[7] = {0, 0, 4, 0, 2, 0, 1};
  static const int dx[7] = {8, 8, 4, 4, 2, 2, 1}, dy[7] = {8, 8, 8, 4, 4, 2, 2};
  uint64_t total = 0;
  for (int p = 0; p < 7; ++p)
    total += rows((uint64_t(s.width) + dx[p] - 1 - x0[p]) / dx[p], (uint64_t(s.height) + dy[p] - 1 - y0[p]) / dy[p]);
  return total;
}

// Inflates a PNG's IDAT stream 64 KiB at a time, keeping none of it, and throws as soon as it
// yields more than the declared rows need. stb accepts trailing data after the rows (a PNG
// "in the wild" had zeros there, stb issue #276), so a sixteenth more is let through; stb then
// holds at most about twice the declared size, which decode_peak_bytes counts. The zlib header
// is checked as stb checks it and the rest inflated raw, so that zlib is no stricter than stb
// about the window size or the Adler-32 trailer; a stream zlib finds corrupt is refused.
void check_png_inflate(std::span<const uint8_t> b, const std::string& name) {
  const PngStream s = png_stream(b);
  if (!s.found) return;
  const uint64_t need = png_raw_bytes(s), limit = need + need / 16 + 1024;
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) throw std::bad_alloc();
  std::unique_ptr<z_stream, int (*)(z_stream*)> end(&z, inflateEnd);
  std::vector<uint8_t> out(size_t{64} << 10);
  uint8_t header[2] = {0x78, 0x9C};  // a CgBI stream has none: a valid one stands in
  size_t header_got = s.iphone ? 2 : 0;
  uint64_t total = 0;
  for (std::span<const uint8_t> chunk : s.idat) {
    if (header_got < 2) {
      while (header_got < 2 && !chunk.empty()) {
        header[header_got++] = chunk[0];
        chunk = chunk.subspan(1);
      }
      const int cmf = header[0], flg = header[1];
      if (header_got == 2 && ((cmf * 256 + flg) % 31 != 0 || (flg & 32) || (cmf & 15) != 8))
        return;  // stb refuses this zlib header before inflating
    }
    z.next_in = const_cast<Bytef*>(chunk.data());
    z.avail_in = uInt(chunk.size());
    while (z.avail_in > 0 || z.avail_out == 0) {
      z.next_out = out.data();
      z.avail_out = uInt(out.size());
      const int r = inflate(&z, Z_NO_FLUSH);
      total += out.size() - z.avail_out;
      if (total > limit)
        throw ImageDecodeError(ImageDecodeError::Kind::over_declared,
                               name + ": the PNG's compressed pixel data inflates to more than the " +
                                   std::to_string(need) + " bytes its declared " + std::to_string(s.width) + "x" +
                                   std::to_string(s.height) + " pixels need (a decompression bomb); refused after " +
                                   std::to_string(total) + " bytes");
      if (r == Z_STREAM_END) return;
      if (r == Z_BUF_ERROR) break;  // this chunk is used up
      if (r == Z_MEM_ERROR) throw std::bad_alloc();
      if (r != Z_OK)
        throw ImageDecodeError(ImageDecodeError::Kind::damaged,
                               name + ": not a readable image (the PNG's compressed data is corrupt: " +
                                   (z.msg ? z.msg : "zlib error " + std::to_string(r)) + ")");
    }
  }
}

}  // namespace

std::optional<ImageHeader> read_image_header(const uint8_t* bytes, size_t size) {
  if (size > size_t(std::numeric_limits<int>::max())) return std::nullopt;
  ImageHeader h;
  if (!stbi_info_from_memory(bytes, int(size), &h.width, &h.height, &h.channels) || h.width <= 0 || h.height <= 0 ||
      h.channels <= 0)
    return std::nullopt;
  if (stbi_is_hdr_from_memory(bytes, int(size)))
    h.bytes_per_channel = 4;
  else if (stbi_is_16_bit_from_memory(bytes, int(size)))
    h.bytes_per_channel = 2;
  return h;
}

int64_t decode_peak_bytes(const ImageHeader& h) {
  const int64_t pixels = int64_t{h.width} * h.height;
  return pixels * ((h.channels + 1) * h.bytes_per_channel * 3 + 3);
}

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
  check_png_inflate(b, name);
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
