// Decoding one image's bytes (PNG, JPEG, BMP, GIF, PGM/PPM, ... whatever stb_image reads) to
// planar CHW, shared by the image folder reader and `octet serve`'s uploads. Inputs that make
// Debian 12's stb_image write out of bounds, allocate without limit or decode for seconds are
// refused before stb sees them (each found by tests/fuzz/fuzz_images).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace octet::data {

struct DecodedImage {
  int channels = 0, height = 0, width = 0;  // 1 or 3 channels: gray (+ alpha) -> 1, RGB (+ alpha) -> 3
  std::vector<uint8_t> chw;                 // planar, alpha dropped
};

// 2^25 pixels (33.6 megapixels): what the dataset readers decode at most.
constexpr int64_t kMaxDecodedPixels = int64_t{1} << 25;

struct ImageDecodeError : std::runtime_error {
  enum class Kind {
    not_an_image,     // no format stb_image knows starts these bytes
    too_many_pixels,  // the header announces more than max_pixels
    damaged,          // a known format, but truncated, corrupt or refused as hostile
  };
  ImageDecodeError(Kind k, const std::string& what) : std::runtime_error(what), kind(k) {}
  Kind kind;
};

// Throws ImageDecodeError, its message starting with "NAME: ".
DecodedImage decode_image(const uint8_t* bytes, size_t size, const std::string& name,
                          int64_t max_pixels = kMaxDecodedPixels);

}  // namespace octet::data
