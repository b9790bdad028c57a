#include "tests/serve/test_png.h"

#include <zlib.h>

#include <stdexcept>
#include <vector>

namespace octet::testing {
namespace {

void put32(std::string& s, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) s.push_back(char((v >> shift) & 0xFF));
}

std::string chunk(const char* type, std::string_view data) {
  std::string c;
  put32(c, uint32_t(data.size()));
  const size_t body = c.size();
  c.append(type, 4);
  c.append(data);
  put32(c, uint32_t(crc32(0, reinterpret_cast<const Bytef*>(c.data() + body), uInt(c.size() - body))));
  return c;
}

// Deflates `n` zeros into `out` (raw deflate), with `flush` at the end.
void deflate_zeros(z_stream& z, size_t n, int flush, std::string& out) {
  std::vector<Bytef> zeros(n), buf(64 << 10);
  z.next_in = zeros.data();
  z.avail_in = uInt(n);
  do {
    z.next_out = buf.data();
    z.avail_out = uInt(buf.size());
    if (deflate(&z, flush) == Z_STREAM_ERROR) throw std::runtime_error("deflate failed");
    out.append(reinterpret_cast<const char*>(buf.data()), buf.size() - z.avail_out);
  } while (z.avail_out == 0);
}

}  // namespace

std::string zlib_of(std::string_view raw) {
  uLongf size = compressBound(uLong(raw.size()));
  std::string out(size, '\0');
  if (compress2(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(raw.data()),
                uLong(raw.size()), 9) != Z_OK)
    throw std::runtime_error("compress2 failed");
  out.resize(size);
  return out;
}

std::string zlib_zeros(uint64_t n) {
  constexpr size_t kPiece = size_t{1} << 20;
  z_stream z{};
  if (deflateInit2(&z, 9, Z_DEFLATED, -MAX_WBITS, 9, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2 failed");
  std::string piece, tail;
  deflate_zeros(z, kPiece, Z_FULL_FLUSH, piece);
  deflate_zeros(z, size_t(n % kPiece), Z_FINISH, tail);
  deflateEnd(&z);
  std::string out = "\x78\xDA";
  out.reserve(2 + piece.size() * size_t(n / kPiece) + tail.size() + 4);
  for (uint64_t i = 0; i < n / kPiece; ++i) out += piece;
  out += tail;
  put32(out, uint32_t((n % 65521) << 16 | 1));  // Adler-32 of zeros: a stays 1, b counts the bytes
  return out;
}

std::string png_file(uint32_t width, uint32_t height, int depth, int color, int interlace, std::string_view zlib) {
  std::string ihdr;
  put32(ihdr, width);
  put32(ihdr, height);
  ihdr += {char(depth), char(color), 0, 0, char(interlace)};
  return std::string("\x89PNG\r\n\x1a\n", 8) + chunk("IHDR", ihdr) + chunk("IDAT", zlib) + chunk("IEND", "");
}

std::string png_bomb(uint32_t width, uint32_t height, uint64_t inflated) {
  return png_file(width, height, 8, 0, 0, zlib_zeros(inflated));
}

}  // namespace octet::testing
