#pragma once
// PNG files built byte by byte, for the decoder's guards: any IHDR, and a zlib stream whose
// inflated size the test chooses, up to decompression bombs of GiBs that take milliseconds to
// build.
#include <cstdint>
#include <string>
#include <string_view>

namespace octet::testing {

// A zlib stream (header, deflate, Adler-32) of `raw`.
std::string zlib_of(std::string_view raw);
// A zlib stream inflating to `n` zero bytes: one deflated MiB repeated (each piece ends with a
// full flush, so it refers to nothing before it), then the rest.
std::string zlib_zeros(uint64_t n);
// A PNG of IHDR (`depth` bits, colour type `color`, Adam7 when `interlace`), one IDAT holding
// `zlib` and IEND, every chunk with its CRC.
std::string png_file(uint32_t width, uint32_t height, int depth, int color, int interlace, std::string_view zlib);
// An 8-bit gray PNG declaring width x height whose IDAT inflates to `inflated` zero bytes.
std::string png_bomb(uint32_t width, uint32_t height, uint64_t inflated);

}  // namespace octet::testing
