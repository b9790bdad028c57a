#pragma once
// stb_image_write and stb_image_resize, compiled once (stb_codecs.cc, static, warnings off:
// third-party code) behind the two calls the server makes.
#include <cstdint>
#include <string>

namespace octet::serve {

// Interleaved 8-bit pixels (`components` per pixel) as a PNG file's bytes; empty on failure.
std::string encode_png(const uint8_t* pixels, int width, int height, int components);

// One 8-bit plane resized with stb_image_resize's default filters (Mitchell when shrinking,
// Catmull-Rom when enlarging). Returns false when stb refuses.
bool resize_plane(const uint8_t* src, int width, int height, uint8_t* dst, int dst_width, int dst_height);

}  // namespace octet::serve
